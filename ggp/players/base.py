"""The :class:`Player` protocol: what every player (random, CFR, a person, a remote
program) offers to whoever runs a match.

The calls mirror the GDL-II protocol's messages (START, PLAY, STOP, ABORT): a player
learns its role and the rules at the start, and then, each turn, only what its role may
know — the move the referee actually applied for it last turn and its percepts. A player
never sees the true state, nor HTTP.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from ggp.game import Game
from ggp.gdl.terms import Const, Term

__all__ = ["MatchInfo", "Observation", "Player"]


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
