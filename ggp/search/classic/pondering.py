"""A depth-first search run in time slices: it pauses where a slice ends and resumes, with
its whole stack, when the next is given (RTMM's game loop, ../shared/REFERENCE-SEARCH.md
section 3.3: "a search can pause and resume, so idle cycles chain into deep searches").

The search runs in a thread of its own, strictly in turn with the caller:
:meth:`Pondering.run_for` hands it the time up to a moment and blocks until it has paused
there (in :meth:`~ggp.search.classic.engine.TreeSearch.tick`, through the search's
``pause`` hook) or finished; :meth:`Pondering.finish` gives it a last slice, stops it and
returns its result.
Only one of the two threads runs at a time, so the search, the game and its caches are
never used by both at once; while the search is paused the caller may use the game (the
search is stopped at a node's start, never inside a query). A slice ends at the first
node after its end: a reasoner query is not cut (the propnet answers in microseconds; on
the top-down prover a slice may run one query long).

Example:
    >>> import time
    >>> from ggp.game import Game
    >>> from ggp.search.classic.rtmm import RTMM
    >>> game = Game.from_file("games/tictactoe.gdl")
    >>> start, search = game.initial_state(), RTMM(game, "xplayer")
    >>> pondering = Pondering(search, lambda deadline: search.search(start, deadline))
    >>> for _ in range(3):
    ...     pondering.run_for(time.monotonic() + 0.01)
    >>> result = pondering.finish(time.monotonic() + 0.01)
    >>> result.move in game.legal_moves(start, "xplayer"), pondering.done
    (True, True)
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Generic, TypeVar

from ggp.search.classic.engine import SearchTimeout, TreeSearch

__all__ = ["Pondering"]

R = TypeVar("R")


class Pondering(Generic[R]):
    """``run(deadline)`` (an anytime search on ``search``, which returns its best result so
    far when :class:`~ggp.search.classic.engine.SearchTimeout` stops it) run in time slices.

    Args:
        search: The search object whose clock the slices drive (its ``pause`` hook is set
            for the run's life).
        run: The search call, given the end of the first slice as its deadline.

    Attributes:
        searched_s: Seconds the search has run so far (the slices' time it used).
    """

    def __init__(self, search: TreeSearch, run: Callable[[float], R]) -> None:
        self.search = search
        self._run = run
        self._turn = threading.Condition()
        self._searching = False  # whose turn: the search thread's (True) or the caller's
        self._stopping = False
        self._done = False
        self._until = 0.0
        self._slice_started = 0.0
        self._result: R | None = None
        self._error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self.searched_s = 0.0

    @property
    def done(self) -> bool:
        """Whether the search has returned (it finished, or :meth:`finish` stopped it)."""
        return self._done

    def run_for(self, until: float) -> None:
        """Let the search run until the monotonic time ``until`` (or until it returns),
        blocking meanwhile."""
        if self._done:
            return
        with self._turn:
            self._until = until
            self._slice_started = time.monotonic()
            self._searching = True
            if self._thread is None:
                self._thread = threading.Thread(target=self._main, daemon=True)
                self._thread.start()
            else:
                self._turn.notify_all()
            while self._searching:
                self._turn.wait()

    def finish(self, until: float) -> R:
        """A last slice until ``until``, then stop the search and return its result.

        Raises:
            BaseException: What the search raised (other than being stopped).
        """
        self.run_for(until)
        self.cancel()
        if self._error is not None:
            raise self._error
        assert self._result is not None
        return self._result

    def cancel(self) -> None:
        """Stop the search (its result, if any, is kept for :meth:`finish`)."""
        thread = self._thread
        if thread is None or self._done:
            self._done = True
            return
        with self._turn:
            self._stopping = True
            self._slice_started = time.monotonic()
            self._searching = True
            self._turn.notify_all()
            while self._searching:
                self._turn.wait()
        thread.join()

    # ----------------------------------------------------------------- the search thread

    def _main(self) -> None:
        self.search.pause = self._pause
        try:
            self._result = self._run(self._until)
        except BaseException as e:  # handed to the caller by finish()
            self._error = e
        finally:
            self.search.pause = None
            with self._turn:
                self.searched_s += time.monotonic() - self._slice_started
                self._done = True
                self._searching = False
                self._turn.notify_all()

    def _pause(self) -> float:
        """In the search thread, where a slice is over: wait for the next slice and return
        its end, or raise SearchTimeout when stopped."""
        with self._turn:
            self.searched_s += time.monotonic() - self._slice_started
            self._searching = False
            self._turn.notify_all()
            while not self._searching:
                self._turn.wait()
            if self._stopping:
                raise SearchTimeout
            return self._until
