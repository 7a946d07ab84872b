"""A plain-Python model of the 8x8 real-time strategy game (the first microRTS), tests only.

Written from the English rules block at the top of ``games/rts/rts_8x8_*.gdl`` (the text
of :data:`ggp.rts.microrts.RULES_TEXT`), not from the GDL rules, so that replaying the same
games on both catches a mistake in either. From :mod:`ggp.rts.microrts` it takes only data:
the unit types' numbers, the scenarios, the roles, the directions and the durations.

A state holds the units by cell (owner, type, hit points, the running action with its
ticks left, whether a worker carries), the mines, both banks and the clock. A step is an
order step (each side with a ready unit orders its first ready unit, the clock frozen) or,
when no unit of either side is ready, a tick (every running action counts down; those at
one land together). :func:`facts` renders a state as the GDL's state facts, and
:func:`legal` a side's moves as the GDL names them, so the two can be compared directly.

Readings of the text taken here (each is checked against the GDL by the replay test):

- an action ordered with duration K lands in the K-th tick after the order (the table's
  "ticks to move" are the ticks a move takes; ``(left X Y K)`` counts the ticks to go);
- "if an own base is still there" is judged as at the start of the tick, as the attacks
  are ("effects landing in one tick land together"): a base removed in the tick a return
  lands still takes the deposit. The text reads the other way too (the removals come
  first, "then"); of the two, this is the GDL's. Without a base the worker keeps carrying;
- a worker removed in the tick its harvest lands still takes the resource out of the mine;
- a side with no unit left loses even in the tick that reaches the time cap;
- a tick counts at most 4 deposits per side (the text does not say so; the GDL's counter
  stops at 4), and a bank never exceeds the scenario's ``max_gold`` (the start's gold
  plus every mine's; it cannot anyway).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, replace

from ggp.rts.microrts import (
    ATTACK_TICKS,
    DIRECTIONS,
    HARVEST_TICKS,
    RETURN_TICKS,
    ROLES,
    UNIT_TYPES,
    Scenario,
)

Cell = tuple[int, int]

#: Direction name -> (dx, dy); y grows downward.
STEP: dict[str, Cell] = {name: (dx, dy) for name, dx, dy in DIRECTIONS}
#: Deposits a side's bank takes in one tick at most.
MAX_DEPOSITS_PER_TICK = 4


@dataclass(frozen=True)
class Unit:
    """One unit. ``action`` is None when the unit is ready; otherwise one of ``idle``,
    ``move``, ``attack``, ``harvest``, ``return`` or the name of the type it produces,
    towards ``direction`` (``here`` for idle), landing after ``left`` more ticks."""

    owner: str
    kind: str
    hp: int
    action: str | None = None
    direction: str = "here"
    left: int = 0
    carry: bool = False


@dataclass(frozen=True)
class State:
    scenario: Scenario
    units: dict[Cell, Unit]
    mines: dict[Cell, int]
    gold: dict[str, int]
    time: int = 0


def initial(scenario: Scenario) -> State:
    units = {(x, y): Unit(ROLES[p], kind, UNIT_TYPES[kind].hp) for x, y, p, kind in scenario.units}
    mines = {(x, y): r for x, y, r in scenario.mines}
    return State(scenario, units, mines, dict.fromkeys(ROLES, scenario.gold))


def neighbour(cell: Cell, direction: str) -> Cell:
    dx, dy = STEP[direction]
    return cell[0] + dx, cell[1] + dy


def on_board(state: State, cell: Cell) -> bool:
    n = state.scenario.size
    return 0 <= cell[0] < n and 0 <= cell[1] < n


def claims(action: str | None) -> bool:
    """Whether a running ``action`` reserves its target cell (moves and productions)."""
    return action == "move" or action in UNIT_TYPES


def reserved(state: State) -> set[Cell]:
    return {neighbour(c, u.direction) for c, u in state.units.items() if claims(u.action)}


def free(state: State, cell: Cell, taken: set[Cell]) -> bool:
    return (
        on_board(state, cell)
        and cell not in state.units
        and cell not in state.mines
        and cell not in taken
    )


def first_ready(state: State, role: str) -> Cell | None:
    """The role's ready unit first in row-by-row order from (0, 0), if any."""
    ready = [c for c, u in state.units.items() if u.owner == role and u.action is None]
    return min(ready, key=lambda c: (c[1], c[0])) if ready else None


def is_tick(state: State) -> bool:
    """No unit of either side is ready: the step is a tick."""
    return all(u.action is not None for u in state.units.values())


def being_harvested(state: State) -> set[Cell]:
    return {neighbour(c, u.direction) for c, u in state.units.items() if u.action == "harvest"}


def legal(state: State, role: str) -> list[str]:
    cell = first_ready(state, role)
    if cell is None:
        return ["noop"]
    x, y = cell
    unit = state.units[cell]
    spec = UNIT_TYPES[unit.kind]
    taken = reserved(state)
    moves = [f"(order {x} {y} idle here)"]
    for d in STEP:
        target = neighbour(cell, d)
        other = state.units.get(target)
        if spec.move and free(state, target, taken):
            moves.append(f"(order {x} {y} move {d})")
        if spec.damage and other is not None and other.owner != role:
            moves.append(f"(order {x} {y} attack {d})")
        if unit.kind == "worker":
            if not unit.carry and target in state.mines and target not in being_harvested(state):
                moves.append(f"(order {x} {y} harvest {d})")
            if unit.carry and other is not None and other.owner == role and other.kind == "base":
                moves.append(f"(order {x} {y} return {d})")
        for made in spec.makes:
            if free(state, target, taken) and state.gold[role] >= UNIT_TYPES[made].cost:
                moves.append(f"(order {x} {y} {made} {d})")
    return moves


def duration(kind: str, action: str) -> int:
    spec = UNIT_TYPES[kind]
    if action == "idle":
        return spec.idle
    if action == "move":
        return spec.move
    if action == "attack":
        return ATTACK_TICKS
    if action == "harvest":
        return HARVEST_TICKS
    if action == "return":
        return RETURN_TICKS
    return UNIT_TYPES[action].produce


def parse(move: str) -> tuple[Cell, str, str] | None:
    """``(order X Y A D)`` -> ((X, Y), A, D); ``noop`` -> None."""
    if move == "noop":
        return None
    words = move.strip("()").split()
    assert words[0] == "order" and len(words) == 5, move
    return (int(words[1]), int(words[2])), words[3], words[4]


def aim(cell: Cell, action: str, direction: str) -> Cell | None:
    """The cell an order targets for the clash rule (moves, productions, harvests)."""
    if action == "move" or action == "harvest" or action in UNIT_TYPES:
        return neighbour(cell, direction)
    return None


def step(state: State, moves: dict[str, str], events: Counter[str] | None = None) -> State:
    """The state after ``moves`` (role -> move string, each legal in ``state``).

    ``events``, when given, counts what happened (for the tests' coverage checks)."""
    for role in ROLES:
        assert moves[role] in legal(state, role), (role, moves[role])
    if events is None:
        events = Counter()
    if is_tick(state):
        return tick(state, events)
    orders = {role: parse(moves[role]) for role in ROLES}
    aims = {role: aim(*order) if order is not None else None for role, order in orders.items()}
    clash = aims["blue"] is not None and aims["blue"] == aims["red"]
    if clash:
        events["clash"] += 1
        kinds = sorted(
            order[1] if order[1] in ("move", "harvest") else "produce"
            for order in orders.values()
            if order is not None
        )
        events[f"clash {'/'.join(kinds)}"] += 1
    units = dict(state.units)
    gold = dict(state.gold)
    for role, order in orders.items():
        if order is None:
            continue
        cell, action, direction = order
        unit = units[cell]
        if clash:
            action, direction = "idle", "here"
        elif action in UNIT_TYPES:
            gold[role] -= UNIT_TYPES[action].cost
        units[cell] = replace(
            unit, action=action, direction=direction, left=duration(unit.kind, action)
        )
    return replace(state, units=units, gold=gold)


def tick(state: State, events: Counter[str]) -> State:
    landing = {c: u for c, u in state.units.items() if u.left == 1}
    # attacks are summed against the units where they are at the start of the tick
    damage: Counter[Cell] = Counter()
    attackers: Counter[Cell] = Counter()
    for c, u in landing.items():
        if u.action == "attack":
            target = neighbour(c, u.direction)
            victim = state.units.get(target)
            if victim is not None and victim.owner != u.owner:
                damage[target] += UNIT_TYPES[u.kind].damage
                attackers[target] += 1
            else:
                events["attack finds no enemy"] += 1
    if any(n > 1 for n in attackers.values()):
        events["several attackers"] += 1
    units: dict[Cell, Unit] = {}
    for c, u in state.units.items():
        hp = u.hp - damage[c]
        if hp <= 0:
            events["death"] += 1
            if c in landing and u.action != "attack":
                what = "production" if u.action in UNIT_TYPES else u.action
                events[f"removed as its {what} lands"] += 1
            elif u.action in UNIT_TYPES:
                events["death while producing"] += 1
            elif u.action in ("harvest", "return"):
                events[f"death while doing {u.action}"] += 1
            continue
        if c in landing:
            units[c] = replace(u, hp=hp, action=None, direction="here", left=0)
        else:
            units[c] = replace(u, hp=hp, left=u.left - 1)
    mines = dict(state.mines)
    deposits = Counter[str]()
    for c, u in sorted(landing.items()):
        if u.action == "idle" or u.action == "attack":
            continue
        target = neighbour(c, u.direction)
        alive = c in units
        if u.action == "move" and alive:
            units[target] = units.pop(c)
            events["move"] += 1
        elif u.action == "harvest":
            mines[target] -= 1
            events["harvest"] += 1
            if mines[target] == 0:
                del mines[target]
                events["mine exhausted"] += 1
            if alive:
                units[c] = replace(units[c], carry=True)
        elif u.action == "return":
            # the base as at the start of the tick: effects landing together (see above)
            base = state.units.get(target)
            if base is not None and base.owner == u.owner and base.kind == "base":
                deposits[u.owner] += 1
                events["deposit"] += 1
                if target not in units:
                    events["deposit as the base is removed"] += 1
                if alive:
                    units[c] = replace(units[c], carry=False)
            else:
                events["return without base"] += 1
        elif u.action in UNIT_TYPES:
            assert target not in units, (c, u)
            units[target] = Unit(u.owner, u.action, UNIT_TYPES[u.action].hp)
            events[f"produced {u.action}"] += 1
    if max(deposits.values(), default=0) > MAX_DEPOSITS_PER_TICK:
        events["more deposits in a tick than counted"] += 1
    gold = {
        role: min(
            state.gold[role] + min(deposits[role], MAX_DEPOSITS_PER_TICK),
            state.scenario.max_gold,
        )
        for role in ROLES
    }
    return State(state.scenario, units, mines, gold, state.time + 1)


def alive(state: State, role: str) -> bool:
    return any(u.owner == role for u in state.units.values())


def terminal(state: State) -> bool:
    return not all(alive(state, r) for r in ROLES) or state.time >= state.scenario.max_ticks


def goals(state: State) -> tuple[int, int]:
    blue, red = (alive(state, r) for r in ROLES)
    if blue and not red:
        return 100, 0
    if red and not blue:
        return 0, 100
    return 50, 50


def facts(state: State) -> set[str]:
    """The state as the GDL's state facts."""
    out = {f"(time {state.time})"}
    out |= {f"(gold {role} {n})" for role, n in state.gold.items()}
    out |= {f"(mine {x} {y} {r})" for (x, y), r in state.mines.items()}
    for (x, y), u in state.units.items():
        out.add(f"(unit {x} {y} {u.owner} {u.kind})")
        out.add(f"(hp {x} {y} {u.hp})")
        if u.action is not None:
            out.add(f"(doing {x} {y} {u.action} {u.direction})")
            out.add(f"(left {x} {y} {u.left})")
        if u.carry:
            out.add(f"(carry {x} {y})")
    return out
