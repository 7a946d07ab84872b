"""CFR-D guided by the network: its policy initialises CFR, its values end the tree.

The search modules know nothing of networks; this module joins them from outside:

- :func:`infoset_priors` averages the network's policy over the nodes of each
  information set of a tree (weighted by the chance probability of reaching them),
- :func:`warm_start` sets a :class:`~ggp.search.cfr.CFRSolver`'s initial regrets
  proportional to those priors, so that CFR's first strategy is the network's and later
  iterations correct it (the weight says how many iterations' worth of regret the prior
  is worth),
- :func:`solve_subgame` deepens a tree from weighted roots within a node budget, values
  its leaves with the evaluator, and runs a fixed number of warm-started CFR+
  iterations: the search that self-play runs for every decision.

Shapes as in :mod:`ggp.search.tree`: N nodes, R roles, I information sets, A
information-set actions.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ggp.errors import TreeSizeError
from ggp.game import Game
from ggp.gdl.terms import Const, Term
from ggp.nn.net_evaluator import NetEvaluator
from ggp.search.cfr import CFRSolver
from ggp.search.evaluator import Evaluator
from ggp.search.sampler import SampledHistory
from ggp.search.tree import GameTree, ObservationIndex, build_tree

__all__ = ["infoset_priors", "warm_start", "SubgameSettings", "solve_subgame"]

FloatArray = npt.NDArray[np.float64]

#: Goal points between the worst and the best outcome.
GOAL_RANGE = 100.0


def _chance_reach(tree: GameTree) -> FloatArray:
    """``[N]`` root weight times the chance probabilities on the path to each node."""
    reach: FloatArray = tree.root_weight[tree.node_root] * np.prod(
        tree.edge_chance[tree.node_path], axis=1
    )
    return reach


def _infoset_nodes(tree: GameTree) -> list[npt.NDArray[np.int64]]:
    """``[I]`` the decision nodes of each information set."""
    a = tree.num_actions
    members: list[list[int]] = [[] for _ in range(tree.num_infosets)]
    sa = tree.edge_sa[:-1]
    for r in range(tree.roles):
        has = sa[:, r] < a
        if not has.any():
            continue
        pairs = np.unique(
            np.stack([tree.sa_infoset[sa[has, r]], tree.edge_parent[has]], axis=1), axis=0
        )
        for infoset, node in pairs.tolist():
            members[infoset].append(node)
    return [np.array(m, dtype=np.int64) for m in members]


def infoset_priors(tree: GameTree, evaluator: NetEvaluator) -> FloatArray:
    """``[A]`` the network's policy at each information set, chance-weighted over its nodes.

    Returns:
        For information set ``i`` the entries ``infoset_offset[i]:infoset_offset[i+1]``
        sum to 1.
    """
    a = tree.num_actions
    prior = np.zeros(a, dtype=np.float64)
    if a == 0:
        return prior
    nodes = _infoset_nodes(tree)
    decision_nodes = np.unique(np.concatenate([n for n in nodes if len(n)]))
    evaluator.predict([tree.node_state[n] for n in decision_nodes.tolist()])  # one batch
    reach = _chance_reach(tree)
    for infoset, members in enumerate(nodes):
        lo, hi = int(tree.infoset_offset[infoset]), int(tree.infoset_offset[infoset + 1])
        moves = tree.infoset_moves[infoset]
        role = int(tree.infoset_role[infoset])
        probs = evaluator.move_probabilities(
            [tree.node_state[n] for n in members.tolist()], role, moves
        )  # [k, M]
        weights = reach[members]
        total = float(weights.sum())
        mean = weights @ probs / total if total > 0 else probs.mean(axis=0)
        prior[lo:hi] = mean / mean.sum() if mean.sum() > 0 else 1.0 / (hi - lo)
    return prior


def warm_start(solver: CFRSolver, prior: FloatArray, weight: float) -> None:
    """Start ``solver`` (before its first iteration) from the strategy ``prior``.

    Each information set's regrets are set to ``weight * 100 * m * prior``, where ``m``
    is the set's counterfactual reach under the initial (uniform) strategy: the prior is
    worth ``weight`` iterations in which its moves gained the whole goal range.

    Args:
        solver: A solver that has not iterated yet.
        prior: ``[A]`` from :func:`infoset_priors`.
        weight: 0 leaves the solver as it is.

    Raises:
        ValueError: The solver has already iterated, or ``prior`` has the wrong shape.
    """
    tree = solver.tree
    if solver.iterations:
        raise ValueError("warm_start needs a solver that has not iterated yet")
    if prior.shape != (tree.num_actions,):
        raise ValueError(f"prior has shape {prior.shape}, the tree has {tree.num_actions} actions")
    if weight <= 0 or tree.num_actions == 0:
        return
    sigma = solver.current_strategy()
    probs = sigma[tree.edge_sa[tree.node_path]].prod(axis=1)  # [N, R]
    chance = _chance_reach(tree)
    mass = np.zeros(tree.num_infosets, dtype=np.float64)
    for infoset, members in enumerate(_infoset_nodes(tree)):
        role = int(tree.infoset_role[infoset])
        others = np.prod(np.delete(probs[members], role, axis=1), axis=1)
        mass[infoset] = float((chance[members] * others).sum())
    solver.regret[:] = weight * GOAL_RANGE * mass[tree.sa_infoset] * prior


@dataclass(frozen=True)
class SubgameSettings:
    """How :func:`solve_subgame` searches.

    Attributes:
        max_depth: Deepest tree, in steps below the roots.
        max_nodes: Node budget: no deeper tree is built once the next one would exceed it.
        iterations: CFR+ iterations on the deepest tree.
        prior_weight: :func:`warm_start` weight of the network's policy (0: none).
    """

    max_depth: int = 4
    max_nodes: int = 4000
    iterations: int = 100
    prior_weight: float = 1.0


def solve_subgame(
    game: Game,
    roots: Sequence[tuple[SampledHistory, float]],
    evaluator: NetEvaluator | Evaluator,
    settings: SubgameSettings,
    *,
    root_moves: Mapping[Const | str, Sequence[Term]] | None = None,
) -> tuple[GameTree, CFRSolver]:
    """Build the deepest tree within the budget from ``roots`` and solve it.

    Trees are deepened one step at a time; a deeper tree is skipped when the previous
    growth rate says it would exceed ``max_nodes``. ``root_moves`` goes to
    :func:`~ggp.search.tree.build_tree`.

    Raises:
        TreeSizeError: Not even a depth-1 tree fits in ``max_nodes``.
    """
    observations = ObservationIndex()
    tree: GameTree | None = None
    for depth in range(1, settings.max_depth + 1):
        if tree is not None:
            per_level = np.bincount(tree.node_depth)
            branching = per_level[-1] / max(per_level[-2], 1)
            if len(tree.node_state) + per_level[-1] * branching > settings.max_nodes:
                break
        try:
            candidate = build_tree(
                game,
                roots,
                depth=depth,
                evaluator=evaluator,
                max_nodes=settings.max_nodes if tree is not None else 50 * settings.max_nodes,
                observations=observations,
                root_moves=root_moves,
            )
        except TreeSizeError:
            if tree is None:
                raise
            break
        tree = candidate
        if bool(tree.leaf_terminal.all()):
            break
    assert tree is not None
    solver = CFRSolver(tree)
    if settings.prior_weight > 0 and isinstance(evaluator, NetEvaluator):
        warm_start(solver, infoset_priors(tree, evaluator), settings.prior_weight)
    solver.iterate(settings.iterations)
    return tree, solver
