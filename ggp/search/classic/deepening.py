"""Iterative deepening under a move clock: the anytime driver of the depth-first searches.

Slate & Atkin, *CHESS 4.5 — the Northwestern University chess program* (1977), and
REFERENCE-SEARCH.md §1.2: search depth 1, 2, ... until the deadline (a
``time.monotonic()`` value) and play the best move of the deepest finished iteration.
The iterations before the last cost little (about ``1/(b_eff - 1)`` of it) and fill the
transposition table and history counters that order the next one. An iteration the
deadline stops is still used when a root move finished in it with a value above the
window's lower end: the previous best is searched first, so such a move is at least as
good at the new depth. Deepening stops early once an iteration meets no heuristic leaf
(the game is solved from here) or at ``max_depth``.

Each iteration's first guess (aspiration windows, MTD(f)) is the value of the iteration
two depths earlier when there is one, else of the previous one.

The result always holds a legal move of the root role, however early the deadline: with
no iteration finished and no partial one usable, its first legal move.
"""

from __future__ import annotations

import logging
import math
import time

from ggp.errors import OutOfTime
from ggp.gdl.terms import Term
from ggp.reasoning.state_machine import State
from ggp.search.classic.engine import SearchTimeout, TreeSearch
from ggp.search.classic.results import IterationReport, SearchResult

__all__ = ["iterative_deepening", "DEFAULT_MAX_DEPTH"]

logger = logging.getLogger(__name__)

#: Deepest iteration by default (steps).
DEFAULT_MAX_DEPTH = 64


def iterative_deepening(
    search: TreeSearch,
    state: State,
    deadline: float = math.inf,
    max_depth: int = DEFAULT_MAX_DEPTH,
) -> SearchResult:
    """Deepen ``search`` from ``state`` until ``deadline`` (see the module docstring).

    Args:
        search: A depth-first search for the role to move (alpha-beta, PVS, MTD(f),
            paranoid, max^n).
        state: A non-terminal state.
        deadline: A ``time.monotonic()`` value (inf: none; then ``max_depth`` or a
            solved root ends the search, and the result is deterministic).
        max_depth: The deepest iteration, in steps.

    Raises:
        GameError: ``state`` is terminal.

    Example:
        >>> from ggp.game import Game
        >>> from ggp.search.classic.pvs import PVS
        >>> game = Game.from_file("games/tictactoe.gdl")
        >>> result = iterative_deepening(PVS(game, "xplayer"), game.initial_state())
        >>> result.value, result.depth, result.solved
        (50.0, 9, True)
    """
    started = time.monotonic()
    root = search.check_root(state)
    search.new_move()
    search.deadline = deadline
    move = search.root_move(root, None)
    values: dict[int, float] = {}
    reports: list[IterationReport] = []
    value: float | None = None
    depth_done = 0
    solved = False
    nodes_before = search.nodes
    try:
        for depth in range(1, max_depth + 1):
            if time.monotonic() >= deadline:
                break
            guess = values.get(depth - 2, values.get(depth - 1))
            before = _Counters.of(search)
            iteration_start = time.monotonic()
            try:
                outcome = search.search_depth(state, depth, guess)
            except (SearchTimeout, OutOfTime):  # our clock, or the reasoner's query cut
                partial = search.partial_move(state)
                if partial is not None:
                    move = partial
                reports.append(
                    before.report(search, depth, None, partial, 0, iteration_start, False, False)
                )
                break
            values[depth] = value = outcome.value
            move = outcome.move
            depth_done = depth
            reports.append(
                before.report(
                    search,
                    depth,
                    outcome.value,
                    outcome.move,
                    outcome.passes,
                    iteration_start,
                    True,
                    outcome.solved,
                )
            )
            if outcome.solved:
                solved = True
                break
    finally:
        search.deadline = math.inf
    seconds = time.monotonic() - started
    logger.info(
        "%s %s: depth %d%s, value %s, move %s, %d nodes, %.2f s",
        search.name,
        search.role,
        depth_done,
        " (solved)" if solved else "",
        "-" if value is None else f"{value:.2f}",
        move,
        search.nodes - nodes_before,
        seconds,
    )
    return SearchResult(
        move=move,
        value=value,
        depth=depth_done,
        solved=solved,
        nodes=search.nodes - nodes_before,
        seconds=seconds,
        reports=tuple(reports),
    )


class _Counters:
    """A search's counters at the start of an iteration."""

    def __init__(
        self,
        nodes: int,
        leaves: int,
        evaluations: int,
        researches: int,
        tt: tuple[int, int, int],
    ) -> None:
        self.nodes = nodes
        self.leaves = leaves
        self.evaluations = evaluations
        self.researches = researches
        self.tt = tt

    @classmethod
    def of(cls, search: TreeSearch) -> _Counters:
        return cls(
            search.nodes,
            search.leaves,
            search.evaluations,
            search.researches,
            search.tt_counters(),
        )

    def report(
        self,
        search: TreeSearch,
        depth: int,
        value: float | None,
        move: Term | None,
        passes: int,
        started: float,
        complete: bool,
        solved: bool,
    ) -> IterationReport:
        probes, hits, cutoffs = search.tt_counters()
        return IterationReport(
            depth=depth,
            value=value,
            move=move,
            nodes=search.nodes - self.nodes,
            leaves=search.leaves - self.leaves,
            evaluations=search.evaluations - self.evaluations,
            passes=passes,
            researches=search.researches - self.researches,
            tt_probes=probes - self.tt[0],
            tt_hits=hits - self.tt[1],
            tt_cutoffs=cutoffs - self.tt[2],
            seconds=time.monotonic() - started,
            complete=complete,
            solved=solved,
        )
