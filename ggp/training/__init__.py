"""Self-play training (``ggp train``) and evaluation tables (``ggp eval``).

:mod:`~ggp.training.config` (settings), :mod:`~ggp.training.selfplay` (one game),
:mod:`~ggp.training.replay` (positions, replay buffer), :mod:`~ggp.training.workers`
(tasks and worker pools: processes or Ray), :mod:`~ggp.training.trainer` (the loop,
checkpoints, logs), :mod:`~ggp.training.plot` (curves), :mod:`~ggp.training.evaluate`
(tables). Nothing here is specific to one game.
"""
