"""Between GDL states of ``games/battlesnake/*.gdl`` and Battlesnake boards.

:func:`read_board` turns a state into a :class:`Board` (bodies head first, as the
official engine and API keep them); :func:`board_state` builds the state of a board
(what the HTTP API needs: a board arrives as JSON, the search wants a GDL state).

Example:
    >>> from ggp.game import Game
    >>> game = Game.from_file("games/battlesnake/duel_7x7.gdl")
    >>> board = Board(size=7, turn=4, snakes=(
    ...     SnakeBody(((1, 4), (1, 3), (1, 2)), health=96),
    ...     SnakeBody(((5, 2), (5, 3), (5, 4), (5, 4)), health=100)),
    ...     food=frozenset({(3, 3)}))
    >>> read_board(game, board_state(game, board)) == board
    True
"""

from __future__ import annotations

import functools
import itertools
from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass
from typing import Any

from ggp.battlesnake.generate import battlesnake_gdl, search_variant
from ggp.errors import GGPError
from ggp.game import Game
from ggp.gdl.terms import Const, Term
from ggp.reasoning.ground import GroundingLimits
from ggp.reasoning.state_machine import State

__all__ = [
    "Board",
    "SnakeBody",
    "BoardError",
    "Point",
    "MOVES",
    "read_board",
    "board_state",
    "board_facts",
    "neighbours",
    "distances",
    "search_game",
    "board_size",
]

Point = tuple[int, int]

#: Each move's step, with (0, 0) bottom-left and ``up`` = y + 1, as the official rules.
MOVES: dict[str, Point] = {"up": (0, 1), "down": (0, -1), "left": (-1, 0), "right": (1, 0)}


@functools.cache
def _neighbour_table(size: int) -> dict[Point, tuple[Point, ...]]:
    cells = [(x, y) for x in range(size) for y in range(size)]
    steps, on_board = list(MOVES.values()), set(cells)
    return {
        (x, y): tuple((x + dx, y + dy) for dx, dy in steps if (x + dx, y + dy) in on_board)
        for x, y in cells
    }


def neighbours(size: int, cell: Point) -> tuple[Point, ...]:
    """The on-board neighbours of ``cell`` on a ``size`` x ``size`` board."""
    return _neighbour_table(size)[cell]


def distances(size: int, start: Point, blocked: set[Point]) -> dict[Point, int]:
    """Breadth-first step counts from ``start`` (0) over the cells not in ``blocked``."""
    table = _neighbour_table(size)
    seen = {start: 0}
    queue = deque([start])
    while queue:
        cell = queue.popleft()
        for nxt in table[cell]:
            if nxt not in seen and nxt not in blocked:
                seen[nxt] = seen[cell] + 1
                queue.append(nxt)
    return seen


@functools.lru_cache(maxsize=8)
def search_game(size: int, snakes: int) -> Game:
    """The game of :func:`~ggp.battlesnake.generate.search_variant`, grounded once per
    board size and snake count (seconds each: 2 s for an 11 x 11 duel, about 10 s with
    eight snakes), always as a propositional network (without the default work limit and
    time budget, which could refuse a large board)."""
    text = battlesnake_gdl(search_variant(size, snakes))
    limits = GroundingLimits(max_derivations=None, max_seconds=None)
    return Game.from_text(text, reasoner="propnet", limits=limits)


class BoardError(GGPError):
    """A board that no state of the game describes; the message says why."""


@dataclass(frozen=True)
class SnakeBody:
    """One live snake.

    Attributes:
        body: Its segments, head first; stacked segments repeat a cell (length = len(body)).
        health: 1..max health.
    """

    body: tuple[Point, ...]
    health: int

    @property
    def head(self) -> Point:
        return self.body[0]


@dataclass(frozen=True)
class Board:
    """A Battlesnake position between turns.

    Attributes:
        size: The board is ``size`` x ``size``.
        turn: Turns played.
        snakes: One entry per snake role in role order; ``None`` for an eliminated snake.
        food: The food cells.
    """

    size: int
    turn: int
    snakes: tuple[SnakeBody | None, ...]
    food: frozenset[Point]


def _snake_roles(game: Game) -> tuple[Const, ...]:
    return tuple(r for r in game.roles if r.name != "random")


@functools.lru_cache(maxsize=4)
def board_size(game: Game) -> int:
    """The side of ``game``'s board (from its ``(head S X Y)`` facts)."""
    props = game.base_propositions
    if props is None:
        raise BoardError("the game has no propositional network: its board size is unknown")
    coords = [int(p.args[1].name) for p in props if p.name == "head"]
    if not coords:
        raise BoardError("not a Battlesnake game: it has no (head S X Y) facts")
    return max(coords) + 1


#: A state fact as read_board uses it: its name, the snake's index (-1: none) and its
#: values (a cell, a cell and a mark, or a number), parsed once per game and fact.
_Fact = tuple[str, int, Any]
_SNAKE_FACTS = ("head", "tail", "seg", "stack", "health", "alive")


@functools.lru_cache(maxsize=8)
def _facts(game: Game) -> Callable[[State], list[_Fact]]:
    """A reader of a state's facts, each parsed once per game (boards are read at every
    search leaf: :meth:`~ggp.game.Game.fact_reader`)."""
    index = {r.name: i for i, r in enumerate(_snake_roles(game))}
    return game.fact_reader(lambda fact: _parse_fact(fact, index))


def _parse_fact(fact: Term, index: dict[str, int]) -> _Fact:
    args = [a.name for a in fact.args]
    if fact.name == "food":
        return ("food", -1, (int(args[0]), int(args[1])))
    if fact.name == "turn":
        return ("turn", -1, int(args[0]))
    if fact.name not in _SNAKE_FACTS:
        return ("", -1, None)
    i = index[args[0]]
    if fact.name in ("head", "tail"):
        return (fact.name, i, (int(args[1]), int(args[2])))
    if fact.name == "seg":
        return ("seg", i, ((int(args[1]), int(args[2])), args[3]))
    if fact.name in ("stack", "health"):
        return (fact.name, i, int(args[1]))
    return ("alive", i, None)


def read_board(game: Game, state: State) -> Board:
    """The board of ``state`` (in the move or place phase)."""
    roles = _snake_roles(game)
    heads: dict[int, Point] = {}
    tails: dict[int, Point] = {}
    marks: dict[int, dict[Point, str]] = {i: {} for i in range(len(roles))}
    stack: dict[int, int] = {}
    health: dict[int, int] = {}
    alive: set[int] = set()
    food: set[Point] = set()
    turn = 0
    for name, i, value in _facts(game)(state):
        if name == "seg":
            cell, mark = value
            marks[i][cell] = mark
        elif name == "food":
            food.add(value)
        elif name == "head":
            heads[i] = value
        elif name == "tail":
            tails[i] = value
        elif name == "health":
            health[i] = value
        elif name == "stack":
            stack[i] = value
        elif name == "alive":
            alive.add(i)
        elif name == "turn":
            turn = value
    snakes: list[SnakeBody | None] = []
    for i in range(len(roles)):
        if i not in alive:
            snakes.append(None)
            continue
        cells = [tails[i]]
        while cells[-1] != heads[i]:
            dx, dy = MOVES[marks[i][cells[-1]]]
            cells.append((cells[-1][0] + dx, cells[-1][1] + dy))
            if len(cells) > len(marks[i]) + 1:
                raise BoardError(f"snake {roles[i]}: its body marks do not lead to its head")
        body = tuple(reversed(cells)) + (tails[i],) * stack[i]
        snakes.append(SnakeBody(body, health[i]))
    return Board(board_size(game), turn, tuple(snakes), frozenset(food))


def _direction(a: Point, b: Point) -> str:
    """The move from ``a`` to the neighbouring cell ``b``."""
    for name, (dx, dy) in MOVES.items():
        if (a[0] + dx, a[1] + dy) == b:
            return name
    raise BoardError(f"body cells {a} and {b} are not neighbours")


def board_facts(game: Game, board: Board, frozen: Collection[int] = ()) -> list[str]:
    """The state facts (KIF) of ``board`` in the move phase, the snakes of index in
    ``frozen`` frozen (a search model's ``(frozen S)``; see
    :class:`~ggp.battlesnake.generate.Variant`); :class:`BoardError` if the board is not
    one the game can be in."""
    roles = _snake_roles(game)
    size = board_size(game)
    if board.size != size:
        raise BoardError(f"the board is {board.size} x {board.size}; the game's is {size} x {size}")
    if len(board.snakes) != len(roles):
        raise BoardError(f"{len(board.snakes)} snakes; the game has {len(roles)}")
    facts = ["(phase move)", f"(turn {board.turn})"]
    facts += [f"(food {x} {y})" for x, y in sorted(board.food)]
    live = [i for i, s in enumerate(board.snakes) if s is not None]
    for i, snake in enumerate(board.snakes):
        role = roles[i].name
        if snake is None:
            # out before every live snake; out together with the other eliminated ones
            facts += [f"(outlived {roles[j].name} {role})" for j in live]
            facts += [
                f"(tied {role} {roles[j].name})"
                for j, other in enumerate(board.snakes)
                if other is None and j != i
            ]
            continue
        body = snake.body
        if len(body) < 1:
            raise BoardError(f"snake {role} has an empty body")
        for x, y in body:
            if not (0 <= x < size and 0 <= y < size):
                raise BoardError(f"snake {role}: cell ({x}, {y}) is off the board")
        distinct = list(body)
        while len(distinct) > 1 and distinct[-1] == distinct[-2]:
            distinct.pop()
        stacked = len(body) - len(distinct)
        if stacked > 2:
            raise BoardError(f"snake {role}: {stacked + 1} segments on its tail cell (at most 3)")
        if len(set(distinct)) != len(distinct):
            raise BoardError(f"snake {role}: its body crosses itself")
        facts += [
            f"(alive {role})",
            "(head {} {} {})".format(role, *distinct[0]),
            "(tail {} {} {})".format(role, *distinct[-1]),
            f"(stack {role} {stacked})",
            f"(health {role} {snake.health})",
            f"(len {role} {len(body)})",
        ]
        if i in frozen:
            facts.append(f"(frozen {role})")
        for near, far in itertools.pairwise(distinct):
            facts.append("(seg {} {} {} {})".format(role, *far, _direction(far, near)))
    return facts


def board_state(game: Game, board: Board, frozen: Collection[int] = ()) -> State:
    """The GDL state (move phase) of ``board`` (``frozen``: see :func:`board_facts`)."""
    facts = board_facts(game, board, frozen)
    props = game.base_propositions
    if props is not None:
        known = set(props)
        missing = [f for f in facts if game.term(f) not in known]
        if missing:
            raise BoardError(f"outside the game's state space: {', '.join(missing[:5])}")
    return game.state_from_facts(facts)
