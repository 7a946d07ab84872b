"""max^n: every player maximises its own component of the value vector.

Luckhart & Irani, *An algorithmic solution of N-person games*, AAAI 1986,
https://cdn.aaai.org/AAAI/1986/AAAI86-025.pdf. Leaves give a vector of every role's
value (goals, or the evaluator's ``[R]`` values); at a decision node the picking player
takes the child that maximises its own component. Over the sequential view
(:mod:`ggp.search.classic.sequential`) that is max^n over the players' own moves: in a
simultaneous step the players pick in turn (the root role first, then the others in
role order), each seeing the earlier picks, and the state advances after the last. Chance
nodes take the mean vector over ``random``'s uniform moves.

As REFERENCE-SEARCH.md §1.6 advises for GDL, whose goal sums are often not constant,
there is no shallow or deep pruning; only *immediate* pruning: a player that reaches the
highest goal (100) stops looking (an opponent only when the root role gets 0 there, so
that the tie rule below cannot pick another child). Ties between children equal in the mover's own
component go to the one worse for the root role (pessimistic, a fixed rule so that
results do not depend on move order). A transposition table keeps exact vectors per
(node, depth) and best moves for ordering.
"""

from __future__ import annotations

from ggp.game import Game
from ggp.gdl.terms import Const
from ggp.reasoning.state_machine import State
from ggp.search.classic.engine import TreeSearch
from ggp.search.classic.ordering import HistoryTable, order_moves
from ggp.search.classic.results import DepthOutcome
from ggp.search.classic.sequential import Node, NodeKind
from ggp.search.evaluator import Evaluator

__all__ = ["MaxN", "MAX_GOAL"]

#: The highest goal value in GDL.
MAX_GOAL = 100.0

Vector = tuple[float, ...]


class MaxN(TreeSearch):
    """max^n with immediate pruning (see the module docstring).

    Args:
        game: The rules.
        role: The searching (root) role.
        evaluator: Values states at the horizon.
        use_tt: Keep exact vectors and best moves by node key.
        use_history: Order moves by the history heuristic.
        tt_size: Entries kept before the table is emptied.
        batch_leaves: Value a node's successors in one batch above the horizon.

    Example:
        >>> from ggp.game import Game
        >>> game = Game.from_file("games/tictactoe.gdl")
        >>> MaxN(game, "xplayer").search_depth(game.initial_state(), 9, None).value
        50.0
    """

    name = "maxn"

    def __init__(
        self,
        game: Game,
        role: Const | str,
        evaluator: Evaluator | None = None,
        *,
        use_tt: bool = True,
        use_history: bool = True,
        tt_size: int = 500_000,
        batch_leaves: bool = True,
    ) -> None:
        super().__init__(game, role, evaluator, batch_leaves=batch_leaves)
        self.use_tt = use_tt
        self.tt_size = tt_size
        # key -> (depth, vector, best move, subtree met the horizon)
        self._table: dict[int, tuple[int, Vector, int | None, bool]] = {}
        self.history: HistoryTable | None = HistoryTable() if use_history else None
        self.tt_probes = 0
        self.tt_hits = 0

    def search_depth(self, state: State, depth: int, guess: float | None) -> DepthOutcome:
        root = self.check_root(state)
        horizon = self.horizon
        self._root_best = None
        vector = self.search(root, depth, 0)
        return DepthOutcome(
            value=vector[self.me],
            move=self.root_move(root, self._root_best),
            passes=1,
            solved=self.horizon == horizon,
        )

    def new_move(self) -> None:
        if self.history is not None:
            self.history.age()

    def tt_counters(self) -> tuple[int, int, int]:
        return self.tt_probes, self.tt_hits, self.tt_hits

    def child_vector(self, child: Node, depth: int, ply: int) -> Vector:
        info = child[0]
        if info.terminal or depth == 0:
            self.tick()
            if not info.terminal:
                self.leaves += 1
                self.horizon += 1
            return self.leaf_values(info)
        return self.search(child, depth, ply + 1)

    def search(self, node: Node, depth: int, ply: int) -> Vector:
        """The max^n vector ``[R]`` of ``node`` with ``depth`` >= 1 steps left."""
        self.tick()
        view = self.view
        kind = view.kind(node)
        if kind == NodeKind.TERMINAL:
            return self.leaf_values(node[0])
        if depth == 1 and not node[1]:
            self.prefetch_children(node)
        if kind == NodeKind.FORCED:
            child, _ = view.child(node, 0)
            return self.child_vector(child, depth - 1, ply)
        key = 0
        tt_move: int | None = None
        if self.use_tt:
            key = view.node_key(node)
            self.tt_probes += 1
            entry = self._table.get(key)
            if entry is not None:
                tt_move = entry[2]
                if entry[0] == depth and ply > 0:
                    self.tt_hits += 1
                    if entry[3]:
                        self.horizon += 1
                    return entry[1]
        horizon = self.horizon
        moves = view.moves(node)
        best: Vector | None = None
        best_move: int | None = None
        if kind == NodeKind.CHANCE:
            total = [0.0] * view.num_roles
            for i in range(len(moves)):
                child, advanced = view.child(node, i)
                for r, v in enumerate(self.child_vector(child, depth - advanced, ply)):
                    total[r] += v
            best = tuple(t / len(moves) for t in total)
        else:
            chooser = view.chooser(node)
            me = self.me
            for i in order_moves(chooser, moves, tt_move, self.history):
                child, advanced = view.child(node, i)
                vector = self.child_vector(child, depth - advanced, ply)
                if (
                    best is None
                    or vector[chooser] > best[chooser]
                    or (vector[chooser] == best[chooser] and vector[me] < best[me])
                ):
                    best, best_move = vector, i
                    if ply == 0:
                        self._root_best = i
                if vector[chooser] >= MAX_GOAL and (chooser == me or vector[me] <= 0.0):
                    break  # immediate pruning (where no tie can break otherwise)
            if best_move is not None and self.history is not None:
                self.history.reward(chooser, moves[best_move], depth)
        assert best is not None
        if self.use_tt:
            if len(self._table) >= self.tt_size:
                self._table.clear()
            self._table[key] = (depth, best, best_move, self.horizon != horizon)
        return best
