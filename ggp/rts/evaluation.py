"""The RTMM paper's evaluation functions as leaf :class:`~ggp.search.evaluator.Evaluator`\\ s
(../shared/REFERENCE-SEARCH.md section 3.6).

- :class:`BattleCityEvaluator`: ``e = L1(enemy tank, our base) - L1(our tank, enemy base)``
  (wins and losses are the game's goals, which the search reads itself).
- :class:`RtsEvaluator`: the resource cost of our units minus the enemy's; with
  ``hp_weighted``, the unit terms of the first microRTS code's form: each unit counts
  ``cost * hp / max hp``, plus half the same for the state with every running action
  landed, so damage that has not killed yet, and attacks still under way, show. That
  code also counts resources (banked and carried), weights buildings and scales workers
  and fighters by their closeness to mines, bases and enemies (REFERENCE-SEARCH.md 3.6,
  without the formulas); those terms are not here, so on RTS-Full nothing values
  harvesting (benchmarks/RESULTS.md, "RTS-Full").

Each maps its difference ``e`` (for blue) monotonically into goal points,
``50 + 40 * tanh(e / scale)`` for blue and the rest of 100 for red, inside (10, 90) so that
no heuristic value looks like a proven result; the ordering of states is the paper's.

Example:
    >>> from ggp.game import Game
    >>> game = Game.from_file("games/rts/battlecity_small.gdl")
    >>> BattleCityEvaluator().evaluate(game, [game.initial_state()]).values
    array([[50., 50.]])
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import replace

import numpy as np

from ggp.game import Game
from ggp.reasoning.state_machine import State
from ggp.rts.microrts import DIRECTIONS, UNIT_TYPES
from ggp.rts.state import BattleField, Cell, RtsBoard, Unit, read_board, read_field
from ggp.search.evaluator import LeafEstimate

__all__ = [
    "BattleCityEvaluator",
    "RtsEvaluator",
    "battlecity_difference",
    "rts_difference",
    "forwarded",
]

_STEP = {d: (dx, dy) for d, dx, dy in DIRECTIONS}


def _values(differences: Sequence[float], scale: float) -> LeafEstimate:
    values = np.empty((len(differences), 2), dtype=np.float64)
    for i, e in enumerate(differences):
        blue = 50.0 + 40.0 * math.tanh(e / scale)
        values[i] = (blue, 100.0 - blue)
    return LeafEstimate(values)


def battlecity_difference(field: BattleField) -> int:
    """The paper's BattleCity evaluation for blue: ``L1(red tank, blue base) - L1(blue
    tank, red base)`` (a tank that is gone counts as infinitely far: 0 when both are)."""
    far = field.walls.width + field.walls.height
    blue_tank, red_tank = field.tanks
    blue_base, red_base = field.walls.bases

    def l1(a: tuple[int, int] | None, b: tuple[int, int]) -> int:
        return far if a is None else abs(a[0] - b[0]) + abs(a[1] - b[1])

    return l1(red_tank, blue_base) - l1(blue_tank, red_base)


class BattleCityEvaluator:
    """The paper's BattleCity evaluation (module docstring); ``scale`` in cells."""

    def __init__(self, scale: float = 10.0) -> None:
        self.scale = scale

    def evaluate(
        self, game: Game, states: Sequence[State], deadline: float | None = None
    ) -> LeafEstimate:
        return _values([battlecity_difference(read_field(game, s)) for s in states], self.scale)

    def __repr__(self) -> str:
        return f"BattleCityEvaluator(scale={self.scale!r})"


def _cost_difference(units: dict[Cell, Unit], hp_weighted: bool) -> float:
    total = [0.0, 0.0]
    for unit in units.values():
        kind = UNIT_TYPES[unit.kind]
        total[unit.owner] += kind.cost * (max(unit.hp, 0) / kind.hp if hp_weighted else 1.0)
    return total[0] - total[1]


def forwarded(board: RtsBoard) -> dict[Cell, Unit]:
    """The units once every running action has landed at once (the first microRTS code's
    ``s_fwd``): running attacks take their damage off the enemy in the target cell, running
    productions add their unit (moves do not change what units are worth)."""
    units = dict(board.units)
    for (x, y), unit in board.units.items():
        if unit.action is None or unit.direction not in _STEP:
            continue
        dx, dy = _STEP[unit.direction]
        target = (x + dx, y + dy)
        if unit.action == "attack":
            victim = units.get(target)
            if victim is not None and victim.owner != unit.owner:
                units[target] = replace(victim, hp=victim.hp - UNIT_TYPES[unit.kind].damage)
        elif unit.action in UNIT_TYPES and target not in units:
            units[target] = Unit(unit.owner, unit.action, UNIT_TYPES[unit.action].hp)
    return units


def rts_difference(board: RtsBoard, hp_weighted: bool = False) -> float:
    """The resource cost of blue's units minus red's. With ``hp_weighted``, the first
    microRTS code's form: each unit counts ``cost * hp / max hp``, and the difference of
    the state with every running action landed (:func:`forwarded`) is added at half
    weight."""
    if not hp_weighted:
        return _cost_difference(board.units, False)
    return _cost_difference(board.units, True) + 0.5 * _cost_difference(forwarded(board), True)


class RtsEvaluator:
    """The paper's RTS evaluation (module docstring); ``scale`` in resources."""

    def __init__(self, hp_weighted: bool = False, scale: float = 8.0) -> None:
        self.hp_weighted = hp_weighted
        self.scale = scale

    def evaluate(
        self, game: Game, states: Sequence[State], deadline: float | None = None
    ) -> LeafEstimate:
        return _values(
            [rts_difference(read_board(game, s), self.hp_weighted) for s in states], self.scale
        )

    def __repr__(self) -> str:
        return f"RtsEvaluator(hp_weighted={self.hp_weighted!r}, scale={self.scale!r})"
