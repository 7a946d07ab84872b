"""The Battlesnake paper's simple snakes as players: spec ``snake:POLICY`` with POLICY one
of ``greedy`` (the default), ``aggressive``, ``tailchaser``, ``reflex``
(:mod:`ggp.battlesnake.reflex`), for the games of ``games/battlesnake/``.

The player reads its board off the current state (:class:`~ggp.players.state_tracker.
StateTracker`, every move being public) and plays its policy's move; outside the move
phase (setup, food placement) its only legal move, ``noop``.

Example:
    >>> import numpy as np
    >>> from ggp.game import Game
    >>> from ggp.battlesnake.board import Board, SnakeBody, board_state
    >>> game = Game.from_file("games/battlesnake/duel_7x7.gdl")
    >>> board = Board(size=7, turn=3, snakes=(
    ...     SnakeBody(((1, 1), (1, 2), (1, 3)), health=97),
    ...     SnakeBody(((5, 5), (5, 4), (5, 3)), health=97)),
    ...     food=frozenset({(3, 1)}))
    >>> player = SnakePlayer("greedy", np.random.default_rng(0))
    >>> player.start(MatchInfo("m", game, game.role("snake1")))
    >>> str(player.choose_move(board_state(game, board)))
    'right'
"""

from __future__ import annotations

import math

import numpy as np

from ggp.battlesnake.board import read_board
from ggp.battlesnake.reflex import POLICIES
from ggp.errors import GameError
from ggp.gdl.terms import Term
from ggp.players.base import MatchInfo, Observation
from ggp.players.state_tracker import StateTracker
from ggp.reasoning.state_machine import State

__all__ = ["SnakePlayer", "snake_player"]


class SnakePlayer:
    """One of :data:`~ggp.battlesnake.reflex.POLICIES` as a :class:`~ggp.players.base.Player`."""

    def __init__(self, policy: str, rng: np.random.Generator | None = None) -> None:
        if policy not in POLICIES:
            raise GameError(f"no snake policy {policy!r} (policies: {', '.join(POLICIES)})")
        self.policy = policy
        self.name = f"snake:{policy}"
        self.rng = rng if rng is not None else np.random.default_rng()
        self._match: MatchInfo | None = None
        self._tracker: StateTracker | None = None
        self._index = -1

    def start(self, match: MatchInfo) -> None:
        snakes = [r for r in match.game.roles if r != match.game.random_role]
        props = match.game.base_propositions or ()
        if match.role not in snakes or not any(p.name == "head" for p in props):
            raise GameError(f"{self.name} plays the snakes of games/battlesnake/, not {match.role}")
        self._match = match
        self._index = snakes.index(match.role)
        self._tracker = StateTracker(match, self.rng)

    def play(self, observation: Observation, deadline: float) -> Term:
        if self._tracker is None:
            raise GameError("play() before start()")
        move = self.choose_move(self._tracker.observe(observation, deadline), deadline)
        self._tracker.replied(move)
        return move

    def choose_move(self, state: State, deadline: float = math.inf) -> Term:
        """The policy's move in ``state`` (the role's only move outside the move phase)."""
        match = self._match
        if match is None:
            raise GameError("choose_move() before start()")
        game = match.game
        legal = game.legal_moves(state, match.role)
        if len(legal) == 1:
            return legal[0]
        move = game.term(POLICIES[self.policy](read_board(game, state), self._index))
        return move if move in legal else legal[0]

    def stop(self, observation: Observation) -> None:
        self._tracker = None

    def abort(self) -> None:
        self._tracker = None

    def __repr__(self) -> str:
        return f"SnakePlayer({self.policy!r})"


def snake_player(argument: str | None, rng: np.random.Generator) -> SnakePlayer:
    """The player of spec ``snake[:POLICY]`` (default ``greedy``)."""
    return SnakePlayer(argument or "greedy", rng)
