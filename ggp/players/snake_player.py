"""The Battlesnake paper's simple snakes as players: spec ``snake:POLICY`` with POLICY one
of ``greedy`` (the default), ``aggressive``, ``tailchaser``, ``reflex``
(:mod:`ggp.battlesnake.reflex`), for the games of ``games/battlesnake/``.

The player reads its board off the current state (:class:`~ggp.players.board_player.
BoardPlayer`) and plays its policy's move; outside the move phase (setup, food
placement) its only legal move, ``noop``.

Example:
    >>> import numpy as np
    >>> from ggp.game import Game
    >>> from ggp.battlesnake.board import Board, SnakeBody, board_state
    >>> from ggp.players.base import MatchInfo
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

import numpy as np

from ggp.battlesnake.board import Board
from ggp.battlesnake.reflex import POLICIES
from ggp.errors import GameError
from ggp.players.board_player import BoardPlayer

__all__ = ["SnakePlayer", "snake_player"]


class SnakePlayer(BoardPlayer):
    """One of :data:`~ggp.battlesnake.reflex.POLICIES` as a :class:`~ggp.players.base.Player`."""

    def __init__(self, policy: str, rng: np.random.Generator | None = None) -> None:
        if policy not in POLICIES:
            raise GameError(f"no snake policy {policy!r} (policies: {', '.join(POLICIES)})")
        super().__init__(rng)
        self.policy = policy
        self.name = f"snake:{policy}"

    def board_move(self, board: Board, deadline: float) -> str:
        return POLICIES[self.policy](board, self.index)

    def __repr__(self) -> str:
        return f"SnakePlayer({self.policy!r})"


def snake_player(argument: str | None, rng: np.random.Generator) -> SnakePlayer:
    """The player of spec ``snake[:POLICY]`` (default ``greedy``)."""
    return SnakePlayer(argument or "greedy", rng)
