"""The handcrafted opponents of the published evaluation (Partridge & Thielscher 2022,
"Hidden Information General Game Playing with Deep Learning and Search",
https://arxiv.org/abs/2207.07195), for Meier and Blind Tic-Tac-Toe.

Both play from their own observations only (their moves and percepts), as any GDL-II
player does; their legal moves come from a
:class:`~ggp.players.random_player.HistoryTracker`. Whatever a rule proposes, the move
played is always one of the legal moves.

Meier (:class:`MeierPlayer`). Claims rank ``31 < 32 < 41 < ... < 65 < 11 < 22 < ... <
66 < 21`` (ranks 0 to 20; 21, "Meier", is the highest).

- Claiming, with a roll it may truthfully claim (the roll beats the last claim): it
  claims the truth with probability ``(rank + 1) / 21``; otherwise it moves to a random
  higher claim and repeats the test from there.
- Claiming, with a roll it may not claim: a random legal claim.
- Facing a claim ``c``: it calls ``you_bluff`` with probability ``(rank(c) + 1) / 21``,
  else ``ask_roll``.

Blind Tic-Tac-Toe (:class:`BlindTicTacToePlayer`): the centre first, then a random
corner; then the corner opposite that corner if both attempts succeeded, otherwise a
corner adjacent to it; then a cell that completes a line of which it knows it holds the
other two cells; then a random corner it has not tried; otherwise a random legal move.

:func:`handcrafted_player` picks the player that fits a game, recognised by its moves
(Meier: ``(claim ?h ?l)``, ``ask_roll``, ``you_bluff``; Blind Tic-Tac-Toe:
``(mark ?row ?col)`` on a 3 x 3 board with the percept ``ok``).

Example:
    >>> import numpy as np
    >>> from pathlib import Path
    >>> import ggp
    >>> from ggp.game import Game
    >>> game = Game.from_file(Path(ggp.__file__).parents[1] / "games" / "meier.gdl")
    >>> type(handcrafted_player(game, np.random.default_rng(0))).__name__
    'MeierPlayer'
"""

from __future__ import annotations

import numpy as np

from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.terms import Const, Term
from ggp.players.base import MatchInfo, Observation, Player
from ggp.players.random_player import HistoryTracker

__all__ = [
    "MEIER_RANKS",
    "MeierPlayer",
    "BlindTicTacToePlayer",
    "HandcraftedPlayer",
    "handcrafted_player",
    "handcrafted_kind",
]

#: Meier values (high die, low die), lowest first: index = rank.
MEIER_RANKS: tuple[tuple[int, int], ...] = (
    (3, 1), (3, 2), (4, 1), (4, 2), (4, 3), (5, 1), (5, 2), (5, 3), (5, 4),
    (6, 1), (6, 2), (6, 3), (6, 4), (6, 5),
    (1, 1), (2, 2), (3, 3), (4, 4), (5, 5), (6, 6),
    (2, 1),
)  # fmt: skip

_RANK_OF = {value: rank for rank, value in enumerate(MEIER_RANKS)}
_CLAIMS = len(MEIER_RANKS)  # 21


def _ints(term: Term) -> tuple[int, ...] | None:
    """The arguments of ``term`` as ints, or None if one is not a number."""
    values = []
    for arg in term.args:
        if not arg.name.isdigit():
            return None
        values.append(int(arg.name))
    return tuple(values)


def meier_rank(claim: Term) -> int | None:
    """The rank (0..20) of a ``(claim ?high ?low)`` move, None for any other move.

    Example:
        >>> from ggp.gdl.parser import parse_term
        >>> meier_rank(parse_term("(claim 3 1)")), meier_rank(parse_term("(claim 2 1)"))
        (0, 20)
    """
    if claim.name != "claim" or claim.arity != 2:
        return None
    values = _ints(claim)
    if values is None:
        return None
    high, low = max(values), min(values)
    return _RANK_OF.get((high, low))


class _TrackingPlayer:
    """Shared plumbing: a history tracker for the legal moves, and the rng."""

    name = "handcrafted"

    def __init__(self, rng: np.random.Generator | None = None) -> None:
        self.rng = rng if rng is not None else np.random.default_rng()
        self._tracker: HistoryTracker | None = None

    def start(self, match: MatchInfo) -> None:
        self._tracker = HistoryTracker(match, self.rng)
        self._reset(match)

    def _reset(self, match: MatchInfo) -> None:
        """Forget the last match's memory."""

    def _legal(self, observation: Observation) -> tuple[Term, ...]:
        tracker = self._tracker
        if tracker is None:
            raise GameError("play() before start()")
        tracker.observe(observation)
        return tracker.legal_moves()

    def _random(self, moves: tuple[Term, ...] | list[Term]) -> Term:
        return moves[int(self.rng.integers(len(moves)))]

    def stop(self, observation: Observation) -> None:
        self._tracker = None

    def abort(self) -> None:
        self._tracker = None


class MeierPlayer(_TrackingPlayer):
    """The published handcrafted Meier player (see the module docstring).

    Args:
        rng: The source of randomness.
    """

    def _reset(self, match: MatchInfo) -> None:
        self.dice: tuple[int, int] | None = None  # (high, low) of the last roll seen
        self.claims: list[int] = []  # ranks of the claims seen, in order

    def _observe(self, percepts: frozenset[Term]) -> None:
        for percept in percepts:
            if percept.name == "my_dice" and percept.arity == 2:
                values = _ints(percept)
                if values is not None:
                    self.dice = (max(values), min(values))
            elif percept.name == "does" and percept.arity == 2:
                rank = meier_rank(percept.args[1])
                if rank is not None:
                    self.claims.append(rank)

    def play(self, observation: Observation, deadline: float) -> Term:
        moves = self._legal(observation)
        self._observe(observation.percepts)
        if len(moves) == 1:
            return moves[0]
        claims = {rank: move for move in moves if (rank := meier_rank(move)) is not None}
        if claims:
            return self._claim(claims, moves)
        by_name = {move.name: move for move in moves}
        if "you_bluff" in by_name and "ask_roll" in by_name and self.claims:
            return by_name["you_bluff" if self._calls() else "ask_roll"]
        return self._random(moves)

    def _calls(self) -> bool:
        """Whether to call ``you_bluff`` on the last claim (``self.claims[-1]``)."""
        return bool(self.rng.random() < (self.claims[-1] + 1) / _CLAIMS)

    def _claim(self, claims: dict[int, Term], moves: tuple[Term, ...]) -> Term:
        """The claim to make, from the legal ones (by rank)."""
        truth = _RANK_OF.get(self.dice) if self.dice is not None else None
        if truth is None or truth not in claims:
            return self._random(sorted(claims.values()))
        rank = truth
        while self.rng.random() >= (rank + 1) / _CLAIMS:
            higher = sorted(r for r in claims if r > rank)
            if not higher:
                break
            rank = higher[int(self.rng.integers(len(higher)))]
        return claims[rank]


Cell = tuple[int, int]
_CENTRE: Cell = (2, 2)
_CORNERS: tuple[Cell, ...] = ((1, 1), (1, 3), (3, 1), (3, 3))
_LINES: tuple[tuple[Cell, Cell, Cell], ...] = (
    *(((r, 1), (r, 2), (r, 3)) for r in (1, 2, 3)),
    *(((1, c), (2, c), (3, c)) for c in (1, 2, 3)),
    ((1, 1), (2, 2), (3, 3)),
    ((1, 3), (2, 2), (3, 1)),
)


def _cell(move: Term) -> Cell | None:
    if move.name != "mark" or move.arity != 2:
        return None
    values = _ints(move)
    return (values[0], values[1]) if values is not None else None


class BlindTicTacToePlayer(_TrackingPlayer):
    """The published handcrafted Blind Tic-Tac-Toe player (see the module docstring).

    Args:
        rng: The source of randomness.
    """

    def _reset(self, match: MatchInfo) -> None:
        self.tried: list[tuple[Cell, bool]] = []  # in order: cell, whether it got it

    def play(self, observation: Observation, deadline: float) -> Term:
        moves = self._legal(observation)
        last = observation.last_move
        if last is not None and (cell := _cell(last)) is not None:
            self.tried.append((cell, Const("ok") in observation.percepts))
        legal = {cell: move for move in moves if (cell := _cell(move)) is not None}
        choice = self._choose(legal)
        return legal[choice] if choice is not None else self._random(moves)

    def _choose(self, legal: dict[Cell, Term]) -> Cell | None:
        tried = {cell for cell, _ in self.tried}
        held = {cell for cell, ok in self.tried if ok}
        untried = [cell for cell in legal if cell not in tried]
        if not self.tried and _CENTRE in legal:
            return _CENTRE
        if len(self.tried) == 1:
            corners = [c for c in _CORNERS if c in untried]
            if corners:
                return corners[int(self.rng.integers(len(corners)))]
        if len(self.tried) == 2 and self.tried[1][0] in _CORNERS:
            (centre, centre_ok), (corner, corner_ok) = self.tried
            r, c = corner
            if centre == _CENTRE and centre_ok and corner_ok:
                options = [(4 - r, 4 - c)]
            else:
                options = [(r, 4 - c), (4 - r, c)]
            options = [cell for cell in options if cell in untried]
            if options:
                return options[int(self.rng.integers(len(options)))]
        completing = sorted(
            {
                cell
                for line in _LINES
                for cell in line
                if cell in untried and sum(other in held for other in line) == 2
            }
        )
        if completing:
            return completing[int(self.rng.integers(len(completing)))]
        corners = [c for c in _CORNERS if c in untried]
        if corners:
            return corners[int(self.rng.integers(len(corners)))]
        cells = sorted(legal)
        return cells[int(self.rng.integers(len(cells)))] if cells else None


def handcrafted_kind(game: Game) -> str | None:
    """``"meier"``, ``"blindtictactoe"`` or None: which handcrafted player fits ``game``.

    Recognised by the moves of the first player role (from the propnet when the game
    has one, else from the legal moves of the initial state and the file name).
    """
    moves: set[str] = set()
    for role in game.player_roles:
        found = game.all_moves(role)
        if found is None:
            found = game.legal_moves(game.initial_state(), role)
        moves.update(m.name for m in found)
    if {"claim", "ask_roll", "you_bluff"} <= moves:
        return "meier"
    cells: set[Cell] = set()
    for role in game.player_roles:
        cells.update(c for m in game.all_moves(role) or () if (c := _cell(m)) is not None)
    if moves == {"mark"} and cells == {(r, c) for r in (1, 2, 3) for c in (1, 2, 3)}:
        return "blindtictactoe"
    return None


class HandcraftedPlayer:
    """The handcrafted player of whatever game the match is for, chosen at ``start``.

    Args:
        rng: The source of randomness.

    Raises:
        GameError: (from :meth:`start`) the game has no handcrafted player.
    """

    name = "handcrafted"

    def __init__(self, rng: np.random.Generator | None = None) -> None:
        self.rng = rng if rng is not None else np.random.default_rng()
        self._player: Player | None = None

    def start(self, match: MatchInfo) -> None:
        self._player = handcrafted_player(match.game, self.rng)
        self._player.start(match)

    def play(self, observation: Observation, deadline: float) -> Term:
        if self._player is None:
            raise GameError("play() before start()")
        return self._player.play(observation, deadline)

    def stop(self, observation: Observation) -> None:
        if self._player is not None:
            self._player.stop(observation)

    def abort(self) -> None:
        if self._player is not None:
            self._player.abort()


def handcrafted_player(game: Game, rng: np.random.Generator | None = None) -> Player:
    """The handcrafted player for ``game``.

    Raises:
        GameError: The game has no handcrafted player (only Meier and Blind Tic-Tac-Toe
            have one).
    """
    kind = handcrafted_kind(game)
    if kind == "meier":
        return MeierPlayer(rng)
    if kind == "blindtictactoe":
        return BlindTicTacToePlayer(rng)
    raise GameError(
        f"no handcrafted player for {game.description.path}: there is one for Meier and "
        "for Blind Tic-Tac-Toe only"
    )
