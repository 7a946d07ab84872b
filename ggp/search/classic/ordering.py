"""Move ordering: the transposition-table move first, then the history heuristic.

Alpha-beta's savings depend on trying the best move first (Knuth & Moore 1975: with
perfect ordering about ``b^(d/2)`` leaves instead of ``b^d``). Two generic sources of
order that need no knowledge of the game:

- the best move the transposition table remembers for the node (from an earlier,
  shallower iteration of iterative deepening, or an earlier pass of MTD(f));
- the history heuristic (Schaeffer, *The history heuristic and alpha-beta search
  enhancements in practice*, IEEE PAMI 11 (1989),
  https://doi.org/10.1109/34.42858): a counter per (role, move), raised by ``2^depth``
  each time the move causes a cutoff or is best, so that moves good elsewhere in the
  tree are tried early.

Ties keep the rules' order (moves sorted by their KIF text), so ordering is
deterministic.
"""

from __future__ import annotations

from ggp.gdl.terms import Term

__all__ = ["HistoryTable", "order_moves"]

#: Depths above this raise the history counter by ``2**MAX_SHIFT``.
MAX_SHIFT = 30


class HistoryTable:
    """History-heuristic counters by (role index, move).

    Example:
        >>> history = HistoryTable()
        >>> history.reward(0, "b", depth=3)
        >>> history.score(0, "b"), history.score(0, "a")
        (8, 0)
    """

    def __init__(self) -> None:
        self._counts: dict[tuple[int, Term | str], int] = {}

    def reward(self, role: int, move: Term | str, depth: int) -> None:
        """Raise the counter of ``role`` playing ``move`` by ``2**depth``."""
        key = (role, move)
        self._counts[key] = self._counts.get(key, 0) + (1 << min(depth, MAX_SHIFT))

    def score(self, role: int, move: Term | str) -> int:
        """The counter of ``role`` playing ``move``."""
        return self._counts.get((role, move), 0)

    def age(self) -> None:
        """Halve every counter (between moves, so that old successes fade)."""
        self._counts = {k: v >> 1 for k, v in self._counts.items() if v > 1}

    def clear(self) -> None:
        self._counts.clear()

    def __len__(self) -> int:
        return len(self._counts)


def order_moves(
    role: int,
    moves: tuple[Term, ...],
    first: int | None,
    history: HistoryTable | None,
) -> list[int]:
    """Indices of ``moves`` in search order.

    Args:
        role: The moving role's index.
        moves: Its legal moves.
        first: A move index to search first (the transposition-table move), or None.
        history: History counters, or None to keep the rules' order after ``first``.

    Example:
        >>> history = HistoryTable()
        >>> history.reward(0, "c", 2)
        >>> order_moves(0, ("a", "b", "c", "d"), 3, history)
        [3, 2, 0, 1]
    """
    indices = list(range(len(moves)))
    if history is not None and history._counts:
        counts = history._counts
        indices.sort(key=lambda i: -counts.get((role, moves[i]), 0))
    if first is not None and 0 <= first < len(moves):
        indices.remove(first)
        indices.insert(0, first)
    return indices
