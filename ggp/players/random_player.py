"""A player that picks a uniformly random legal move.

It knows only its observations, like any GDL-II player: to find its legal moves it keeps
one full history consistent with what it has seen (extending it by one step when it
can, sampling a new one by backtracking when it cannot) and asks the rules for the legal
moves in that history's current state. In a well-formed GDL-II game a role's legal moves
are the same in every state it cannot tell apart.
"""

from __future__ import annotations

import numpy as np

from ggp.errors import GameError
from ggp.gdl.terms import Term
from ggp.players.base import MatchInfo, Observation
from ggp.search.history import ObservationHistory
from ggp.search.sampler import BacktrackingSampler, SampledHistory, consistent_joint_moves

__all__ = ["RandomPlayer", "HistoryTracker"]


class HistoryTracker:
    """Keeps a role's observation history and one full history consistent with it."""

    def __init__(self, match: MatchInfo, rng: np.random.Generator) -> None:
        self.game = match.game
        self.rng = rng
        self.history = ObservationHistory(match.role)
        self.sampler = BacktrackingSampler(match.game)
        self.sample: SampledHistory = SampledHistory((match.game.initial_state(),), ())

    def observe(self, observation: Observation) -> None:
        """Add the observation of the last step (nothing on turn 0)."""
        if observation.last_move is None:
            return
        self.history = self.history.extend(observation.last_move, observation.percepts)
        step = len(self.history) - 1
        state = self.sample.state
        if len(self.sample.joint_moves) == step and not self.game.is_terminal(state):
            candidates = consistent_joint_moves(self.game, state, self.history, step)
            if candidates:
                joint = candidates[int(self.rng.integers(len(candidates)))]
                self.sample = SampledHistory(
                    (*self.sample.states, self.game.next_state(state, joint)),
                    (*self.sample.joint_moves, joint),
                )
                return
        self.sample = self.sampler.sample(self.history, self.rng)

    def legal_moves(self) -> tuple[Term, ...]:
        """The role's legal moves now."""
        return self.game.legal_moves(self.sample.state, self.history.role)


class RandomPlayer:
    """Uniformly random legal moves, from the player's own observations only.

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
        moves = self._tracker.legal_moves()
        if not moves:
            raise GameError(f"no legal move for {self._tracker.history.role}")
        return moves[int(self.rng.integers(len(moves)))]

    def stop(self, observation: Observation) -> None:
        self._tracker = None

    def abort(self) -> None:
        self._tracker = None
