"""Paranoid search for N players: every opponent minimises the root role's goal.

Sturtevant & Korf, *On pruning techniques for multi-player games*, AAAI 2000,
https://cdn.aaai.org/AAAI/2000/AAAI00-031.pdf. Assuming the other players form one
coalition against the root role turns an N-player game into a two-player zero-sum one,
so alpha-beta's pruning applies (best case about ``b^(d(n-1)/n)`` nodes); the price is
pessimism: real opponents pursue their own goals (max^n models that,
:mod:`ggp.search.classic.maxn`).

The sequential view already makes every player other than the root role a MIN player
(:mod:`ggp.search.classic.sequential`), and consecutive MIN plies pass their window
through unchanged, so paranoid search is PVS over that tree scored by the root role's
own goal (the ``own`` utility); in a two-player game it is the same search as
:class:`~ggp.search.classic.pvs.PVS`.
"""

from __future__ import annotations

from ggp.game import Game
from ggp.gdl.terms import Const
from ggp.search.classic.alphabeta import DEFAULT_ASPIRATION
from ggp.search.classic.pvs import PVS
from ggp.search.evaluator import Evaluator

__all__ = ["Paranoid"]


class Paranoid(PVS):
    """Paranoid PVS with a transposition table, history ordering and aspiration windows.

    Example:
        >>> from ggp.game import Game
        >>> game = Game.from_file("games/tictactoe.gdl")
        >>> Paranoid(game, "xplayer").search_depth(game.initial_state(), 9, None).value
        50.0
    """

    name = "paranoid"

    def __init__(
        self,
        game: Game,
        role: Const | str,
        evaluator: Evaluator | None = None,
        *,
        use_tt: bool = True,
        use_history: bool = True,
        aspiration: float | None = DEFAULT_ASPIRATION,
        tt_size: int = 500_000,
        batch_leaves: bool = True,
    ) -> None:
        super().__init__(
            game,
            role,
            evaluator,
            utility="own",
            use_tt=use_tt,
            use_history=use_history,
            aspiration=aspiration,
            tt_size=tt_size,
            batch_leaves=batch_leaves,
        )
