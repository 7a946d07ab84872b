"""Solving a small game outright: CFR over the whole tree from the initial state.

Used by ``ggp solve``. The result carries each role's policy at its first information
sets (described by the role's observations), the game value under the average strategy
and its exact exploitability, by best response over the whole tree.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from ggp.game import Game
from ggp.search.cfr import Algorithm, CFRSolver, exploitability
from ggp.search.tree import build_tree

__all__ = ["InfosetPolicy", "SolveResult", "solve"]


@dataclass(frozen=True)
class InfosetPolicy:
    """A role's policy at one information set.

    Attributes:
        role: The role.
        observations: ``[steps]`` what the role saw before deciding: its own move and its
            percepts (sorted KIF) at each step.
        moves: ``[M]`` its legal moves there.
        probabilities: ``[M]`` the average strategy.
    """

    role: str
    observations: tuple[tuple[str, tuple[str, ...]], ...]
    moves: tuple[str, ...]
    probabilities: tuple[float, ...]


@dataclass(frozen=True)
class SolveResult:
    """What :func:`solve` found.

    Attributes:
        roles: ``[R]`` role names.
        nodes: Nodes of the full game tree.
        infosets: Information sets in it.
        iterations: CFR iterations run.
        values: ``[R]`` each role's expected goal under the average strategy.
        best_response_values: ``[R]`` each role's expected goal when it best-responds.
        nash_conv: The sum of the deciding roles' gains from best-responding.
        exploitability: ``nash_conv`` / deciding roles (NashConv/2 for two players).
        policies: Each role's policy at its shallowest information sets (up to
            ``show`` per role), in tree order.
        seconds: Time spent (building and solving).
    """

    roles: tuple[str, ...]
    nodes: int
    infosets: int
    iterations: int
    values: tuple[float, ...]
    best_response_values: tuple[float, ...]
    nash_conv: float
    exploitability: float
    policies: tuple[InfosetPolicy, ...]
    seconds: float


def solve(
    game: Game,
    iterations: int = 1000,
    *,
    algorithm: Algorithm = "cfr+",
    max_nodes: int = 2_000_000,
    show: int = 6,
) -> SolveResult:
    """Run CFR on the whole game tree from the initial state.

    Raises:
        GameError: The tree exceeds ``max_nodes`` (the game is too large to solve whole).
    """
    started = time.monotonic()
    tree = build_tree(game, max_nodes=max_nodes)
    solver = CFRSolver(tree, algorithm)
    solver.iterate(iterations)
    sigma = solver.average_strategy()
    result = exploitability(tree, sigma)
    # Each infoset's depth: the depth of any of its nodes.
    depth_of: dict[int, int] = {}
    for e in range(len(tree.edge_parent)):
        for r in range(tree.roles):
            sa = int(tree.edge_sa[e, r])
            if sa < tree.num_actions:
                depth_of.setdefault(
                    int(tree.sa_infoset[sa]), int(tree.node_depth[tree.edge_parent[e]])
                )
    policies: list[InfosetPolicy] = []
    for r, role in enumerate(game.roles):
        mine = sorted(
            (i for i in range(tree.num_infosets) if tree.infoset_role[i] == r),
            key=lambda i: (depth_of[i], i),
        )
        if not mine:
            continue
        shallowest = depth_of[mine[0]]
        for i in [i for i in mine if depth_of[i] == shallowest][:show]:
            key = next(k for k, v in tree.infoset_index.items() if v == i)
            steps = tree.observations.steps(key[1])
            policies.append(
                InfosetPolicy(
                    role.name,
                    tuple((str(m), tuple(sorted(map(str, p)))) for m, p in steps),
                    tuple(map(str, tree.infoset_moves[i])),
                    tuple(float(x) for x in solver.policy(i)),
                )
            )
    return SolveResult(
        roles=tuple(r.name for r in game.roles),
        nodes=len(tree.node_state),
        infosets=tree.num_infosets,
        iterations=solver.iterations,
        values=tuple(float(v) for v in result.values),
        best_response_values=tuple(float(v) for v in result.best_response_values),
        nash_conv=result.nash_conv,
        exploitability=result.exploitability,
        policies=tuple(policies),
        seconds=time.monotonic() - started,
    )
