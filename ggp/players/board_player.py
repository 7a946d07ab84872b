"""What the Battlesnake players share: the match's state (every move is public), the board
read off it, and the move sent back (:class:`BoardPlayer`)."""

from __future__ import annotations

import math

import numpy as np

from ggp.battlesnake.board import Board, read_board
from ggp.errors import GameError
from ggp.gdl.terms import Term
from ggp.players.base import MatchInfo
from ggp.players.state_tracker import TrackedPlayer
from ggp.reasoning.state_machine import State

__all__ = ["BoardPlayer"]


class BoardPlayer(TrackedPlayer):
    """A player of the games of ``games/battlesnake/`` that chooses from the board: a
    subclass says which move in :meth:`board_move`. Outside the move phase (setup, food
    placement) it plays its only legal move, ``noop``."""

    name = "board"

    def __init__(self, rng: np.random.Generator | None = None) -> None:
        super().__init__(rng)
        #: The player's snake among the snake roles (``random`` left out).
        self.index = -1

    def start(self, match: MatchInfo) -> None:
        snakes = [r for r in match.game.roles if r != match.game.random_role]
        props = match.game.base_propositions or ()
        if match.role not in snakes or not any(p.name == "head" for p in props):
            raise GameError(f"{self.name} plays the snakes of games/battlesnake/, not {match.role}")
        self.index = snakes.index(match.role)
        super().start(match)

    def choose_move(self, state: State, deadline: float = math.inf) -> Term:
        """The move in ``state``: :meth:`board_move`'s (the only one outside the move phase)."""
        match = self.started()
        game = match.game
        legal = game.legal_moves(state, match.role)
        if len(legal) == 1:
            return legal[0]
        move = game.term(self.board_move(read_board(game, state), deadline))
        return move if move in legal else legal[0]

    def board_move(self, board: Board, deadline: float) -> str:
        """``up``, ``down``, ``left`` or ``right`` for snake :attr:`index` of ``board``."""
        raise NotImplementedError
