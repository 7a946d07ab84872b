"""The IDAPOS leaf heuristics (Schier & Wuestenbecker 2019) on a
:class:`~ggp.battlesnake.board.Board`, and as an :class:`~ggp.search.evaluator.Evaluator`.

As ../shared/REFERENCE-SEARCH.md section 2.7 gives the paper's code:

- :func:`flood_fill` ``F(h)``: a breadth-first fill from a head over cells without a body
  (food included); its size (start excluded) and the distance to the nearest food.
- :func:`adversarial_fill` ``A``: all heads expand one layer per turn, the longest snake
  first, each cell going to the first snake that reaches it (so a contested cell goes to
  the longer snake); body cells are claimed, with their distance, but not expanded.
  ``E_i`` counts the non-body cells snake ``i`` claims, ``C_i`` all of them. With a
  ``lead``, a snake starts that many layers early (a frozen snake of a masked search,
  given the rounds the search played: ``mask=lead`` of
  :mod:`~ggp.players.idapos_player`); its food distance counts from the others' start.

Both fills run on bitboards (a Python int, bit ``y (n + 1) + x`` for cell ``(x, y)`` of an
``n`` x ``n`` board, a guard column between rows): a layer of the breadth-first search is
four shifts and a mask, not a queue of cells (the leaves of a search are mostly these
fills).
- ``sigma(x) = 2 * (1 / (1 + e^(-0.2 x)) - 0.5)``.
- Duel (``o`` us, ``e`` the enemy): weights (:class:`~ggp.battlesnake.weights.DuelWeights`,
  the paper's by default) of TotalFill
  ``2 (F_o / (F_o + F_e) - 0.5)``, HungerPressure (``p_x = min(health_x - 1.2 d_x - 10, 0)``,
  0 when health > 75, ``d_x`` the A-distance to the nearest food ``x`` claims; 0 if
  ``p_o = p_e``, else ``2 (p_e / (p_o + p_e) - 0.5)``), AdversarialFill
  ``2 (C_o / (C_o + C_e) - 0.5)`` and DeltaLengthFood (``m = sigma(len_o - len_e)``,
  ``m+ = sigma(len_o - len_e + 1)``, ``f = e^(-0.2 d)`` with ``d`` the F-distance to the
  nearest food, 0 without one: ``m + f (m+ - m)``).
- Several snakes (snake ``i``): weights (:class:`~ggp.battlesnake.weights.MultiWeights`) of
  DeltaLengthFood (with
  ``len_i - (0.9 max + 0.1 mean)`` of the other live snakes' lengths), Control
  ``2 (E_i / sum_j E_j - 0.5)``, HungerMalus (1 when health > 75, else
  ``2 (0.85^(-p) - 0.5)``) and TailReachable (+1 if A gives it its own tail cell, else +1
  if ``E_i`` > its length, else -1; only for snakes longer than 6).

:class:`SnakeHeuristicEvaluator` turns these into goal values 0..100 for the search: in a
duel ``50 + 50 h / W`` for one snake and the rest for the other (``W`` the sum of the
weights' sizes, so values stay in range); with more snakes each live snake's heuristic
relative to the mean over all snakes, as the code's max^n vector does, scaled the same way.
Its weights are a :class:`~ggp.battlesnake.weights.SnakeWeights` (the paper's, tuned ones,
or a file's: :func:`~ggp.battlesnake.weights.snake_weights`).

The paper's own-death penalty (REFERENCE-SEARCH.md 2.5, 2.6: a snake accepts a mutual
kill only when every alternative loses): a live snake's value is squeezed into
[:data:`LIVE_LOW`, :data:`LIVE_HIGH`] and an eliminated snake's is its goal so far times
:data:`DEAD_SCALE` (at most 10), so any death ranks below any live position and among
deaths the better placement still ranks higher. The evaluator values terminal states too
(:class:`~ggp.search.evaluator.TerminalEvaluator`): survivors keep their goals (a win,
100, above every live value), the eliminated get the dead scale. Without it a duel's draw
by head-on collision (goal 50 each) was worth as much as an even position, and a snake
behind took it. As in the paper's code, the turn breaks ties (:data:`TURN_WEIGHT` a turn,
less than any difference of placement): a death is worth a little more the later it
comes, a win a little more the sooner.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ggp.battlesnake.board import Board, Point, read_board
from ggp.battlesnake.weights import PAPER_WEIGHTS, DuelWeights, MultiWeights, SnakeWeights
from ggp.game import Game
from ggp.reasoning.state_machine import State
from ggp.search.evaluator import LeafEstimate

__all__ = [
    "Fill",
    "Reach",
    "DUEL_WEIGHTS",
    "MULTI_WEIGHTS",
    "sigma",
    "flood_fill",
    "adversarial_fill",
    "duel_terms",
    "multi_terms",
    "duel_heuristic",
    "multi_heuristic",
    "SnakeHeuristicEvaluator",
    "relative_values",
]

#: The paper code's duel weights: TotalFill, HungerPressure, AdversarialFill, DeltaLengthFood
#: (a copy of :attr:`PAPER_WEIGHTS.duel <ggp.battlesnake.weights.SnakeWeights.duel>`).
DUEL_WEIGHTS: dict[str, float] = dataclasses.asdict(PAPER_WEIGHTS.duel)
#: The paper code's weights with more snakes (a copy of ``PAPER_WEIGHTS.multi``).
MULTI_WEIGHTS: dict[str, float] = dataclasses.asdict(PAPER_WEIGHTS.multi)


def _weighted(weights: DuelWeights | MultiWeights, terms: dict[str, float]) -> float:
    return float(sum(getattr(weights, name) * value for name, value in terms.items()))


@functools.lru_cache(maxsize=64)
def _scale(weights: DuelWeights | MultiWeights) -> float:
    """The largest size a weighted sum of terms in [-1, 1] can have (1 if all are 0)."""
    return sum(abs(w) for w in dataclasses.astuple(weights)) or 1.0


def sigma(x: float) -> float:
    """``2 (1 / (1 + e^(-0.2 x)) - 0.5)``, in (-1, 1)."""
    return 2.0 * (1.0 / (1.0 + math.exp(-0.2 * x)) - 0.5)


@functools.cache
def _geometry(size: int) -> tuple[int, int]:
    """The row stride and the mask of the board's cells of a ``size`` x ``size`` board."""
    width = size + 1
    row = (1 << size) - 1
    return width, sum(row << (y * width) for y in range(size))


def _bit(size: int, cell: Point) -> int:
    return 1 << (cell[1] * (size + 1) + cell[0])


def _cells_mask(size: int, cells: Iterable[Point]) -> int:
    mask = 0
    for x, y in cells:
        mask |= 1 << (y * (size + 1) + x)
    return mask


@functools.lru_cache(maxsize=256)
def _masks(board: Board) -> tuple[int, int]:
    """The board's body cells and food cells as bitboards."""
    bodies = _cells_mask(board.size, (c for s in board.snakes if s is not None for c in s.body))
    return bodies, _cells_mask(board.size, board.food)


def _spread(front: int, width: int, on_board: int) -> int:
    """The cells next to those of ``front``."""
    return ((front << 1) | (front >> 1) | (front << width) | (front >> width)) & on_board


@dataclass(frozen=True)
class Reach:
    """A flood fill ``F`` from one cell.

    Attributes:
        count: Cells reached, the start left out.
        nearest: Steps to the nearest target cell (0: the start is one), None if none is
            reached.
    """

    count: int
    nearest: int | None


def flood_fill(board: Board, start: Point, targets: Iterable[Point] | None = None) -> Reach:
    """``F``: the cells without a body reachable from ``start`` (food included; ``start``
    itself left out of the count) and the distance to the nearest of ``targets`` (default:
    the food)."""
    width, on_board = _geometry(board.size)
    bodies, food = _masks(board)
    goal = food if targets is None else _cells_mask(board.size, targets)
    open_cells = on_board & ~bodies
    seen = front = _bit(board.size, start)
    nearest = 0 if seen & goal else None
    steps = 0
    while front:
        steps += 1
        front = _spread(front, width, open_cells) & ~seen
        seen |= front
        if nearest is None and front & goal:
            nearest = steps
    return Reach(seen.bit_count() - 1, nearest)


@dataclass(frozen=True)
class Fill:
    """The adversarial fill ``A``.

    Attributes:
        size: The board's side.
        claims: ``[k]`` the cells each snake claimed, as bitboards (0 for the dead).
        food_distance: ``[k]`` each snake's distance to the nearest food it claimed (None:
            it claimed none).
        free: ``E``: non-body cells claimed, per snake index ``[k]``.
        claimed: ``C``: all cells claimed (bodies included), per snake index ``[k]``.
    """

    size: int
    claims: tuple[int, ...]
    food_distance: tuple[int | None, ...]
    free: tuple[int, ...]
    claimed: tuple[int, ...]

    def owner(self, cell: Point) -> int | None:
        """The snake that claimed ``cell``, None if no snake did."""
        bit = _bit(self.size, cell)
        return next((i for i, claim in enumerate(self.claims) if claim & bit), None)


def adversarial_fill(board: Board, lead: Mapping[int, int] | None = None) -> Fill:
    """``A`` (see the module docstring); snake ``i`` expands ``lead[i]`` layers before
    the others start (default none), and its food distance is counted from their start
    (0 for food it reached in its lead)."""
    width, on_board = _geometry(board.size)
    bodies, food = _masks(board)
    k = len(board.snakes)
    live = [i for i, s in enumerate(board.snakes) if s is not None]
    order = sorted(live, key=lambda i: -len(board.snakes[i].body))  # type: ignore[union-attr]
    claims = [0] * k
    front = [0] * k
    taken = 0
    for i in order:
        head = _bit(board.size, board.snakes[i].head)  # type: ignore[union-attr]
        if not head & taken:
            claims[i] = head
            taken |= head
        front[i] = head
    near: list[int | None] = [None] * k
    if lead:  # the leads' layers, before the others start (kept out of the loop below)
        for steps in range(1 - max(lead.values()), 1):
            for i in order:
                if steps + lead.get(i, 0) >= 1:
                    grown = _spread(front[i], width, on_board) & ~taken
                    taken |= grown
                    claims[i] |= grown
                    if near[i] is None and grown & food:
                        near[i] = 0
                    front[i] = grown & ~bodies
    steps = 0
    while any(front):
        steps += 1
        for i in order:
            grown = _spread(front[i], width, on_board) & ~taken
            taken |= grown
            claims[i] |= grown
            if near[i] is None and grown & food:
                near[i] = steps
            front[i] = grown & ~bodies
    return Fill(
        board.size,
        tuple(claims),
        tuple(near),
        tuple((c & ~bodies).bit_count() for c in claims),
        tuple(c.bit_count() for c in claims),
    )


def _share(mine: float, theirs: float) -> float:
    total = mine + theirs
    return 0.0 if total == 0 else 2.0 * (mine / total - 0.5)


def _food_distance(board: Board, fill: Fill, i: int) -> float:
    """A-distance to the nearest food snake ``i`` claims (a board's worth if none)."""
    near = fill.food_distance[i]
    return float(near) if near is not None else float(2 * board.size * board.size)


def _pressure(health: int, food_distance: float) -> float:
    return 0.0 if health > 75 else min(health - 1.2 * food_distance - 10.0, 0.0)


def _delta_length_food(delta: float, reach: Reach) -> float:
    m, m_plus = sigma(delta), sigma(delta + 1)
    f = math.exp(-0.2 * reach.nearest) if reach.nearest is not None else 0.0
    return m + f * (m_plus - m)


def duel_terms(
    board: Board, me: int, enemy: int, lead: Mapping[int, int] | None = None
) -> dict[str, float]:
    """The four duel terms for snake ``me`` against ``enemy`` (both alive); ``lead``: the
    adversarial fill's head starts (:func:`adversarial_fill`)."""
    ours, theirs = board.snakes[me], board.snakes[enemy]
    assert ours is not None and theirs is not None
    fill = adversarial_fill(board, lead)
    reach_o, reach_e = flood_fill(board, ours.head), flood_fill(board, theirs.head)
    p_o = _pressure(ours.health, _food_distance(board, fill, me))
    p_e = _pressure(theirs.health, _food_distance(board, fill, enemy))
    hunger = 0.0 if p_o == p_e else 2.0 * (p_e / (p_o + p_e) - 0.5)
    return {
        "total_fill": _share(reach_o.count, reach_e.count),
        "hunger_pressure": hunger,
        "adversarial_fill": _share(fill.claimed[me], fill.claimed[enemy]),
        "delta_length_food": _delta_length_food(len(ours.body) - len(theirs.body), reach_o),
    }


def multi_terms(board: Board, me: int, fill: Fill | None = None) -> dict[str, float]:
    """The four terms for snake ``me`` (alive) among several."""
    ours = board.snakes[me]
    assert ours is not None
    fill = adversarial_fill(board) if fill is None else fill
    others = [len(s.body) for i, s in enumerate(board.snakes) if s is not None and i != me]
    delta = len(ours.body) - (0.9 * max(others) + 0.1 * sum(others) / len(others)) if others else 0
    total_free = sum(fill.free)
    control = 0.0 if total_free == 0 else 2.0 * (fill.free[me] / total_free - 0.5)
    p = _pressure(ours.health, _food_distance(board, fill, me))
    hunger = 1.0 if ours.health > 75 else 2.0 * (0.85 ** (-p) - 0.5)
    tail = 0.0
    if len(ours.body) > 6:
        own_tail = fill.owner(ours.body[-1]) == me
        tail = 1.0 if own_tail or fill.free[me] > len(ours.body) else -1.0
    return {
        "delta_length_food": _delta_length_food(delta, flood_fill(board, ours.head)),
        "control": control,
        "hunger_malus": hunger,
        "tail_reachable": tail,
    }


def duel_heuristic(
    board: Board,
    me: int,
    enemy: int,
    weights: DuelWeights = PAPER_WEIGHTS.duel,
    lead: Mapping[int, int] | None = None,
) -> float:
    """The weighted duel terms; with the paper's weights ``0.7 TotalFill + 10 HungerPressure
    + 4 AdversarialFill + 4 DeltaLengthFood``."""
    return _weighted(weights, duel_terms(board, me, enemy, lead))


def multi_heuristic(
    board: Board, me: int, fill: Fill | None = None, weights: MultiWeights = PAPER_WEIGHTS.multi
) -> float:
    """The weighted terms of snake ``me`` among several; with the paper's weights ``12
    DeltaLengthFood + 1 Control + 10 HungerMalus + 10 TailReachable``."""
    return _weighted(weights, multi_terms(board, me, fill))


#: The range of a live snake's value (module docstring: the own-death penalty).
LIVE_LOW, LIVE_HIGH = 10.0, 90.0
#: An eliminated snake's value is its goal times this (below :data:`LIVE_LOW`).
DEAD_SCALE = 0.1
#: Per turn played: added to an eliminated snake's value, taken from a survivor's at the
#: end (die late, win early; 1,000 turns move a value by less than one placement).
TURN_WEIGHT = 1e-4


def _dead_value(goal: float, turn: int) -> float:
    return DEAD_SCALE * goal + TURN_WEIGHT * min(turn, 9_999)


def relative_values(
    phi: dict[int, float],
    count: int,
    scale: float,
    snakes: list[int],
    row: npt.NDArray[np.float64],
) -> None:
    """Write ``50 + 50 (phi_i - mean) / scale`` (clipped to 0..100) of each live snake
    ``i`` of ``phi`` into ``row[snakes[i]]``, the mean over all ``count`` snakes (the
    dead counting 0), as the paper code's relative max^n vector."""
    mean = sum(phi.values()) / count
    for i, value in phi.items():
        row[snakes[i]] = min(100.0, max(0.0, 50.0 + 50.0 * (value - mean) / scale))


class SnakeHeuristicEvaluator:
    """The heuristics as goal values 0..100 per role (module docstring).

    Args:
        weights: The terms' weights (default the paper's).
        lead: ``(snakes, turn)``: these snakes' adversarial fill starts one layer early
            for each turn played since ``turn`` (the frozen snakes of a masked search
            from a board of that turn: they would have moved as often); None: no lead.
    """

    def __init__(
        self,
        weights: SnakeWeights = PAPER_WEIGHTS,
        lead: tuple[frozenset[int], int] | None = None,
    ) -> None:
        self.weights = weights
        self.lead = lead

    def with_lead(self, snakes: frozenset[int], turn: int) -> SnakeHeuristicEvaluator:
        """This evaluator with ``lead=(snakes, turn)`` (None when ``snakes`` is empty)."""
        return SnakeHeuristicEvaluator(self.weights, (snakes, turn) if snakes else None)

    def evaluate(
        self, game: Game, states: Sequence[State], deadline: float | None = None
    ) -> LeafEstimate:
        roles = game.roles
        snakes = [i for i, r in enumerate(roles) if r != game.random_role]
        values = np.zeros((len(states), len(roles)), dtype=np.float64)
        for b, state in enumerate(states):
            if deadline is not None and time.monotonic() > deadline:
                break  # the caller sees its clock ran out and drops these values
            goals = game.goals(state)
            board = read_board(game, state)
            values[b] = goals
            live = [i for i, s in enumerate(board.snakes) if s is not None]
            self._heuristic(board, goals, live, snakes, values[b])
            for i in range(len(board.snakes)):
                v = values[b, snakes[i]]
                values[b, snakes[i]] = (
                    LIVE_LOW + (LIVE_HIGH - LIVE_LOW) * v / 100.0
                    if i in live
                    else _dead_value(v, board.turn)
                )
        return LeafEstimate(values)

    def terminal_values(self, game: Game, states: Sequence[State]) -> LeafEstimate:
        """The :class:`~ggp.search.evaluator.TerminalEvaluator` seam: survivors keep
        their goals, eliminated snakes get :data:`DEAD_SCALE` times theirs (the turn
        breaking ties: module docstring)."""
        roles = game.roles
        snakes = [i for i, r in enumerate(roles) if r != game.random_role]
        values = np.zeros((len(states), len(roles)), dtype=np.float64)
        for b, state in enumerate(states):
            values[b] = game.goals(state)
            board = read_board(game, state)
            turn = min(board.turn, 9_999)
            for i, snake in enumerate(board.snakes):
                goal = values[b, snakes[i]]
                values[b, snakes[i]] = (
                    _dead_value(goal, turn) if snake is None else goal - TURN_WEIGHT * turn
                )
        return LeafEstimate(values)

    def _heuristic(
        self,
        board: Board,
        goals: tuple[int, ...],
        live: list[int],
        snakes: list[int],
        row: npt.NDArray[np.float64],
    ) -> None:
        """Write the live snakes' heuristic values (0..100) into ``row`` (``[R]``);
        with fewer than two alive, leave it as it is."""
        lead = None
        if self.lead is not None:
            snakes_led, turn = self.lead
            lead = {i: board.turn - turn for i in snakes_led if i in live}
        if len(live) == 2:
            scale = _scale(self.weights.duel)
            h = duel_heuristic(board, live[0], live[1], self.weights.duel, lead)
            row[snakes[live[0]]] = 50.0 + 50.0 * h / scale
            row[snakes[live[1]]] = 50.0 - 50.0 * h / scale
            if len(board.snakes) > 2:
                # the two contenders share what the eliminated snakes left them
                out = [i for i in range(len(board.snakes)) if i not in live]
                low = max(goals[snakes[i]] for i in out)
                for i in live:
                    row[snakes[i]] = low + (100 - low) * row[snakes[i]] / 100
        elif len(live) > 2:
            fill = adversarial_fill(board, lead)
            phi = {i: multi_heuristic(board, i, fill, self.weights.multi) for i in live}
            relative_values(phi, len(board.snakes), _scale(self.weights.multi), snakes, row)

    def __repr__(self) -> str:
        lead = "" if self.lead is None else f", lead={self.lead!r}"
        return f"SnakeHeuristicEvaluator({self.weights!r}{lead})"
