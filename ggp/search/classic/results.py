"""What the classic searches report: frozen results, one per depth and one per move."""

from __future__ import annotations

from dataclasses import dataclass

from ggp.gdl.terms import Term

__all__ = ["DepthOutcome", "IterationReport", "SearchResult"]


@dataclass(frozen=True)
class DepthOutcome:
    """The result of one fixed-depth search of the root.

    Attributes:
        value: The root value for the root role, in goal points (0..100 for the ``own``
            utility; a margin -100..100 for ``margin``).
        move: The root role's best move.
        passes: Searches of the root it took (1; more for aspiration re-searches and
            MTD(f)'s null-window passes).
        solved: No leaf at the horizon was valued heuristically: ``value`` is the game's
            value (under the search's sequentialisation of simultaneous moves).
    """

    value: float
    move: Term
    passes: int
    solved: bool


@dataclass(frozen=True)
class IterationReport:
    """One iteration of iterative deepening.

    Attributes:
        depth: The depth searched, in steps.
        value: The root value (goal points), None if the iteration did not finish.
        move: The best move found (from the finished root moves if it did not finish;
            None if not even one was better than the window's lower end).
        nodes: Nodes visited (sub-ply nodes and leaves included).
        leaves: Leaves at the horizon valued by the evaluator.
        evaluations: States sent to the evaluator (batches include siblings that a
            cutoff later made unnecessary).
        passes: Searches of the root (see :class:`DepthOutcome`).
        researches: PVS re-searches after a null-window test failed high.
        tt_probes: Transposition-table look-ups.
        tt_hits: Look-ups that found an entry of the same depth.
        tt_cutoffs: Hits that answered without a search.
        seconds: Wall time.
        complete: Whether it finished before the deadline.
        solved: See :attr:`DepthOutcome.solved`.
    """

    depth: int
    value: float | None
    move: Term | None
    nodes: int
    leaves: int
    evaluations: int
    passes: int
    researches: int
    tt_probes: int
    tt_hits: int
    tt_cutoffs: int
    seconds: float
    complete: bool
    solved: bool

    @property
    def tt_hit_rate(self) -> float:
        return self.tt_hits / self.tt_probes if self.tt_probes else 0.0


@dataclass(frozen=True)
class SearchResult:
    """What one move's search found.

    Attributes:
        move: The move to play (always one of the root role's legal moves).
        value: The root value in goal points from the deepest finished iteration (MCTS:
            the root role's mean outcome), None if none finished.
        depth: The deepest finished depth (0: none; the move is then from a partial
            iteration or the first legal move). MCTS: the deepest tree node, in steps.
        solved: The value is the game's value (see :attr:`DepthOutcome.solved`).
        nodes: Nodes visited in all (MCTS: tree nodes traversed).
        seconds: Wall time.
        reports: ``[iterations]`` one per iteration of iterative deepening (empty for
            MCTS).
        simulations: MCTS simulations (0 for the depth-first searches).
    """

    move: Term
    value: float | None
    depth: int
    solved: bool
    nodes: int
    seconds: float
    reports: tuple[IterationReport, ...] = ()
    simulations: int = 0
