"""The current state of a match, for players that choose from a state (the classic
searches, the Battlesnake reflex snakes).

In a classic GDL game every role sees every joint move, as ``(did ROLE MOVE)`` percepts
(:mod:`ggp.gdl.embed`), and the tracker replays them from the initial state. In a GDL-II
game with hidden information it follows one full history consistent with the role's
observations (:class:`~ggp.players.history_tracker.HistoryTracker`; one that has not
ended the game): a single determinisation, sound for the game's public parts only. It
never falls back on an older, shorter history: when no history of the latest
observations is found in time, :class:`~ggp.search.clock.OutOfTime` reaches the referee,
which plays a legal move for the player.
"""

from __future__ import annotations

import logging
import math

import numpy as np

from ggp.errors import GameError
from ggp.gdl.terms import Func, Term
from ggp.players.base import MatchInfo, Observation
from ggp.players.history_tracker import REDRAWS, HistoryTracker
from ggp.reasoning.state_machine import State

__all__ = ["StateTracker", "TrackedPlayer", "public_joint_move"]

logger = logging.getLogger(__name__)


class StateTracker:
    """The state after each observation of one match (see the module docstring).

    Args:
        match: The match, as the player was told at its start.
        rng: The source of randomness (history sampling in GDL-II games).
    """

    def __init__(self, match: MatchInfo, rng: np.random.Generator) -> None:
        self.match = match
        self.rng = rng
        self.state: State = match.game.initial_state()
        self._observations: list[Observation] = []
        self._history: HistoryTracker | None = None

    def observe(self, observation: Observation, deadline: float) -> State:
        """The state after ``observation``.

        Raises:
            OutOfTime: No history of the latest observations found by ``deadline``.
            NoConsistentHistoryError: Not even the reported moves can be followed.
        """
        game = self.match.game
        self._observations.append(observation)
        if observation.last_move is None:
            return self.state
        if self._history is None and game.moves_public:
            joint = public_joint_move(game.roles, observation.percepts)
            if joint is not None:
                try:
                    self.state = game.next_state(self.state, joint)
                    return self.state
                except GameError as e:
                    logger.warning("the reported moves are not legal here (%s)", e)
        return self._tracked_state(deadline)

    def replied(self, move: Term) -> None:
        """The player sent ``move`` for the state :meth:`observe` gave."""
        if self._history is not None:
            self._history.replied(move)

    def _tracked_state(self, deadline: float) -> State:
        """A state consistent with every observation (a GDL-II game, or a classic game
        whose percepts do not name every move), where the role can move and, if such a
        history is found in :data:`REDRAWS` draws, the game is not over (the role is
        asked to move, so a history that ended the game is not the true one)."""
        match = self.match
        game = match.game
        if self._history is None:
            history = HistoryTracker(match, self.rng)
            for earlier in self._observations[:-1]:
                history.observe(earlier)
            self._history = history
        history = self._history
        history.observe(self._observations[-1])
        history.legal_moves(deadline)  # a history of the latest observations, or raise
        state = history.current(deadline).state
        redraws = 0
        while game.is_terminal(state) and not history.lost and redraws < REDRAWS:
            sample = history.sampler.sample(history.history, self.rng, deadline=deadline)
            redraws += 1
            if not game.is_terminal(sample.state) and game.legal_moves(sample.state, match.role):
                history.adopt(sample)
                state = sample.state
        self.state = state
        return state


def public_joint_move(
    roles: tuple[Term, ...], percepts: frozenset[Term]
) -> tuple[Term, ...] | None:
    """The joint move the ``(did ROLE MOVE)`` percepts name, None unless they name one
    move for every role."""
    by_role: dict[Term, Term] = {}
    for percept in percepts:
        if isinstance(percept, Func) and percept.name == "did" and percept.arity == 2:
            by_role[percept.args[0]] = percept.args[1]
    if len(by_role) != len(roles) or any(r not in by_role for r in roles):
        return None
    return tuple(by_role[r] for r in roles)


class TrackedPlayer:
    """A player that follows the match's state with a :class:`StateTracker` and picks its
    move from the state: a subclass says which in :meth:`choose_move`, asked only when the
    role has a choice (a single legal move is played as it is)."""

    name = "tracked"

    def __init__(self, rng: np.random.Generator | None = None) -> None:
        self.rng = rng if rng is not None else np.random.default_rng()
        self._match: MatchInfo | None = None
        self._tracker: StateTracker | None = None

    def start(self, match: MatchInfo) -> None:
        self._match = match
        self._tracker = StateTracker(match, self.rng)

    def started(self) -> MatchInfo:
        """The match being played.

        Raises:
            GameError: The player has not been started.
        """
        if self._match is None:
            raise GameError("the player was asked for a move before start()")
        return self._match

    def play(self, observation: Observation, deadline: float) -> Term:
        match, tracker = self.started(), self._tracker
        if tracker is None:
            raise GameError("play() after the match ended")
        # A single query to a slow reasoner (the prover) that would run past the
        # deadline stops there with OutOfTime, for the caller's fallback move.
        with match.game.until(deadline):
            state = tracker.observe(observation, deadline)
            legal = match.game.legal_moves(state, match.role)
            if len(legal) == 1:
                move = legal[0]
                self.no_choice(state, deadline)
            else:
                move = self.choose_move(state, deadline)
        tracker.replied(move)
        return move

    def choose_move(self, state: State, deadline: float = math.inf) -> Term:
        """The move in ``state``, where the role has more than one legal move."""
        raise NotImplementedError

    def no_choice(self, state: State, deadline: float) -> None:
        """Called at a step where the role has one legal move (played without asking
        :meth:`choose_move`); a player may use the time, until ``deadline``, to think
        ahead. Nothing by default."""

    def stop(self, observation: Observation) -> None:
        self._tracker = None

    def abort(self) -> None:
        self._tracker = None
