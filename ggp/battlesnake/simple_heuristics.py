"""The paper's simple opponents as leaf heuristics, for its Table 1's heuristics column.

Schier & Wuestenbecker (2019) compare heuristics "with alpha-beta": the GA-tuned one
(:class:`~ggp.battlesnake.heuristics.SnakeHeuristicEvaluator` with tuned weights) against
a greedy eater, an aggressive snake and a tail chaser, each the leaf value of the same
search. The paper does not give those three as formulas; these are ours, from the
behaviour the paper names (../shared/REFERENCE-SEARCH.md 2.8; the same as the reflex
players of :mod:`ggp.battlesnake.reflex`), each a value ``phi`` of a live snake:

- ``greedy``: eats as fast as possible: the paper's DeltaLengthFood term alone
  (``m + f (m+ - m)``, ``m = sigma(len - mean of the others)``, ``f = e^(-0.2 d)`` with
  ``d`` the flood-fill distance to the nearest food), in (-1, 1);
- ``aggressive``: greedy, plus the hunt of shorter snakes: ``e^(-0.2 (d - 1))`` for the
  nearest head (L1 distance ``d``) of a strictly shorter live snake, 0 without one;
- ``tailchaser``: while its health is above :data:`~ggp.battlesnake.reflex.HUNGRY`, near
  its own tail: ``e^(-0.2 d)`` with ``d`` the flood-fill distance from its head to the
  nearest cell next to its tail (0: the head is one; -1 when none is reachable); at or
  below, greedy.

Everything else is the tuned evaluator's, so that only the heuristic differs: each live
snake's value is ``50 + 50 (phi - mean) / 2`` with the mean over all the board's snakes
(dead ones 0), clipped to 0..100, then squeezed into the live range; deaths and terminal
states are valued as there (the own-death penalty).
"""

from __future__ import annotations

import math
from typing import Literal

import numpy as np
import numpy.typing as npt

from ggp.battlesnake.board import Board, neighbours
from ggp.battlesnake.heuristics import (
    SnakeHeuristicEvaluator,
    _delta_length_food,
    flood_fill,
    relative_values,
)
from ggp.battlesnake.reflex import HUNGRY

__all__ = ["SimpleHeuristic", "SIMPLE_HEURISTICS", "SimpleHeuristicEvaluator", "simple_value"]

SimpleHeuristic = Literal["greedy", "aggressive", "tailchaser"]
#: The heuristics by name (``idapos:eval=NAME``).
SIMPLE_HEURISTICS: tuple[SimpleHeuristic, ...] = ("greedy", "aggressive", "tailchaser")


def _greedy(board: Board, me: int) -> float:
    ours = board.snakes[me]
    assert ours is not None
    others = [len(s.body) for i, s in enumerate(board.snakes) if s is not None and i != me]
    delta = len(ours.body) - sum(others) / len(others) if others else 0.0
    return _delta_length_food(delta, flood_fill(board, ours.head))


def _hunt(board: Board, me: int) -> float:
    ours = board.snakes[me]
    assert ours is not None
    hx, hy = ours.head
    near = [
        abs(s.head[0] - hx) + abs(s.head[1] - hy)
        for i, s in enumerate(board.snakes)
        if s is not None and i != me and len(s.body) < len(ours.body)
    ]
    return math.exp(-0.2 * (min(near) - 1)) if near else 0.0


def _tail(board: Board, me: int) -> float:
    ours = board.snakes[me]
    assert ours is not None
    near = flood_fill(board, ours.head, neighbours(board.size, ours.body[-1])).nearest
    return math.exp(-0.2 * near) if near is not None else -1.0


def simple_value(kind: SimpleHeuristic, board: Board, me: int) -> float:
    """``phi`` of live snake ``me`` under heuristic ``kind`` (module docstring)."""
    if kind == "greedy":
        return _greedy(board, me)
    if kind == "aggressive":
        return _greedy(board, me) + _hunt(board, me)
    ours = board.snakes[me]
    assert ours is not None
    return _greedy(board, me) if ours.health <= HUNGRY else _tail(board, me)


class SimpleHeuristicEvaluator(SnakeHeuristicEvaluator):
    """One of the simple heuristics as goal values 0..100 per role (module docstring).

    Args:
        kind: ``greedy``, ``aggressive`` or ``tailchaser``.
    """

    def __init__(self, kind: SimpleHeuristic) -> None:
        super().__init__()
        self.kind = kind

    def _heuristic(
        self,
        board: Board,
        goals: tuple[int, ...],
        live: list[int],
        snakes: list[int],
        row: npt.NDArray[np.float64],
    ) -> None:
        if len(live) < 2:
            return
        phi = {i: simple_value(self.kind, board, i) for i in live}
        relative_values(phi, len(board.snakes), 2.0, snakes, row)

    def __repr__(self) -> str:
        return f"SimpleHeuristicEvaluator({self.kind!r})"
