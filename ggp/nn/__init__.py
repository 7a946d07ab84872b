"""ggp.nn."""
