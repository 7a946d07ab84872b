"""Classic game-tree search over any perfect-information GDL game, through :class:`Game`.

One module per job:

- :mod:`~ggp.search.classic.sequential`: the game as a tree with one mover per node
  (sub-plies for simultaneous moves, chance nodes for ``random``, forced steps);
- :mod:`~ggp.search.classic.heuristics`: generic evaluations at the depth limit (the
  :class:`~ggp.search.evaluator.Evaluator` seam; the network plugs in from outside);
- :mod:`~ggp.search.classic.engine`: what the depth-first searches share (leaf values,
  clock, counters);
- :mod:`~ggp.search.classic.minimax`: plain minimax, the reference;
- :mod:`~ggp.search.classic.alphabeta`: fail-soft negamax alpha-beta with aspiration;
- :mod:`~ggp.search.classic.pvs`: NegaScout / PVS;
- :mod:`~ggp.search.classic.mtdf`: MTD(f);
- :mod:`~ggp.search.classic.tt`: the transposition table storing bounds;
- :mod:`~ggp.search.classic.ordering`: TT move and history heuristic;
- :mod:`~ggp.search.classic.paranoid` and :mod:`~ggp.search.classic.maxn`: N players;
- :mod:`~ggp.search.classic.mcts`: UCT Monte Carlo tree search, the GGP baseline;
- :mod:`~ggp.search.classic.dropped`: tables a search lets go of, freed a slice at a time;
- :mod:`~ggp.search.classic.deepening`: iterative deepening under a move clock;
- :mod:`~ggp.search.classic.results`: the frozen results.

The players built on them are in :mod:`ggp.players.classic_player`.
"""

from ggp.search.classic.alphabeta import AlphaBeta
from ggp.search.classic.deepening import iterative_deepening
from ggp.search.classic.engine import SearchTimeout, TreeSearch, Utility
from ggp.search.classic.heuristics import GoalEvaluator, HeuristicEvaluator, TerminalOnlyEvaluator
from ggp.search.classic.maxn import MaxN
from ggp.search.classic.mcts import MCTS, MCTSSettings
from ggp.search.classic.minimax import Minimax
from ggp.search.classic.mtdf import MTDF
from ggp.search.classic.paranoid import Paranoid
from ggp.search.classic.pvs import PVS
from ggp.search.classic.results import DepthOutcome, IterationReport, SearchResult
from ggp.search.classic.sequential import NodeKind, SequentialGame
from ggp.search.classic.tt import TranspositionTable

__all__ = [
    "AlphaBeta",
    "DepthOutcome",
    "GoalEvaluator",
    "HeuristicEvaluator",
    "IterationReport",
    "MCTS",
    "MCTSSettings",
    "MTDF",
    "MaxN",
    "Minimax",
    "NodeKind",
    "PVS",
    "Paranoid",
    "SearchResult",
    "SearchTimeout",
    "SequentialGame",
    "TerminalOnlyEvaluator",
    "TranspositionTable",
    "TreeSearch",
    "Utility",
    "iterative_deepening",
]
