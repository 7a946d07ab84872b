"""Write BattleCity, the real-time game of the RTMM paper (Ontañón 2012), as GDL.

One generator for every map: :func:`battlecity_gdl` takes a :class:`BattleMap` (an ASCII
maze) and returns the description; ``python -m ggp.rts.battlecity [DIR]`` writes the
shipped maps (:data:`MAPS`) into ``games/rts/``. :data:`RULES_TEXT` is the rules block at
the top of every file; it states each rule and each deviation from the paper's game.

Encoding (the state facts a reader of the files meets):

- ``(tank P X Y)``, ``(facing P D)``: each side's tank and the way its gun points;
  ``(rest P)``: the tank turned or moved in the last step and cannot do so now.
- ``(bullet X Y D)``: a bullet in flight in cell ``(X, Y)``, flying towards ``D``.
- ``(brick X Y)``: a destructible wall still standing (steel walls and the bases are static
  facts: ``(steel X Y)``, ``(basecell P X Y)``).
- ``(lost P)``: ``P``'s tank or base was hit (the game is over); ``(step N)``: steps played.

Coordinates: ``x`` from 1 at the left, ``y`` from 1 at the top, ``up`` = y - 1 (as in the
paper's microRTS code, y grows downward).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

from ggp.gdl.generated import comment_block, write_generated

__all__ = [
    "BattleMap",
    "MAPS",
    "DIRECTIONS",
    "ROLES",
    "RULES_TEXT",
    "MAX_STEPS",
    "battlecity_gdl",
    "battle_map",
    "main",
]

#: Direction name, dx, dy (y grows downward).
DIRECTIONS: tuple[tuple[str, int, int], ...] = (
    ("up", 0, -1),
    ("down", 0, 1),
    ("left", -1, 0),
    ("right", 1, 0),
)
#: The two sides, in role order; ``blue`` starts at the bottom of every map.
ROLES = ("blue", "red")
#: 5,000 cycles (the paper's tie cap) at 8 cycles per step.
MAX_STEPS = 625

_SYMBOLS = {".": "empty", "#": "brick", "@": "steel", "B": "base blue", "R": "base red"}


@dataclass(frozen=True)
class BattleMap:
    """A BattleCity maze: ``rows`` of ``.`` empty, ``#`` brick, ``@`` steel, ``B`` / ``R``
    blue's / red's base, ``1`` / ``2`` blue's / red's tank (on an empty cell).

    Attributes:
        name: The file is ``games/rts/battlecity_{name}.gdl``.
        rows: ``[H]`` strings of length ``W``, top row first.
        max_steps: The game is a tie after this many steps.
    """

    name: str
    rows: tuple[str, ...]
    max_steps: int = MAX_STEPS
    cells: dict[str, list[tuple[int, int]]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        widths = {len(r) for r in self.rows}
        if len(widths) != 1:
            raise ValueError(f"map {self.name!r}: rows of different lengths {sorted(widths)}")
        cells: dict[str, list[tuple[int, int]]] = {}
        for y, row in enumerate(self.rows, start=1):
            for x, ch in enumerate(row, start=1):
                if ch not in _SYMBOLS and ch not in "12":
                    raise ValueError(f"map {self.name!r}: unknown symbol {ch!r} at ({x}, {y})")
                cells.setdefault(ch, []).append((x, y))
        for ch in "BR12":
            if len(cells.get(ch, ())) != 1:
                raise ValueError(f"map {self.name!r}: needs exactly one {ch!r}")
        object.__setattr__(self, "cells", cells)

    @property
    def width(self) -> int:
        return len(self.rows[0])

    @property
    def height(self) -> int:
        return len(self.rows)

    def tank(self, role: str) -> tuple[int, int]:
        """Where ``role``'s tank starts."""
        return self.cells["1" if role == ROLES[0] else "2"][0]

    def base(self, role: str) -> tuple[int, int]:
        """``role``'s base cell."""
        return self.cells["B" if role == ROLES[0] else "R"][0]

    def walls(self, kind: str) -> list[tuple[int, int]]:
        """The cells of ``kind`` ``#`` (brick) or ``@`` (steel)."""
        return list(self.cells.get(kind, ()))


def _mirrored(name: str, top: tuple[str, ...], middle: tuple[str, ...] = ()) -> BattleMap:
    """A map whose bottom half is the top half turned 180 degrees, sides swapped: fair by
    construction (red's start is blue's, seen from the other end)."""
    swap = str.maketrans("12BR", "21RB")
    bottom = tuple(row[::-1].translate(swap) for row in reversed(top))
    return BattleMap(name, (*top, *middle, *bottom))


#: The shipped maps. The paper's six mazes (18x18 to 26x18) are not published; these are
#: ours, point-symmetric, in the paper's sizes (``maze18``, ``maze26``) and smaller ones for
#: tests and deep searches. No tank starts with the enemy base or tank in its line of fire
#: through bricks alone (the game would be a firing race from the first step; a test guards
#: it).
MAPS: tuple[BattleMap, ...] = (
    _mirrored(
        "small",
        (
            "....R....",
            "..#####..",
            ".@2....@.",
            ".#.#.#.#.",
        ),
        (".........",),
    ),
    _mirrored(
        "arena13",
        (
            ".....#R#.....",
            ".....###.....",
            ".@.@.....@.@.",
            ".#.#..2..#.#.",
            ".#.#.#@#.#.#.",
            ".....@.@.....",
        ),
        ("##.##...##.##",),
    ),
    _mirrored(
        "maze18",
        (
            "........#R#.......",
            "..@@....###....@@.",
            "..@...2......#..@.",
            "..@..####.####..@.",
            "......#.....#.....",
            ".###..#.@@@.#..###",
            ".#......@.......#.",
            ".#..##.....##...#.",
            "....#..#.#.#..#...",
        ),
    ),
    _mirrored(
        "maze26",
        (
            "............#R#...........",
            "..@@@.......###.......@@@.",
            "..@.....#...2.....#.....@.",
            "..@..####.#######.####..@.",
            "......#.............#.....",
            ".###..#...@@...@@...#..###",
            ".#......#..........#....#.",
            ".#..##....##.##.##....#.#.",
            "....#..#.#..@..#..#.#.#...",
        ),
    ),
)


def battle_map(name: str) -> BattleMap:
    """The shipped map called ``name``.

    Raises:
        KeyError: No map has that name.
    """
    for m in MAPS:
        if m.name == name:
            return m
    raise KeyError(f"no BattleCity map {name!r} (maps: {', '.join(m.name for m in MAPS)})")


RULES_TEXT = """\
BattleCity, after the RTMM paper (S. Ontanon, Experiments with Game Tree Search in
Real-Time Strategy Games, 2012; ../shared/REFERENCE-SEARCH.md section 3.7), generated by
`python -m ggp.rts.battlecity` ({name} map, {width}x{height}).

Roles: blue, red. Each side has one tank and one base cell. A side wins by destroying the
enemy tank or the enemy base; the game is deterministic and fully observable.

Time: one step is 8 game cycles. The paper's tank fires at most once per 8 cycles and
moves at most once per 16: here it may fire every step and turn or move every second step.
Both sides are ready to act in every step, so every step is a simultaneous order step
followed by one tick of time (there is no step where nobody can act).

Moves: (do M F), M one of none, up, down, left, right (a direction only when the tank did
not turn or move in the last step), F one of fire, hold: the paper's two basic actions
(move, shoot) issued together, 2..10 player-actions per step.

A step, in this order:
1. A direction turns the tank that way and it moves one cell if the cell is on the board,
   not a brick, steel or base cell, not either tank's cell, and not the cell the other tank
   tries to enter (then neither enters it). A turned tank rests in the next step.
2. Bullets in flight move one cell; one that leaves the board is gone.
3. A tank that fires puts a bullet in the cell in front of it (after its move), flying the
   way it faces (off the board: nothing).
4. A bullet whose cell is steel is gone; brick: the brick and the bullet are gone; a base:
   that side loses; a tank's cell after its move (or, for a bullet that moved this step,
   the tank's cell before its move, so tank and bullet cannot swap cells): that tank's
   side loses. Bullets pass each other. Bullets in one cell with one direction are one.
5. The game ends when a side has lost (both in one step: a tie), or after {max_steps} steps
   (5,000 cycles, the paper's tie rule).

Goals: win 100, loss 0, tie 50 each.

Deviations from the paper's game: the paper's six mazes are not published, so the map is
ours; bullet speed is not stated (here one cell per step, twice the tank's speed); a tank
may have any number of bullets in flight; bullets do not cancel each other.

State facts: (tank P X Y), (facing P D), (rest P), (bullet X Y D), (brick X Y), (lost P),
(step N). Static: (steel X Y), (basecell P X Y). x from 1 at the left, y from 1 at the top,
up = y - 1. Map ({{B,R}} bases, {{1,2}} tanks, # brick, @ steel):
{picture}"""


def _rules_text(m: BattleMap) -> str:
    picture = "\n".join(f"  {row}" for row in m.rows)
    return RULES_TEXT.format(
        name=m.name, width=m.width, height=m.height, max_steps=m.max_steps, picture=picture
    )


def _static(m: BattleMap) -> Iterator[str]:
    w, h = m.width, m.height
    yield ";; roles and static facts"
    for role in ROLES:
        yield f"(role {role})"
    yield f"(opp {ROLES[0]} {ROLES[1]}) (opp {ROLES[1]} {ROLES[0]})"
    yield " ".join(f"(dir {d})" for d, _, _ in DIRECTIONS)
    yield "(trigger fire) (trigger hold)"
    for y in range(1, h + 1):
        yield " ".join(
            f"(adj {x} {y} {d} {x + dx} {y + dy})"
            for x in range(1, w + 1)
            for d, dx, dy in DIRECTIONS
            if 1 <= x + dx <= w and 1 <= y + dy <= h
        )
    steel = m.walls("@")
    if steel:
        yield " ".join(f"(steel {x} {y})" for x, y in steel)
    for role in ROLES:
        x, y = m.base(role)
        yield f"(basecell {role} {x} {y})"
    yield " ".join(f"(ssucc {n} {n + 1})" for n in range(m.max_steps))


def _init(m: BattleMap) -> Iterator[str]:
    yield ";; the start"
    for role, facing in zip(ROLES, ("up", "down"), strict=True):
        x, y = m.tank(role)
        yield f"(init (tank {role} {x} {y})) (init (facing {role} {facing}))"
    bricks = m.walls("#")
    if bricks:
        yield " ".join(f"(init (brick {x} {y}))" for x, y in bricks)
    yield "(init (step 0))"


RULES = """\
;; moves
(<= (legal ?p (do none ?f)) (role ?p) (trigger ?f))
(<= (legal ?p (do ?d ?f)) (role ?p) (dir ?d) (trigger ?f) (not (true (rest ?p))))

;; 1. turns and moves
(<= (turned ?p ?d) (does ?p (do ?d ?f)) (dir ?d))
(<= (newfacing ?p ?d) (turned ?p ?d))
(<= (newfacing ?p ?d) (true (facing ?p ?d)) (does ?p (do none ?f)))
(<= (wants ?p ?x2 ?y2) (turned ?p ?d) (true (tank ?p ?x ?y)) (adj ?x ?y ?d ?x2 ?y2))
(<= (wall ?x ?y) (steel ?x ?y))
(<= (wall ?x ?y) (true (brick ?x ?y)))
(<= (wall ?x ?y) (basecell ?q ?x ?y))
(<= (blocked ?x ?y) (wall ?x ?y))
(<= (blocked ?x ?y) (true (tank ?q ?x ?y)))
(<= (goes ?p ?x ?y) (wants ?p ?x ?y) (not (blocked ?x ?y)) (opp ?p ?q) (not (wants ?q ?x ?y)))
(<= (moves ?p) (goes ?p ?x ?y))
(<= (newtank ?p ?x ?y) (goes ?p ?x ?y))
(<= (newtank ?p ?x ?y) (true (tank ?p ?x ?y)) (not (moves ?p)))

;; 2.-3. bullets: those in flight move, fired ones appear in front of their tank
(<= (flying ?x2 ?y2 ?d) (true (bullet ?x ?y ?d)) (adj ?x ?y ?d ?x2 ?y2))
(<= (fired ?x2 ?y2 ?d) (does ?p (do ?m fire)) (newtank ?p ?x ?y) (newfacing ?p ?d)
    (adj ?x ?y ?d ?x2 ?y2))
(<= (shot ?x ?y ?d) (flying ?x ?y ?d))
(<= (shot ?x ?y ?d) (fired ?x ?y ?d))
(<= (shotat ?x ?y) (shot ?x ?y ?d))

;; 4. hits
(<= (tankhit ?p) (newtank ?p ?x ?y) (shotat ?x ?y))
(<= (tankhit ?p) (true (tank ?p ?x ?y)) (flying ?x ?y ?d))
(<= (basehit ?p) (basecell ?p ?x ?y) (shotat ?x ?y))
(<= (stops ?x ?y) (wall ?x ?y))
(<= (stops ?x ?y) (newtank ?p ?x ?y))
(<= (stopsflying ?x ?y) (stops ?x ?y))
(<= (stopsflying ?x ?y) (true (tank ?p ?x ?y)))
(<= (next (bullet ?x ?y ?d)) (flying ?x ?y ?d) (not (stopsflying ?x ?y)))
(<= (next (bullet ?x ?y ?d)) (fired ?x ?y ?d) (not (stops ?x ?y)))
(<= (next (brick ?x ?y)) (true (brick ?x ?y)) (not (shotat ?x ?y)))

;; the tanks' next state
(<= (next (tank ?p ?x ?y)) (newtank ?p ?x ?y) (not (tankhit ?p)))
(<= (next (facing ?p ?d)) (newfacing ?p ?d))
(<= (next (rest ?p)) (turned ?p ?d))

;; 5. the end
(<= (next (lost ?p)) (tankhit ?p))
(<= (next (lost ?p)) (basehit ?p))
(<= (next (step ?n2)) (true (step ?n)) (ssucc ?n ?n2))
(<= terminal (true (lost ?p)))
(<= terminal (true (step {max_steps})))
(<= (goal ?p 100) (opp ?p ?q) (true (lost ?q)) (not (true (lost ?p))))
(<= (goal ?p 0) (opp ?p ?q) (true (lost ?p)) (not (true (lost ?q))))
(<= (goal ?p 50) (opp ?p ?q) (not (true (lost ?p))) (not (true (lost ?q))))
(<= (goal ?p 50) (opp ?p ?q) (true (lost ?p)) (true (lost ?q)))
"""


def battlecity_gdl(m: BattleMap) -> str:
    """The GDL description of map ``m`` (rules block first)."""
    header = comment_block(_rules_text(m))
    body = "\n".join([*_static(m), *_init(m)])
    return header + "\n" + body + "\n\n" + RULES.format(max_steps=m.max_steps)


def main(argv: list[str] | None = None) -> int:
    files = ((f"battlecity_{m.name}.gdl", battlecity_gdl(m), f"{m.width}x{m.height}") for m in MAPS)
    return write_generated(argv, "write the BattleCity GDL maps", "games/rts", files)


if __name__ == "__main__":
    raise SystemExit(main())
