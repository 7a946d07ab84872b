"""A plain-Python BattleCity, written from the rules text of the GDL files (tests only).

The specification is the English rules block at the top of ``games/rts/battlecity_*.gdl``
(``RULES_TEXT`` in :mod:`ggp.rts.battlecity`), not the GDL rules below it: the point of
this model is to be a second, independent reading of that text, so that replaying the same
games on both catches a GDL rule that says something other than the text. Only the map
data (:class:`~ggp.rts.battlecity.BattleMap`) comes from the package.

Readings of the text that it leaves open (each a choice made here, see ``advance``):

- The start facings are not in the text: blue (at the bottom) faces up, red down, towards
  each other.
- A bullet that hits a base or a tank is gone with the hit, as one that hits a brick is.
- The "cell before its move" clause of rule 4 is for bullets that moved this step only: a
  bullet fired into the cell that a tank has just left hits nothing and flies on.
- Any direction is a turn (also the way the tank already faces), so the tank rests in the
  next step whether or not it moved, and whether or not it was hit.

Coordinates are the GDL's: ``x`` from 1 at the left, ``y`` from 1 at the top, ``up`` is
``y - 1``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace

from ggp.rts.battlecity import DIRECTIONS, ROLES, BattleMap

Point = tuple[int, int]
#: A bullet in flight: its cell and the way it flies.
Bullet = tuple[int, int, str]

DELTA: dict[str, Point] = {d: (dx, dy) for d, dx, dy in DIRECTIONS}
TURNS = tuple(DELTA)  # up, down, left, right
TRIGGERS = ("fire", "hold")
#: Each side's facing at the start (the text does not say: towards the enemy).
START_FACING = {"blue": "up", "red": "down"}


def other(role: str) -> str:
    """The enemy of ``role``."""
    return ROLES[1] if role == ROLES[0] else ROLES[0]


def parse_move(move: str) -> tuple[str, bool]:
    """``"(do up fire)"`` as ``("up", True)``: the motion (``none`` or a direction) and
    whether the tank fires."""
    words = move.strip("()").split()
    if len(words) != 3 or words[0] != "do" or words[1] not in ("none", *TURNS):
        raise ValueError(f"not a BattleCity move: {move!r}")
    if words[2] not in TRIGGERS:
        raise ValueError(f"not a BattleCity move: {move!r}")
    return words[1], words[2] == "fire"


@dataclass(frozen=True)
class State:
    """One position of the game (with its map, which never changes).

    Attributes:
        board: The map: size, steel, bases, the step cap.
        tanks: Each side's tank cell; a side whose tank was hit has none.
        facing: The way each side's gun points (kept when its tank is gone).
        rest: The sides that turned or moved in the last step.
        bullets: The bullets in flight.
        bricks: The bricks still standing.
        lost: The sides whose tank or base was hit in the last step.
        step: Steps played.
    """

    board: BattleMap
    tanks: Mapping[str, Point]
    facing: Mapping[str, str]
    rest: frozenset[str]
    bullets: frozenset[Bullet]
    bricks: frozenset[Point]
    lost: frozenset[str]
    step: int


def initial(board: BattleMap) -> State:
    """The start: the map's tanks, bricks and no bullets, step 0."""
    return State(
        board=board,
        tanks={r: board.tank(r) for r in ROLES},
        facing=dict(START_FACING),
        rest=frozenset(),
        bullets=frozenset(),
        bricks=frozenset(board.walls("#")),
        lost=frozenset(),
        step=0,
    )


def legal(state: State, role: str) -> list[str]:
    """``role``'s moves: stand or (when not resting) turn, each with fire or hold."""
    motions = ["none"] if role in state.rest else ["none", *TURNS]
    return [f"(do {m} {f})" for m in motions for f in TRIGGERS]


def on_board(board: BattleMap, cell: Point) -> bool:
    return 1 <= cell[0] <= board.width and 1 <= cell[1] <= board.height


def ahead(cell: Point, direction: str) -> Point:
    """The cell next to ``cell`` towards ``direction`` (maybe off the board)."""
    dx, dy = DELTA[direction]
    return cell[0] + dx, cell[1] + dy


def advance(state: State, moves: Mapping[str, str]) -> tuple[State, frozenset[str]]:
    """The state after both sides play ``moves`` (role -> move text), and the names of the
    events that happened in the step (for the tests' coverage counts):

    ``blocked-wall``, ``blocked-tank`` (the target was a tank's cell), ``blocked-same-cell``
    (both tried to enter one cell), ``moved``, ``bullet-off-board``, ``steel``,
    ``brick-destroyed``, ``base-hit``, ``tank-hit``, ``tank-hit-behind`` (a moving bullet in
    the cell the tank left), ``fired-into-vacated`` (a fired bullet in the cell a tank left),
    ``both-lost``, ``tie-at-cap``.
    """
    board = state.board
    steel = set(board.walls("@"))
    bases = {board.base(r): r for r in ROLES}
    events: set[str] = set()
    orders = {r: parse_move(moves[r]) for r in ROLES}
    for r in ROLES:
        if orders[r][0] != "none" and r in state.rest:
            raise ValueError(f"{r} rests and cannot play {moves[r]}")

    # 1. turns and moves
    facing = dict(state.facing)
    turned = {r for r in ROLES if orders[r][0] != "none"}
    target: dict[str, Point] = {}
    for r in turned:
        facing[r] = orders[r][0]
        target[r] = ahead(state.tanks[r], orders[r][0])
    occupied = set(state.tanks.values())
    tanks = dict(state.tanks)
    for r in turned:
        cell = target[r]
        enemy_target = target.get(other(r))
        if not on_board(board, cell) or cell in steel or cell in state.bricks or cell in bases:
            events.add("blocked-wall")
        elif cell in occupied:
            events.add("blocked-tank")
        elif cell == enemy_target:
            events.add("blocked-same-cell")
        else:
            events.add("moved")
            tanks[r] = cell

    # 2. bullets in flight move
    flown: set[Bullet] = set()
    for x, y, d in state.bullets:
        cell = ahead((x, y), d)
        if on_board(board, cell):
            flown.add((*cell, d))
        else:
            events.add("bullet-off-board")
    # 3. fired bullets appear in front of their tank, after its move
    fired: set[Bullet] = set()
    for r in ROLES:
        if orders[r][1]:
            cell = ahead(tanks[r], facing[r])
            if on_board(board, cell):
                fired.add((*cell, facing[r]))

    # 4. hits
    before = {cell: r for r, cell in state.tanks.items()}
    after = {cell: r for r, cell in tanks.items()}
    lost: set[str] = set()
    hit: set[str] = set()
    bricks = set(state.bricks)
    bullets: set[Bullet] = set()
    for bullet, moved in [(b, True) for b in flown] + [(b, False) for b in fired]:
        cell = bullet[:2]
        if cell in steel:
            events.add("steel")
        elif cell in state.bricks:
            events.add("brick-destroyed")
            bricks.discard(cell)
        elif cell in bases:
            events.add("base-hit")
            lost.add(bases[cell])
        elif cell in after:
            events.add("tank-hit")
            hit.add(after[cell])
        elif moved and cell in before:
            events.add("tank-hit")
            events.add("tank-hit-behind")
            hit.add(before[cell])
        else:
            if not moved and cell in before:
                events.add("fired-into-vacated")
            bullets.add(bullet)
    lost |= hit
    for r in hit:
        del tanks[r]

    new = replace(
        state,
        tanks=tanks,
        facing=facing,
        rest=frozenset(turned),
        bullets=frozenset(bullets),
        bricks=frozenset(bricks),
        lost=frozenset(lost),
        step=state.step + 1,
    )
    # 5. the end
    if len(lost) == len(ROLES):
        events.add("both-lost")
    if not lost and new.step >= board.max_steps:
        events.add("tie-at-cap")
    return new, frozenset(events)


def step(state: State, moves: Mapping[str, str]) -> State:
    """The state after both sides play ``moves`` (role -> move text)."""
    return advance(state, moves)[0]


def terminal(state: State) -> bool:
    """A side has lost, or the step cap is reached."""
    return bool(state.lost) or state.step >= state.board.max_steps


def goals(state: State) -> tuple[int, int]:
    """Blue's and red's goals: win 100, loss 0, tie (both or neither lost) 50 each."""
    if len(state.lost) != 1:
        return 50, 50
    return (0, 100) if ROLES[0] in state.lost else (100, 0)


def facts(state: State) -> set[str]:
    """The state as the GDL's state facts, in KIF."""
    out = {f"(step {state.step})"}
    out |= {f"(tank {r} {x} {y})" for r, (x, y) in state.tanks.items()}
    out |= {f"(facing {r} {d})" for r, d in state.facing.items()}
    out |= {f"(rest {r})" for r in state.rest}
    out |= {f"(bullet {x} {y} {d})" for x, y, d in state.bullets}
    out |= {f"(brick {x} {y})" for x, y in state.bricks}
    out |= {f"(lost {r})" for r in state.lost}
    return out
