"""Deadlines in search: :class:`OutOfTime` and the one place the search reads the clock.

Every part of a search (sampling histories, building a tree, filtering a belief) takes a
``deadline``, a ``time.monotonic()`` value or None for none, and stops with
:class:`OutOfTime` once it has passed, looking at the clock every
:data:`CHECK_EVERY` work items. Reading the clock only here lets a test stand in a clock
of its own (``monkeypatch.setattr(clock, "time", ...)``).

Example:
    >>> passed(None), passed(0.0)
    (False, True)
"""

from __future__ import annotations

import time

from ggp.errors import OutOfTime

__all__ = ["OutOfTime", "CHECK_EVERY", "passed", "check"]

#: Work items (states, attempts, particles) between two looks at the clock.
CHECK_EVERY = 32


# OutOfTime lives in ggp.errors so that a reasoner (below search) can raise it too.


def passed(deadline: float | None) -> bool:
    """Whether ``deadline`` (a ``time.monotonic()`` value; None: none) has passed."""
    return deadline is not None and time.monotonic() > deadline


def check(deadline: float | None, what: str) -> None:
    """Raise :class:`OutOfTime` with the message ``what`` if ``deadline`` has passed."""
    if passed(deadline):
        raise OutOfTime(what)
