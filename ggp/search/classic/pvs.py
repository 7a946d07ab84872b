"""NegaScout / principal variation search.

Reinefeld, *An improvement to the Scout tree-search algorithm*, ICCA Journal 6(4)
(1983), https://doi.org/10.3233/ICG-1983-6402; Marsland & Campbell, *Parallel search of
strongly ordered game trees*, ACM Computing Surveys 14(4) (1982). As in
REFERENCE-SEARCH.md §1.3: the first child gets the full window; every later child is
first tested with the null window ``(alpha, alpha + 1)``, and re-searched only when the
test returns ``alpha < v < beta``, with the window ``(v, beta)`` (valid with fail-soft:
``v`` is a lower bound). Scores are integers, so the null window is exact.

Everything else (sides, chance nodes, the table, ordering, aspiration) is
:class:`~ggp.search.classic.alphabeta.AlphaBeta`'s.
"""

from __future__ import annotations

from ggp.search.classic.alphabeta import AlphaBeta
from ggp.search.classic.ordering import order_moves
from ggp.search.classic.sequential import Node
from ggp.search.classic.tt import INFINITY

__all__ = ["PVS"]


class PVS(AlphaBeta):
    """Principal variation search (see the module docstring; arguments as
    :class:`~ggp.search.classic.alphabeta.AlphaBeta`).

    Example:
        >>> from ggp.game import Game
        >>> game = Game.from_file("games/tictactoe.gdl")
        >>> PVS(game, "oplayer").search_depth(game.initial_state(), 9, None).value
        50.0
    """

    name = "pvs"

    def decision(self, node: Node, depth: int, alpha: int, beta: int, ply: int) -> int:
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
            remaining = depth - advanced
            if best_move is None:
                value = self.child_value(side, child, remaining, bound, beta, ply)
            else:
                value = self.child_value(side, child, remaining, bound, bound + 1, ply)
                if bound < value < beta:
                    self.researches += 1
                    value = self.child_value(side, child, remaining, value, beta, ply)
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
