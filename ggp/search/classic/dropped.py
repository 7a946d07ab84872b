"""Tables a search has let go of, freed a slice at a time so that no move pays for all.

A search that keeps a table from move to move (the MCTS tree, a cache) starts afresh
when it grows too large. Emptying a big table at once is slow in CPython, which frees
each object as its last reference goes: the MCTS tree of an RTS-Full match (300,000
nodes, with their move statistics and cached states) took 0.49 s and 0.74 s to clear,
inside moves searched for 0.1 s (`benchmarks/RESULTS.md`, RTS-Full, "Beyond the
paper"). :class:`Dropped` takes the table instead and frees a few of its entries each
time the search calls :meth:`Dropped.free` between its batches.

Example:
    >>> dropped: Dropped[int, list[int]] = Dropped(slice_size=2)
    >>> table = {i: [i] for i in range(5)}
    >>> dropped.drop(table)
    >>> len(dropped), dropped.free(), len(dropped)
    (5, 2, 3)
    >>> dropped.free(10), len(dropped), table
    (3, 0, {})
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Dropped", "DEFAULT_SLICE"]

K = TypeVar("K")
V = TypeVar("V")

#: Entries freed by one :meth:`Dropped.free` call: 0.30 ms of MCTS nodes at the mean,
#: 1.43 ms at most (a 300,000-node RTS-Full tree, `benchmarks/bench_mcts_drop.py`),
#: eight times what a batch of 8 simulations adds, so that a dropped tree is gone long
#: before the next one fills.
DEFAULT_SLICE = 64


class Dropped(Generic[K, V]):
    """Dropped tables waiting to be freed (module docstring).

    Args:
        slice_size: Entries :meth:`free` frees by default.
        unlink: Called on each value taken out, before it is let go: it breaks the
            value's links to other entries (an MCTS node's children), so that freeing
            one entry never frees a chain of others already taken out.
    """

    def __init__(self, slice_size: int = DEFAULT_SLICE, unlink: Callable[[V], None] | None = None):
        if slice_size < 1:
            raise ValueError(f"slice_size must be >= 1, not {slice_size}")
        self.slice_size = slice_size
        self.unlink = unlink
        self._tables: list[dict[K, V]] = []

    def __repr__(self) -> str:
        return f"<Dropped {len(self)} entries in {len(self._tables)} table(s)>"

    def __len__(self) -> int:
        """The entries still to free."""
        return sum(len(table) for table in self._tables)

    def drop(self, table: dict[K, V]) -> None:
        """Take ``table`` (the caller holds it no more) to be freed by later calls."""
        if table:
            self._tables.append(table)

    def free(self, count: int | None = None) -> int:
        """Free up to ``count`` entries (default :attr:`slice_size`); returns how many."""
        budget = self.slice_size if count is None else count
        freed = 0
        unlink = self.unlink
        tables = self._tables
        while tables and freed < budget:
            table = tables[-1]
            take = min(budget - freed, len(table))
            for _ in range(take):
                _, value = table.popitem()
                if unlink is not None:
                    unlink(value)
            freed += take
            if not table:
                tables.pop()
        return freed
