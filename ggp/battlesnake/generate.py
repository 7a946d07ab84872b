"""Write the official Battlesnake standard rules as a GDL-II game description.

One generator for every board: :func:`battlesnake_gdl` takes a :class:`Variant` (board size,
snake count, turn cap, food settings) and returns the description; ``python -m
ggp.battlesnake.generate [DIR]`` writes the shipped variants (:data:`VARIANTS`) into
``games/battlesnake/``. The comment block at the top of each file states every rule and
every deliberate deviation; :data:`RULES_TEXT` is that block.

Encoding (the state facts a reader of the files meets):

- ``(phase P)``: ``setup`` (``random`` places the snakes), ``setupfood`` (``random``
  places the first food), ``move`` (the snakes move; ``random`` rolls the spawn chance),
  ``place`` (``random`` puts one food on a free cell). Snakes play ``noop`` outside
  ``move``; ``random`` plays in every phase.
- ``(head S X Y)``, ``(tail S X Y)``, ``(seg S X Y D)``: a live snake's head cell, tail
  cell, and every body cell but the head with the direction ``D`` towards the next segment
  nearer the head; ``(stack S G)``: how many extra segments sit on the tail cell (0..2;
  3 at the start, all on one cell, is head = tail with ``G`` = 2).
- ``(health S H)``, ``(len S L)``, ``(alive S)``; ``(food X Y)``; ``(turn T)``.
- ``(outlived S T)``: ``T`` was eliminated in an earlier turn than ``S`` (or ``S`` is still
  alive); ``(tied S T)``: both were eliminated in the same turn. Goals are read off these.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator
from dataclasses import dataclass

from ggp.gdl.generated import comment_block, write_generated

__all__ = [
    "Variant",
    "VARIANTS",
    "search_variant",
    "battlesnake_gdl",
    "start_points",
    "initial_food_options",
    "arrangements",
    "main",
]

DIRECTIONS: tuple[tuple[str, int, int], ...] = (
    ("up", 0, 1),
    ("down", 0, -1),
    ("left", -1, 0),
    ("right", 1, 0),
)
START_LENGTH = 3
STACK_AT_START = START_LENGTH - 1
MEDIUM_BOARD = 11  # the official "small board" is one with fewer cells than 11 x 11


@dataclass(frozen=True)
class Variant:
    """One Battlesnake board: ``Variant(size=11, snakes=4)`` is the standard game.

    Attributes:
        size: The board is ``size`` x ``size`` (odd, 7..25 as the official rules allow).
        snakes: Number of snakes, 2..8 (the official fixed start points take at most 8).
        max_turns: The turn cap (a deviation: the official game has none; GDL needs one).
        max_health: Health after eating, and at the start (official 100).
        food_spawn_chance: The official ``foodSpawnChance`` in percent (default 15).
        minimum_food: The official ``minimumFood``, 0 or 1 (default 1).
        name: The file stem under ``games/battlesnake/``.
        freeze: Add the fact ``(frozen S)`` for search models: a frozen snake plays
            ``noop`` and keeps its body, health and length, an obstacle that never moves
            (IDAPOS's "freezing" of snakes out of reach); not part of the official rules.
    """

    size: int
    snakes: int
    max_turns: int = 500
    max_health: int = 100
    food_spawn_chance: int = 15
    minimum_food: int = 1
    name: str = ""
    freeze: bool = False

    def __post_init__(self) -> None:
        if self.size < 7 or self.size > 25 or self.size % 2 == 0:
            raise ValueError(f"board size {self.size}: the official rules take odd sizes 7..25")
        if not 2 <= self.snakes <= 8:
            raise ValueError(f"{self.snakes} snakes: the fixed start points take 2..8")
        if self.minimum_food not in (0, 1):
            raise ValueError(f"minimum_food {self.minimum_food}: only 0 and 1 are encoded")
        if not 1 <= self.food_spawn_chance <= 100:
            raise ValueError(f"food_spawn_chance {self.food_spawn_chance}: must be 1..100")
        if self.max_turns < 1 or self.max_health < 1:
            raise ValueError("max_turns and max_health must be positive")

    @property
    def roles(self) -> tuple[str, ...]:
        return tuple(f"snake{i + 1}" for i in range(self.snakes))

    @property
    def spawn_odds(self) -> tuple[int, int]:
        """``(spawn tokens, all tokens)`` of the per-turn roll, in lowest terms.

        The official check is ``100 - rand.Intn(100) < foodSpawnChance``: true for
        ``foodSpawnChance - 1`` of the 100 values.
        """
        hits = self.food_spawn_chance - 1
        if hits == 0:
            return 0, 1
        g = math.gcd(hits, 100)
        return hits // g, 100 // g


VARIANTS: tuple[Variant, ...] = (
    Variant(size=7, snakes=2, max_turns=300, name="duel_7x7"),
    Variant(size=11, snakes=2, max_turns=500, name="duel_11x11"),
    Variant(size=11, snakes=4, max_turns=500, name="standard_11x11"),
    Variant(size=11, snakes=8, max_turns=500, name="eight_11x11"),
)


def search_variant(size: int, snakes: int) -> Variant:
    """The search model of a board: the standard rules without food spawning (IDAPOS's first
    simplification: spawns are chance a search cannot afford, 50 roll outcomes a turn and
    one per free cell), so ``random`` has one move, and with ``(frozen S)`` for masking."""
    name = f"search_{size}x{size}_{snakes}"
    return Variant(size, snakes, food_spawn_chance=1, minimum_food=0, name=name, freeze=True)


def start_points(size: int) -> tuple[tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
    """The official fixed start points ``(corners, cardinals)`` of a square board."""
    mn, md, mx = 1, (size - 1) // 2, size - 2
    corners = ((mn, mn), (mn, mx), (mx, mn), (mx, mx))
    cardinals = ((mn, md), (md, mn), (md, mx), (mx, md))
    return corners, cardinals


def arrangements(size: int, snakes: int) -> list[tuple[tuple[int, int], ...]]:
    """Every equally likely start (snake i's cell at index i), in a fixed order.

    The official placement shuffles the corners and the cardinals, puts one group first
    at random, and hands the points out in order: every ordered choice below is one
    outcome of equal probability.
    """
    corners, cardinals = start_points(size)
    seen: list[tuple[tuple[int, int], ...]] = []
    for first, second in ((corners, cardinals), (cardinals, corners)):
        head = min(snakes, 4)
        for a in itertools.permutations(first, head):
            for b in itertools.permutations(second, snakes - head):
                seen.append(a + b)
    return seen


def initial_food_options(size: int, snakes: int, head: tuple[int, int]) -> list[tuple[int, int]]:
    """The cells the official setup may put a snake's first food on, in the official order.

    Empty on a small board with more than four snakes (then only the centre gets food).
    """
    if snakes > 4 and size * size < MEDIUM_BOARD * MEDIUM_BOARD:
        return []
    c = (size - 1) // 2
    x, y = head
    out = []
    for px, py in ((x - 1, y - 1), (x - 1, y + 1), (x + 1, y - 1), (x + 1, y + 1)):
        if (px, py) == (c, c):
            continue
        away = (
            (px < x < c) or (c < x < px) or (py < y < c) or (c < y < py)
        )  # further from the centre than the head on one axis
        corner = px in (0, size - 1) and py in (0, size - 1)
        if away and not corner:
            out.append((px, py))
    return out


def _food_choices(variant: Variant) -> int:
    """How many choices each snake's first food has (the same for every start point)."""
    corners, cardinals = start_points(variant.size)
    counts = {
        len(initial_food_options(variant.size, variant.snakes, p)) for p in corners + cardinals
    }
    if len(counts) != 1:
        raise ValueError(f"{variant}: start points differ in first-food choices {counts}")
    (count,) = counts
    groups = (corners, cardinals) if variant.snakes <= 4 else (corners + cardinals,)
    for group in groups:  # start points that can be on the board together
        cells = [c for p in group for c in initial_food_options(variant.size, variant.snakes, p)]
        if len(cells) != len(set(cells)):
            raise ValueError(f"{variant}: first-food cells of two start points overlap")
    return count


RULES_TEXT = """\
Battlesnake, the official standard rules (BattlesnakeOfficial/rules, ruleset "standard",
map "standard", hazards off), as GDL-II. Generated by ggp.battlesnake.generate; edit the
generator, not this file.

Board: {n} x {n}, (0,0) bottom-left; up = y+1, down = y-1, left = x-1, right = x+1.
Roles: {roles}, and random (chance). Everything is public (no sees rules: every role
  sees every joint move, random's included).
Setup (two steps in which the snakes play noop):
  1. random places the snakes, (start X1 Y1 ... Xk Yk): the official fixed start points,
     corners (1,1) (1,{mx}) ({mx},1) ({mx},{mx}) and cardinals (1,{md}) ({md},1) ({md},{mx})
     ({mx},{md}); each group shuffled, corners or cardinals first with equal chance, snake i
     on the i-th point. Every ordered outcome is one move of random ({arrangements} moves).
     Each snake starts with {start_length} segments stacked on its start cell, health {health}.
  2. random places the first food, (initfood B1 ... Bk): {initfood}
     Then one food on the centre ({md},{md}).
A turn (phase move): every live snake moves up, down, left or right (all four are legal,
  moving back onto the neck included, which kills it as the official rules do); dead snakes
  play noop. In the same step random rolls the food spawn chance, (roll spawn I) or
  (roll none I): {spawn} of {tokens} equally likely tokens spawn, which is the official
  100 - rand.Intn(100) < foodSpawnChance with foodSpawnChance {chance}.
  In the official order:
  1. Move: each snake gets a new head cell; its tail leaves its cell unless extra segments
     are stacked there (one of them leaves instead).
  2. Health -1.
  3. Feed: a snake whose new head is on food gets health {health} and one more segment (the
     tail is doubled); the food is removed, also when the snake is eliminated below, and
     when two heads eat it together both grow.
  4. Eliminate, first: health 0 (out of health), then a head off the board (out of bounds);
     these snakes leave the board at once and do not count below. Then, all at once, among
     the rest: a head on any body cell other than a head after the move, its own included
     (self and body collision; a tail that moves away is free, a stacked tail is not), and
     head-to-head: a snake dies when its length after feeding is <= the length of another
     snake whose head is on the same cell (equal lengths die together; of three or more only
     a strictly longest survives). Eliminated snakes leave the board.
  5. Food spawns: if fewer than {minfood} food remain (minimumFood {minfood}), or the roll
     spawned, the next step is phase place, where random puts one food on a cell that has no
     snake, no food and is not a live head's neighbour, (spawn X Y) among those cells with
     equal chance, or plays nospawn when there is none. The turn counter then advances.
End: when at most one snake is alive, or after turn {max_turns}.
Goals, as the IDAPOS paper ranks (Schier & Wuestenbecker 2019): snakes rank by the turn
  they were eliminated in (later is better, still alive is best); each snake scores 2 points
  per snake that went out before it and 1 per snake that went out in the same turn (or is
  still alive with it at the turn cap), and the goal is round(100 * points / (2 * (k - 1))),
  halves up: a duel gives 100 / 0 to the winner / loser and 50 / 50 to a draw, matching the
  official winner. In a state that is not terminal the goals rank the snakes so far.
Deliberate deviations, and why:
  - The turn cap of {max_turns} turns (the official game has none; a GDL game must end).
    Survivors at the cap share the rank.
  - Food spawned after the last turn is not modelled (the game is over; it changes nothing).
  - A spawn that the official rules make in the same turn is a separate step of random here
    (phase place), because the free cells are only known after the move; snakes play noop
    in it and the turn counter does not advance.
  - minimumFood of 0 or 1 only (the official default is 1; more would need counting).
State facts: (phase P), (turn T), (head S X Y), (tail S X Y), (seg S X Y D) (D points
  towards the next segment nearer the head), (stack S G) (extra segments on the tail cell),
  (health S H), (len S L), (alive S), (food X Y), (outlived S T), (tied S T).
"""


def _rules_text(variant: Variant) -> str:
    n = variant.size
    choices = _food_choices(variant)
    if choices:
        initfood = (
            f"each snake's food on one of the {choices} cells diagonal to its head that are\n"
            "     further from the centre on one axis, not the centre and not a corner (the\n"
            "     official choice, equally likely): Bi picks snake i's cell in the order\n"
            "     (x-1,y-1) (x-1,y+1) (x+1,y-1) (x+1,y+1)."
        )
    else:
        initfood = (
            "none (the official rules give no food near heads on a small board\n"
            "     with more than four snakes); (initfood) is random's only move."
        )
    spawn, tokens = variant.spawn_odds
    return RULES_TEXT.format(
        n=n,
        roles=", ".join(variant.roles),
        mx=n - 2,
        md=(n - 1) // 2,
        arrangements=len(arrangements(n, variant.snakes)),
        start_length=START_LENGTH,
        health=variant.max_health,
        initfood=initfood,
        spawn=spawn,
        tokens=tokens,
        chance=variant.food_spawn_chance,
        minfood=variant.minimum_food,
        max_turns=variant.max_turns,
    )


def _neighbours(n: int, x: int, y: int) -> Iterator[tuple[str, int, int]]:
    for d, dx, dy in DIRECTIONS:
        yield d, x + dx, y + dy


def _static(variant: Variant) -> Iterator[str]:
    n, k = variant.size, variant.snakes
    yield ";; roles and static facts"
    for role in variant.roles:
        yield f"(role {role})"
    yield "(role random)"
    yield " ".join(f"(snake {r})" for r in variant.roles)
    yield " ".join(f"(coord {i})" for i in range(n))
    yield " ".join(f"(dir {d})" for d, _, _ in DIRECTIONS)
    cells = [(x, y) for x in range(n) for y in range(n)]
    for x, y in cells:
        yield " ".join(
            f"(adj {x} {y} {d} {x2} {y2})" if 0 <= x2 < n and 0 <= y2 < n else f"(edge {x} {y} {d})"
            for d, x2, y2 in _neighbours(n, x, y)
        )
    # (near X Y X2 Y2): (X2, Y2) is (X, Y) or one of its neighbours
    for x, y in cells:
        near = [(x, y)] + [
            (x2, y2) for _, x2, y2 in _neighbours(n, x, y) if 0 <= x2 < n and 0 <= y2 < n
        ]
        yield " ".join(f"(near {x} {y} {a} {b})" for a, b in near)
    health = variant.max_health
    yield " ".join(f"(hsucc {h} {h + 1})" for h in range(health))
    max_len = n * n
    yield " ".join(f"(lsucc {m} {m + 1})" for m in range(START_LENGTH, max_len))
    yield " ".join(f"(tsucc {t} {t + 1})" for t in range(variant.max_turns))
    yield "(stackdec 0 0) (stackdec 1 0) (stackdec 2 1) (stackinc 0 1) (stackinc 1 2)"
    for a in arrangements(n, k):
        yield "(arrangement " + " ".join(f"{x} {y}" for x, y in a) + ")"
    choices = _food_choices(variant)
    if choices:
        corners, cardinals = start_points(n)
        for p in corners + cardinals:
            for b, (fx, fy) in enumerate(initial_food_options(n, k, p)):
                yield f"(foodopt {p[0]} {p[1]} {b} {fx} {fy})"
        for bits in itertools.product(range(choices), repeat=k):
            yield "(foodbits " + " ".join(map(str, bits)) + ")"


def _setup(variant: Variant) -> Iterator[str]:
    n, k = variant.size, variant.snakes
    md = (n - 1) // 2
    args = " ".join(f"?x{i} ?y{i}" for i in range(1, k + 1))
    yield ";; setup: random places the snakes, then the first food"
    yield "(init (phase setup))"
    yield "(init (turn 0))"
    yield f"(<= (legal random (start {args})) (true (phase setup)) (arrangement {args}))"
    for i, role in enumerate(variant.roles, start=1):
        yield f"(<= (startat {role} ?x{i} ?y{i}) (does random (start {args})))"
    yield "(<= (next (head ?s ?x ?y)) (startat ?s ?x ?y))"
    yield "(<= (next (tail ?s ?x ?y)) (startat ?s ?x ?y))"
    yield "(<= (next (stack ?s 2)) (true (phase setup)) (snake ?s))"
    yield f"(<= (next (health ?s {variant.max_health})) (true (phase setup)) (snake ?s))"
    yield f"(<= (next (len ?s {START_LENGTH})) (true (phase setup)) (snake ?s))"
    yield "(<= (next (alive ?s)) (true (phase setup)) (snake ?s))"
    yield "(<= (next (phase setupfood)) (true (phase setup)))"
    if _food_choices(variant):
        bits = " ".join(f"?b{i}" for i in range(1, k + 1))
        yield f"(<= (legal random (initfood {bits})) (true (phase setupfood)) (foodbits {bits}))"
        for i, role in enumerate(variant.roles, start=1):
            yield f"(<= (foodbit {role} ?b{i}) (does random (initfood {bits})))"
        yield (
            "(<= (next (food ?fx ?fy)) (foodbit ?s ?b) (true (head ?s ?x ?y))"
            " (foodopt ?x ?y ?b ?fx ?fy))"
        )
    else:
        yield "(<= (legal random initfood) (true (phase setupfood)))"
    yield f"(<= (next (food {md} {md})) (true (phase setupfood)))"
    yield "(<= (next (phase move)) (true (phase setupfood)))"


def _legal(variant: Variant) -> Iterator[str]:
    spawn, tokens = variant.spawn_odds
    nf = _not_frozen(variant)
    yield ";; moves"
    yield f"(<= (legal ?s ?d) (true (phase move)) (true (alive ?s)){nf} (dir ?d))"
    if variant.freeze:
        yield "(<= (legal ?s noop) (true (phase move)) (true (frozen ?s)))"
    yield "(<= (legal ?s noop) (snake ?s) (not (true (phase move))))"
    yield "(<= (legal ?s noop) (snake ?s) (true (phase move)) (not (true (alive ?s))))"
    for i in range(spawn):
        yield f"(<= (legal random (roll spawn {i})) (true (phase move)))"
    for i in range(tokens - spawn):
        yield f"(<= (legal random (roll none {i})) (true (phase move)))"


def _not_frozen(variant: Variant) -> str:
    """The literal that keeps a rule off frozen snakes (search models only)."""
    return " (not (true (frozen ?s)))" if variant.freeze else ""


def _turn(variant: Variant) -> Iterator[str]:
    top = variant.max_health
    nf = _not_frozen(variant)
    yield ";; a turn: move, health -1, feed, eliminate (the official order)"
    yield (
        "(<= (newhead ?s ?x2 ?y2) (true (phase move)) (true (alive ?s)) (true (head ?s ?x ?y))"
        " (does ?s ?d) (adj ?x ?y ?d ?x2 ?y2))"
    )
    yield (
        "(<= (offboard ?s) (true (phase move)) (true (alive ?s)) (true (head ?s ?x ?y))"
        " (does ?s ?d) (edge ?x ?y ?d))"
    )
    yield "(<= (eats ?s) (newhead ?s ?x ?y) (true (food ?x ?y)))"
    yield "(<= (eaten ?x ?y) (newhead ?s ?x ?y) (true (food ?x ?y)))"
    yield ";; first eliminations: out of health, out of bounds"
    yield (
        "(<= (outfirst ?s) (true (phase move)) (true"
        f" (alive ?s)) (true (health ?s 1)) (not (eats ?s)){nf})"
    )
    yield "(<= (outfirst ?s) (offboard ?s))"
    yield "(<= (contender ?s) (true (phase move)) (true (alive ?s)) (not (outfirst ?s)))"
    yield ";; body cells other than the head after the move (the old head included)"
    yield f"(<= (tailleaves ?s) (true (stack ?s 0)){nf})"
    yield "(<= (bodyafter ?s ?x ?y) (true (head ?s ?x ?y)))"
    yield "(<= (bodyafter ?s ?x ?y) (true (seg ?s ?x ?y ?d)) (not (true (tail ?s ?x ?y))))"
    yield (
        "(<= (bodyafter ?s ?x ?y) (true (seg ?s ?x ?y ?d))"
        " (true (tail ?s ?x ?y)) (not (tailleaves ?s)))"
    )
    yield "(<= (collides ?s) (contender ?s) (newhead ?s ?x ?y) (bodyafter ?t ?x ?y) (contender ?t))"
    yield ";; lengths after feeding, for head-to-head"
    yield "(<= (lenafter ?s ?l) (true (len ?s ?l)) (not (eats ?s)))"
    yield "(<= (lenafter ?s ?l2) (true (len ?s ?l)) (eats ?s) (lsucc ?l ?l2))"
    yield "(<= (atleast ?s ?l) (lenafter ?s ?l))"
    yield "(<= (atleast ?s ?l) (atleast ?s ?l2) (lsucc ?l ?l2))"
    yield "(<= (notlonger ?s ?t) (lenafter ?s ?l) (atleast ?t ?l) (distinct ?s ?t))"
    yield (
        "(<= (loseshead ?s) (contender ?s) (newhead ?s ?x ?y) (newhead ?t ?x ?y) (distinct ?s ?t)"
        " (contender ?t) (notlonger ?s ?t))"
    )
    yield "(<= (dies ?s) (outfirst ?s))"
    yield "(<= (dies ?s) (collides ?s))"
    yield "(<= (dies ?s) (loseshead ?s))"
    yield "(<= (survives ?s) (contender ?s) (not (dies ?s)))"
    yield ";; the survivors' next state"
    yield "(<= (next (alive ?s)) (survives ?s))"
    yield "(<= (next (head ?s ?x ?y)) (survives ?s) (newhead ?s ?x ?y))"
    yield f"(<= (next (seg ?s ?x ?y ?d)) (survives ?s) (true (head ?s ?x ?y)) (does ?s ?d){nf})"
    yield (
        "(<= (next (seg ?s ?x ?y ?d)) (survives ?s) (true"
        " (seg ?s ?x ?y ?d)) (not (true (tail ?s ?x ?y))))"
    )
    yield (
        "(<= (next (seg ?s ?x ?y ?d)) (survives ?s) (true (seg ?s ?x ?y ?d)) (true (tail ?s ?x ?y))"
        " (not (tailleaves ?s)))"
    )
    yield "(<= (next (tail ?s ?x ?y)) (survives ?s) (true (tail ?s ?x ?y)) (not (tailleaves ?s)))"
    yield (
        "(<= (next (tail ?s ?x2 ?y2)) (survives ?s) (true (tail ?s ?x ?y)) (tailleaves ?s)"
        " (true (seg ?s ?x ?y ?d)) (adj ?x ?y ?d ?x2 ?y2))"
    )
    yield (
        "(<= (next (stack ?s ?g1)) (survives ?s) (true"
        f" (stack ?s ?g)) (stackdec ?g ?g1) (not (eats ?s)){nf})"
    )
    yield (
        "(<= (next (stack ?s ?g2)) (survives ?s) (true (stack ?s ?g)) (stackdec ?g ?g1) (eats ?s)"
        " (stackinc ?g1 ?g2))"
    )
    yield (
        "(<= (next (health ?s ?h1)) (survives ?s) (true"
        f" (health ?s ?h)) (hsucc ?h1 ?h) (not (eats ?s)){nf})"
    )
    if variant.freeze:
        yield ";; a frozen snake keeps its head, stack, health (and the rest, by the rules above)"
        for fact in ("head ?s ?x ?y", "stack ?s ?g", "health ?s ?h", "frozen ?s"):
            yield f"(<= (next ({fact})) (survives ?s) (true (frozen ?s)) (true ({fact})))"
        # never true in play: they make (frozen S) and food on every cell state facts, for
        # the states a search builds from boards
        never = "(true (phase setup)) (not (true (phase setup)))"
        yield ";; never true in play (search states are built with them)"
        yield f"(<= (next (frozen ?s)) (snake ?s) {never})"
        yield f"(<= (next (food ?x ?y)) (coord ?x) (coord ?y) {never})"
    yield f"(<= (next (health ?s {top})) (survives ?s) (eats ?s))"
    yield "(<= (next (len ?s ?l)) (survives ?s) (lenafter ?s ?l))"
    yield "(<= (next (food ?x ?y)) (true (phase move)) (true (food ?x ?y)) (not (eaten ?x ?y)))"
    yield "(<= (next (turn ?t2)) (true (phase move)) (true (turn ?t)) (tsucc ?t ?t2))"
    yield "(<= (next (turn ?t)) (true (turn ?t)) (not (true (phase move))))"
    yield ";; ranks: who went out before whom"
    yield "(<= (next (outlived ?s ?t)) (true (outlived ?s ?t)))"
    yield "(<= (next (outlived ?s ?t)) (survives ?s) (dies ?t))"
    yield "(<= (next (tied ?s ?t)) (true (tied ?s ?t)))"
    yield "(<= (next (tied ?s ?t)) (dies ?s) (dies ?t) (distinct ?s ?t))"
    yield ";; food spawning"
    spawn, _ = variant.spawn_odds
    if variant.minimum_food:
        yield "(<= foodleft (true (food ?x ?y)) (not (eaten ?x ?y)))"
        yield "(<= spawns (true (phase move)) (not foodleft))"
    if spawn:
        yield "(<= spawns (does random (roll spawn ?i)))"
    yield "(<= (next (phase place)) spawns)"
    yield "(<= (next (phase move)) (true (phase move)) (not spawns))"
    yield "(<= (next (phase move)) (true (phase place)))"
    yield "(<= (occupied ?x ?y) (true (food ?x ?y)))"
    yield "(<= (occupied ?x ?y) (true (head ?s ?x ?y)))"
    yield "(<= (occupied ?x ?y) (true (seg ?s ?x ?y ?d)))"
    yield "(<= (nearhead ?x ?y) (true (head ?s ?hx ?hy)) (near ?hx ?hy ?x ?y))"
    yield (
        "(<= (free ?x ?y) (true (phase place)) (coord ?x) (coord ?y) (not (occupied ?x ?y))"
        " (not (nearhead ?x ?y)))"
    )
    yield "(<= anyfree (free ?x ?y))"
    yield "(<= (legal random (spawn ?x ?y)) (free ?x ?y))"
    yield "(<= (legal random nospawn) (true (phase place)) (not anyfree))"
    yield "(<= (next (food ?x ?y)) (does random (spawn ?x ?y)))"
    yield ";; outside the move phase the snakes and the food stay as they are"
    yield "(<= steady (true (phase setupfood)))"
    yield "(<= steady (true (phase place)))"
    for fact in (
        "head ?s ?x ?y",
        "tail ?s ?x ?y",
        "seg ?s ?x ?y ?d",
        "stack ?s ?g",
        "health ?s ?h",
        "len ?s ?l",
    ):
        yield f"(<= (next ({fact})) (true ({fact})) steady)"
    yield "(<= (next (alive ?s)) (true (alive ?s)) steady)"
    yield "(<= (next (food ?x ?y)) (true (food ?x ?y)) (true (phase place)))"


def _end(variant: Variant) -> Iterator[str]:
    k = variant.snakes
    roles = variant.roles
    yield ";; end and goals"
    yield "(<= twoalive (true (alive ?s)) (true (alive ?t)) (distinct ?s ?t))"
    yield "(<= terminal (true (phase move)) (not twoalive))"
    yield "(<= terminal (true (phase place)) (not twoalive))"
    yield f"(<= terminal (true (turn {variant.max_turns})))"
    yield "(<= (beats ?s ?t) (true (outlived ?s ?t)))"
    yield "(<= (ties ?s ?t) (true (tied ?s ?t)))"
    yield "(<= (ties ?s ?t) (true (alive ?s)) (true (alive ?t)) (distinct ?s ?t))"
    top = 2 * (k - 1)
    for s in roles:
        others = [t for t in roles if t != s]
        yield f"(pts {s} 0 0)"
        for i, t in enumerate(others, start=1):
            for v in range(2 * (i - 1) + 1):
                yield f"(<= (pts {s} {i} {v + 2}) (pts {s} {i - 1} {v}) (beats {s} {t}))"
                yield f"(<= (pts {s} {i} {v + 1}) (pts {s} {i - 1} {v}) (ties {s} {t}))"
                yield (
                    f"(<= (pts {s} {i} {v}) (pts {s} {i - 1} {v}) (not (beats {s} {t}))"
                    f" (not (ties {s} {t})))"
                )
        for v in range(top + 1):
            yield f"(<= (goal {s} {(200 * v + top) // (2 * top)}) (pts {s} {k - 1} {v}))"
    yield "(goal random 0)"


def battlesnake_gdl(variant: Variant) -> str:
    """The GDL-II description of ``variant`` (comment block first)."""
    header = comment_block(_rules_text(variant))
    parts = [_static(variant), _setup(variant), _legal(variant), _turn(variant), _end(variant)]
    body = "\n".join(line for part in parts for line in part)
    return header + "\n" + body + "\n"


def main(argv: list[str] | None = None) -> int:
    files = (
        (f"{v.name}.gdl", battlesnake_gdl(v), f"{v.size}x{v.size}, {v.snakes} snakes")
        for v in VARIANTS
    )
    return write_generated(
        argv, "write the Battlesnake GDL-II variants", "games/battlesnake", files
    )


if __name__ == "__main__":
    raise SystemExit(main())
