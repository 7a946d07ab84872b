"""A transposition table storing bounds, as MTD(f) needs (and alpha-beta, PVS use).

Plaat, Schaeffer, Pijls & de Bruin, *Best-first fixed-depth minimax algorithms*,
Artificial Intelligence 87 (1996), https://arxiv.org/abs/1404.1515: each entry keeps a
lower and an upper bound of a node's value at a search depth, and its best move. A
fail-soft search that returns ``g`` from the window ``(alpha, beta)`` stores ``upper = g``
after a fail low (``g <= alpha``), ``lower = g`` after a fail high (``g >= beta``), and
both for a value inside the window.

Keys are the search's node keys (the state's Zobrist key, :meth:`Game.zobrist`, mixed
with the picks of the step's sub-plies). Depth is the remaining depth in steps.

Bounds answer a probe only at the *same* remaining depth: an entry searched deeper holds
another quantity (a deeper search's value), so using it would make a fixed-depth search
return something other than the fixed-depth minimax value. Deeper entries still give
their best move, which is searched first. With this rule every variant (alpha-beta,
PVS, MTD(f), aspiration, iterative deepening) returns exactly the plain minimax value
at each depth, whatever the table holds, which the tests check.

Each entry also remembers whether its subtree met the horizon (a heuristically valued
leaf): a search that meets none has solved its root.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["TTEntry", "TranspositionTable", "TTStats", "INFINITY"]

#: Larger than any score.
INFINITY = 1 << 40


class TTEntry:
    """One node's bounds at one remaining depth (mutable, owned by the table).

    Attributes:
        depth: Remaining depth (steps) the bounds hold for.
        lower: A lower bound of the node's value (``-INFINITY``: none).
        upper: An upper bound of the node's value (``INFINITY``: none).
        move: Index of the best move found (None: none).
        heuristic: Whether the subtree met a heuristically valued leaf.
    """

    __slots__ = ("depth", "lower", "upper", "move", "heuristic")

    def __init__(
        self, depth: int, lower: int, upper: int, move: int | None, heuristic: bool
    ) -> None:
        self.depth = depth
        self.lower = lower
        self.upper = upper
        self.move = move
        self.heuristic = heuristic

    def __repr__(self) -> str:
        return (
            f"TTEntry(depth={self.depth}, lower={self.lower}, upper={self.upper}, "
            f"move={self.move}, heuristic={self.heuristic})"
        )


@dataclass(frozen=True)
class TTStats:
    """Counters of a table.

    Attributes:
        probes: Look-ups.
        hits: Look-ups that found an entry of the same depth.
        cutoffs: Hits whose bounds answered the look-up without a search.
        stores: Entries written or updated.
        size: Entries held.
    """

    probes: int
    hits: int
    cutoffs: int
    stores: int
    size: int

    @property
    def hit_rate(self) -> float:
        return self.hits / self.probes if self.probes else 0.0


class TranspositionTable:
    """Bounds and best moves by node key (see the module docstring).

    Args:
        max_entries: When the table holds this many entries, it is emptied before the
            next store (a simple, predictable replacement scheme).

    Example:
        >>> table = TranspositionTable()
        >>> table.store(42, depth=3, value=10, alpha=0, beta=5, move=1, heuristic=True)
        >>> table.probe(42)
        TTEntry(depth=3, lower=10, upper=1099511627776, move=1, heuristic=True)
    """

    def __init__(self, max_entries: int = 500_000) -> None:
        self.max_entries = max_entries
        self._entries: dict[int, TTEntry] = {}
        self.probes = 0
        self.hits = 0
        self.cutoffs = 0
        self.stores = 0

    def probe(self, key: int) -> TTEntry | None:
        """The entry of ``key`` at any depth (the caller checks the depth)."""
        self.probes += 1
        return self._entries.get(key)

    def store(
        self,
        key: int,
        depth: int,
        value: int,
        alpha: int,
        beta: int,
        move: int | None,
        heuristic: bool,
    ) -> None:
        """Record that a fail-soft search of window ``(alpha, beta)`` at ``depth``
        returned ``value`` with best move ``move``.

        An entry of the same depth is narrowed (its bounds stay valid); one of another
        depth is replaced.
        """
        self.stores += 1
        lower = value if value > alpha else -INFINITY
        upper = value if value < beta else INFINITY
        entry = self._entries.get(key)
        if entry is not None and entry.depth == depth:
            new_lower = max(entry.lower, lower)
            new_upper = min(entry.upper, upper)
            if new_lower <= new_upper:  # else a noisy evaluator: keep the newest bounds
                lower, upper = new_lower, new_upper
            entry.lower, entry.upper = lower, upper
            if move is not None:
                entry.move = move
            entry.heuristic = entry.heuristic or heuristic
            return
        if entry is None and len(self._entries) >= self.max_entries:
            self._entries.clear()
        self._entries[key] = TTEntry(depth, lower, upper, move, heuristic)

    def clear(self) -> None:
        """Forget every entry (the counters stay)."""
        self._entries.clear()

    def stats(self) -> TTStats:
        """The counters now."""
        return TTStats(self.probes, self.hits, self.cutoffs, self.stores, len(self._entries))

    def __len__(self) -> int:
        return len(self._entries)

    def __repr__(self) -> str:
        return f"<TranspositionTable {len(self._entries)} entries>"
