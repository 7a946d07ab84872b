"""A player that picks a uniformly random legal move.

It knows only its observations, like any GDL-II player: to find its legal moves it keeps
one full history consistent with what it has seen (extending it by one step when it
can, sampling a new one by backtracking when it cannot) and asks the rules for the legal
moves in that history's current state. In a well-formed GDL-II game a role's legal moves
are the same in every state it cannot tell apart.
"""

from __future__ import annotations

import logging

import numpy as np

from ggp.errors import GameError
from ggp.gdl.terms import Term
from ggp.players.base import MatchInfo, Observation
from ggp.search.history import ObservationHistory
from ggp.search.sampler import (
    BacktrackingSampler,
    OutOfTime,
    SampledHistory,
    consistent_joint_moves,
)

__all__ = ["RandomPlayer", "HistoryTracker"]

logger = logging.getLogger(__name__)

#: Seconds before the deadline at which the random player stops looking for a history.
REPLY_MARGIN_S = 0.05


class HistoryTracker:
    """Keeps a role's observation history and one full history consistent with it.

    The full history is brought up to date when the legal moves are asked for: extended
    one step at a time while a consistent joint move continues it, drawn afresh by
    backtracking when none does. A consistent history found elsewhere (a search's
    sampled roots) can be handed over with :meth:`adopt`.
    """

    def __init__(self, match: MatchInfo, rng: np.random.Generator) -> None:
        self.game = match.game
        self.rng = rng
        self.history = ObservationHistory(match.role)
        self.sampler = BacktrackingSampler(match.game)
        self.sample: SampledHistory = SampledHistory((match.game.initial_state(),), ())

    def observe(self, observation: Observation) -> None:
        """Add the observation of the last step (nothing on turn 0)."""
        if observation.last_move is not None:
            self.history = self.history.extend(observation.last_move, observation.percepts)

    def adopt(self, sampled: SampledHistory) -> None:
        """Use ``sampled``, a full history consistent with all observations so far."""
        if len(sampled.joint_moves) != len(self.history):
            raise GameError(
                f"a history of {len(sampled.joint_moves)} steps cannot explain "
                f"{len(self.history)} observations"
            )
        self.sample = sampled

    def legal_moves(self, deadline: float | None = None) -> tuple[Term, ...]:
        """The role's legal moves now.

        Args:
            deadline: A ``time.monotonic()`` value. If no consistent history is found by
                then, the legal moves in the last one found are returned: a guess, which
                a game manager replaces by a random legal move if it is illegal (the
                search goes on from its dead ends at the next call).

        Raises:
            GameError: The observations contradict the rules, or the guess has no legal
                move.
        """
        moves = self.game.legal_moves(self.current(deadline).state, self.history.role)
        if not moves:
            raise GameError(f"no legal move for {self.history.role}")
        return moves

    def current(self, deadline: float | None = None) -> SampledHistory:
        """A full history consistent with every observation so far (or, if none is found
        by ``deadline``, the last one found, shorter or wrong: see :meth:`legal_moves`).

        Raises:
            GameError: The observations contradict the rules.
        """
        try:
            self._catch_up(deadline)
        except OutOfTime as e:
            logger.info("no history consistent with the observations in time (%s)", e)
        return self.sample

    def _catch_up(self, deadline: float | None) -> None:
        game = self.game
        while len(self.sample.joint_moves) < len(self.history):
            step = len(self.sample.joint_moves)
            state = self.sample.state
            if game.is_terminal(state):
                candidates = []
            else:
                candidates = consistent_joint_moves(game, state, self.history, step)
            if not candidates:
                self.sample = self.sampler.sample(self.history, self.rng, deadline=deadline)
                return
            joint = candidates[int(self.rng.integers(len(candidates)))]
            self.sample = SampledHistory(
                (*self.sample.states, game.next_state(state, joint)),
                (*self.sample.joint_moves, joint),
            )


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
        moves = self._tracker.legal_moves(deadline - REPLY_MARGIN_S)
        return moves[int(self.rng.integers(len(moves)))]

    def stop(self, observation: Observation) -> None:
        self._tracker = None

    def abort(self) -> None:
        self._tracker = None
