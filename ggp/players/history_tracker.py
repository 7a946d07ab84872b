"""A role's observations and one full history of the game that explains them.

Every player needs its legal moves, and a GDL-II player knows only its observations: the
moves the referee applied for it and its percepts. :class:`HistoryTracker` keeps one full
history consistent with them (extending it by one step when it can, sampling a new one
by backtracking when it cannot) and answers with the role's legal moves in that history's
current state. In a well-formed GDL-II game a role's legal moves are the same in every
state it cannot tell apart.

Two promises:

- It never answers from an older, shorter history: if no history explaining the latest
  observations is found by the deadline, :class:`~ggp.search.clock.OutOfTime` is raised
  (the search goes on from there at the next call).
- When no history of the rules explains the observations (a game manager that reports
  other percepts than the rules give), it has *lost track*: it says so once in the log
  and resynchronises from the moves the manager reports, keeping the steps it could
  explain and going on with the reported moves (percepts where they fit, else the
  role's own applied move), and it stops offering the moves the manager has replaced.
"""

from __future__ import annotations

import logging

import numpy as np

from ggp.errors import GameError, NoConsistentHistoryError
from ggp.gdl.terms import Term
from ggp.players.base import MatchInfo, Observation
from ggp.reasoning.state_machine import JointMove, State
from ggp.search.clock import OutOfTime
from ggp.search.consistency import SampledHistory, consistent_joint_moves
from ggp.search.history import ObservationHistory
from ggp.search.independent_samplers import BacktrackingSampler

__all__ = ["HistoryTracker"]

logger = logging.getLogger(__name__)


#: Histories drawn afresh, at most, when the kept one leaves the role no legal move.
REDRAWS = 20


class HistoryTracker:
    """Keeps a role's observation history and one full history consistent with it.

    The full history is brought up to date when it or the legal moves are asked for:
    extended one step at a time while a consistent joint move continues it, drawn afresh
    by backtracking when none does. A consistent history found elsewhere (a search's
    sampled roots) can be handed over with :meth:`adopt`. See the module docstring for
    what happens when the observations contradict the rules.

    Args:
        match: The match (its game and the role).
        rng: Picks among the consistent histories.

    Attributes:
        game: The rules.
        history: Everything the role has observed.
        sample: The full history kept (it may be shorter than ``history`` until the next
            call of :meth:`current`).
        replaced: Moves this player sent that the manager replaced by another (late or
            illegal), in the order it happened.
    """

    def __init__(self, match: MatchInfo, rng: np.random.Generator) -> None:
        self.game = match.game
        self.rng = rng
        self.history = ObservationHistory(match.role)
        self.sampler = BacktrackingSampler(match.game)
        self.sample: SampledHistory = SampledHistory((match.game.initial_state(),), ())
        self.replaced: list[Term] = []
        self._sent: Term | None = None
        self._lost_at: int | None = None  # the first step no history of the rules explains

    @property
    def lost(self) -> bool:
        """Whether no history of the rules explains the observations, so that the kept
        history follows the moves the manager reports instead (see the module docstring)."""
        return self._lost_at is not None

    def replied(self, move: Term) -> None:
        """Note the move this player sent for the current step (to learn, at the next
        observation, whether the manager applied it or replaced it)."""
        self._sent = move

    def observe(self, observation: Observation) -> None:
        """Add the observation of the last step (nothing on turn 0)."""
        sent, self._sent = self._sent, None
        if observation.last_move is None:
            return
        if sent is not None and sent != observation.last_move and sent not in self.replaced:
            logger.info(
                "%s: the manager applied %s instead of %s",
                self.history.role,
                observation.last_move,
                sent,
            )
            self.replaced.append(sent)
        self.history = self.history.extend(observation.last_move, observation.percepts)

    def adopt(self, sampled: SampledHistory) -> None:
        """Use ``sampled``, a full history consistent with all observations so far.

        Raises:
            GameError: ``sampled`` has another number of steps than the observations.
        """
        if len(sampled.joint_moves) != len(self.history):
            raise GameError(
                f"a history of {len(sampled.joint_moves)} steps cannot explain "
                f"{len(self.history)} observations"
            )
        if not self.lost:
            self.sample = sampled

    def legal_moves(self, deadline: float | None = None) -> tuple[Term, ...]:
        """The role's legal moves now (in the kept history's current state).

        When the tracker has lost track, the moves the manager replaced are left out
        (unless nothing else is left).

        Args:
            deadline: A ``time.monotonic()`` value (None: no limit).

        Raises:
            OutOfTime: No history explaining the latest observations found by
                ``deadline`` (the search goes on from there at the next call).
            NoConsistentHistoryError: Not even the reported moves can be followed.
            GameError: The role has no legal move in the kept history's state, and
                :data:`REDRAWS` other histories of the observations had none either.
        """
        role = self.history.role
        moves = self.game.legal_moves(self.current(deadline).state, role)
        redraws = 0
        while not moves and not self.lost and redraws < REDRAWS:
            # A history the role saw, in which it could not move: it is being asked to
            # move, so that is not the true one (hidden legal moves: Blind Breakthrough).
            self.sample = self.sampler.sample(self.history, self.rng, deadline=deadline)
            moves = self.game.legal_moves(self.sample.state, role)
            redraws += 1
        if not moves:
            raise GameError(f"no legal move for {role}")
        if self.lost and self.replaced:
            fresh = tuple(m for m in moves if m not in self.replaced)
            return fresh or moves
        return moves

    def current(self, deadline: float | None = None) -> SampledHistory:
        """A full history of every step observed so far, consistent with every
        observation (or, once the tracker has lost track, with the reported moves).

        Raises:
            OutOfTime: None found by ``deadline`` (a ``time.monotonic()`` value).
            NoConsistentHistoryError: Not even the reported moves can be followed.
        """
        if self.lost:
            self._follow_reported_moves()
            return self.sample
        try:
            self._catch_up(deadline)
        except NoConsistentHistoryError as e:
            self._lose_track(e)
            self._follow_reported_moves()
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
                try:
                    self.sample = self.sampler.sample(self.history, self.rng, deadline=deadline)
                except OutOfTime:
                    logger.info(
                        "%s: no history of the %d observations found in time",
                        self.history.role,
                        len(self.history),
                    )
                    raise
                return
            self.sample = self._extended(state, int(self.rng.integers(len(candidates))), candidates)

    def _extended(self, state: State, index: int, joints: list[JointMove]) -> SampledHistory:
        """The kept history one step longer, by ``joints[index]`` from ``state``."""
        joint = joints[index]
        return SampledHistory(
            (*self.sample.states, self.game.next_state(state, joint)),
            (*self.sample.joint_moves, joint),
        )

    def _lose_track(self, error: NoConsistentHistoryError) -> None:
        """Keep the history so far (it explains the observations it covers) and say once
        that the rest will follow the reported moves."""
        self._lost_at = len(self.sample.joint_moves)
        logger.warning(
            "%s lost track of the game after %d of %d steps (%s); resynchronising from the "
            "moves the manager reports",
            self.history.role,
            self._lost_at,
            len(self.history),
            error,
        )

    def _follow_reported_moves(self) -> None:
        """Extend the kept history by the moves the manager reported: joint moves that
        give the role its percepts where there are any, else any legal joint move with
        the role's applied move (or, if that is illegal in the kept state, any legal one).

        Raises:
            NoConsistentHistoryError: The kept history ended (a terminal state) before
                the manager's match did.
        """
        game = self.game
        role = self.history.role
        me = game.role_index(role)
        while len(self.sample.joint_moves) < len(self.history):
            step = len(self.sample.joint_moves)
            state = self.sample.state
            if game.is_terminal(state):
                raise NoConsistentHistoryError(
                    f"{role} cannot follow the reported moves: its history of the game "
                    f"ended after {step} of {len(self.history)} steps"
                )
            candidates = consistent_joint_moves(game, state, self.history, step)
            if not candidates:
                legal = [game.legal_moves(state, r) for r in game.roles]
                own = self.history.moves[step]
                if own in legal[me]:
                    legal[me] = (own,)
                candidates = [tuple(moves[int(self.rng.integers(len(moves)))] for moves in legal)]
            self.sample = self._extended(state, int(self.rng.integers(len(candidates))), candidates)
