"""Battlesnake written in GDL-II and played on the general engine.

- :mod:`ggp.battlesnake.generate` writes the standard rules as GDL-II for any square board
  and snake count (``games/battlesnake/*.gdl`` are its output).
- :mod:`ggp.battlesnake.board` reads a GDL state back as a board, and builds a GDL state
  from a board (the bridge the official HTTP API needs).

Everything here talks to :class:`~ggp.game.Game` only.
"""
