"""CFR+ over observation-keyed game trees: known game-theoretic values."""

from __future__ import annotations

import numpy as np
import pytest

from ggp.errors import GameError
from ggp.game import Game
from ggp.search.cfr import CFRSolver, expected_values, exploitability
from ggp.search.sampler import SampledHistory
from ggp.search.tree import GameTree, build_tree, choosable_moves

from conftest import GAMES, HIDDEN_LEGAL_KIF

KUHN_GOAL_PER_CHIP = 25.0  # games/kuhn_poker.gdl: goal = 50 + 25 * chips


@pytest.fixture(scope="module")
def kuhn() -> Game:
    return Game.from_file(GAMES / "kuhn_poker.gdl")


def policy_of(solver: CFRSolver, role: str, moves: tuple[str, ...]) -> list[np.ndarray]:
    tree = solver.tree
    r = tree.game.role_index(role)
    return [
        solver.policy(i)
        for i in range(tree.num_infosets)
        if tree.infoset_role[i] == r and tuple(map(str, tree.infoset_moves[i])) == moves
    ]


def test_kuhn_value_and_exploitability(kuhn: Game) -> None:
    tree = build_tree(kuhn)
    assert tree.num_infosets == 12  # 3 cards x (p1 first, p1 facing a bet, p2 x 2)
    solver = CFRSolver(tree)
    solver.iterate(100)
    at_100 = exploitability(tree, solver.average_strategy()).exploitability / KUHN_GOAL_PER_CHIP
    solver.iterate(900)
    result = exploitability(tree, solver.average_strategy())
    p1 = kuhn.role_index("p1")
    value_chips = (result.values[p1] - 50.0) / KUHN_GOAL_PER_CHIP
    assert value_chips == pytest.approx(-1 / 18, abs=0.005)
    at_1000 = result.exploitability / KUHN_GOAL_PER_CHIP
    assert at_1000 <= 1e-3
    # OpenSpiel's CFR+ (REFERENCE.md): 1.2e-3 at 100 and 8.7e-5 at 1000 iterations.
    assert at_100 <= 2 * 1.2e-3
    assert at_1000 <= 2 * 8.7e-5


def test_scissors_paper_rock_equilibrium() -> None:
    game = Game.from_file(GAMES / "scissors_paper_rock.gdl")
    tree = build_tree(game)
    solver = CFRSolver(tree)
    solver.iterate(1000)
    for role in game.player_roles:
        (policy,) = policy_of(solver, role.name, ("paper", "rock", "scissors"))
        np.testing.assert_allclose(policy, [0.4, 0.4, 0.2], atol=0.02)
    values = expected_values(tree, solver.average_strategy())
    np.testing.assert_allclose(values, [50.0, 50.0], atol=1.0)


def test_monty_hall_always_switches() -> None:
    game = Game.from_file(GAMES / "montyhall.gdl")
    tree = build_tree(game)
    solver = CFRSolver(tree)
    solver.iterate(500)
    values = expected_values(tree, solver.average_strategy())
    assert values[game.role_index("candidate")] == pytest.approx(200 / 3, abs=0.1)
    # Every reachable decision "switch or stay" switches: the candidate's information set
    # is its observation history (its door, the opened door), never the car's position.
    sigma = solver.average_strategy()
    reach = sigma[tree.edge_sa[tree.node_path]].prod(axis=(1, 2))
    candidate = game.role_index("candidate")
    switch_probabilities = []
    for e in range(len(tree.edge_parent)):
        sa = tree.edge_sa[e, candidate]
        if sa == tree.num_actions or str(tree.edge_joint[e][candidate]) != "switch":
            continue
        if reach[tree.edge_parent[e]] > 1e-3:  # (a door never chosen: any policy is fine)
            switch_probabilities.append(sigma[sa])
    assert switch_probabilities and min(switch_probabilities) >= 0.99


def test_information_sets_ignore_hidden_state() -> None:
    game = Game.from_file(GAMES / "montyhall.gdl")
    tree = build_tree(game)
    candidate = game.role_index("candidate")
    decision_infosets = [
        i
        for i in range(tree.num_infosets)
        if tree.infoset_role[i] == candidate
        and tuple(map(str, tree.infoset_moves[i])) == ("noop", "switch")
    ]
    # 3 doors chosen x 2 doors that can be opened: 6 information sets, each holding the
    # states with the car behind the chosen door and behind the other closed door.
    assert len(decision_infosets) == 6
    per_infoset = np.bincount(
        tree.sa_infoset[
            tree.edge_sa[:-1, candidate][tree.edge_sa[:-1, candidate] < tree.num_actions]
        ]
    )
    assert all(per_infoset[i] == 2 * 2 for i in decision_infosets)  # 2 nodes x 2 moves


def test_dcfr_also_converges(kuhn: Game) -> None:
    tree = build_tree(kuhn)
    solver = CFRSolver(tree, "dcfr")
    solver.iterate(1000)
    assert exploitability(tree, solver.average_strategy()).exploitability / 25 < 1e-3


def test_against_open_spiel(kuhn: Game) -> None:
    pyspiel = pytest.importorskip("pyspiel", reason="open_spiel is an optional dependency")
    game = pyspiel.load_game("kuhn_poker")
    theirs = pyspiel.CFRPlusSolver(game)
    tree = build_tree(kuhn)
    ours = CFRSolver(tree)
    for iterations in (100, 1000):
        for _ in range(iterations - ours.iterations):
            theirs.evaluate_and_update_policy()
        ours.iterate(iterations - ours.iterations)
        their_value = pyspiel.exploitability(game, theirs.average_policy())
        our_value = exploitability(tree, ours.average_strategy()).exploitability / 25
        assert our_value <= 2 * their_value, (iterations, our_value, their_value)


def _with_uniform(tree_sigma: np.ndarray, solver: CFRSolver, role: int) -> np.ndarray:
    """``sigma`` with ``role`` playing uniformly at random."""
    tree = solver.tree
    sigma = tree_sigma.copy()
    for i in range(tree.num_infosets):
        if tree.infoset_role[i] == role:
            lo, hi = tree.infoset_offset[i], tree.infoset_offset[i + 1]
            sigma[lo:hi] = 1.0 / (hi - lo)
    return sigma


def test_restricted_nash_response_trades_safety_for_exploitation() -> None:
    # Scissors-paper-rock where scissors wins double; p2 is modelled as uniformly random.
    game = Game.from_file(GAMES / "scissors_paper_rock.gdl")
    tree = build_tree(game)
    p1, p2 = (game.role_index(r) for r in game.player_roles)
    uniform = 1.0 / np.diff(tree.infoset_offset)[tree.sa_infoset]
    vs_model, worst_case = [], []
    for weight in (0.0, 0.5, 1.0):
        solver = CFRSolver(tree)
        solver.restrict([p2], uniform, weight)
        solver.iterate(2000)
        sigma = solver.average_strategy()
        vs_model.append(expected_values(tree, _with_uniform(sigma, solver, p2))[p1])
        # Constant-sum (100): p1's worst case is 100 minus p2's best response.
        worst_case.append(100.0 - exploitability(tree, sigma).best_response_values[p2])
        if weight == 0.0:
            (policy,) = policy_of(solver, game.player_roles[0].name, ("paper", "rock", "scissors"))
            np.testing.assert_allclose(policy, [0.4, 0.4, 0.2], atol=0.02)
    # The best response to uniform play: the most valuable move against it, every time.
    best_vs_uniform = max(
        expected_values(tree, _with_uniform(_pure(tree, p1, k), solver, p2))[p1] for k in range(3)
    )
    assert vs_model[0] < vs_model[1] < vs_model[2]
    assert vs_model[2] == pytest.approx(best_vs_uniform, abs=0.5)
    assert worst_case[0] == pytest.approx(50.0, abs=0.5)  # the equilibrium is safe
    assert worst_case[0] > worst_case[1] > worst_case[2]


def _pure(tree: GameTree, role: int, k: int) -> np.ndarray:
    """A profile where ``role`` plays its k-th move (the others: anything, overwritten)."""
    sigma = np.ones(tree.num_actions + 1)
    for i in range(tree.num_infosets):
        if tree.infoset_role[i] == role:
            lo, hi = tree.infoset_offset[i], tree.infoset_offset[i + 1]
            sigma[lo:hi] = 0.0
            sigma[lo + k] = 1.0
    return sigma


def test_restrict_refuses_bad_arguments() -> None:
    tree = build_tree(Game.from_file(GAMES / "scissors_paper_rock.gdl"))
    solver = CFRSolver(tree)
    with pytest.raises(ValueError, match="model has shape"):
        solver.restrict([1], np.zeros(tree.num_actions + 5), 0.5)
    with pytest.raises(ValueError, match=r"weight must be in 0\.\.1"):
        solver.restrict([1], np.zeros(tree.num_actions), 1.5)


# --------------------------------------------------------------------------- hidden legal moves


def coin_roots(game: Game, coins: list[int]) -> list[tuple[SampledHistory, float]]:
    """The player's histories after chance hid each of ``coins``, equally weighted."""
    start = game.initial_state()
    roots = []
    for coin in coins:
        joint = game.joint_move(["noop", f"(hide {coin})"])
        roots.append((SampledHistory((start, game.next_state(start, joint)), (joint,)), 1.0))
    return [(h, 1.0 / len(coins)) for h, _ in roots]


def test_choosable_moves_are_those_legal_at_every_root() -> None:
    game = Game.from_text(HIDDEN_LEGAL_KIF)
    roots = coin_roots(game, [0, 1, 2])
    # Without them the player's legal moves split its information set at the root.
    with pytest.raises(GameError, match="player is in 2 information sets at the root"):
        build_tree(game, roots).root_infoset("player")
    kept, moves = choosable_moves(game, roots, "player")
    assert kept == roots and list(map(str, moves)) == ["safe", "wait"]
    tree = build_tree(game, kept, root_moves={"player": moves})
    infoset = tree.root_infoset("player")
    assert infoset is not None and tree.infoset_moves[infoset] == moves
    solver = CFRSolver(tree)
    solver.iterate(50)
    assert solver.policy(infoset)[0] == pytest.approx(1.0, abs=0.01)  # safe (50) > wait (25)
    # Where the moves agree, nothing changes.
    kept, moves = choosable_moves(game, coin_roots(game, [1, 2]), "player")
    assert list(map(str, moves)) == ["bold", "right", "safe", "wait"]


def test_choosable_moves_without_a_common_move_keep_the_likeliest_roots() -> None:
    text = HIDDEN_LEGAL_KIF.replace("(<= (legal player safe) (true (step 1)))", "")
    game = Game.from_text(text.replace("(<= (legal player wait) (true (step 1)))", ""))
    roots = coin_roots(game, [0, 1, 2])
    kept, moves = choosable_moves(game, roots, "player")
    assert list(map(str, moves)) == ["bold", "right"]  # legal on coins 1 and 2: 2/3
    assert [h.state for h, _ in kept] == [h.state for h, _ in roots[1:]]
    assert [w for _, w in kept] == pytest.approx([0.5, 0.5])
    with pytest.raises(GameError, match="none of the moves it may choose"):
        build_tree(game, roots, root_moves={"player": moves})
