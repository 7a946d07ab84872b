"""Python's cyclic garbage collector around a player's moves and the prover's work.

What survives a search player's move (transition caches, a transposition table, an MCTS
tree, a sampler's belief: often a million objects) is frozen out of the collector's scans
after the move (``gc.freeze``), because a full collection over it takes 0.1-0.4 s and
lands in the middle of a later move, past its deadline. :func:`collect_frozen` collects
the cycles among the frozen objects between matches, off the clock; :func:`collector_paused`
pauses the collector while a move is searched, and while the prover evaluates a large
game's rules (a million acyclic fact tuples set off full collections that tripled the time
of a chess step).
"""

from __future__ import annotations

import contextlib
import gc
import threading
from collections.abc import Iterator

__all__ = ["collect_frozen", "collector_paused"]


class _FrozenHeap:
    """Objects frozen at the last collection (see :func:`collect_frozen`)."""

    after_last_collection = 0


def collect_frozen() -> None:
    """Collect the garbage cycles among the objects frozen after each move, then freeze
    what survives again: between matches, off the clock, and only once the frozen heap
    has doubled since the last time (a full collection takes 0.1-0.4 s, too much after
    every short match of a training snapshot)."""
    if gc.get_freeze_count() < 2 * _FrozenHeap.after_last_collection:
        return
    gc.unfreeze()
    gc.collect()
    gc.freeze()
    _FrozenHeap.after_last_collection = gc.get_freeze_count()


class _CollectorPause:
    """Nesting count of :func:`collector_paused` across threads (players of one match
    search in parallel threads of the referee)."""

    lock = threading.Lock()
    depth = 0
    was_enabled = False


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while the body runs; it is enabled again
    (if it was) when the last of the threads pausing it leaves."""
    with _CollectorPause.lock:
        if _CollectorPause.depth == 0:
            _CollectorPause.was_enabled = gc.isenabled()
            gc.disable()
        _CollectorPause.depth += 1
    try:
        yield
    finally:
        with _CollectorPause.lock:
            _CollectorPause.depth -= 1
            if _CollectorPause.depth == 0 and _CollectorPause.was_enabled:
                gc.enable()
