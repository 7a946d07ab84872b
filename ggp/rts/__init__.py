"""Real-time strategy games written in GDL and played on the general engine (the RTMM
paper's games, ../shared/REFERENCE-SEARCH.md section 3).

- :mod:`ggp.rts.battlecity` writes BattleCity as GDL for any ASCII maze, and
  :mod:`ggp.rts.microrts` the paper's 8x8 RTS (the first microRTS) for any start
  (``games/rts/*.gdl`` are their output).
- :mod:`ggp.rts.state` reads GDL states back as a BattleCity field or an RTS board;
  :mod:`ggp.rts.evaluation` holds the paper's evaluation functions (leaf
  :class:`~ggp.search.evaluator.Evaluator`\\ s for RTMM, :mod:`ggp.search.classic.rtmm`);
  :mod:`ggp.rts.bots` its scripted bots.

Everything here talks to :class:`~ggp.game.Game` only.
"""
