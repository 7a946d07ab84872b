"""Plain minimax: every node, no pruning, no table, the rules' move order.

The reference the tests and benchmarks hold the other searches to: on the same tree
(the sequential view of :mod:`ggp.search.classic.sequential`, the same leaf values and
chance rounding) every exact variant returns the same root value at every depth
(REFERENCE-SEARCH.md §1.5), and visits at most as many nodes. Von Neumann & Morgenstern,
*Theory of Games and Economic Behavior* (1944); written in negamax form as
:class:`~ggp.search.classic.alphabeta.AlphaBeta`, whose tree code it reuses.
"""

from __future__ import annotations

from ggp.game import Game
from ggp.gdl.terms import Const
from ggp.search.classic.alphabeta import AlphaBeta
from ggp.search.classic.engine import Utility
from ggp.search.classic.sequential import Node
from ggp.search.classic.tt import INFINITY
from ggp.search.evaluator import Evaluator

__all__ = ["Minimax"]


class Minimax(AlphaBeta):
    """Minimax without pruning (see the module docstring).

    Example:
        >>> from ggp.game import Game
        >>> game = Game.from_file("games/tictactoe.gdl")
        >>> search = Minimax(game, "xplayer")
        >>> search.search_depth(game.initial_state(), 2, None).value, search.nodes
        (65.0, 82)
    """

    name = "minimax"

    def __init__(
        self,
        game: Game,
        role: Const | str,
        evaluator: Evaluator | None = None,
        *,
        utility: Utility = "own",
        batch_leaves: bool = True,
    ) -> None:
        super().__init__(
            game,
            role,
            evaluator,
            utility=utility,
            use_tt=False,
            use_history=False,
            aspiration=None,
            batch_leaves=batch_leaves,
        )

    def decision(self, node: Node, depth: int, alpha: int, beta: int, ply: int) -> int:
        view = self.view
        side = self.side(node)
        self.prefetch_if_last(node, depth)
        best = -INFINITY
        for i in range(len(view.moves(node))):
            child, advanced = view.child(node, i)
            value = self.child_value(side, child, depth - advanced, -INFINITY, INFINITY, ply)
            if value > best:
                best = value
                if ply == 0:
                    self._root_best = i
        return best
