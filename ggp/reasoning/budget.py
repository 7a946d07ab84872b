"""The time and memory that grounding and compiling one game may take.

A game too large to ground must not hang the loader or eat the machine's memory: the
grounder and the propnet builder call :meth:`Budget.check` as they go, and past either
limit of :class:`~ggp.reasoning.ground.GroundingLimits` it raises
:class:`~ggp.errors.GroundingError`, on which ``Game.from_file(reasoner="auto")`` falls
back to the prover with that one-line reason.

This is the safety net: which games ground is decided by their sizes
(``GroundingLimits.max_derivations`` and the others), the same on every machine, since
CPU time is not (the same game's grounding took 2.3 times as long on one 2-core machine
as on another). Time is the CPU time of the loading thread (``time.thread_time``), not
the wall clock, so that a loaded machine does not pass the limit sooner. Memory
is the growth of the process's resident set since the budget started (``/proc/self/statm``
where it exists, else the peak resident set).

Example:
    >>> budget = Budget(max_seconds=None, max_memory_mb=None)
    >>> budget.check("evaluating cell/3")        # no limits: never raises
    >>> clock = iter([0.0, 9.5]).__next__            # started at 0 s, checked at 9.5 s
    >>> Budget(max_seconds=8.0, max_memory_mb=None, clock=clock).check("evaluating cell/3")
    Traceback (most recent call last):
    ...
    ggp.errors.GroundingError: grounding takes more than 8 s (GroundingLimits.max_seconds, \
CPU time) while evaluating cell/3
"""

from __future__ import annotations

import os
import resource
import sys
import time
from collections.abc import Callable

from ggp.errors import GroundingError

__all__ = ["Budget", "resident_bytes"]

_PAGE = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096


def resident_bytes() -> int:
    """The process's resident set size now (its peak where /proc is missing)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            return int(f.read().split()[1]) * _PAGE
    except (OSError, IndexError, ValueError):
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        return peak if sys.platform == "darwin" else peak * 1024


class Budget:
    """Raises GroundingError once loading has taken more than its time or memory.

    Args:
        max_seconds: CPU seconds of the loading thread, or None for no limit.
        max_memory_mb: Growth of the resident set in MiB, or None for no limit.
        clock: The CPU clock (tests inject one).
    """

    __slots__ = ("max_memory_mb", "max_seconds", "_base", "_clock", "_start")

    def __init__(
        self,
        max_seconds: float | None,
        max_memory_mb: int | None,
        clock: Callable[[], float] = time.thread_time,
    ) -> None:
        self.max_seconds = max_seconds
        self.max_memory_mb = max_memory_mb
        self._clock = clock
        self._start = clock()
        self._base = resident_bytes() if max_memory_mb is not None else 0

    def __repr__(self) -> str:
        return f"Budget(max_seconds={self.max_seconds!r}, max_memory_mb={self.max_memory_mb!r})"

    @property
    def seconds(self) -> float:
        """CPU seconds spent since the budget started."""
        return self._clock() - self._start

    def check(self, doing: str) -> None:
        """Raise GroundingError, naming what was being done, if a limit is passed.

        Raises:
            GroundingError: More CPU time or memory than the limits.
        """
        if self.max_seconds is not None and self.seconds > self.max_seconds:
            raise GroundingError(
                f"grounding takes more than {self.max_seconds:g} s "
                f"(GroundingLimits.max_seconds, CPU time) while {doing}"
            )
        if self.max_memory_mb is not None:
            grown = (resident_bytes() - self._base) / 2**20
            if grown > self.max_memory_mb:
                raise GroundingError(
                    f"grounding takes more than {self.max_memory_mb:,} MiB "
                    f"(GroundingLimits.max_memory_mb; {grown:,.0f} MiB) while {doing}"
                )
