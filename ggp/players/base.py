"""The :class:`Player` protocol: what every player (random, CFR, a person, a remote
program) offers to whoever runs a match.

The calls mirror the GDL-II protocol's messages (START, PLAY, STOP, ABORT): a player
learns its role and the rules at the start, and then, each turn, only what its role may
know — the move the referee actually applied for it last turn and its percepts. A player
never sees the true state, nor HTTP.

A player may also say with what probabilities it would play each move at an information
set (:class:`PolicyPlayer`, used by ``ggp exploit``); a player that cannot is estimated
from repeated :meth:`Player.play` calls (:func:`ggp.players.policy.policy_of`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ggp.game import Game
from ggp.gdl.terms import Const, Term
from ggp.reasoning.state_machine import State

__all__ = [
    "MatchInfo",
    "MovePolicy",
    "Observation",
    "Player",
    "PolicyPlayer",
    "StatePlayer",
    "warn_if_no_time",
]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class MatchInfo:
    """What a player is told when a match starts.

    Attributes:
        match_id: The referee's name for the match.
        game: The game's rules.
        role: The role this player plays.
        start_clock_s: Seconds allowed for set-up before the first move.
        play_clock_s: Seconds allowed for each move.
    """

    match_id: str
    game: Game
    role: Const
    start_clock_s: float = 10.0
    play_clock_s: float = 1.0


def warn_if_no_time(player: str, match: MatchInfo, margin_s: float) -> None:
    """Warn (once per match) when the play clock leaves ``player`` no time after the
    seconds it keeps back: it would answer from an empty search."""
    if match.play_clock_s <= margin_s:
        logger.warning(
            "%s: the play clock of %g s leaves no time after its margin of %g s: it will "
            "not search (set a smaller margin=)",
            player,
            match.play_clock_s,
            margin_s,
        )


@dataclass(frozen=True)
class Observation:
    """What a role learns at one step, as a GDL-II PLAY message carries it.

    Attributes:
        turn: 0 for the first move, then one more each step.
        last_move: The move the referee applied for this role on the previous step
            (None on turn 0).
        percepts: What ``sees`` gave this role after the previous joint move
            (empty on turn 0).
    """

    turn: int
    last_move: Term | None
    percepts: frozenset[Term]


@runtime_checkable
class Player(Protocol):
    """A game-playing agent; see the module docstring."""

    name: str

    def start(self, match: MatchInfo) -> None:
        """Prepare for a match (ground the rules, load networks, ...)."""
        ...

    def play(self, observation: Observation, deadline: float) -> Term:
        """Choose a move before ``deadline`` (a ``time.monotonic()`` value)."""
        ...

    def stop(self, observation: Observation) -> None:
        """The match ended; ``observation`` carries the final percepts."""
        ...

    def abort(self) -> None:
        """The match was cancelled."""
        ...


@dataclass(frozen=True)
class MovePolicy:
    """The probabilities with which a player plays each of its moves at one decision.

    Attributes:
        moves: ``[M]`` the moves it may play.
        probabilities: ``[M]`` the probability of each (they sum to 1).
    """

    moves: tuple[Term, ...]
    probabilities: tuple[float, ...]


@runtime_checkable
class PolicyPlayer(Player, Protocol):
    """A player that can say how it would play, not only play (see the module docstring)."""

    def policy(
        self, match: MatchInfo, observations: Sequence[Observation], deadline: float
    ) -> MovePolicy:
        """How a fresh player of ``match.role`` would play after ``observations``.

        The answer is the distribution :meth:`play` draws its move from, computed as
        :meth:`play` computes it (a search player searches, under ``deadline``), for a
        player that was started for ``match`` and then sent ``observations`` (turn 0
        first, the turn to play last), its own earlier moves being the ``last_move`` of
        each. It ends any match in progress, as :meth:`start` does.

        Args:
            match: The match (its game and the role).
            observations: ``[turns]`` what the role observed, one per turn so far.
            deadline: A ``time.monotonic()`` value.
        """
        ...


@runtime_checkable
class StatePlayer(Player, Protocol):
    """A player of perfect-information games that can also choose from a state handed to
    it (the Battlesnake API sends whole boards, not moves)."""

    def choose_move(self, state: State, deadline: float = ...) -> Term:
        """Its move in ``state`` (after :meth:`Player.start`), before ``deadline``."""
        ...
