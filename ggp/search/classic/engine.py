"""What the depth-first searches share: the sequential view, leaf values, the clock and
counters, and the bookkeeping of the root's best move for anytime play.

Leaf values come through the :class:`~ggp.search.evaluator.Evaluator` seam: terminal
states by their goals, states at the horizon by the evaluator (default: the generic
:class:`~ggp.search.classic.heuristics.HeuristicEvaluator`). When a node one step above
the horizon is expanded, all its successors are valued in one batch (a network
evaluates a batch at nearly the cost of one state); values are cached per state for the
search object's life, so a noisy evaluator (random playouts) still gives one value per
state.

The two-sided searches (alpha-beta, PVS, MTD(f), paranoid) score a leaf with one integer
from the root role's point of view (:func:`utility_score`), in hundredths of a goal
point: null windows need integer scores (REFERENCE-SEARCH.md §1.3).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Sequence
from typing import Literal

import numpy as np

from ggp.errors import GameError
from ggp.game import Game, LazySequence
from ggp.gdl.terms import Const, Term
from ggp.reasoning.state_machine import State
from ggp.search.classic.heuristics import HeuristicEvaluator
from ggp.search.classic.results import DepthOutcome
from ggp.search.classic.sequential import Node, SequentialGame, StepInfo
from ggp.search.evaluator import Evaluator, TerminalEvaluator, terminal_values

__all__ = ["SearchTimeout", "TreeSearch", "Utility", "SCALE", "utility_score"]

logger = logging.getLogger(__name__)

#: Score units per goal point (scores are integers).
SCALE = 100

#: Leaf values kept per search object (the cache is emptied when it is full).
LEAF_CACHE_SIZE = 200_000

#: How a two-sided search scores a value vector for the root role ``me``:
#: ``own``: its own goal (the paranoid form, REFERENCE-SEARCH.md §1.1 and §1.6; for a
#: constant-sum two-player game the same search as negamax on ``g_me - g_opp``);
#: ``margin``: its goal minus the best other player's.
Utility = Literal["own", "margin"]


class SearchTimeout(Exception):
    """The deadline passed in the middle of a search."""


def utility_score(
    values: Sequence[float], me: int, players: Sequence[int], utility: Utility
) -> int:
    """``values`` (``[R]`` goal points) as an integer score for role index ``me``.

    Example:
        >>> values = [70.0, 30.0]
        >>> utility_score(values, 0, (0, 1), "own"), utility_score(values, 0, (0, 1), "margin")
        (7000, 4000)
    """
    if utility == "own":
        return round(SCALE * values[me])
    others = [values[p] for p in players if p != me]
    best_other = max(others) if others else 0.0
    return round(SCALE * (values[me] - best_other))


class TreeSearch:
    """Base of the depth-first searches (see the module docstring).

    Args:
        game: The rules.
        role: The searching (root) role.
        evaluator: Values states at the horizon (default :class:`HeuristicEvaluator`).
        utility: How two-sided searches score values (see :data:`Utility`).
        batch_leaves: Value all successors of a node above the horizon in one batch.

    Subclasses implement :meth:`search_depth`.
    """

    name = "search"

    def __init__(
        self,
        game: Game,
        role: Const | str,
        evaluator: Evaluator | None = None,
        *,
        utility: Utility = "own",
        batch_leaves: bool = True,
    ) -> None:
        if utility not in ("own", "margin"):
            raise ValueError(f"utility must be own or margin, not {utility!r}")
        self.game = game
        self.view = SequentialGame(game, role)
        self.role = self.view.role
        self.me = self.view.me
        self.evaluator: Evaluator = evaluator if evaluator is not None else HeuristicEvaluator()
        self._terminal_scale = isinstance(self.evaluator, TerminalEvaluator)
        self.utility: Utility = utility
        self.batch_leaves = batch_leaves
        self.deadline = math.inf
        #: Called in place of raising :class:`SearchTimeout` when the deadline passes, for
        #: a search run in time slices (:class:`~ggp.search.classic.pondering.Pondering`):
        #: it waits for the next slice and returns its deadline, or raises to stop.
        self.pause: Callable[[], float] | None = None
        self._leaf_values: dict[State, tuple[float, ...]] = {}
        # Counters (read by the iterative-deepening driver as differences).
        self.nodes = 0
        self.leaves = 0
        self.evaluations = 0
        self.researches = 0
        self.horizon = 0  # heuristic leaves met (and TT answers from such subtrees)
        # The root's best move so far in the current root search (anytime play).
        self._root_best: int | None = None

    # ----------------------------------------------------------------- clock

    def tick(self) -> None:
        """Count a node; once the deadline has passed, raise :class:`SearchTimeout` (or,
        with a :attr:`pause` hook, wait there for the next time slice)."""
        self.nodes += 1
        if time.monotonic() >= self.deadline:
            if self.pause is None:
                raise SearchTimeout
            self.deadline = self.pause()

    # ----------------------------------------------------------------- leaves

    def leaf_values(self, info: StepInfo) -> tuple[float, ...]:
        """``[R]`` the goals of a terminal state (or a
        :class:`~ggp.search.evaluator.TerminalEvaluator`'s values of it), or the
        evaluator's values of a non-terminal one (cached)."""
        if info.goals is not None:
            if self._terminal_scale:
                found = self._leaf_values.get(info.state)
                if found is None:
                    found = terminal_values(self.evaluator, self.game, info.state, info.goals)
                    self._leaf_values[info.state] = found
                return found
            return tuple(float(g) for g in info.goals)
        values = self._leaf_values.get(info.state)
        if values is None:
            self.prefetch([info])
            values = self._leaf_values[info.state]
        return values

    def prefetch(self, infos: Sequence[StepInfo]) -> None:
        """Value the non-terminal, not yet valued states of ``infos`` in one batch."""
        cache = self._leaf_values
        todo = list(
            dict.fromkeys(i.state for i in infos if not i.terminal and i.state not in cache)
        )
        if not todo:
            return
        if len(cache) + len(todo) > LEAF_CACHE_SIZE:
            cache.clear()
        # A search run in slices values its batch whole (the next tick() pauses it).
        deadline = None if math.isinf(self.deadline) or self.pause else self.deadline
        estimate = self.evaluator.evaluate(self.game, todo, deadline)
        if deadline is not None and time.monotonic() >= deadline:
            raise SearchTimeout  # the values may be partial: none is kept
        values = np.asarray(estimate.values, dtype=np.float64)
        self.evaluations += len(todo)
        for state, row in zip(todo, values, strict=True):
            cache[state] = tuple(float(v) for v in row)

    def prefetch_children(self, node: Node) -> None:
        """Value every successor state of ``node``'s step in one batch."""
        if not self.batch_leaves or node[1]:
            return
        expansion = node[0].expansion
        assert expansion is not None
        if isinstance(expansion.states, LazySequence):
            return  # too wide to compute at once (the sequential view's lazy_above)
        view = self.view
        self.prefetch([view.info(s) for s in expansion.states])

    def score(self, values: Sequence[float]) -> int:
        """The root role's integer score of a value vector (see :data:`Utility`)."""
        return utility_score(values, self.me, self.view.player_indices, self.utility)

    # ----------------------------------------------------------------- search

    def check_root(self, state: State) -> Node:
        """The root node of ``state``.

        Raises:
            GameError: ``state`` is terminal.
        """
        root = self.view.root(state)
        if root[0].terminal:
            raise GameError("cannot search a terminal state")
        self.view.expand(root[0])
        return root

    def root_move(self, root: Node, index: int | None) -> Term:
        """The root role's move: its ``index``-th legal move when it picks at ``root``,
        else its only legal move (index None: the first legal move)."""
        legal = self.view.expand(root[0]).legal[self.me]
        if index is None or self.view.chooser(root) != self.me:
            return legal[0]
        return legal[index]

    def partial_move(self, state: State) -> Term | None:
        """The best root move of an unfinished root search: a root move that scored
        above the window's lower end (None if none did yet)."""
        if self._root_best is None:
            return None
        return self.root_move(self.view.root(state), self._root_best)

    def search_depth(self, state: State, depth: int, guess: float | None) -> DepthOutcome:
        """Search ``state`` to ``depth`` steps.

        Args:
            state: A non-terminal state.
            depth: Depth in steps (>= 1).
            guess: The value expected (goal points), from an earlier iteration, or None.

        Raises:
            SearchTimeout: The deadline passed first.
        """
        raise NotImplementedError

    def new_move(self) -> None:
        """Called before each move's search (subclasses age their tables)."""

    def tt_counters(self) -> tuple[int, int, int]:
        """Transposition-table probes, hits and cutoffs so far (zeros without a table)."""
        return (0, 0, 0)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.role} evaluator={self.evaluator!r}>"
