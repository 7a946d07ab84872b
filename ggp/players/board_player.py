"""What the Battlesnake players share: the match's state (every move is public), the board
read off it, and the move sent back (:class:`BoardPlayer`)."""

from __future__ import annotations

import math

import numpy as np

from ggp.battlesnake.board import Board, read_board
from ggp.errors import GameError
from ggp.gdl.terms import Term
from ggp.players.base import MatchInfo, Observation
from ggp.players.state_tracker import StateTracker
from ggp.reasoning.state_machine import State

__all__ = ["BoardPlayer"]


class BoardPlayer:
    """A player of the games of ``games/battlesnake/`` that chooses from the board: a
    subclass says which move in :meth:`board_move`. Outside the move phase (setup, food
    placement) it plays its only legal move, ``noop``."""

    name = "board"

    def __init__(self, rng: np.random.Generator | None = None) -> None:
        self.rng = rng if rng is not None else np.random.default_rng()
        self._match: MatchInfo | None = None
        self._tracker: StateTracker | None = None
        #: The player's snake among the snake roles (``random`` left out).
        self.index = -1

    def start(self, match: MatchInfo) -> None:
        snakes = [r for r in match.game.roles if r != match.game.random_role]
        props = match.game.base_propositions or ()
        if match.role not in snakes or not any(p.name == "head" for p in props):
            raise GameError(f"{self.name} plays the snakes of games/battlesnake/, not {match.role}")
        self._match = match
        self.index = snakes.index(match.role)
        self._tracker = StateTracker(match, self.rng)

    def play(self, observation: Observation, deadline: float) -> Term:
        if self._tracker is None:
            raise GameError("play() before start()")
        move = self.choose_move(self._tracker.observe(observation, deadline), deadline)
        self._tracker.replied(move)
        return move

    def choose_move(self, state: State, deadline: float = math.inf) -> Term:
        """The move in ``state``: :meth:`board_move`'s (the only one outside the move phase)."""
        match = self._match
        if match is None:
            raise GameError("choose_move() before start()")
        game = match.game
        legal = game.legal_moves(state, match.role)
        if len(legal) == 1:
            return legal[0]
        move = game.term(self.board_move(read_board(game, state), deadline))
        return move if move in legal else legal[0]

    def board_move(self, board: Board, deadline: float) -> str:
        """``up``, ``down``, ``left`` or ``right`` for snake :attr:`index` of ``board``."""
        raise NotImplementedError

    def stop(self, observation: Observation) -> None:
        self._tracker = None

    def abort(self) -> None:
        self._tracker = None
