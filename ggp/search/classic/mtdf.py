"""MTD(f): a sequence of null-window alpha-beta searches with memory.

Plaat, Schaeffer, Pijls & de Bruin, *Best-first fixed-depth minimax algorithms*,
Artificial Intelligence 87 (1996), https://arxiv.org/abs/1404.1515; as in
REFERENCE-SEARCH.md §1.4::

    g = f; lower = -inf; upper = +inf
    while lower < upper:
        beta = max(g, lower + 1)
        g = alphabeta_with_memory(root, beta - 1, beta, d)
        if g < beta: upper = g else: lower = g

Each pass is :class:`~ggp.search.classic.alphabeta.AlphaBeta`'s fail-soft search with
its transposition table, which stores the bounds every pass leaves (MTD(f) needs the
table; it is always on). The first guess ``f`` is the value of the iteration two depths
earlier when there is one (odd and even depths keep separate guesses, as leaf values of
turn-taking games swing with the side to move), else the previous one, else 50 goal
points. The best move is the one that made the root fail high in the last pass that
did: it reached the final lower bound, which is the value.
"""

from __future__ import annotations

from ggp.game import Game
from ggp.gdl.terms import Const
from ggp.reasoning.state_machine import State
from ggp.search.classic.alphabeta import AlphaBeta
from ggp.search.classic.engine import SCALE, Utility
from ggp.search.classic.results import DepthOutcome
from ggp.search.classic.tt import INFINITY
from ggp.search.evaluator import Evaluator

__all__ = ["MTDF", "MAX_PASSES"]

#: A safety net: more passes than this means the scores are not on an integer grid.
MAX_PASSES = 10_000


class MTDF(AlphaBeta):
    """MTD(f) (see the module docstring).

    Args:
        game: The rules.
        role: The searching (root) role.
        evaluator: Values states at the horizon.
        utility: How leaves are scored for the root role.
        use_history: Order moves by the history heuristic (after the TT move).
        tt_size: Entries the table holds before it is emptied.
        batch_leaves: Value a node's successors in one batch above the horizon.

    Example:
        >>> from ggp.game import Game
        >>> game = Game.from_file("games/tictactoe.gdl")
        >>> outcome = MTDF(game, "xplayer").search_depth(game.initial_state(), 9, 50.0)
        >>> outcome.value, outcome.passes
        (50.0, 2)
    """

    name = "mtdf"

    def __init__(
        self,
        game: Game,
        role: Const | str,
        evaluator: Evaluator | None = None,
        *,
        utility: Utility = "own",
        use_history: bool = True,
        tt_size: int = 500_000,
        batch_leaves: bool = True,
    ) -> None:
        super().__init__(
            game,
            role,
            evaluator,
            utility=utility,
            use_tt=True,
            use_history=use_history,
            aspiration=None,
            tt_size=tt_size,
            batch_leaves=batch_leaves,
        )

    def search_depth(self, state: State, depth: int, guess: float | None) -> DepthOutcome:
        root = self.check_root(state)
        side = self.side(root)
        horizon = self.horizon
        g = side * round(SCALE * (50.0 if guess is None else guess))
        lower, upper = -INFINITY, INFINITY
        passes = 0
        best: int | None = None
        while lower < upper:
            if passes >= MAX_PASSES:
                raise RuntimeError(f"MTD(f) did not converge in {MAX_PASSES} passes")
            beta = max(g, lower + 1)
            g = self.root_search(root, depth, beta - 1, beta)
            passes += 1
            if g < beta:
                upper = g
            else:
                lower = g
                best = self._root_best
        self._root_best = best
        return DepthOutcome(
            value=side * g / SCALE,
            move=self.root_move(root, best),
            passes=passes,
            solved=self.horizon == horizon,
        )
