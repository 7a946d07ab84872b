"""Real-time strategy games written in GDL and played on the general engine (the RTMM
paper's games, ../shared/REFERENCE-SEARCH.md section 3).

- :mod:`ggp.rts.battlecity` writes BattleCity as GDL for any ASCII maze
  (``games/rts/battlecity_*.gdl`` are its output).

Everything here talks to :class:`~ggp.game.Game` only.
"""
