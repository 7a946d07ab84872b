"""Negamax alpha-beta, fail-soft, with a transposition table, move ordering and
aspiration windows.

Knuth & Moore, *An analysis of alpha-beta pruning*, Artificial Intelligence 6 (1975),
https://doi.org/10.1016/0004-3702(75)90019-3; the negamax form and fail-soft returns as
in REFERENCE-SEARCH.md §1.1 (the corrected listing), aspiration windows as in §1.2.

Over the sequential view of a GDL game (:mod:`ggp.search.classic.sequential`) there are
two sides: the root role (MAX) and every other player (MIN, the paranoid coalition when
there are more than two). A node's value is the root role's score (an integer, see
:func:`~ggp.search.classic.engine.utility_score`) from the point of view of the side
that picks there, so a child's value is negated when the side changes and passed through
when it does not (several opponents in a row, forced steps). Chance nodes (``random``)
are the exact expectation over their uniform moves, each child searched with a full
window (no Star1/Star2 pruning), rounded to an integer score; they are scored from the
root role's side.

A search returns the best value seen, which may lie outside ``(alpha, beta)``
(fail-soft): ``v <= alpha`` means the true value is ``<= v``, ``v >= beta`` that it is
``>= v``. Fail-soft bounds tighten the transposition table's entries
(:mod:`ggp.search.classic.tt`), which PVS and MTD(f) build on.
"""

from __future__ import annotations

from ggp.game import Game
from ggp.gdl.terms import Const
from ggp.reasoning.state_machine import State
from ggp.search.classic.engine import SCALE, TreeSearch, Utility
from ggp.search.classic.ordering import HistoryTable, order_moves
from ggp.search.classic.results import DepthOutcome
from ggp.search.classic.sequential import Node, NodeKind
from ggp.search.classic.tt import INFINITY, TranspositionTable
from ggp.search.evaluator import Evaluator

__all__ = ["AlphaBeta", "DEFAULT_ASPIRATION"]

#: Half-width of the aspiration window, in goal points.
DEFAULT_ASPIRATION = 5.0


class AlphaBeta(TreeSearch):
    """Fail-soft negamax alpha-beta (see the module docstring).

    Args:
        game: The rules.
        role: The searching (root) role.
        evaluator: Values states at the horizon.
        utility: How leaves are scored for the root role.
        use_tt: Keep a transposition table (bounds and best moves, by Zobrist key).
        use_history: Order moves by the history heuristic (after the TT move).
        aspiration: Half-width of the aspiration window around the guess, in goal
            points; None searches every depth with a full window.
        tt_size: Entries the table holds before it is emptied.
        batch_leaves: Value a node's successors in one batch above the horizon.

    Example:
        >>> from ggp.game import Game
        >>> game = Game.from_file("games/tictactoe.gdl")
        >>> search = AlphaBeta(game, "xplayer")
        >>> outcome = search.search_depth(game.initial_state(), 9, None)
        >>> outcome.value, outcome.solved
        (50.0, True)
    """

    name = "alphabeta"

    def __init__(
        self,
        game: Game,
        role: Const | str,
        evaluator: Evaluator | None = None,
        *,
        utility: Utility = "own",
        use_tt: bool = True,
        use_history: bool = True,
        aspiration: float | None = DEFAULT_ASPIRATION,
        tt_size: int = 500_000,
        batch_leaves: bool = True,
    ) -> None:
        super().__init__(game, role, evaluator, utility=utility, batch_leaves=batch_leaves)
        self.tt: TranspositionTable | None = TranspositionTable(tt_size) if use_tt else None
        self.history: HistoryTable | None = HistoryTable() if use_history else None
        self.aspiration = aspiration

    # ----------------------------------------------------------------- root

    def search_depth(self, state: State, depth: int, guess: float | None) -> DepthOutcome:
        root = self.check_root(state)
        side = self.side(root)
        horizon = self.horizon
        if self.aspiration is None or guess is None:
            value = self.root_search(root, depth, -INFINITY, INFINITY)
            passes = 1
        else:
            value, passes = self._aspiration(root, depth, side * round(SCALE * guess))
        return DepthOutcome(
            value=side * value / SCALE,
            move=self.root_move(root, self._root_best),
            passes=passes,
            solved=self.horizon == horizon,
        )

    def _aspiration(self, root: Node, depth: int, guess: int) -> tuple[int, int]:
        """Search a window around ``guess``; after a fail low at ``v`` re-search
        ``(-inf, v]``, after a fail high ``[v, inf)`` (REFERENCE-SEARCH.md §1.2)."""
        delta = max(1, round(SCALE * (self.aspiration or 0.0)))
        alpha, beta = guess - delta, guess + delta
        value = self.root_search(root, depth, alpha, beta)
        if value <= alpha:
            return self.root_search(root, depth, -INFINITY, value + 1), 2
        if value >= beta:
            return self.root_search(root, depth, value - 1, INFINITY), 2
        return value, 1

    def root_search(self, root: Node, depth: int, alpha: int, beta: int) -> int:
        """One search of the root with window ``(alpha, beta)``; the best root move is
        left in ``_root_best``."""
        self._root_best = None
        return self.search(root, depth, alpha, beta, 0)

    def new_move(self) -> None:
        if self.history is not None:
            self.history.age()

    def tt_counters(self) -> tuple[int, int, int]:
        tt = self.tt
        return (tt.probes, tt.hits, tt.cutoffs) if tt is not None else (0, 0, 0)

    # ----------------------------------------------------------------- tree

    def side(self, node: Node) -> int:
        """+1 where the root role's side picks (and at chance, forced and terminal
        nodes), -1 where an opponent picks."""
        view = self.view
        if view.kind(node) != NodeKind.DECISION:
            return 1
        return 1 if view.chooser(node) == self.me else -1

    def child_value(
        self, side: int, child: Node, depth: int, alpha: int, beta: int, ply: int
    ) -> int:
        """The value of ``child`` from the point of view of ``side`` (the parent's)."""
        info = child[0]
        if info.terminal or depth == 0:
            self.tick()
            if not info.terminal:
                self.leaves += 1
                self.horizon += 1
            return side * self.score(self.leaf_values(info))
        if self.side(child) == side:
            return self.search(child, depth, alpha, beta, ply + 1)
        return -self.search(child, depth, -beta, -alpha, ply + 1)

    def search(self, node: Node, depth: int, alpha: int, beta: int, ply: int) -> int:
        """The fail-soft value of ``node`` (``depth`` >= 1 steps left) for its side."""
        self.tick()
        kind = self.view.kind(node)
        if kind == NodeKind.TERMINAL:
            return self.score(self.leaf_values(node[0]))
        if kind == NodeKind.FORCED:
            child, _ = self.view.child(node, 0)
            self.prefetch_if_last(node, depth)
            return self.child_value(1, child, depth - 1, alpha, beta, ply)
        if kind == NodeKind.CHANCE:
            return self.chance(node, depth, ply)
        return self.decision(node, depth, alpha, beta, ply)

    def prefetch_if_last(self, node: Node, depth: int) -> None:
        """Value the successors in one batch when they lie at the horizon."""
        if depth == 1 and not node[1]:
            self.prefetch_children(node)

    def chance(self, node: Node, depth: int, ply: int) -> int:
        """The exact expected score (root role's side) over ``random``'s moves."""
        view = self.view
        tt = self.tt
        key = 0
        if tt is not None:
            key = view.node_key(node)
            entry = tt.probe(key)
            if entry is not None and entry.depth == depth and entry.lower == entry.upper:
                tt.hits += 1
                tt.cutoffs += 1
                if entry.heuristic:
                    self.horizon += 1
                return entry.lower
        horizon = self.horizon
        self.prefetch_if_last(node, depth)
        count = len(view.moves(node))
        total = 0
        for i in range(count):
            child, advanced = view.child(node, i)
            total += self.child_value(1, child, depth - advanced, -INFINITY, INFINITY, ply)
        value = (2 * total + count) // (2 * count)  # rounded to the nearest score
        if tt is not None:
            tt.store(key, depth, value, -INFINITY, INFINITY, None, self.horizon != horizon)
        return value

    def probe(
        self, node: Node, depth: int, alpha: int, beta: int, ply: int
    ) -> tuple[int | None, int, int, int | None, int]:
        """Look ``node`` up in the table.

        Returns:
            ``(answer, alpha, beta, tt_move, key)``: a value that answers the search
            (None if it must search), the window narrowed by the stored bounds, the
            stored best move and the node's key. The root (ply 0) takes only the move.
        """
        tt = self.tt
        if tt is None:
            return None, alpha, beta, None, 0
        key = self.view.node_key(node)
        entry = tt.probe(key)
        if entry is None:
            return None, alpha, beta, None, key
        if entry.depth != depth or ply == 0:
            return None, alpha, beta, entry.move, key
        tt.hits += 1
        lower, upper = entry.lower, entry.upper
        answer: int | None = None
        if lower >= beta or lower == upper:
            answer = lower
        elif upper <= alpha:
            answer = upper
        if answer is not None:
            tt.cutoffs += 1
            if entry.heuristic:
                self.horizon += 1
            return answer, alpha, beta, entry.move, key
        return None, max(alpha, lower), min(beta, upper), entry.move, key

    def decision(self, node: Node, depth: int, alpha: int, beta: int, ply: int) -> int:
        """A player's pick: fail-soft alpha-beta over its ordered moves."""
        answer, alpha, beta, tt_move, key = self.probe(node, depth, alpha, beta, ply)
        if answer is not None:
            return answer
        view = self.view
        side = self.side(node)
        chooser = view.chooser(node)
        moves = view.moves(node)
        self.prefetch_if_last(node, depth)
        horizon = self.horizon
        best = -INFINITY
        best_move: int | None = None
        bound = alpha
        for i in order_moves(chooser, moves, tt_move, self.history):
            child, advanced = view.child(node, i)
            value = self.child_value(side, child, depth - advanced, bound, beta, ply)
            if value > best:
                best, best_move = value, i
                if value > bound:
                    bound = value
                    if ply == 0:
                        self._root_best = i
                    if bound >= beta:
                        break
        self.finish(node, key, depth, best, best_move, alpha, beta, horizon)
        return best

    def finish(
        self,
        node: Node,
        key: int,
        depth: int,
        best: int,
        best_move: int | None,
        alpha: int,
        beta: int,
        horizon: int,
    ) -> None:
        """Store the result in the table and reward the best move's history."""
        good = best > alpha  # a cutoff or an exact value: the best move means something
        if good and best_move is not None and self.history is not None:
            chooser = self.view.chooser(node)
            self.history.reward(chooser, self.view.moves(node)[best_move], depth)
        if self.tt is not None:
            self.tt.store(
                key,
                depth,
                best,
                alpha,
                beta,
                best_move if good else None,
                self.horizon != horizon,
            )
