"""A depth-limited game tree in flat arrays, with information sets keyed by observations.

The tree is rooted at one or more weighted states (the initial state for a full solve, or
histories sampled consistently with a player's observations for search during play). At
each node every role moves at once; ``random`` is chance, uniform over its legal moves.
A role's information set at a node is its *observation history* there — its own moves and
its percepts, step by step, exactly what a GDL-II game manager tells it — together with
its legal moves. Never the hidden state: nodes a role cannot tell apart share one
information set, so a strategy cannot depend on what the role has not seen (the
published system keyed information sets by the sampled state and so switched only 2/3 of
the time in Monty Hall). No role sees another's move of the same step.

Shapes: N nodes, E edges (joint moves), Z leaves, D the maximum depth, R roles, I
information sets, A information-set actions (the sum of the information sets' move
counts). Index ``A`` in any ``*_sa`` array means "no decision" (probability 1).
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ggp.errors import GameError, TreeSizeError
from ggp.game import Game
from ggp.gdl.terms import Const, Term
from ggp.reasoning.state_machine import JointMove, State
from ggp.search import clock
from ggp.search.clock import OutOfTime
from ggp.search.consistency import SampledHistory
from ggp.search.evaluator import Evaluator

__all__ = [
    "GameTree",
    "ObservationIndex",
    "build_tree",
    "choosable_moves",
    "InfosetKey",
    "OutOfTime",
]


IntArray = npt.NDArray[np.int64]
FloatArray = npt.NDArray[np.float64]

#: Leaves are sent to the evaluator in batches, the deadline checked between them: the
#: first of this many leaves, the next sized to take about _EVALUATE_SECONDS each (a
#: network's batch of thousands as fast as a rollout evaluator's few), at most
#: _EVALUATE_MOST.
_EVALUATE_FIRST = 32
_EVALUATE_SECONDS = 0.05
_EVALUATE_MOST = 8192

#: (role index, observation-history id, legal moves)
InfosetKey = tuple[int, int, tuple[Term, ...]]


class ObservationIndex:
    """Interns observation histories as small ints: id 0 is the empty history."""

    def __init__(self) -> None:
        self._ids: dict[tuple[int, Term, frozenset[Term]], int] = {}
        self._steps: list[tuple[int, Term, frozenset[Term]]] = []  # id - 1 -> its key

    def extend(self, parent: int, move: Term, percepts: frozenset[Term]) -> int:
        """The id of history ``parent`` followed by one step (own move, percepts)."""
        key = (parent, move, percepts)
        found = self._ids.get(key)
        if found is None:
            found = len(self._ids) + 1
            self._ids[key] = found
            self._steps.append(key)
        return found

    def find(self, moves: Sequence[Term], percepts: Sequence[frozenset[Term]]) -> int | None:
        """The id of the history of these steps (own move, percepts), oldest first, or
        None if no tree sharing this index has reached it (nothing is added)."""
        obs = 0
        for move, seen in zip(moves, percepts, strict=True):
            found = self._ids.get((obs, move, seen))
            if found is None:
                return None
            obs = found
        return obs

    def steps(self, obs: int) -> tuple[tuple[Term, frozenset[Term]], ...]:
        """The (own move, percepts) steps of observation history ``obs``, oldest first."""
        steps: list[tuple[Term, frozenset[Term]]] = []
        while obs:
            parent, move, percepts = self._steps[obs - 1]
            steps.append((move, percepts))
            obs = parent
        return tuple(reversed(steps))

    def of_history(
        self, game: Game, states: Sequence[State], joints: Sequence[JointMove], role: int
    ) -> int:
        """The id of ``role``'s observation history along a full history."""
        obs = 0
        name = game.roles[role]
        for state, joint in zip(states, joints, strict=False):
            obs = self.extend(obs, joint[role], game.percepts(state, joint, name))
        return obs


@dataclass
class GameTree:
    """The arrays of a built tree (see the module docstring for the shapes)."""

    game: Game
    observations: ObservationIndex
    roles: int  # R
    node_state: list[State]  # [N]
    node_depth: IntArray  # [N]
    node_obs: IntArray  # [N, R] observation-history id of each role
    root_nodes: IntArray  # [K]
    root_weight: FloatArray  # [K] sums to 1
    node_root: IntArray  # [N] index (into root_nodes) of each node's root
    edge_parent: IntArray  # [E]
    edge_child: IntArray  # [E]
    edge_joint: list[JointMove]  # [E]
    edge_sa: IntArray  # [E + 1, R] infoset-action index per role (A: no decision)
    edge_chance: FloatArray  # [E + 1] probability of the chance role's move (1 if none)
    level_edges: list[tuple[int, int]]  # per parent depth: the [start, end) range of edges
    leaf_node: IntArray  # [Z]
    leaf_values: FloatArray  # [Z, R] goals (0..100), from the rules or the evaluator
    leaf_terminal: npt.NDArray[np.bool_]  # [Z]
    leaf_path: IntArray  # [Z, D] edges from the root, padded with E
    node_path: IntArray  # [N, D] edges from the root, padded with E
    infoset_role: IntArray  # [I]
    infoset_offset: IntArray  # [I + 1] first infoset-action index of each infoset
    infoset_moves: list[tuple[Term, ...]]  # [I]
    sa_infoset: IntArray  # [A]
    infoset_index: dict[InfosetKey, int] = field(repr=False)

    @property
    def num_actions(self) -> int:
        """A, the number of infoset actions."""
        return int(self.infoset_offset[-1])

    @property
    def num_infosets(self) -> int:
        return len(self.infoset_role)

    def infoset_of(self, role: Const | str, obs: int, moves: tuple[Term, ...]) -> int | None:
        """The information set of ``role`` with observation id ``obs`` and legal ``moves``."""
        return self.infoset_index.get((self.game.role_index(role), obs, moves))

    def root_infoset(self, role: Const | str) -> int | None:
        """``role``'s information set at the root (None if it has no choice there)."""
        r = self.game.role_index(role)
        found = {
            int(self.edge_sa[e, r])
            for e in range(len(self.edge_parent))
            if self.node_depth[self.edge_parent[e]] == 0
        }
        found.discard(self.num_actions)
        if not found:
            return None
        infosets = {int(self.sa_infoset[sa]) for sa in found}
        if len(infosets) != 1:
            raise GameError(f"{role} is in {len(infosets)} information sets at the root")
        return infosets.pop()


def choosable_moves(
    game: Game, roots: Sequence[tuple[SampledHistory, float]], role: Const | str
) -> tuple[list[tuple[SampledHistory, float]], tuple[Term, ...]]:
    """The moves ``role`` can choose among at ``roots``, and the roots to search.

    GDL-II does not promise that a role knows its legal moves. In Blind Breakthrough a
    pawn may step forward only onto an empty cell, and its owner does not see every
    piece, so the role's legal moves differ between the histories it cannot tell apart,
    which would split its information set at the root. A move is safe when it is legal
    at every root (every sampled one: the roots should be many enough to include the
    unlikely histories): those are returned, with every root. If no move is legal at every
    root, the roots of the most probable set of legal moves are kept, with that set
    (their weights renormalised). In a well-formed game this returns ``roots`` and the
    role's legal moves unchanged. Pass the moves on as ``build_tree(root_moves=...)``.

    Raises:
        GameError: ``roots`` is empty, or ``role`` has no legal move at some root.
    """
    if not roots:
        raise GameError("no roots to choose moves at")
    legal = [game.legal_moves(history.state, role) for history, _ in roots]
    groups: dict[tuple[Term, ...], float] = {}
    for moves, (_, weight) in zip(legal, roots, strict=True):
        if not moves:
            raise GameError(f"{role} has no legal move at a root")
        groups[moves] = groups.get(moves, 0.0) + weight
    if len(groups) == 1:
        return list(roots), next(iter(groups))
    common = set.intersection(*(set(moves) for moves in groups))
    if common:
        first = next(iter(groups))
        return list(roots), tuple(m for m in first if m in common)
    likely = max(groups, key=lambda moves: groups[moves])
    kept = [root for root, moves in zip(roots, legal, strict=True) if moves == likely]
    total = sum(w for _, w in kept)
    return [(h, w / total) for h, w in kept], likely


def build_tree(
    game: Game,
    roots: Sequence[tuple[SampledHistory, float]] | None = None,
    *,
    depth: int | None = None,
    evaluator: Evaluator | None = None,
    max_nodes: int = 2_000_000,
    observations: ObservationIndex | None = None,
    deadline: float | None = None,
    root_moves: Mapping[Const | str, Sequence[Term]] | None = None,
) -> GameTree:
    """Expand the game from weighted roots, breadth first, to ``depth`` steps.

    Args:
        game: The rules.
        roots: Full histories with their weights (None: the initial state, weight 1).
        depth: Steps to expand below the roots (None: to the end of the game).
        evaluator: Values non-terminal leaves at the depth limit (required if any).
        max_nodes: Refuse (TreeSizeError) to build a larger tree.
        observations: Observation-id table to share between trees (a fresh one if None).
        deadline: A ``time.monotonic()`` value: stop with :class:`OutOfTime` after it.
        root_moves: For some roles, the moves they may choose at the roots (the others
            are left out there); see :func:`choosable_moves`.

    Raises:
        TreeSizeError: The tree would exceed ``max_nodes``.
        GameError: A non-terminal leaf needs an evaluator and none was given, a role has
            none of its ``root_moves`` legal at a root, or no legal move in a reachable
            state.
    """
    roles = len(game.roles)
    allowed = {
        game.role_index(role): frozenset(moves) for role, moves in (root_moves or {}).items()
    }
    chance = game.role_index(game.random_role) if game.random_role is not None else -1
    obs_index = observations if observations is not None else ObservationIndex()
    if roots is None:
        roots = [(SampledHistory((game.initial_state(),), ()), 1.0)]

    node_state: list[State] = []
    node_depth: list[int] = []
    node_obs: list[tuple[int, ...]] = []
    node_parent_edge: list[int] = []
    node_root: list[int] = []
    root_nodes: list[int] = []
    root_weight: list[float] = []
    merged: dict[tuple[State, tuple[int, ...]], int] = {}
    for history, weight in roots:
        obs = tuple(
            obs_index.of_history(game, history.states, history.joint_moves, r) for r in range(roles)
        )
        root_key = (history.state, obs)
        if root_key in merged:
            root_weight[merged[root_key]] += weight
            continue
        merged[root_key] = len(root_nodes)
        root_nodes.append(len(node_state))
        root_weight.append(weight)
        node_state.append(history.state)
        node_depth.append(0)
        node_obs.append(obs)
        node_parent_edge.append(-1)
        node_root.append(len(root_nodes) - 1)

    infoset_index: dict[InfosetKey, int] = {}
    infoset_role: list[int] = []
    infoset_moves: list[tuple[Term, ...]] = []
    offsets: list[int] = [0]
    edge_parent: list[int] = []
    edge_child: list[int] = []
    edge_joint: list[JointMove] = []
    edge_sa_rows: list[tuple[int, ...]] = []
    edge_chance: list[float] = []
    level_edges: list[tuple[int, int]] = []
    leaves: list[int] = []
    leaf_terminal: list[bool] = []
    pending_leaves: list[int] = []  # non-terminal leaves at the depth limit

    NO = -1  # placeholder for "no decision", replaced by A once A is known
    frontier = list(range(len(node_state)))
    level = 0
    while frontier:
        start = len(edge_parent)
        next_frontier: list[int] = []
        for node in frontier:
            if clock.passed(deadline):
                raise OutOfTime(f"tree building stopped at depth {level}")
            state = node_state[node]
            if game.is_terminal(state):
                leaves.append(node)
                leaf_terminal.append(True)
                continue
            if depth is not None and level >= depth:
                leaves.append(node)
                leaf_terminal.append(False)
                pending_leaves.append(node)
                continue
            legal = [game.legal_moves(state, role) for role in game.roles]
            if level == 0 and allowed:
                for r, choosable in allowed.items():
                    legal[r] = tuple(m for m in legal[r] if m in choosable)
                    if not legal[r]:
                        raise GameError(
                            f"{game.roles[r]} has none of the moves it may choose at a root"
                        )
            sa_base: list[int] = []
            for r, moves in enumerate(legal):
                if not moves:
                    raise GameError(f"{game.roles[r]} has no legal move in a reachable state")
                if r == chance or len(moves) == 1:
                    sa_base.append(NO)
                    continue
                key = (r, node_obs[node][r], moves)
                infoset = infoset_index.get(key)
                if infoset is None:
                    infoset = len(infoset_role)
                    infoset_index[key] = infoset
                    infoset_role.append(r)
                    infoset_moves.append(moves)
                    offsets.append(offsets[-1] + len(moves))
                sa_base.append(offsets[infoset])
            chance_p = 1.0 / len(legal[chance]) if chance >= 0 else 1.0
            choices = list(itertools.product(*(range(len(m)) for m in legal)))
            joints = [tuple(legal[r][c] for r, c in enumerate(choice)) for choice in choices]
            child_states = game.next_states(state, joints)
            for choice, joint, child_state in zip(choices, joints, child_states, strict=True):
                child_obs = tuple(
                    obs_index.extend(
                        node_obs[node][r], joint[r], game.percepts(state, joint, game.roles[r])
                    )
                    for r in range(roles)
                )
                child = len(node_state)
                if child >= max_nodes:
                    raise TreeSizeError(
                        f"the game tree exceeds {max_nodes} nodes at depth {level + 1}: "
                        "search less deep"
                    )
                node_state.append(child_state)
                node_depth.append(level + 1)
                node_obs.append(child_obs)
                node_parent_edge.append(len(edge_parent))
                node_root.append(node_root[node])
                edge_parent.append(node)
                edge_child.append(child)
                edge_joint.append(joint)
                edge_sa_rows.append(
                    tuple(
                        NO if base == NO else base + c
                        for base, c in zip(sa_base, choice, strict=True)
                    )
                )
                edge_chance.append(chance_p)
                next_frontier.append(child)
        level_edges.append((start, len(edge_parent)))
        frontier = next_frontier
        level += 1

    num_actions = offsets[-1]
    num_edges = len(edge_parent)
    edge_sa = np.full((num_edges + 1, roles), num_actions, dtype=np.int64)
    if num_edges:
        rows = np.array(edge_sa_rows, dtype=np.int64)
        edge_sa[:num_edges] = np.where(rows == NO, num_actions, rows)
    chance_arr = np.ones(num_edges + 1, dtype=np.float64)
    chance_arr[:num_edges] = edge_chance

    values = np.zeros((len(leaves), roles), dtype=np.float64)
    for i, (node, terminal) in enumerate(zip(leaves, leaf_terminal, strict=True)):
        if terminal:
            values[i] = game.goals(node_state[node])
    if pending_leaves:
        if evaluator is None:
            raise GameError(
                "the tree has non-terminal leaves at the depth limit: give an evaluator"
            )
        where = {node: i for i, node in enumerate(leaves)}
        start, size = 0, _EVALUATE_FIRST
        while start < len(pending_leaves):
            if clock.passed(deadline):
                raise OutOfTime(f"no time left to evaluate {len(pending_leaves)} leaves")
            batch = pending_leaves[start : start + size]
            began = time.monotonic()
            estimate = evaluator.evaluate(game, [node_state[n] for n in batch], deadline)
            if clock.passed(deadline):  # stopped at the deadline: partial values
                raise OutOfTime(f"no time left to evaluate {len(pending_leaves)} leaves")
            for j, node in enumerate(batch):
                values[where[node]] = estimate.values[j]
            start += len(batch)
            per_leaf = max(time.monotonic() - began, 1e-9) / len(batch)
            size = int(min(max(_EVALUATE_SECONDS / per_leaf, _EVALUATE_FIRST), _EVALUATE_MOST))

    max_depth = max(node_depth) if node_depth else 0
    node_path = np.full((len(node_state), max(max_depth, 1)), num_edges, dtype=np.int64)
    for node in range(len(node_state)):
        edge = node_parent_edge[node]
        d = node_depth[node]
        while edge >= 0:
            d -= 1
            node_path[node, d] = edge
            edge = node_parent_edge[edge_parent[edge]]
    sa_infoset = np.repeat(np.arange(len(infoset_role)), np.diff(offsets)).astype(np.int64)
    weights = np.array(root_weight, dtype=np.float64)
    leaf_arr = np.array(leaves, dtype=np.int64)
    return GameTree(
        game=game,
        observations=obs_index,
        roles=roles,
        node_state=node_state,
        node_depth=np.array(node_depth, dtype=np.int64),
        node_obs=np.array(node_obs, dtype=np.int64).reshape(len(node_state), roles),
        root_nodes=np.array(root_nodes, dtype=np.int64),
        root_weight=weights / weights.sum(),
        node_root=np.array(node_root, dtype=np.int64),
        edge_parent=np.array(edge_parent, dtype=np.int64),
        edge_child=np.array(edge_child, dtype=np.int64),
        edge_joint=edge_joint,
        edge_sa=edge_sa,
        edge_chance=chance_arr,
        level_edges=level_edges,
        leaf_node=leaf_arr,
        leaf_values=values,
        leaf_terminal=np.array(leaf_terminal, dtype=bool),
        leaf_path=node_path[leaf_arr],
        node_path=node_path,
        infoset_role=np.array(infoset_role, dtype=np.int64),
        infoset_offset=np.array(offsets, dtype=np.int64),
        infoset_moves=infoset_moves,
        sa_infoset=sa_infoset,
        infoset_index=infoset_index,
    )
