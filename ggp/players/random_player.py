"""A player that picks a uniformly random legal move.

It knows only its observations, like any GDL-II player: its legal moves come from a
:class:`~ggp.players.history_tracker.HistoryTracker`, which keeps one full history
consistent with what the role has seen.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ggp.errors import GameError
from ggp.gdl.terms import Term
from ggp.players.base import MatchInfo, MovePolicy, Observation
from ggp.players.history_tracker import HistoryTracker

# HistoryTracker is re-exported for the modules that still import it from here; its home
# is ggp.players.history_tracker.
__all__ = ["RandomPlayer", "HistoryTracker"]

#: Seconds before the deadline at which the random player stops looking for a history.
REPLY_MARGIN_S = 0.05


class RandomPlayer:
    """Uniformly random legal moves, from the player's own observations only.

    If no history explaining its observations is found by the deadline, :meth:`play`
    raises :class:`~ggp.search.clock.OutOfTime` rather than guess (the referee then
    plays a random legal move for it).

    Args:
        rng: The source of randomness (seed it for repeatable matches).
    """

    name = "random"

    def __init__(self, rng: np.random.Generator | None = None) -> None:
        self.rng = rng if rng is not None else np.random.default_rng()
        self._tracker: HistoryTracker | None = None

    def start(self, match: MatchInfo) -> None:
        self._tracker = HistoryTracker(match, self.rng)

    def play(self, observation: Observation, deadline: float) -> Term:
        if self._tracker is None:
            raise GameError("play() before start()")
        self._tracker.observe(observation)
        moves = self._tracker.legal_moves(deadline - REPLY_MARGIN_S)
        move = moves[int(self.rng.integers(len(moves)))]
        self._tracker.replied(move)
        return move

    def policy(
        self, match: MatchInfo, observations: Sequence[Observation], deadline: float
    ) -> MovePolicy:
        """Uniform over the legal moves after ``observations`` (see
        :class:`~ggp.players.base.PolicyPlayer`).

        Raises:
            OutOfTime: No history explaining ``observations`` was found by ``deadline``.
        """
        self.start(match)
        assert self._tracker is not None
        for observation in observations:
            self._tracker.observe(observation)
        moves = self._tracker.legal_moves(deadline - REPLY_MARGIN_S)
        return MovePolicy(moves, (1.0 / len(moves),) * len(moves))

    def stop(self, observation: Observation) -> None:
        self._tracker = None

    def abort(self) -> None:
        self._tracker = None
