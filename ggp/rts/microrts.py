"""Write the RTMM paper's 8x8 real-time strategy game (the first microRTS) as GDL.

One generator for every scenario: :func:`rts_gdl` takes a :class:`Scenario` (a map: units,
mines, resources) and returns the description; ``python -m ggp.rts.microrts [DIR]`` writes
the shipped scenarios (:data:`SCENARIOS`: RTS-Melee and RTS-Full) into ``games/rts/``.
:data:`RULES_TEXT` is the rules block at the top of every file; it states each rule and
each deviation from microRTS.

Durative actions follow the paper's model (REFERENCE-SEARCH.md section 3.1): a player
orders its ready units one per step, the clock frozen; the clock advances one tick in a
step where no unit of either side is ready (every role plays ``noop``: the RTMM
``simulate`` step). Only the rules for the unit types a scenario can ever have are
written, so RTS-Melee (lights only) grounds small.

Encoding (the state facts a reader of the files meets):

- ``(unit X Y P T)``, ``(hp X Y H)``: a unit of player ``P``, type ``T``, in cell (X, Y).
- ``(doing X Y A D)``, ``(left X Y K)``: the unit in (X, Y) runs action ``A`` towards
  direction ``D`` (``here`` for ``idle``), which lands after ``K`` more ticks; a unit
  without them is ready.
- ``(carry X Y)``: the worker in (X, Y) carries one resource; ``(mine X Y R)``: a mine
  holding ``R``; ``(gold P N)``: ``P``'s bank; ``(time N)``: ticks elapsed.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass

from ggp.gdl.generated import comment_block, write_generated

__all__ = [
    "UnitType",
    "UNIT_TYPES",
    "Scenario",
    "SCENARIOS",
    "ROLES",
    "DIRECTIONS",
    "RULES_TEXT",
    "scenario",
    "rts_gdl",
    "main",
]

#: Direction name, dx, dy (y grows downward, as in microRTS).
DIRECTIONS: tuple[tuple[str, int, int], ...] = (
    ("up", 0, -1),
    ("right", 1, 0),
    ("down", 0, 1),
    ("left", -1, 0),
)
#: microRTS's player 0 and player 1, in role order.
ROLES = ("blue", "red")
#: Cycles per tick: every microRTS duration is halved (attack 5 cycles: 3 ticks).
CYCLES_PER_TICK = 2
#: 3,000 cycles (the paper's harness cap), in ticks.
MAX_TICKS = 1500
ATTACK_TICKS = 3
HARVEST_TICKS = 10
RETURN_TICKS = 5


@dataclass(frozen=True)
class UnitType:
    """One unit type with microRTS's first-commit numbers, durations in ticks.

    Attributes:
        name: ``base``, ``barracks``, ``worker``, ``light`` or ``heavy``.
        cost: Resources to produce it.
        hp: Hit points when produced.
        damage: Damage per attack (0: cannot attack).
        move: Ticks per move (0: cannot move); ``idle`` lasts this long (buildings: 5).
        produce: Ticks to produce one.
        makes: The types it produces.
    """

    name: str
    cost: int
    hp: int
    damage: int
    move: int
    produce: int
    makes: tuple[str, ...] = ()

    @property
    def idle(self) -> int:
        """How long the ``idle`` action lasts (microRTS: the move time; 10 cycles for
        buildings)."""
        return self.move or 5


UNIT_TYPES: dict[str, UnitType] = {
    t.name: t
    for t in (
        UnitType("base", cost=10, hp=10, damage=0, move=0, produce=125, makes=("worker",)),
        UnitType("barracks", cost=5, hp=4, damage=0, move=0, produce=100, makes=("light", "heavy")),
        UnitType("worker", cost=1, hp=1, damage=1, move=5, produce=25, makes=("base", "barracks")),
        UnitType("light", cost=2, hp=4, damage=2, move=4, produce=40),
        UnitType("heavy", cost=2, hp=4, damage=4, move=6, produce=60),
    )
}


@dataclass(frozen=True)
class Scenario:
    """A start position on the 8x8 board.

    Attributes:
        name: The file is ``games/rts/rts_8x8_{name}.gdl``.
        units: ``(x, y, player, type)`` of every unit at the start (player 0 is blue).
        mines: ``(x, y, resources)`` of every mine.
        gold: Each player's resources at the start.
        size: The board is ``size`` x ``size``.
        max_ticks: The game is a draw after this many ticks.
    """

    name: str
    units: tuple[tuple[int, int, int, str], ...]
    mines: tuple[tuple[int, int, int], ...] = ()
    gold: int = 0
    size: int = 8
    max_ticks: int = MAX_TICKS

    def types(self) -> list[str]:
        """Every unit type the scenario can ever have (the start's, and what they make),
        in :data:`UNIT_TYPES` order."""
        found = {t for _, _, _, t in self.units}
        todo = list(found)
        while todo:
            for made in UNIT_TYPES[todo.pop()].makes:
                if made not in found:
                    found.add(made)
                    todo.append(made)
        return [t for t in UNIT_TYPES if t in found]

    @property
    def max_gold(self) -> int:
        """The most a bank can hold: the start's plus every mine's."""
        return self.gold + sum(r for _, _, r in self.mines)


#: RTS-Melee (microRTS ``melee8x8light4``) and RTS-Full (``basesWorkers8x8``).
SCENARIOS: tuple[Scenario, ...] = (
    Scenario(
        "melee",
        units=(
            *((x, y, 0, "light") for x, y in ((1, 1), (2, 1), (1, 2), (2, 2))),
            *((x, y, 1, "light") for x, y in ((5, 5), (5, 6), (6, 5), (6, 6))),
        ),
    ),
    Scenario(
        "full",
        units=((2, 1, 0, "base"), (1, 1, 0, "worker"), (5, 6, 1, "base"), (6, 6, 1, "worker")),
        mines=((0, 0, 20), (7, 7, 20)),
        gold=5,
    ),
)


def scenario(name: str) -> Scenario:
    """The shipped scenario called ``name``.

    Raises:
        KeyError: No scenario has that name.
    """
    for s in SCENARIOS:
        if s.name == name:
            return s
    raise KeyError(f"no RTS scenario {name!r} (scenarios: {', '.join(s.name for s in SCENARIOS)})")


RULES_TEXT = """\
The 8x8 real-time strategy game of the RTMM paper (S. Ontanon, Experiments with Game Tree
Search in Real-Time Strategy Games, 2012), the first microRTS (August 2012), generated by
`python -m ggp.rts.microrts` ({name} scenario; ../shared/REFERENCE-SEARCH.md 3.8-3.9).

Roles: blue (microRTS player 0), red (player 1). Deterministic, fully observable.
Board {size}x{size}, x and y from 0, y grows downward (up = y - 1). Unit types here:
{types}.

Units (cost, hit points, damage, ticks to move, ticks to produce; 1 tick = 2 cycles,
every microRTS duration halved, attack 5 cycles rounded up to 3 ticks):
{table}
A base produces workers, a barracks lights and heavies, a worker builds bases and
barracks. Mines are neutral and hold resources; a worker carries one resource at a time.

Time and orders (the paper's durative model). A unit is ready when it runs no action.
In a step where some unit of either side is ready, each side with a ready unit orders its
first ready unit (cells scanned row by row from (0,0)), the other side plays noop, and
the clock does not move. In a step where no unit is ready, both play noop and one tick
passes: every running action's count goes down by one; the actions whose count was one
land, all at once (an order lasting K ticks lands in the K-th tick after it).

Orders: (order X Y A D) for the unit in (X, Y), D a direction (up, right, down, left):
- (order X Y idle here): nothing, lasting the unit's move time (buildings 5 ticks).
- move: to the free neighbouring cell D; a cell is free when no unit or mine is in it
  and no running move or production targets it (the target is reserved from the order on).
  Lands: the unit is now in the target cell.
- attack (workers, lights, heavies): the enemy unit in the neighbouring cell D; {attack}
  ticks. Lands: the unit then in that cell, if an enemy's, loses the attacker's damage.
- harvest (a worker carrying nothing): the neighbouring mine D, if no other worker is
  harvesting it; {harvest} ticks. Lands: the worker carries one, the mine holds one less
  (a mine at 0 is gone).
- return (a worker carrying one): the own base in cell D; {ret} ticks. Lands: if an own
  base is there at the start of the tick, the bank gains one (at most 4 returns count per
  side and tick; a fifth is lost) and the worker carries nothing.
- (order X Y T D), T a type the unit makes: produce it in the free neighbouring cell D,
  if the bank holds at least its cost, which is paid at the order; the type's produce
  time. Lands: a new unit T, full hit points, in that cell.
When both sides' orders in one step target the same cell (move, produce, or harvest of
one mine), both units idle instead (microRTS: conflicting orders cancel) and pay nothing.
Effects landing in one tick land together: attacks are summed against the units where
they were at the start of the tick, then every unit at 0 hit points or less is removed
(with its action); actions of removed units still land in that tick (a produced unit
appears, a harvest or a return counts), but a removed unit does not move.

End: a side without units loses (both at once: a draw); after {max_ticks} ticks
({cycles} cycles, the paper's harness cap) the game is a draw. Goals: win 100, loss 0,
draw 50 each.

Deviations from the first microRTS: durations halved (attack rounded up); one worker at a
time harvests a mine (microRTS lets two); at most 4 returns count per side and tick; the
order of a player's orders is fixed (first ready unit first); orders are checked against
reservations made earlier in the same clock tick, so a side never issues two conflicting
orders.

State facts: (unit X Y P T), (hp X Y H), (doing X Y A D), (left X Y K), (carry X Y),
(mine X Y R), (gold P N), (time N).
Start: {start}"""


def _rules_text(s: Scenario) -> str:
    types = [UNIT_TYPES[t] for t in s.types()]
    table = "\n".join(
        f"  {t.name}: cost {t.cost}, hp {t.hp}, damage {t.damage or '-'}, "
        f"move {t.move or '-'}, produce {t.produce}"
        + (f", makes {' and '.join(t.makes)}" if t.makes else "")
        for t in types
    )
    units = ", ".join(f"{ROLES[p]} {t} ({x},{y})" for x, y, p, t in s.units)
    mines = ", ".join(f"mine {r} ({x},{y})" for x, y, r in s.mines)
    start = "; ".join(part for part in (units, mines, f"gold {s.gold} each") if part)
    return RULES_TEXT.format(
        name=s.name,
        size=s.size,
        types=", ".join(t.name for t in types),
        table=table,
        attack=ATTACK_TICKS,
        harvest=HARVEST_TICKS,
        ret=RETURN_TICKS,
        max_ticks=s.max_ticks,
        cycles=s.max_ticks * CYCLES_PER_TICK,
        start=start,
    )


def _static(s: Scenario) -> Iterator[str]:
    n = s.size
    types = [UNIT_TYPES[t] for t in s.types()]
    workers = any(t.name == "worker" for t in types)
    yield ";; roles and static facts"
    for role in ROLES:
        yield f"(role {role})"
    yield f"(opp {ROLES[0]} {ROLES[1]}) (opp {ROLES[1]} {ROLES[0]})"
    cells = [(x, y) for y in range(n) for x in range(n)]
    yield " ".join(f"(cell {x} {y})" for x, y in cells)
    yield " ".join(f"(cellafter {a[0]} {a[1]} {b[0]} {b[1]})" for a, b in itertools.pairwise(cells))
    for y in range(n):
        yield " ".join(
            f"(adj {x} {y} {d} {x + dx} {y + dy})"
            for x in range(n)
            for d, dx, dy in DIRECTIONS
            if 0 <= x + dx < n and 0 <= y + dy < n
        )
    yield " ".join(f"(dir {d})" for d, _, _ in DIRECTIONS)
    for t in types:
        yield f"(unittype {t.name}) (maxhp {t.name} {t.hp}) (dur {t.name} idle {t.idle})"
        if t.move:
            yield f"(mobile {t.name}) (dur {t.name} move {t.move})"
        if t.damage:
            yield f"(damage {t.name} {t.damage}) (dur {t.name} attack {ATTACK_TICKS})"
        for made in t.makes:
            m = UNIT_TYPES[made]
            yield (
                f"(makes {t.name} {made}) (dur {t.name} {made} {m.produce}) (cost {made} {m.cost})"
            )
    if workers:
        yield f"(dur worker harvest {HARVEST_TICKS}) (dur worker return {RETURN_TICKS})"
    # actions whose target cell is reserved while they run
    yield "(claims move)" + "".join(
        f" (claims {t.name})" for t in types if t.cost and _made(t, types)
    )
    top = max((t.produce for t in types if _made(t, types)), default=0)
    top = max([top, ATTACK_TICKS, *(t.idle for t in types)] + ([HARVEST_TICKS] if workers else []))
    yield " ".join(f"(ksucc {k} {k + 1})" for k in range(1, top))
    yield " ".join(f"(tsucc {k} {k + 1})" for k in range(s.max_ticks))
    # hit points after a hit of D damage (0 at the least)
    damages = sorted({0, *(t.damage for t in types if t.damage)})
    hps = range(0, max(t.hp for t in types) + 1)
    yield " ".join(f"(minus {h} {d} {max(h - d, 0)})" for h in hps for d in damages)
    costs = sorted({UNIT_TYPES[m].cost for t in types for m in t.makes})
    if costs:
        yield " ".join(
            f"(pay {g} {c} {g - c})" for g in range(s.max_gold + 1) for c in costs if g >= c
        )
    if workers:
        yield " ".join(
            f"(gain {g} {c} {min(g + c, s.max_gold)})"
            for g in range(s.max_gold + 1)
            for c in range(1, 5)
        )
        yield " ".join(f"(csucc {c} {c + 1})" for c in range(4)) + " (cmax 4)"
        yield " ".join(f"(rsucc {r} {r + 1})" for r in range(max(r for _, _, r in s.mines)))
    yield "(back up down) (back down up) (back left right) (back right left)"
    yield "(stage up 0 1) (stage right 1 2) (stage down 2 3) (stage left 3 4)"


def _made(t: UnitType, types: list[UnitType]) -> bool:
    return any(t.name in other.makes for other in types)


def _init(s: Scenario) -> Iterator[str]:
    yield ";; the start"
    for x, y, p, t in s.units:
        yield f"(init (unit {x} {y} {ROLES[p]} {t})) (init (hp {x} {y} {UNIT_TYPES[t].hp}))"
    for x, y, r in s.mines:
        yield f"(init (mine {x} {y} {r}))"
    for role in ROLES:
        yield f"(init (gold {role} {s.gold}))"
    yield "(init (time 0))"


def _rules(s: Scenario) -> Iterator[str]:
    types = s.types()
    workers = "worker" in types
    producers = any(UNIT_TYPES[t].makes for t in types)
    yield """\
;; who is ready, and whose turn it is to order
(<= (busy ?x ?y) (true (doing ?x ?y ?a ?d)))
(<= (ready ?p ?x ?y) (true (unit ?x ?y ?p ?t)) (not (busy ?x ?y)))
(<= (hasready ?p) (ready ?p ?x ?y))
(<= tick (not (hasready blue)) (not (hasready red)))
(<= (readyupto ?p ?x ?y) (ready ?p ?x ?y))
(<= (readyupto ?p ?x2 ?y2) (readyupto ?p ?x ?y) (cellafter ?x ?y ?x2 ?y2))
(<= (readybefore ?p ?x2 ?y2) (readyupto ?p ?x ?y) (cellafter ?x ?y ?x2 ?y2))
(<= (first ?p ?x ?y) (ready ?p ?x ?y) (not (readybefore ?p ?x ?y)))

;; cells
(<= (occupied ?x ?y) (true (unit ?x ?y ?p ?t)))
(<= (reserved ?x2 ?y2) (true (doing ?x ?y ?a ?d)) (claims ?a) (adj ?x ?y ?d ?x2 ?y2))
(<= (free ?x ?y) (cell ?x ?y) (not (occupied ?x ?y)) (not (reserved ?x ?y)))

;; orders
(<= (legal ?p noop) (role ?p) (not (hasready ?p)))
(<= (legal ?p (order ?x ?y idle here)) (first ?p ?x ?y))
(<= (legal ?p (order ?x ?y move ?d)) (first ?p ?x ?y) (true (unit ?x ?y ?p ?t)) (mobile ?t)
    (adj ?x ?y ?d ?x2 ?y2) (free ?x2 ?y2))
(<= (legal ?p (order ?x ?y attack ?d)) (first ?p ?x ?y) (true (unit ?x ?y ?p ?t)) (damage ?t ?n)
    (adj ?x ?y ?d ?x2 ?y2) (true (unit ?x2 ?y2 ?q ?t2)) (opp ?p ?q))
(<= (issued ?p ?x ?y ?a ?d) (does ?p (order ?x ?y ?a ?d)))
(<= (aims ?p ?x2 ?y2) (issued ?p ?x ?y ?a ?d) (claims ?a) (adj ?x ?y ?d ?x2 ?y2))
(<= (clash ?p) (aims ?p ?x ?y) (opp ?p ?q) (aims ?q ?x ?y))
(<= (next (doing ?x ?y ?a ?d)) (issued ?p ?x ?y ?a ?d) (not (clash ?p)))
(<= (next (left ?x ?y ?k)) (issued ?p ?x ?y ?a ?d) (not (clash ?p)) (true (unit ?x ?y ?p ?t))
    (dur ?t ?a ?k))
(<= (next (doing ?x ?y idle here)) (issued ?p ?x ?y ?a ?d) (clash ?p))
(<= (next (left ?x ?y ?k)) (issued ?p ?x ?y ?a ?d) (clash ?p) (true (unit ?x ?y ?p ?t))
    (dur ?t idle ?k))

;; a tick: running actions count down, those at one land
(<= (next (doing ?x ?y ?a ?d)) (true (doing ?x ?y ?a ?d)) (not tick))
(<= (next (left ?x ?y ?k)) (true (left ?x ?y ?k)) (not tick))
(<= (lands ?x ?y) tick (true (left ?x ?y 1)))
(<= (next (doing ?x ?y ?a ?d)) tick (true (doing ?x ?y ?a ?d)) (not (lands ?x ?y))
    (not (dies ?x ?y)))
(<= (next (left ?x ?y ?k)) tick (true (left ?x ?y ?k2)) (ksucc ?k ?k2) (not (dies ?x ?y)))

;; attacks: summed per target, one direction at a time
(<= (strikes ?x2 ?y2 ?e ?p ?n) (lands ?x ?y) (true (doing ?x ?y attack ?d)) (adj ?x ?y ?d ?x2 ?y2)
    (back ?d ?e) (true (unit ?x ?y ?p ?t)) (damage ?t ?n))
(<= (hurt ?x ?y ?e ?n) (strikes ?x ?y ?e ?p ?n) (true (unit ?x ?y ?q ?t)) (opp ?p ?q))
(<= (struck ?x ?y ?e) (hurt ?x ?y ?e ?n))
(<= (hpat ?x ?y 0 ?h) (true (hp ?x ?y ?h)))
(<= (hpat ?x ?y ?j ?h2) (hpat ?x ?y ?i ?h) (stage ?e ?i ?j) (hurt ?x ?y ?e ?n) (minus ?h ?n ?h2))
(<= (hpat ?x ?y ?j ?h) (hpat ?x ?y ?i ?h) (stage ?e ?i ?j) (not (struck ?x ?y ?e)))
(<= (dies ?x ?y) (hpat ?x ?y 4 0))

;; moves
(<= (arrives ?x2 ?y2 ?x ?y) (lands ?x ?y) (true (doing ?x ?y move ?d)) (adj ?x ?y ?d ?x2 ?y2)
    (not (dies ?x ?y)))
(<= (leaves ?x ?y) (arrives ?x2 ?y2 ?x ?y))
(<= (stays ?x ?y) (true (unit ?x ?y ?p ?t)) (not (leaves ?x ?y)) (not (dies ?x ?y)))
(<= (next (unit ?x ?y ?p ?t)) (stays ?x ?y) (true (unit ?x ?y ?p ?t)))
(<= (next (hp ?x ?y ?h)) (stays ?x ?y) (hpat ?x ?y 4 ?h))
(<= (next (unit ?x2 ?y2 ?p ?t)) (arrives ?x2 ?y2 ?x ?y) (true (unit ?x ?y ?p ?t)))
(<= (next (hp ?x2 ?y2 ?h)) (arrives ?x2 ?y2 ?x ?y) (hpat ?x ?y 4 ?h))

;; the end
(<= (alive ?p) (true (unit ?x ?y ?p ?t)))
(<= (next (time ?n2)) tick (true (time ?n)) (tsucc ?n ?n2))
(<= (next (time ?n)) (not tick) (true (time ?n)))
(<= terminal (role ?p) (not (alive ?p)))"""
    yield f"(<= terminal (true (time {s.max_ticks})))"
    yield """\
(<= (goal ?p 100) (opp ?p ?q) (alive ?p) (not (alive ?q)))
(<= (goal ?p 0) (opp ?p ?q) (not (alive ?p)) (alive ?q))
(<= (goal ?p 50) (opp ?p ?q) (alive ?p) (alive ?q))
(<= (goal ?p 50) (opp ?p ?q) (not (alive ?p)) (not (alive ?q)))"""
    if producers:
        # (affords ...) and (owner ...) keep the ground program small: written into the
        # rule of each order, the gold amount and the producer's type multiplied its ground
        # instances (214,509 in all -> 114,769; RTS-Full then grounds within the default
        # budget). Rules in the shared part above are left as they were: RTS-Melee's file,
        # and so its logged games' digests, stay the same.
        yield """\
;; production
(<= (affords ?p ?t2) (true (gold ?p ?g)) (cost ?t2 ?c) (pay ?g ?c ?g2))
(<= (legal ?p (order ?x ?y ?t2 ?d)) (first ?p ?x ?y) (true (unit ?x ?y ?p ?t)) (makes ?t ?t2)
    (adj ?x ?y ?d ?x2 ?y2) (free ?x2 ?y2) (affords ?p ?t2))
(<= (pays ?p ?c) (issued ?p ?x ?y ?t2 ?d) (cost ?t2 ?c) (not (clash ?p)))
(<= (owner ?p ?x ?y) (true (unit ?x ?y ?p ?t)))
(<= (next (unit ?x2 ?y2 ?p ?t2)) (lands ?x ?y) (true (doing ?x ?y ?t2 ?d)) (unittype ?t2)
    (adj ?x ?y ?d ?x2 ?y2) (owner ?p ?x ?y))
(<= (next (hp ?x2 ?y2 ?h)) (lands ?x ?y) (true (doing ?x ?y ?t2 ?d)) (unittype ?t2)
    (adj ?x ?y ?d ?x2 ?y2) (maxhp ?t2 ?h))
(<= (next (gold ?p ?g2)) (true (gold ?p ?g)) (pays ?p ?c) (pay ?g ?c ?g2))
(<= (banking ?p) (pays ?p ?c))"""
    if workers:
        yield """\
;; harvesting and returning
(<= (mining ?x2 ?y2) (true (doing ?x ?y harvest ?d)) (adj ?x ?y ?d ?x2 ?y2))
(<= (occupied ?x ?y) (true (mine ?x ?y ?r)))
(<= (legal ?p (order ?x ?y harvest ?d)) (first ?p ?x ?y) (true (unit ?x ?y ?p worker))
    (not (true (carry ?x ?y))) (adj ?x ?y ?d ?x2 ?y2) (true (mine ?x2 ?y2 ?r))
    (not (mining ?x2 ?y2)))
(<= (legal ?p (order ?x ?y return ?d)) (first ?p ?x ?y) (true (unit ?x ?y ?p worker))
    (true (carry ?x ?y)) (adj ?x ?y ?d ?x2 ?y2) (true (unit ?x2 ?y2 ?p base)))
(<= (aims ?p ?x2 ?y2) (issued ?p ?x ?y harvest ?d) (adj ?x ?y ?d ?x2 ?y2))
(<= (dug ?x2 ?y2) (lands ?x ?y) (true (doing ?x ?y harvest ?d)) (adj ?x ?y ?d ?x2 ?y2))
(<= (gets ?x ?y) (lands ?x ?y) (true (doing ?x ?y harvest ?d)))
(<= (deposits ?p ?x ?y) (lands ?x ?y) (true (doing ?x ?y return ?d)) (adj ?x ?y ?d ?x2 ?y2)
    (true (unit ?x2 ?y2 ?p base)))
(<= (next (carry ?x ?y)) (gets ?x ?y) (not (dies ?x ?y)))
(<= (deposited ?x ?y) (deposits ?p ?x ?y))
(<= (next (carry ?x ?y)) (true (carry ?x ?y)) (stays ?x ?y) (not (deposited ?x ?y)))
(<= (next (carry ?x2 ?y2)) (true (carry ?x ?y)) (arrives ?x2 ?y2 ?x ?y))
(<= (next (mine ?x ?y ?r)) (true (mine ?x ?y ?r)) (not (dug ?x ?y)))
(<= (next (mine ?x ?y ?r)) (true (mine ?x ?y ?r2)) (dug ?x ?y) (rsucc ?r ?r2) (distinct ?r 0))
;; the bank gains one per return landing in this tick: counted over the cells in order
(<= (income ?p 0 0 0) (role ?p) (not (deposits ?p 0 0)))
(<= (income ?p 0 0 1) (deposits ?p 0 0))
(<= (income ?p ?x2 ?y2 ?c) (income ?p ?x ?y ?c) (cellafter ?x ?y ?x2 ?y2)
    (not (deposits ?p ?x2 ?y2)))
(<= (income ?p ?x2 ?y2 ?c2) (income ?p ?x ?y ?c) (cellafter ?x ?y ?x2 ?y2) (deposits ?p ?x2 ?y2)
    (csucc ?c ?c2))
(<= (income ?p ?x2 ?y2 4) (income ?p ?x ?y 4) (cellafter ?x ?y ?x2 ?y2) (deposits ?p ?x2 ?y2))
(<= (earns ?p ?c) (income ?p {last} {last} ?c) (distinct ?c 0))
(<= (banking ?p) (earns ?p ?c))
(<= (next (gold ?p ?g2)) (true (gold ?p ?g)) (earns ?p ?c) (gain ?g ?c ?g2))""".replace(
            "{last}", str(s.size - 1)
        )
    if producers or workers:
        yield "(<= (next (gold ?p ?g)) (true (gold ?p ?g)) (not (banking ?p)))"
    else:
        yield "(<= (next (gold ?p ?g)) (true (gold ?p ?g)))"


def rts_gdl(s: Scenario) -> str:
    """The GDL description of scenario ``s`` (rules block first)."""
    header = comment_block(_rules_text(s))
    body = "\n".join([*_static(s), *_init(s), "", *_rules(s)])
    return header + "\n" + body + "\n"


def main(argv: list[str] | None = None) -> int:
    files = ((f"rts_8x8_{s.name}.gdl", rts_gdl(s), ", ".join(s.types())) for s in SCENARIOS)
    return write_generated(argv, "write the 8x8 RTS GDL scenarios", "games/rts", files)


if __name__ == "__main__":
    raise SystemExit(main())
