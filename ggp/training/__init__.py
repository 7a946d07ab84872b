"""ggp.training."""
