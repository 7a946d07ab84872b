"""A plain-Python Battlesnake, written from the official standard rules (tests only).

Written from the rules text (BattlesnakeOfficial/rules, ``standard`` ruleset and map,
../shared/REFERENCE-SEARCH.md section 2.9), not from the GDL: bodies are lists of
``(x, y)`` head first, as the official engine keeps them, and chance comes in from the
caller as the outcome it picked, so the same game can be replayed on the GDL.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field, replace

MOVES = {"up": (0, 1), "down": (0, -1), "left": (-1, 0), "right": (1, 0)}
Point = tuple[int, int]


@dataclass(frozen=True)
class Snake:
    body: tuple[Point, ...]  # head first
    health: int
    out_turn: int | None = None  # the turn it was eliminated in
    cause: str = ""

    @property
    def alive(self) -> bool:
        return self.out_turn is None


@dataclass(frozen=True)
class Board:
    size: int
    snakes: tuple[Snake, ...]
    food: frozenset[Point]
    turn: int = 0
    settings: dict[str, int] = field(default_factory=dict)


def start_outcomes(size: int, count: int) -> list[tuple[Point, ...]]:
    """Every equally likely assignment of the fixed start points to snakes 1..count."""
    mn, md, mx = 1, (size - 1) // 2, size - 2
    corners = [(mn, mn), (mn, mx), (mx, mn), (mx, mx)]
    cardinals = [(mn, md), (md, mn), (md, mx), (mx, md)]
    outcomes = []
    for first, second in ((corners, cardinals), (cardinals, corners)):
        # a shuffle of each list, one list first: count the distinct prefixes once each
        # (every prefix is equally likely: the same number of shuffles gives each)
        for a in itertools.permutations(first):
            for b in itertools.permutations(second):
                outcomes.append((a + b)[:count])
    # each distinct prefix appears equally often; keep one of each
    return sorted(set(outcomes))


def first_food_options(size: int, count: int, head: Point) -> list[Point]:
    """PlaceFoodFixed: the diagonal cells away from the centre, not the centre, no corner."""
    if count > 4 and size * size < 11 * 11:
        return []
    cx = cy = (size - 1) // 2
    hx, hy = head
    options = []
    for p in [(hx - 1, hy - 1), (hx - 1, hy + 1), (hx + 1, hy - 1), (hx + 1, hy + 1)]:
        if p == (cx, cy):
            continue
        px, py = p
        away = False
        if px < hx < cx or cx < hx < px or py < hy < cy or cy < hy < py:
            away = True
        if not away:
            continue
        if px in (0, size - 1) and py in (0, size - 1):
            continue
        options.append(p)
    return options


def new_board(size: int, heads: tuple[Point, ...], food: list[Point], **settings: int) -> Board:
    """A board after the official setup: three segments stacked on each start cell."""
    snakes = tuple(Snake(body=(h, h, h), health=100) for h in heads)
    centre = ((size - 1) // 2, (size - 1) // 2)
    return Board(size, snakes, frozenset([*food, centre]), 0, dict(settings))


def game_over(board: Board) -> bool:
    return sum(s.alive for s in board.snakes) <= 1


def step(board: Board, moves: list[str | None]) -> Board:
    """One turn of the standard ruleset: move, reduce health, feed, eliminate.

    ``moves[i]`` is snake i's move (ignored for eliminated snakes). Food is not spawned
    here: see :func:`needs_food` and :func:`free_cells`.
    """
    n = board.size
    snakes = list(board.snakes)
    # move
    for i, s in enumerate(snakes):
        if not s.alive:
            continue
        dx, dy = MOVES[moves[i]]  # type: ignore[index]
        hx, hy = s.body[0]
        snakes[i] = replace(s, body=((hx + dx, hy + dy), *s.body[:-1]))
    # reduce health
    for i, s in enumerate(snakes):
        if s.alive:
            snakes[i] = replace(s, health=s.health - 1)
    # feed
    food = set(board.food)
    eaten = set()
    for f in board.food:
        for i, s in enumerate(snakes):
            if s.alive and s.body[0] == f:
                snakes[i] = replace(s, health=100, body=(*s.body, s.body[-1]))
                eaten.add(f)
    food -= eaten
    # eliminate: out of health, out of bounds first
    turn = board.turn + 1
    for i, s in enumerate(snakes):
        if not s.alive:
            continue
        if s.health <= 0:
            snakes[i] = replace(s, out_turn=turn, cause="out-of-health")
            continue
        x, y = s.body[0]
        if not (0 <= x < n and 0 <= y < n):
            snakes[i] = replace(s, out_turn=turn, cause="wall")
    # then collisions, applied together
    causes = {}
    for i, s in enumerate(snakes):
        if not s.alive:
            continue
        head = s.body[0]
        if head in s.body[1:]:
            causes[i] = "self-collision"
            continue
        hit = False
        for j, o in enumerate(snakes):
            if j != i and o.alive and head in o.body[1:]:
                causes[i] = "snake-collision"
                hit = True
                break
        if hit:
            continue
        for j, o in enumerate(snakes):
            if j != i and o.alive and o.body[0] == head and len(s.body) <= len(o.body):
                causes[i] = "head-collision"
                break
    for i, cause in causes.items():
        snakes[i] = replace(snakes[i], out_turn=turn, cause=cause)
    return replace(board, snakes=tuple(snakes), food=frozenset(food), turn=turn)


def needs_food(board: Board, roll: int) -> bool:
    """checkFoodNeedingPlacement with ``rand.Intn(100) == roll``."""
    if len(board.food) < board.settings.get("minimum_food", 1):
        return True
    chance = board.settings.get("food_spawn_chance", 15)
    return chance > 0 and 100 - roll < chance


def free_cells(board: Board) -> list[Point]:
    """GetUnoccupiedPoints(includePossibleMoves=false): no food, body, or head neighbour."""
    taken = set(board.food)
    for s in board.snakes:
        if not s.alive:
            continue
        taken.update(s.body)
        hx, hy = s.body[0]
        taken.update((hx + dx, hy + dy) for dx, dy in MOVES.values())
    return [(x, y) for x in range(board.size) for y in range(board.size) if (x, y) not in taken]


def place_food(board: Board, cell: Point) -> Board:
    return replace(board, food=board.food | {cell})


def placements(board: Board) -> list[int]:
    """Each snake's final place-score: 2 per snake out before it, 1 per snake out with it
    (or alive with it), over 2 * (k - 1); the IDAPOS ranking."""
    scores = []
    for i, s in enumerate(board.snakes):
        points = 0
        for j, o in enumerate(board.snakes):
            if i == j:
                continue
            mine = s.out_turn if s.out_turn is not None else 10**9
            theirs = o.out_turn if o.out_turn is not None else 10**9
            points += 2 if theirs < mine else 1 if theirs == mine else 0
        scores.append(points)
    return scores
