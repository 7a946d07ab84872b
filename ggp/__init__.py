"""ggp: a general game player for GDL-II."""

__version__ = "0.1.0"
