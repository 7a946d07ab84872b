"""Counterfactual regret minimisation over a :class:`~ggp.search.tree.GameTree`.

CFR+ (Tammelin 2014, https://arxiv.org/abs/1407.5042: regret matching+, alternating
updates, linearly weighted averages) and discounted CFR (Brown & Sandholm 2019,
https://arxiv.org/abs/1809.04040), vectorised with numpy over the tree's leaf paths: one
iteration is a fixed number of array operations, whatever the tree's depth. Used on a
tree that stops at a depth limit, with leaves valued by an evaluator, this is the
depth-limited CFR (CFR-D) of the published player; on a full tree it solves the game.

Values are goals (0..100) throughout.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import numpy as np
import numpy.typing as npt

from ggp.search.tree import GameTree

__all__ = ["CFRSolver", "Algorithm", "Exploitability", "exploitability", "expected_values"]

FloatArray = npt.NDArray[np.float64]
Algorithm = Literal["cfr+", "dcfr"]


class CFRSolver:
    """Regret minimisation on a fixed tree.

    Args:
        tree: The tree to solve.
        algorithm: ``"cfr+"`` (regret matching+, linear averaging) or ``"dcfr"``
            (discounted CFR with alpha=1.5, beta=0, gamma=2).
    """

    def __init__(self, tree: GameTree, algorithm: Algorithm = "cfr+") -> None:
        self.tree = tree
        self.algorithm = algorithm
        a = tree.num_actions
        self.regret = np.zeros(a, dtype=np.float64)
        self.strategy_sum = np.zeros(a, dtype=np.float64)
        self.iterations = 0
        self._decision_roles = sorted({int(r) for r in tree.infoset_role})
        self._sa_role = tree.infoset_role[tree.sa_infoset] if a else np.zeros(0, np.int64)
        self._sizes = np.diff(tree.infoset_offset)
        # Leaves: chance probability (root weight times the chance moves on the path).
        z_root = tree.node_root[tree.leaf_node]
        self._leaf_chance = tree.root_weight[z_root] * np.prod(
            tree.edge_chance[tree.leaf_path], axis=1
        )
        self._leaf_sa = tree.edge_sa[tree.leaf_path]  # [Z, D, R]
        # Decision points (node, role) for the average strategy: reach of that role.
        self._node_sa = tree.edge_sa[tree.node_path]  # [N, D, R]
        # Restricted Nash response: moves whose strategy mixes in a fixed model.
        self._model_mask = np.zeros(a, dtype=bool)
        self._model = np.zeros(a, dtype=np.float64)
        self._model_weight = 0.0

    def restrict(self, roles: Iterable[int], model: FloatArray, weight: float) -> None:
        """Make ``roles`` play ``model`` with probability ``weight`` at each of their sets.

        The restricted Nash response (Johanson, Zinkevich & Bowling 2007,
        https://papers.nips.cc/paper/3157): the other roles' regrets learn only the rest
        of their strategy, so the remaining roles learn to exploit the model where it is
        weak while staying safe where it is not (``weight`` 0: plain CFR, an
        equilibrium; 1: a best response to the model). Here the mixture is per
        information set, which is the same thing on a tree one decision deep.

        Args:
            roles: The modelled roles (indices).
            model: ``[A]`` a strategy (each information set's entries sum to 1).
            weight: 0..1.

        Raises:
            ValueError: ``model`` has the wrong shape or ``weight`` is outside 0..1.
        """
        tree = self.tree
        if model.shape != (tree.num_actions,):
            raise ValueError(
                f"model has shape {model.shape}, the tree has {tree.num_actions} actions"
            )
        if not 0.0 <= weight <= 1.0:
            raise ValueError(f"weight must be in 0..1, not {weight}")
        self._model_mask = np.isin(self._sa_role, list(roles))
        self._model = np.asarray(model, dtype=np.float64)
        self._model_weight = float(weight)

    # ------------------------------------------------------------------ policies

    def current_strategy(self) -> FloatArray:
        """``[A + 1]`` regret-matching strategy (the last entry is 1: 'no decision').

        Modelled roles (:meth:`restrict`) play their mixture with the model.
        """
        return self._mix(self._match(self.regret))

    def _mix(self, free: FloatArray) -> FloatArray:
        if self._model_weight == 0.0:
            return free
        mixed = free.copy()
        w, mask = self._model_weight, self._model_mask
        mixed[:-1][mask] = w * self._model[mask] + (1.0 - w) * free[:-1][mask]
        return mixed

    def average_strategy(self) -> FloatArray:
        """``[A + 1]`` the average strategy, the one that converges to equilibrium."""
        if self.iterations == 0:
            return self._match(np.zeros_like(self.strategy_sum))
        return self._normalise(self.strategy_sum)

    def policy(self, infoset: int, average: bool = True) -> FloatArray:
        """``[moves]`` probabilities of the moves of one information set."""
        sigma = self.average_strategy() if average else self.current_strategy()
        lo, hi = self.tree.infoset_offset[infoset], self.tree.infoset_offset[infoset + 1]
        return sigma[lo:hi]

    def _match(self, regret: FloatArray) -> FloatArray:
        return self._normalise(np.maximum(regret, 0.0))

    def _normalise(self, weights: FloatArray) -> FloatArray:
        tree = self.tree
        a = tree.num_actions
        sigma = np.ones(a + 1, dtype=np.float64)
        if a == 0:
            return sigma
        totals = np.bincount(tree.sa_infoset, weights=weights, minlength=tree.num_infosets)
        per_action = totals[tree.sa_infoset]
        uniform = 1.0 / self._sizes[tree.sa_infoset]
        positive = per_action > 0
        sigma[:a] = np.where(positive, weights / np.where(positive, per_action, 1.0), uniform)
        return sigma

    # ------------------------------------------------------------------ iterations

    def iterate(self, iterations: int = 1) -> None:
        """Run ``iterations`` iterations (each updates every role once, in turn)."""
        for _ in range(iterations):
            self.iterations += 1
            t = self.iterations
            for role in self._decision_roles:
                self._update(role, t)

    def _update(self, role: int, t: int) -> None:
        tree = self.tree
        free = self._match(self.regret)
        sigma = self._mix(free)
        probs = sigma[self._leaf_sa]  # [Z, D, R]
        reach = probs.prod(axis=1)  # [Z, R]
        others = self._leaf_chance * np.prod(np.delete(reach, role, axis=1), axis=1)  # [Z]
        own = probs[:, :, role]  # [Z, D]
        # suffix[z, d]: the role's own probability of the steps after d on the path to z.
        suffix = np.ones_like(own)
        if own.shape[1] > 1:
            suffix[:, :-1] = np.cumprod(own[:, :0:-1], axis=1)[:, ::-1]
        contribution = (others * tree.leaf_values[:, role])[:, None] * suffix
        a = tree.num_actions
        cfv = np.bincount(
            self._leaf_sa[:, :, role].ravel(), weights=contribution.ravel(), minlength=a + 1
        )[:a]
        mine = self._sa_role == role
        # Regrets are of the free part of a modelled role's strategy.
        infoset_value = np.bincount(
            tree.sa_infoset, weights=free[:a] * cfv, minlength=tree.num_infosets
        )
        instant = cfv - infoset_value[tree.sa_infoset]
        # Own reach of each decision node, summed per infoset, for the average strategy.
        node_reach = sigma[self._node_sa[:, :, role]].prod(axis=1)  # [N]
        if self.algorithm == "cfr+":
            self.regret[mine] = np.maximum(self.regret[mine] + instant[mine], 0.0)
            weight = float(t)
        else:  # discounted CFR: alpha = 1.5, beta = 0, gamma = 2
            r = self.regret[mine]
            scale = np.where(r > 0, t**1.5 / (t**1.5 + 1), 0.5)
            self.regret[mine] = r * scale + instant[mine]
            weight = float(t * t)
        reach_per_infoset = self._infoset_reach(node_reach, role)
        self.strategy_sum[mine] += (
            weight * reach_per_infoset[tree.sa_infoset[mine]] * sigma[:a][mine]
        )

    def _infoset_reach(self, node_reach: FloatArray, role: int) -> FloatArray:
        """``[I]`` the sum of the role's own reach over the nodes of each infoset."""
        tree = self.tree
        parents = tree.edge_parent
        sa = tree.edge_sa[:-1, role]
        has = sa < tree.num_actions
        # One entry per (node, infoset): take the first edge of each decision node.
        nodes, first = np.unique(parents[has], return_index=True)
        infosets = tree.sa_infoset[sa[has][first]]
        reach: FloatArray = np.bincount(
            infosets, weights=node_reach[nodes], minlength=tree.num_infosets
        ).astype(np.float64)
        return reach


def expected_values(tree: GameTree, sigma: FloatArray) -> FloatArray:
    """``[R]`` each role's expected goal when every role plays ``sigma``."""
    probs = sigma[tree.edge_sa[tree.leaf_path]].prod(axis=(1, 2))  # [Z]
    chance = tree.root_weight[tree.node_root[tree.leaf_node]] * np.prod(
        tree.edge_chance[tree.leaf_path], axis=1
    )
    values: FloatArray = (chance * probs) @ tree.leaf_values
    return values


@dataclass(frozen=True)
class Exploitability:
    """How much each role could gain by deviating from a strategy profile.

    Attributes:
        values: ``[R]`` each role's expected goal under the profile.
        best_response_values: ``[R]`` each role's expected goal when it best-responds.
        nash_conv: The sum of the gains.
        exploitability: ``nash_conv`` divided by the number of deciding roles.
    """

    values: FloatArray
    best_response_values: FloatArray
    nash_conv: float
    exploitability: float


def best_response_value(tree: GameTree, sigma: FloatArray, role: int) -> float:
    """The expected goal of ``role`` best-responding to ``sigma`` (the others fixed).

    The best response picks one move per information set of ``role``, maximising the
    counterfactual value summed over the set's nodes; information sets are decided from
    the deepest up, so deeper choices are already best when a shallower one is made.
    """
    a = tree.num_actions
    n = len(tree.node_state)
    value = np.zeros(n, dtype=np.float64)
    value[tree.leaf_node] = tree.leaf_values[:, role]
    # Reach of every node by chance and the other roles.
    node_probs = sigma[tree.edge_sa[tree.node_path]]  # [N, D, R]
    others = np.prod(np.delete(node_probs.prod(axis=1), role, axis=1), axis=1)
    others = others * np.prod(tree.edge_chance[tree.node_path], axis=1)
    others = others * tree.root_weight[tree.node_root]
    sa_all = tree.edge_sa[:-1, role]
    edge_other = tree.edge_chance[:-1] * np.prod(
        np.delete(sigma[tree.edge_sa[:-1]], role, axis=1), axis=1
    )
    for start, end in reversed(tree.level_edges):
        if start == end:
            continue
        parent = tree.edge_parent[start:end]
        child = tree.edge_child[start:end]
        sa = sa_all[start:end]
        contribution = edge_other[start:end] * value[child]
        decides = sa < a
        chosen = ~decides
        if decides.any():
            q = np.bincount(
                sa[decides], weights=others[parent[decides]] * contribution[decides], minlength=a
            )
            best = np.zeros(a + 1, dtype=bool)
            infosets = np.unique(tree.sa_infoset[sa[decides]])
            for infoset in infosets:
                lo, hi = tree.infoset_offset[infoset], tree.infoset_offset[infoset + 1]
                best[lo + int(np.argmax(q[lo:hi]))] = True
            chosen = chosen | best[sa]
        np.add.at(value, parent, np.where(chosen, contribution, 0.0))
    return float(tree.root_weight @ value[tree.root_nodes])


def exploitability(tree: GameTree, sigma: FloatArray) -> Exploitability:
    """NashConv and exploitability (NashConv / deciding roles) of ``sigma`` on a full tree."""
    values = expected_values(tree, sigma)
    roles = sorted({int(r) for r in tree.infoset_role})
    best = values.copy()
    for role in roles:
        best[role] = best_response_value(tree, sigma, role)
    nash_conv = float(sum(best[r] - values[r] for r in roles))
    return Exploitability(values, best, nash_conv, nash_conv / max(len(roles), 1))
