"""ggp.protocol."""
