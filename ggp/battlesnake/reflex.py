"""Simple Battlesnake policies on a :class:`~ggp.battlesnake.board.Board`: the reflex
policy IDAPOS gives masked snakes, and the paper's simple opponents.

Schier & Wuestenbecker (2019), as ../shared/REFERENCE-SEARCH.md states them:

- :func:`reflex_move`, the code's reflex policy: each of up, left, down, right is scored
  and the best played (ties to the first in that order). A certainly fatal move (off the
  board, or into its own body other than the tail) scores -1000; any other
  ``1 * hold + 3 * food + 10 * prox - 30 * on_snake``: ``hold`` 1 if it keeps the last
  direction, ``food`` 1 onto food, ``on_snake`` 1 onto another snake's body, ``prox`` the
  sum over the other live snakes whose head is next to the new head of -0.5 (equal
  length), +0.3 (we are longer) or -1 (we are shorter).
- :func:`greedy_move`, "Greedy": eats as fast as possible (a shortest path to the nearest
  reachable food).
- :func:`aggressive_move`, "Aggressive": greedy, but attacks a shorter snake within reach
  (heads for the cells next to its head; "when it is longer" read as: when the attacker is
  the longer one).
- :func:`tail_chaser_move`, "Tail chaser": follows its own tail until its health is very
  low (:data:`HUNGRY`), then is greedy until it has eaten.

The three opponents never take a certainly fatal step when another exists, and fall back
on the reflex policy when they have no path. Paths avoid every body cell that is still
occupied after the move (a tail that moves away is free).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from ggp.battlesnake.board import MOVES, Board, Point, distances

__all__ = [
    "REFLEX_ORDER",
    "HUNGRY",
    "POLICIES",
    "reflex_move",
    "greedy_move",
    "aggressive_move",
    "tail_chaser_move",
    "blocked_cells",
    "certainly_fatal",
]

#: The reflex policy's order of moves (its tie-break).
REFLEX_ORDER: tuple[str, ...] = ("up", "left", "down", "right")
#: The tail chaser's "very low" health.
HUNGRY = 25


def _step(cell: Point, move: str) -> Point:
    dx, dy = MOVES[move]
    return cell[0] + dx, cell[1] + dy


def _on_board(board: Board, cell: Point) -> bool:
    return 0 <= cell[0] < board.size and 0 <= cell[1] < board.size


def blocked_cells(board: Board) -> set[Point]:
    """The body cells still occupied after every snake moves once: all but a tail that
    moves away (one with no segment stacked on it)."""
    blocked: set[Point] = set()
    for snake in board.snakes:
        if snake is None:
            continue
        body = snake.body
        leaves = len(body) > 1 and body[-1] != body[-2]
        blocked.update(body[:-1] if leaves else body)
    return blocked


def _last_direction(body: tuple[Point, ...]) -> str | None:
    if len(body) < 2 or body[0] == body[1]:
        return None
    for move in MOVES:
        if _step(body[1], move) == body[0]:
            return move
    return None


def certainly_fatal(board: Board, index: int) -> frozenset[str]:
    """The moves that certainly kill snake ``index``: off the board, or into its own body
    other than a tail that moves away (the paper code's "certainly fatal" moves, which the
    reflex policy scores -1000 and IDAPOS does not search)."""
    me = board.snakes[index]
    assert me is not None, "an eliminated snake has no move"
    own_body = set(me.body[1:-1]) if me.body[-1] != me.body[-2] else set(me.body[1:])
    return frozenset(
        move
        for move in REFLEX_ORDER
        if not _on_board(board, cell := _step(me.head, move)) or cell in own_body
    )


def reflex_move(board: Board, index: int) -> str:
    """The reflex policy's move for snake ``index`` (see the module docstring)."""
    me = board.snakes[index]
    assert me is not None, "an eliminated snake has no move"
    head, length = me.head, len(me.body)
    last = _last_direction(me.body)
    fatal = certainly_fatal(board, index)
    others = [s for i, s in enumerate(board.snakes) if s is not None and i != index]
    other_cells = {c for s in others for c in s.body}
    best, best_score = REFLEX_ORDER[0], float("-inf")
    for move in REFLEX_ORDER:
        cell = _step(head, move)
        if move in fatal:
            score = -1000.0
        else:
            prox = 0.0
            for other in others:
                if abs(other.head[0] - cell[0]) + abs(other.head[1] - cell[1]) == 1:
                    theirs = len(other.body)
                    prox += -0.5 if theirs == length else 0.3 if length > theirs else -1.0
            score = (
                1.0 * (move == last)
                + 3.0 * (cell in board.food)
                + 10.0 * prox
                - 30.0 * (cell in other_cells)
            )
        if score > best_score:
            best, best_score = move, score
    return best


def _safe_moves(board: Board, index: int, blocked: set[Point]) -> list[str]:
    me = board.snakes[index]
    assert me is not None
    return [
        m for m in REFLEX_ORDER if _on_board(board, c := _step(me.head, m)) and c not in blocked
    ]


def _towards(board: Board, index: int, targets: Iterable[Point]) -> str | None:
    """The first step of a shortest safe path from snake ``index``'s head to the nearest
    of ``targets``, None if none can be reached."""
    me = board.snakes[index]
    assert me is not None
    blocked = blocked_cells(board)
    goals = set(targets)
    best: tuple[int, int] | None = None
    choice = None
    for order, move in enumerate(_safe_moves(board, index, blocked)):
        first = _step(me.head, move)
        reach = distances(board.size, first, blocked)
        near = min((reach[g] for g in goals if g in reach), default=None)
        if near is not None and (best is None or (near, order) < best):
            best, choice = (near, order), move
    return choice


def greedy_move(board: Board, index: int) -> str:
    """Towards the nearest reachable food; the reflex move without one."""
    return _towards(board, index, board.food) or _fallback(board, index)


def aggressive_move(board: Board, index: int) -> str:
    """Greedy, but towards the head of a shorter snake within 4 steps when there is one."""
    me = board.snakes[index]
    assert me is not None
    prey = [
        s.head
        for i, s in enumerate(board.snakes)
        if s is not None
        and i != index
        and len(s.body) < len(me.body)
        and abs(s.head[0] - me.head[0]) + abs(s.head[1] - me.head[1]) <= 4
    ]
    targets = [_step(h, m) for h in prey for m in REFLEX_ORDER]
    return (_towards(board, index, targets) if prey else None) or greedy_move(board, index)


def tail_chaser_move(board: Board, index: int) -> str:
    """Follows its own tail while its health is above :data:`HUNGRY`, else greedy."""
    me = board.snakes[index]
    assert me is not None
    if me.health <= HUNGRY:
        return greedy_move(board, index)
    tail = me.body[-1]  # free next turn unless a segment is stacked on it
    around = [_step(tail, m) for m in REFLEX_ORDER]
    return (
        _towards(board, index, [tail])
        or _towards(board, index, around)
        or greedy_move(board, index)
    )


def _fallback(board: Board, index: int) -> str:
    """The reflex move, unless it is certainly fatal and a safe step exists."""
    move = reflex_move(board, index)
    safe = _safe_moves(board, index, blocked_cells(board))
    return move if move in safe or not safe else safe[0]


#: The policies by spec name.
POLICIES: dict[str, Callable[[Board, int], str]] = {
    "reflex": reflex_move,
    "greedy": greedy_move,
    "aggressive": aggressive_move,
    "tailchaser": tail_chaser_move,
}
