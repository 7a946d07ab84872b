"""Exact values of Blind Tic-Tac-Toe against the uniformly random player: the ceiling of
the "vs random" column of the evaluation table.

The random player's legal moves are the cells it has not tried yet, whatever the board
(``games/blindtictactoe.gdl``), so it tries the nine cells in a uniformly random order,
independent of everything that happens; the tiebreak of a clash is a fair coin. Against
it, the best a player can do is a best response: at each of its information sets (its
own tries, and which of them showed ``ok``), the move with the highest expected score
under its belief about the hidden part of the state. That belief is a weighted set of
(cells the opponent has tried, cells the opponent holds); it is exact, so the recursion
below gives the exact value. Information sets that agree up to a symmetry of the board
are solved once.

The rules are the same for x and o (they move at the same time, and the tiebreak is
fair), so each value holds for either role. Values are in goal points (0..100), which is
also the evaluation's score (a win counts 1, a draw 0.5). Cells are numbered 0..8 row by
row: cell ``3 * (row - 1) + (col - 1)`` is ``(mark row col)``.

Example (a player who tries the centre, the corners, then the edges, always in the same
order, scores 73.4 against random play; the best response scores 82.72):
    >>> order = (4, 0, 8, 2, 6, 1, 3, 5, 7)
    >>> def in_order(tried, held):
    ...     return {next(c for c in order if not tried >> c & 1): 1.0}
    >>> round(policy_value(in_order), 2)
    73.4
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from math import gcd

from ggp.game import Game
from ggp.gdl.terms import Const, Term
from ggp.players.base import MatchInfo, Observation

__all__ = [
    "BestResponse",
    "BestResponsePlayer",
    "Policy",
    "best_response_value",
    "models",
    "policy_value",
    "shared_best_response",
]

#: A player's strategy: (cells it has tried, cells it holds), as 9-bit masks, to the
#: probability of trying each untried cell. (Its information set also has the order of
#: its tries; a policy here ignores the order.)
Policy = Callable[[int, int], Mapping[int, float]]

_FULL = (1 << 9) - 1
_LINES = ((0, 1, 2), (3, 4, 5), (6, 7, 8), (0, 3, 6), (1, 4, 7), (2, 5, 8), (0, 4, 8), (2, 4, 6))
_HAS_LINE = tuple(
    any(mask & sum(1 << c for c in line) == sum(1 << c for c in line) for line in _LINES)
    for mask in range(1 << 9)
)
_UNTRIED = tuple(tuple(c for c in range(9) if not mask >> c & 1) for mask in range(1 << 9))


def _symmetries() -> tuple[tuple[int, ...], ...]:
    """The 8 symmetries of the board, each as a table mask -> image of the mask."""
    rotate = (6, 3, 0, 7, 4, 1, 8, 5, 2)  # cell -> cell after a quarter turn
    mirror = (2, 1, 0, 5, 4, 3, 8, 7, 6)
    maps: list[tuple[int, ...]] = []
    cells = tuple(range(9))
    for _ in range(4):
        maps.append(cells)
        maps.append(tuple(mirror[c] for c in cells))
        cells = tuple(rotate[c] for c in cells)
    return tuple(
        tuple(sum(1 << image[c] for c in range(9) if mask >> c & 1) for mask in range(1 << 9))
        for image in maps
    )


_SYMMETRIES = _symmetries()

#: Hidden part of the state: (cells the opponent tried, cells it holds, weight). Weights
#: are integers: every step multiplies them by 2 (no clash: both tiebreaks) or 1 (a clash:
#: one tiebreak), and the common factor 1 / (2 * untried) is applied to the value.
_Belief = tuple[tuple[int, int, int], ...]


def _score(mine: int, theirs: int) -> float | None:
    """The player's goal if the board (its cells, the opponent's) is terminal, else None."""
    ours, their_line = _HAS_LINE[mine], _HAS_LINE[theirs]
    if ours and their_line:
        return 50.0
    if ours:
        return 100.0
    if their_line:
        return 0.0
    if mine | theirs == _FULL:
        return 50.0
    return None


def best_response_value() -> float:
    """The best score any player can expect against the random player, as x or as o.

    It takes about 20 s and 400 MB: the information sets are solved once per symmetry
    class.
    """
    return BestResponse().value()


class BestResponse:
    """The best response to the random player, solved lazily and kept: its value at
    every information set the player reaches, and the move that gets it.

    An information set is ``(tried, held, belief)``: the cells the player has tried and
    those it holds (9-bit masks), and the weighted hidden states (cells the opponent has
    tried, cells it holds, integer weight) that agree with what it saw and in which the
    game has not ended. :meth:`after` follows one step of play.
    """

    #: The information set at the start of the game.
    START: tuple[int, int, _Belief] = (0, 0, ((0, 0, 1),))

    def __init__(self) -> None:
        self._values: dict[tuple[int, int, _Belief], float] = {}

    def value(self, tried: int = 0, held: int = 0, belief: _Belief | None = None) -> float:
        """The best expected score from an information set (default: the start)."""
        if belief is None:
            tried, held, belief = self.START
        return self._solve(tried, held, belief) / sum(w for _, _, w in belief)

    def best_cell(self, tried: int, held: int, belief: _Belief) -> int:
        """A cell with the best expected score (the lowest-numbered one on ties)."""
        return max(
            _UNTRIED[tried],
            key=lambda cell: (_move_value(tried, held, belief, cell, self._solve), -cell),
        )

    @staticmethod
    def after(
        tried: int, held: int, belief: _Belief, cell: int, ok: bool
    ) -> tuple[int, int, _Belief]:
        """The information set after trying ``cell`` and seeing ``ok`` (or not), given
        that the game goes on.

        Raises:
            ValueError: ``cell`` was tried before, or the game cannot go on that way.
        """
        _, after = _step(tried, held, belief, cell)
        if not after[ok]:
            raise ValueError(f"trying cell {cell} cannot {'' if ok else 'fail to '}give ok here")
        bit = 1 << cell
        return tried | bit, held | bit if ok else held, _normalised(after[ok])[1]

    def _solve(self, tried: int, held: int, belief: _Belief) -> float:
        key = _canonical(tried, held, belief)
        value = self._values.get(key)
        if value is None:
            value = max(_move_value(*key, cell, self._solve) for cell in _UNTRIED[key[0]])
            self._values[key] = value
        return value


def policy_value(policy: Policy) -> float:
    """The expected score of ``policy`` against the random player, as x or as o.

    The symmetries of the board are not used (a policy need not respect them), so a
    policy that spreads over many cells is slow: uniform play takes about 2 minutes.
    """

    @cache
    def solve(tried: int, held: int, belief: _Belief) -> float:
        return sum(
            p * _move_value(tried, held, belief, cell, solve)
            for cell, p in policy(tried, held).items()
            if p > 0
        )

    return solve(*BestResponse.START)


def _move_value(
    tried: int,
    held: int,
    belief: _Belief,
    cell: int,
    solve: Callable[[int, int, _Belief], float],
) -> float:
    """sum(weight * expected score) over ``belief`` when the player tries ``cell`` and
    then plays on by ``solve``."""
    total, after = _step(tried, held, belief, cell)
    bit = 1 << cell
    for seen_ok, states in enumerate(after):
        if states:
            common, child = _normalised(states)
            total += common * solve(tried | bit, held | bit if seen_ok else held, child)
    return total / (2 * len(_UNTRIED[tried]))


_Next = tuple[dict[tuple[int, int], int], dict[tuple[int, int], int]]


def _step(tried: int, held: int, belief: _Belief, cell: int) -> tuple[float, _Next]:
    """One step from an information set when the player tries ``cell``: the weighted sum
    of the scores of the games that end, and the weights of the hidden states that go
    on, by whether the player sees ``ok`` (index 0: no, 1: yes)."""
    if tried >> cell & 1:
        raise ValueError(f"cell {cell} was tried before (tried cells {tried:09b})")
    bit = 1 << cell
    total = 0.0
    after: _Next = ({}, {})
    for their_tried, theirs, weight in belief:
        for other in _UNTRIED[their_tried]:
            obit = 1 << other
            if other == cell:
                # A clash; neither side has tried the cell, so it is blank: the tiebreak
                # gives it to one of them.
                outcomes = [(True, held | bit, theirs, weight), (False, held, theirs | bit, weight)]
            else:
                ok = not theirs & bit
                outcomes = [
                    (
                        ok,
                        held | bit if ok else held,
                        theirs if held & obit else theirs | obit,
                        2 * weight,
                    )
                ]
            for ok, mine, their_cells, w in outcomes:
                score = _score(mine, their_cells)
                if score is not None:
                    total += w * score
                else:
                    key = (their_tried | obit, their_cells)
                    after[ok][key] = after[ok].get(key, 0) + w
    return total, after


def _normalised(states: dict[tuple[int, int], int]) -> tuple[int, _Belief]:
    """The weights' common factor, and the belief with the weights divided by it."""
    common = 0
    for w in states.values():
        common = gcd(common, w)
    return common, tuple(sorted((t, h, w // common) for (t, h), w in states.items()))


def _canonical(tried: int, held: int, belief: _Belief) -> tuple[int, int, _Belief]:
    """The least image of an information set under the symmetries of the board."""
    return min(
        (
            image[tried],
            image[held],
            tuple(sorted((image[t], image[h], w) for t, h, w in belief)),
        )
        for image in _SYMMETRIES
    )


def models(game: Game) -> bool:
    """Whether ``game`` has the rules this module models, as far as its roles show: x, o
    and a random role whose two moves, (tiebreak x) and (tiebreak o), decide a clash
    fairly (not the Very Biased variant, where x wins every clash)."""
    names = [role.name for role in game.roles]
    if names != ["x", "o", "random"]:
        return False
    moves = {str(m) for m in game.legal_moves(game.initial_state(), "random")}
    return moves == {"(tiebreak x)", "(tiebreak o)"}


@cache
def shared_best_response() -> BestResponse:
    """One :class:`BestResponse` per process, for every :class:`BestResponsePlayer`."""
    return BestResponse()


class BestResponsePlayer:
    """Plays the best response to the random player (:class:`BestResponse`) in Blind
    Tic-Tac-Toe, as x or as o: the most any player can score against random play.

    Args:
        response: The best response, shared between players (None: the one
            :func:`shared_best_response` keeps for this process). It is solved at
            ``start`` if it is not yet (about 20 s, 400 MB), so that moves are instant.
    """

    name = "best-response-to-random"

    def __init__(self, response: BestResponse | None = None) -> None:
        self.response = response if response is not None else shared_best_response()

    def start(self, match: MatchInfo) -> None:
        self.game = match.game
        self.infoset = BestResponse.START
        self.response.value()  # solves it, once

    def play(self, observation: Observation, deadline: float) -> Term:
        if observation.last_move is not None:
            row, col = (int(str(arg)) for arg in observation.last_move.args)
            ok = Const("ok") in observation.percepts
            self.infoset = BestResponse.after(*self.infoset, 3 * (row - 1) + col - 1, ok)
        cell = self.response.best_cell(*self.infoset)
        return self.game.term(f"(mark {cell // 3 + 1} {cell % 3 + 1})")

    def stop(self, observation: Observation) -> None:
        pass

    def abort(self) -> None:
        pass
