"""The RTMM paper's scripted bots, as functions from a state and a role to a legal move
(../shared/REFERENCE-SEARCH.md sections 3.7-3.9).

BattleCity (``games/rts/battlecity_*.gdl``):

- ``random``: moves at random and fires constantly, unless its own base is in the line of
  fire.
- ``follower``: follows a shortest path to the nearest enemy (the tank, or the base when
  the base is nearer), shooting its way through bricks, and fires constantly with the same
  base check.

The 8x8 RTS (``games/rts/rts_8x8_*.gdl``), for the unit the rules ask an order for:

- ``stochastic`` (microRTS's RandomBiasedAI): a random legal order, attack, harvest and
  return weighted 5, every other order 1.
- ``rush`` (microRTS's LightRush): the base trains a worker when there is none; workers
  build a barracks when there is none and the bank holds more than its cost, else
  harvest and return; the barracks trains lights while the bank holds more than 2;
  lights (and heavies) attack an adjacent enemy, else step towards the nearest one.

Every bot returns one of the legal moves it is given.
"""

from __future__ import annotations

import heapq
from collections import deque
from collections.abc import Callable, Sequence

import numpy as np

from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.reasoning.state_machine import State
from ggp.rts.battlecity import DIRECTIONS as BATTLE_DIRECTIONS
from ggp.rts.microrts import DIRECTIONS as RTS_DIRECTIONS
from ggp.rts.microrts import UNIT_TYPES
from ggp.rts.state import BattleField, Cell, RtsBoard, read_board, read_field

__all__ = ["BOTS", "Bot", "bot_move"]

#: A bot: the game, the state, the role's index and its legal moves (more than one), a
#: source of randomness, to the move it plays.
Bot = Callable[[Game, State, int, Sequence[Term], np.random.Generator], Term]

_STEP = {d: (dx, dy) for d, dx, dy in BATTLE_DIRECTIONS}


# --------------------------------------------------------------------- BattleCity


def _base_in_line(field: BattleField, side: int, facing: str, at: Cell) -> bool:
    """Whether ``side``'s own base lies ahead of a tank at ``at`` facing ``facing``."""
    dx, dy = _STEP[facing]
    base = field.walls.bases[side]
    x, y = at
    while 1 <= x <= field.walls.width and 1 <= y <= field.walls.height:
        x, y = x + dx, y + dy
        if (x, y) == base:
            return True
        if (x, y) in field.walls.steel:
            return False
    return False


def _battle_move(legal: Sequence[Term], direction: str, fire: bool) -> Term:
    want = f"(do {direction} {'fire' if fire else 'hold'})"
    for move in legal:
        if str(move) == want:
            return move
    hold = f"(do none {'fire' if fire else 'hold'})"
    return next(m for m in legal if str(m) == hold)


def _fires(field: BattleField, side: int, direction: str) -> bool:
    tank = field.tanks[side]
    assert tank is not None
    facing = direction if direction != "none" else field.facing[side]
    ahead = tank
    if direction != "none":
        dx, dy = _STEP[direction]
        target = (tank[0] + dx, tank[1] + dy)
        if not field.blocked(target):
            ahead = target
    return not _base_in_line(field, side, facing, ahead)


def battlecity_random(
    game: Game, state: State, side: int, legal: Sequence[Term], rng: np.random.Generator
) -> Term:
    """BattleCity's Random bot (module docstring)."""
    field = read_field(game, state)
    directions = sorted({m.args[0].name for m in legal if m.args})
    direction = directions[int(rng.integers(len(directions)))]
    return _battle_move(legal, direction, _fires(field, side, direction))


def _path_step(field: BattleField, side: int) -> tuple[str, bool]:
    """The first direction of a cheapest path from ``side``'s tank to a cell next to the
    nearest enemy target (entering a brick costs 3: it is shot first), and whether that
    cell is a brick."""
    tank = field.tanks[side]
    assert tank is not None
    enemy = 1 - side
    goals = {c for c in (field.tanks[enemy], field.walls.bases[enemy]) if c is not None}
    w = field.walls
    frontier: list[tuple[int, Cell, str]] = [(0, tank, "none")]
    best: dict[Cell, int] = {tank: 0}
    while frontier:
        cost, cell, first = heapq.heappop(frontier)
        if cost > best.get(cell, 1 << 30):
            continue
        for d, dx, dy in BATTLE_DIRECTIONS:
            nxt = (cell[0] + dx, cell[1] + dy)
            step_first = first if first != "none" else d
            if nxt in goals:
                return step_first, nxt in field.bricks
            if not (1 <= nxt[0] <= w.width and 1 <= nxt[1] <= w.height):
                continue
            if nxt in w.steel or nxt in w.bases:
                continue
            c = cost + (3 if nxt in field.bricks else 1)
            if c < best.get(nxt, 1 << 30):
                best[nxt] = c
                heapq.heappush(frontier, (c, nxt, step_first))
    return "none", False


def battlecity_follower(
    game: Game, state: State, side: int, legal: Sequence[Term], rng: np.random.Generator
) -> Term:
    """BattleCity's Follower bot (module docstring)."""
    field = read_field(game, state)
    direction, _ = _path_step(field, side)
    if field.resting[side]:
        direction = "none"
    return _battle_move(legal, direction, _fires(field, side, direction))


# --------------------------------------------------------------------- the 8x8 RTS

_RTS_STEP = {d: (dx, dy) for d, dx, dy in RTS_DIRECTIONS}
_WEIGHTED = frozenset({"attack", "harvest", "return"})


def _order(move: Term) -> tuple[Cell, str, str]:
    x, y, action, direction = (a.name for a in move.args)
    return (int(x), int(y)), action, direction


def rts_stochastic(
    game: Game, state: State, side: int, legal: Sequence[Term], rng: np.random.Generator
) -> Term:
    """microRTS's RandomBiasedAI (module docstring)."""
    weights = np.array([5.0 if _order(m)[1] in _WEIGHTED else 1.0 for m in legal])
    return legal[int(rng.choice(len(legal), p=weights / weights.sum()))]


def _towards(board: RtsBoard, start: Cell, targets: set[Cell]) -> str | None:
    """The first direction of a shortest path over free cells from ``start`` to a cell
    next to one of ``targets`` (None: no path)."""
    if not targets:
        return None
    queue: deque[tuple[Cell, str | None]] = deque([(start, None)])
    seen = {start}
    while queue:
        cell, first = queue.popleft()
        for d, (dx, dy) in _RTS_STEP.items():
            nxt = (cell[0] + dx, cell[1] + dy)
            if nxt in targets and first is not None:
                return first
            if nxt in targets and first is None:
                return None  # already next to it
            if nxt in seen or not board.free(nxt):
                continue
            seen.add(nxt)
            queue.append((nxt, first or d))
    return None


def rts_rush(
    game: Game, state: State, side: int, legal: Sequence[Term], rng: np.random.Generator
) -> Term:
    """microRTS's LightRush (module docstring)."""
    board = read_board(game, state)
    orders = {_order(m)[1:]: m for m in legal}
    cell = _order(legal[0])[0]
    unit = board.units[cell]
    idle = orders[("idle", "here")]
    gold = board.gold[side]
    mine = [u for u in board.units.values() if u.owner == side]

    def first_of(action: str) -> Term | None:
        return next((m for (a, _), m in orders.items() if a == action), None)

    def step_to(targets: set[Cell]) -> Term:
        direction = _towards(board, cell, targets)
        return orders.get(("move", direction or ""), idle)

    enemies = {c for c, u in board.units.items() if u.owner != side}
    if unit.kind == "base":
        if not any(u.kind == "worker" for u in mine) and gold >= UNIT_TYPES["worker"].cost:
            return first_of("worker") or idle
        return idle
    if unit.kind == "barracks":
        if gold > UNIT_TYPES["light"].cost:
            return first_of("light") or idle
        return idle
    if unit.kind == "worker":
        if not any(u.kind == "barracks" for u in mine) and gold > UNIT_TYPES["barracks"].cost:
            build = first_of("barracks")
            if build is not None:
                return build
        if not any(u.kind == "base" for u in mine) and gold > UNIT_TYPES["base"].cost:
            build = first_of("base")
            if build is not None:
                return build
        if unit.carry:
            back = first_of("return")
            if back is not None:
                return back
            bases = {c for c, u in board.units.items() if u.owner == side and u.kind == "base"}
            return step_to(bases)
        dig = first_of("harvest")
        if dig is not None:
            return dig
        return step_to(set(board.mines))
    attack = first_of("attack")
    if attack is not None:
        return attack
    return step_to(enemies)


#: Every bot by name, with the games it plays (``battlecity`` or ``rts``).
BOTS: dict[str, tuple[str, Bot]] = {
    "random": ("battlecity", battlecity_random),
    "follower": ("battlecity", battlecity_follower),
    "stochastic": ("rts", rts_stochastic),
    "rush": ("rts", rts_rush),
}


def bot_move(
    name: str,
    game: Game,
    state: State,
    side: int,
    legal: Sequence[Term],
    rng: np.random.Generator,
) -> Term:
    """Bot ``name``'s move for role index ``side`` among ``legal`` (a single legal move is
    played as it is).

    Raises:
        GameError: No bot has that name.
    """
    if name not in BOTS:
        raise GameError(f"no RTS bot {name!r} (bots: {', '.join(BOTS)})")
    if len(legal) == 1:
        return legal[0]
    return BOTS[name][1](game, state, side, legal, rng)
