"""Read the RTS games' GDL states back as plain values: a BattleCity field
(:func:`read_field`) and an 8x8 RTS board (:func:`read_board`), for the paper's bots
and evaluation functions.

Example:
    >>> from ggp.game import Game
    >>> game = Game.from_file("games/rts/rts_8x8_melee.gdl")
    >>> board = read_board(game, game.initial_state())
    >>> len(board.units), board.units[(1, 1)], board.gold
    (8, Unit(owner=0, kind='light', hp=4, action=None, direction=None, left=0, carry=False), (0, 0))
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass

from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.reasoning.state_machine import State

__all__ = [
    "Cell",
    "BattleField",
    "Unit",
    "RtsBoard",
    "read_field",
    "read_board",
    "battle_walls",
    "is_battlecity",
    "is_rts",
]

Cell = tuple[int, int]
ROLES = ("blue", "red")


def _ints(term: Term) -> list[int]:
    return [int(a.name) for a in term.args if a.name.lstrip("-").isdigit()]


#: A state fact as the readers use it: its name, numbers and other arguments.
_Fact = tuple[str, tuple[int, ...], tuple[str, ...]]


@functools.lru_cache(maxsize=1 << 17)
def _parsed(fact: Term) -> _Fact:
    """A state fact's name, numbers and other arguments (cached: the prover's states)."""
    numbers = tuple(_ints(fact))
    names = tuple(a.name for a in fact.args if not a.name.lstrip("-").isdigit())
    return fact.name, numbers, names


@functools.lru_cache(maxsize=16)
def _facts(game: Game) -> Callable[[State], list[_Fact]]:
    """A reader of a state's facts, each parsed once per game (boards are read at every
    search leaf: :meth:`~ggp.game.Game.fact_reader`)."""
    return game.fact_reader(_parsed)


@dataclass(frozen=True)
class BattleWalls:
    """What never changes on a BattleCity map.

    Attributes:
        width: Columns (x from 1).
        height: Rows (y from 1, downward).
        steel: Indestructible wall cells.
        bases: ``[2]`` each side's base cell, in role order.
    """

    width: int
    height: int
    steel: frozenset[Cell]
    bases: tuple[Cell, Cell]


@dataclass(frozen=True)
class BattleField:
    """A BattleCity state (``games/rts/battlecity_*.gdl``).

    Attributes:
        walls: The static map.
        tanks: ``[2]`` each side's tank cell (None once hit), in role order.
        facing: ``[2]`` each side's gun direction.
        resting: ``[2]`` whether each tank must rest this step (no turn or move).
        bullets: ``(x, y, direction)`` of every bullet in flight.
        bricks: The destructible walls still standing.
        step: Steps played.
    """

    walls: BattleWalls
    tanks: tuple[Cell | None, Cell | None]
    facing: tuple[str, str]
    resting: tuple[bool, bool]
    bullets: frozenset[tuple[int, int, str]]
    bricks: frozenset[Cell]
    step: int

    def blocked(self, cell: Cell) -> bool:
        """Whether a tank cannot enter ``cell`` (off the board, a wall, a base, a tank)."""
        x, y = cell
        w = self.walls
        return (
            not (1 <= x <= w.width and 1 <= y <= w.height)
            or cell in w.steel
            or cell in self.bricks
            or cell in w.bases
            or cell in self.tanks
        )


@functools.lru_cache(maxsize=16)
def _initial_names(game: Game) -> frozenset[str]:
    """The names of the facts ``init`` sets, from the rules (so without the propositional
    network too: a game past the grounding limits is played by the top-down prover)."""
    return frozenset(
        rule.head.args[0].name
        for rule in game.description
        if rule.head.name == "init" and not rule.body and rule.head.args
    )


def is_battlecity(game: Game) -> bool:
    """Whether ``game`` is one of the BattleCity games (it starts with ``(tank P X Y)``)."""
    return "tank" in _initial_names(game)


def is_rts(game: Game) -> bool:
    """Whether ``game`` is one of the 8x8 RTS games (it starts with ``(unit X Y P T)``)."""
    return "unit" in _initial_names(game)


@functools.lru_cache(maxsize=16)
def battle_walls(game: Game) -> BattleWalls:
    """The static map of a BattleCity game, from its description's facts.

    Raises:
        GameError: Not a BattleCity game.
    """
    steel: set[Cell] = set()
    bases: dict[str, Cell] = {}
    width = height = 0
    for rule in game.description:
        head = rule.head
        if rule.body or head.name not in ("steel", "basecell", "adj"):
            continue
        if head.name == "steel":
            x, y = _ints(head)
            steel.add((x, y))
        elif head.name == "basecell":
            x, y = _ints(head)
            bases[head.args[0].name] = (x, y)
        else:
            x, y, x2, y2 = _ints(head)
            width, height = max(width, x, x2), max(height, y, y2)
    if set(bases) != set(ROLES):
        raise GameError(f"{game.description.path} is not a BattleCity game (no base cells)")
    return BattleWalls(width, height, frozenset(steel), (bases[ROLES[0]], bases[ROLES[1]]))


def read_field(game: Game, state: State) -> BattleField:
    """The BattleCity field of ``state``.

    Raises:
        GameError: Not a BattleCity game.
    """
    walls = battle_walls(game)
    tanks: dict[str, Cell] = {}
    facing = {r: "up" for r in ROLES}
    resting = {r: False for r in ROLES}
    bullets: set[tuple[int, int, str]] = set()
    bricks: set[Cell] = set()
    step = 0
    for name, n, words in _facts(game)(state):
        if name == "tank":
            tanks[words[0]] = (n[0], n[1])
        elif name == "facing":
            facing[words[0]] = words[1]
        elif name == "rest":
            resting[words[0]] = True
        elif name == "bullet":
            bullets.add((n[0], n[1], words[0]))
        elif name == "brick":
            bricks.add((n[0], n[1]))
        elif name == "step":
            step = n[0]
    return BattleField(
        walls,
        (tanks.get(ROLES[0]), tanks.get(ROLES[1])),
        (facing[ROLES[0]], facing[ROLES[1]]),
        (resting[ROLES[0]], resting[ROLES[1]]),
        frozenset(bullets),
        frozenset(bricks),
        step,
    )


@dataclass(frozen=True)
class Unit:
    """One unit of an 8x8 RTS board.

    Attributes:
        owner: 0 (blue) or 1 (red).
        kind: ``base``, ``barracks``, ``worker``, ``light`` or ``heavy``.
        hp: Hit points left.
        action: The running action (None: ready).
        direction: The running action's direction (``here`` for idle).
        left: Ticks until it lands (0: ready).
        carry: A worker carrying a resource.
    """

    owner: int
    kind: str
    hp: int
    action: str | None = None
    direction: str | None = None
    left: int = 0
    carry: bool = False


@dataclass(frozen=True)
class RtsBoard:
    """An 8x8 RTS state (``games/rts/rts_8x8_*.gdl``).

    Attributes:
        size: The board is ``size`` x ``size`` (x, y from 0, y downward).
        units: Every unit by cell.
        mines: Resources left in each mine, by cell.
        gold: ``[2]`` each side's bank.
        time: Ticks elapsed.
    """

    size: int
    units: dict[Cell, Unit]
    mines: dict[Cell, int]
    gold: tuple[int, int]
    time: int

    def free(self, cell: Cell) -> bool:
        """Whether ``cell`` is on the board with no unit or mine in it (reservations of
        running moves are not counted: the rules' legal moves know them)."""
        x, y = cell
        return (
            0 <= x < self.size
            and 0 <= y < self.size
            and cell not in self.units
            and (cell not in self.mines)
        )


@functools.lru_cache(maxsize=16)
def _board_size(game: Game) -> int:
    """The side of the board: one past the largest coordinate of the ``(adj X Y D X2 Y2)``
    facts of the rules."""
    return 1 + max(
        v for rule in game.description if rule.head.name == "adj" for v in _ints(rule.head)
    )


def read_board(game: Game, state: State) -> RtsBoard:
    """The 8x8 RTS board of ``state``.

    Raises:
        GameError: Not an RTS game of ``games/rts/``.
    """
    if not is_rts(game):
        raise GameError(f"{game.description.path} is not an RTS game of games/rts/")
    kinds: dict[Cell, tuple[int, str]] = {}
    hps: dict[Cell, int] = {}
    doing: dict[Cell, tuple[str, str]] = {}
    left: dict[Cell, int] = {}
    carry: set[Cell] = set()
    mines: dict[Cell, int] = {}
    gold = [0, 0]
    time = 0
    for name, n, words in _facts(game)(state):
        if name == "unit":
            kinds[(n[0], n[1])] = (ROLES.index(words[0]), words[1])
        elif name == "hp":
            hps[(n[0], n[1])] = n[2]
        elif name == "doing":
            doing[(n[0], n[1])] = (words[0], words[1])
        elif name == "left":
            left[(n[0], n[1])] = n[2]
        elif name == "carry":
            carry.add((n[0], n[1]))
        elif name == "mine":
            mines[(n[0], n[1])] = n[2]
        elif name == "gold":
            gold[ROLES.index(words[0])] = n[0]
        elif name == "time":
            time = n[0]
    units = {
        cell: Unit(
            owner,
            kind,
            hps.get(cell, 0),
            doing[cell][0] if cell in doing else None,
            doing[cell][1] if cell in doing else None,
            left.get(cell, 0),
            cell in carry,
        )
        for cell, (owner, kind) in kinds.items()
    }
    return RtsBoard(_board_size(game), units, mines, (gold[0], gold[1]), time)
