"""The network: sizes from the game, shapes, masking, the evaluator seam, checkpoints."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.match import run_match
from ggp.nn.checkpoint import (
    Checkpoint,
    CheckpointMetadata,
    CheckpointMismatchError,
    load_checkpoint,
    load_network,
    save_checkpoint,
)
from ggp.nn.features import GameEncoding, game_digest
from ggp.nn.guided import SubgameSettings, infoset_priors, solve_subgame, warm_start
from ggp.nn.model import NetShape, PolicyValueNet, masked_log_softmax
from ggp.nn.net_evaluator import NetEvaluator, OpponentModel
from ggp.players.base import MatchInfo
from ggp.players.cfr_player import CFRSettings
from ggp.players.net_player import NetCFRPlayer
from ggp.players.random_player import RandomPlayer
from ggp.players.registry import make_player
from ggp.reasoning.state_machine import State
from ggp.search.cfr import CFRSolver, FloatArray
from ggp.search.history import ObservationHistory
from ggp.search.sampler import PosteriorSampler, SampledHistory
from ggp.search.tree import build_tree

from conftest import GAMES


@cache
def load(name: str) -> Game:
    return Game.from_file(GAMES / name)


def evaluator_for(name: str, seed: int = 0) -> NetEvaluator:
    game = load(name)
    encoding = GameEncoding(game)
    net = PolicyValueNet(NetShape.for_encoding(encoding), torch.Generator().manual_seed(seed))
    return NetEvaluator(net, encoding)


@pytest.mark.parametrize("name", sorted(p.name for p in GAMES.glob("*.gdl")))
def test_network_is_sized_from_every_game(name: str) -> None:
    game = load(name)
    encoding = GameEncoding(game)
    assert encoding.num_inputs == len(game.machine.propnet.base)  # type: ignore[attr-defined]
    assert len(encoding.policy_sizes) == len(game.player_roles)
    for head, role in enumerate(encoding.policy_roles):
        assert encoding.policy_sizes[head] == len(
            game.machine.all_moves(game.roles[role])  # type: ignore[attr-defined]
        )
    shape = NetShape.for_encoding(encoding)
    assert 64 <= shape.hidden <= 512
    net = PolicyValueNet(shape, torch.Generator().manual_seed(0))
    state = game.initial_state()
    out = net(torch.from_numpy(encoding.encode([state, state])))
    assert out.values.shape == (2, len(game.roles))
    assert bool(((out.values >= 0) & (out.values <= 1)).all())
    assert [tuple(p.shape) for p in out.policy_logits] == [(2, m) for m in shape.policy_sizes]


def test_weights_come_from_the_generator() -> None:
    shape = NetShape(inputs=4, hidden=8, blocks=1, roles=2, policy_sizes=(3,))
    a = PolicyValueNet(shape, torch.Generator().manual_seed(1)).state_dict()
    b = PolicyValueNet(shape, torch.Generator().manual_seed(1)).state_dict()
    c = PolicyValueNet(shape, torch.Generator().manual_seed(2)).state_dict()
    assert all(torch.equal(a[k], b[k]) for k in a)
    assert not all(torch.equal(a[k], c[k]) for k in a)


def test_masking_gives_illegal_moves_probability_zero() -> None:
    logits = torch.tensor([[5.0, 1.0, 0.0, -2.0], [0.0, 0.0, 0.0, 0.0]])
    mask = torch.tensor([[False, True, True, False], [False, False, False, False]])
    probs = masked_log_softmax(logits, mask).exp()
    assert probs[0, 0] == 0 and probs[0, 3] == 0
    assert float(probs[0].sum()) == pytest.approx(1.0)
    assert bool(torch.isfinite(masked_log_softmax(logits, mask)).all())


def test_legal_masks_and_policies_follow_the_rules() -> None:
    game = load("meier.gdl")
    evaluator = evaluator_for("meier.gdl")
    encoding = evaluator.encoding
    rng = np.random.default_rng(0)
    states = [game.initial_state()]
    state = states[0]
    while not game.is_terminal(state) and len(states) < 6:
        joint = [
            m[int(rng.integers(len(m)))] for m in (game.legal_moves(state, r) for r in game.roles)
        ]
        state = game.next_state(state, joint)
        states.append(state)
    states = [s for s in states if not game.is_terminal(s)]
    masks = encoding.legal_masks(states)
    prediction = evaluator.predict(states)
    for head, role in enumerate(encoding.policy_roles):
        for b, s in enumerate(states):
            legal = game.legal_moves(s, game.roles[role])
            expected = np.zeros(encoding.policy_sizes[head], dtype=bool)
            expected[encoding.move_indices(head, legal)] = True
            np.testing.assert_array_equal(masks[head][b], expected)
            probs = prediction.policies[head][b]
            assert probs[~expected].sum() == 0
            assert probs.sum() == pytest.approx(1.0)
            model = evaluator(game, s, role, legal)
            assert model.shape == (len(legal),) and model.sum() == pytest.approx(1.0)
    values = evaluator.evaluate(game, states).values
    assert values.shape == (len(states), 3)
    assert ((values >= 0) & (values <= 100)).all()
    # Cached: the same states again cost no network call.
    before = evaluator.evaluations
    evaluator.evaluate(game, states)
    assert evaluator.evaluations == before
    mixed = OpponentModel(evaluator, 1.0)(game, states[1], 1, game.legal_moves(states[1], "p1"))
    assert np.allclose(mixed, 1.0 / len(mixed))


def test_evaluator_plugs_into_build_tree_and_cfr() -> None:
    game = load("meier.gdl")
    evaluator = evaluator_for("meier.gdl")
    p2 = game.role("p2")
    state = game.initial_state()
    history = ObservationHistory(p2)
    for joint in (["(roll p1 6 5)", "noop", "noop"], ["noop", "(claim 6 5)", "noop"]):
        moves = game.joint_move(joint)
        history = history.extend(moves[2], game.percepts(state, moves, p2))
        state = game.next_state(state, moves)
    roots = PosteriorSampler(game, evaluator).sample_many(history, 16, np.random.default_rng(0))
    tree = build_tree(game, roots, depth=2, evaluator=evaluator)
    assert (~tree.leaf_terminal).any()
    # Non-terminal leaves carry the network's values.
    pending = tree.leaf_node[~tree.leaf_terminal]
    expected = evaluator.evaluate(game, [tree.node_state[n] for n in pending]).values
    np.testing.assert_allclose(tree.leaf_values[~tree.leaf_terminal], expected)
    # The prior initialises CFR: the first strategy is the network's policy.
    prior = infoset_priors(tree, evaluator)
    sums = np.bincount(tree.sa_infoset, weights=prior, minlength=tree.num_infosets)
    np.testing.assert_allclose(sums, 1.0)
    solver = CFRSolver(tree)
    warm_start(solver, prior, 1.0)
    np.testing.assert_allclose(solver.current_strategy()[:-1], prior)
    solver.iterate(20)
    policy = solver.policy(tree.root_infoset(p2))  # type: ignore[arg-type]
    assert policy.sum() == pytest.approx(1.0)
    with pytest.raises(ValueError, match="not iterated"):
        warm_start(solver, prior, 1.0)


def test_the_sampler_asks_the_network_in_batches() -> None:
    # The posterior filter hands each layer's states to the opponent model at once: the
    # network sees them in a few batches, and the beliefs are those of one-by-one calls.
    game = load("blindtictactoe.gdl")
    x = game.role("x")
    state = game.initial_state()
    history = ObservationHistory(x)
    for joint in (
        ["(mark 2 2)", "(mark 1 1)", "(tiebreak x)"],
        ["(mark 1 3)", "(mark 3 3)", "(tiebreak o)"],
    ):
        moves = game.joint_move(joint)
        history = history.extend(moves[game.role_index(x)], game.percepts(state, moves, x))
        state = game.next_state(state, moves)
    batched = OpponentModel(evaluator_for("blindtictactoe.gdl"), 0.5)
    plain = OpponentModel(evaluator_for("blindtictactoe.gdl"), 0.5)

    def one_by_one(
        game: Game, state: State, role: int, legal_moves: tuple[Term, ...], /
    ) -> FloatArray:
        return plain(game, state, role, legal_moves)  # no prepare(): one call per state

    beliefs = []
    for model, evaluator in ((batched, batched.evaluator), (one_by_one, plain.evaluator)):
        calls: list[int] = []
        forward = evaluator._forward

        def counted(states: Sequence[State], forward: Any = forward, calls: Any = calls) -> Any:
            calls.append(len(states))
            return forward(states)

        evaluator._forward = counted  # type: ignore[method-assign]
        belief = PosteriorSampler(game, model).belief(history, np.random.default_rng(0))
        beliefs.append(dict(zip(belief.states, belief.probabilities.tolist(), strict=True)))
        assert sum(calls) == evaluator.evaluations
        if model is batched:
            assert len(calls) <= len(history) and max(calls) > 1
        else:
            assert max(calls) == 1
    assert beliefs[0] == pytest.approx(beliefs[1], abs=1e-6)


def test_solve_subgame_respects_the_node_budget() -> None:
    game = load("blindtictactoe.gdl")
    evaluator = evaluator_for("blindtictactoe.gdl")
    root = [(SampledHistory((game.initial_state(),), ()), 1.0)]
    tree, solver = solve_subgame(
        game, root, evaluator, SubgameSettings(max_depth=3, max_nodes=5000, iterations=5)
    )
    assert len(tree.node_state) <= 5000
    assert solver.iterations == 5
    assert int(tree.node_depth.max()) == 1  # depth 2 would hold ~21,000 nodes


def test_net_player_plays_legal_moves() -> None:
    game = load("montyhall.gdl")
    evaluator = evaluator_for("montyhall.gdl")
    player = NetCFRPlayer(
        settings=CFRSettings(min_time_s=0.01, max_time_s=0.05, samples=10),
        rng=np.random.default_rng(0),
        evaluator=evaluator,
    )
    for seed in range(3):
        record = run_match(
            game, {game.role("candidate"): player}, np.random.default_rng(seed), play_clock_s=30
        )
        assert record.replacements == ()
    assert player.last_search is not None


def test_net_player_warm_starts_sampled_subgames_not_the_whole_game() -> None:
    # The whole game's solve starts cold: nothing is left for the network's policy to
    # guess there, and a prior that is no equilibrium slows CFR+ (training/RESULTS.md).
    game = load("kuhn_poker.gdl")
    player = NetCFRPlayer(rng=np.random.default_rng(0), evaluator=evaluator_for("kuhn_poker.gdl"))
    player.start(MatchInfo("m", game, game.role("p1")))
    tree = build_tree(game, max_nodes=1000)
    assert not player._make_solver(tree, whole_game=True).regret.any()
    assert player._make_solver(tree).regret.any()


def make_checkpoint(name: str, path: Path, steps: int = 7) -> None:
    evaluator = evaluator_for(name)
    encoding = evaluator.encoding
    metadata = CheckpointMetadata(
        game=str(GAMES / name),
        signature=encoding.signature,
        shape=evaluator.net.shape,
        steps=steps,
        settings={"seed": 0},
    )
    save_checkpoint(path, Checkpoint(metadata, evaluator.net.state_dict()))


def test_checkpoint_round_trip(tmp_path: Path) -> None:
    path = tmp_path / "run" / "best.pt"
    make_checkpoint("montyhall.gdl", path)
    assert sorted(p.name for p in path.parent.iterdir()) == [
        "best.json",
        "best.pt",
    ]  # no temp files
    checkpoint = load_checkpoint(path)
    assert checkpoint.metadata.steps == 7
    assert checkpoint.metadata.signature.game_digest == game_digest(load("montyhall.gdl"))
    net, _, _ = load_network(path, load("montyhall.gdl"))
    original = evaluator_for("montyhall.gdl").net.state_dict()
    assert all(torch.equal(net.state_dict()[k], original[k]) for k in original)
    player = make_player(f"cfr+nn:{path}", np.random.default_rng(0), load("montyhall.gdl"))
    assert player.name == "cfr+nn"


def test_checkpoint_for_another_game_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "best.pt"
    make_checkpoint("montyhall.gdl", path)
    with pytest.raises(CheckpointMismatchError, match=r"trained for .*montyhall.gdl, not .*meier"):
        load_network(path, load("meier.gdl"))
    with pytest.raises(GameError, match="no checkpoint"):
        load_checkpoint(tmp_path / "missing.pt")
    with pytest.raises(GameError, match="no checkpoint"):  # a checkpoint given must exist
        make_player(
            f"cfr+nn:{tmp_path / 'missing.pt'}", np.random.default_rng(0), load("meier.gdl")
        )
    (tmp_path / "junk.pt").write_bytes(b"not a checkpoint")
    with pytest.raises(GameError, match="not a ggp checkpoint"):
        load_checkpoint(tmp_path / "junk.pt")


def test_a_checkpoint_of_other_rules_plays_search_only_cfr_with_one_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = tmp_path / "best.pt"
    make_checkpoint("montyhall.gdl", path)
    game = load("meier.gdl")
    with caplog.at_level(logging.WARNING, logger="ggp.players.net_player"):
        player = make_player(f"cfr+nn:{path}", np.random.default_rng(0), game)
        assert isinstance(player, NetCFRPlayer)
        assert player.search_only is not None and "was trained for" in player.search_only
        player.settings = CFRSettings(min_time_s=0.01, max_time_s=0.05, samples=10)
        opponent = RandomPlayer(np.random.default_rng(1))
        for seed in range(2):
            players = {game.role("p1"): player, game.role("p2"): opponent}
            record = run_match(game, players, np.random.default_rng(seed), play_clock_s=30)
            assert record.replacements == ()  # no random play: every move the player's own
    assert player.last_search is not None and player.last_search.depth >= 1
    warnings = [r for r in caplog.records if "search-only cfr" in r.getMessage()]
    assert len(warnings) == 1


def test_the_random_player_is_no_net_player() -> None:
    assert isinstance(make_player("random", np.random.default_rng(0)), RandomPlayer)


def test_cfr_nn_spec_options(tmp_path: Path) -> None:
    from ggp.players.net_player import NetCFRPlayer

    path = tmp_path / "best.pt"
    make_checkpoint("montyhall.gdl", path)
    game = load("montyhall.gdl")
    player = make_player(f"cfr+nn:mix=0.25,{path},model=0.5", np.random.default_rng(0), game)
    assert isinstance(player, NetCFRPlayer)
    assert player.checkpoint == path
    assert (player.net_settings.uniform_mix, player.settings.model_weight) == (0.25, 0.5)
    with pytest.raises(GameError, match="no option 'temperature'"):
        make_player(f"cfr+nn:{path},temperature=2", np.random.default_rng(0), game)
    with pytest.raises(GameError, match=r"must be a number in 0\.\.1, not 'lots'"):
        make_player(f"cfr+nn:{path},mix=lots", np.random.default_rng(0), game)


def test_net_player_searches_with_puct_where_the_moves_are_public(tmp_path: Path) -> None:
    """``search=auto``: PUCT (the network its prior, mixed with playouts its evaluator)
    on a game whose moves are public, as self-play trains; CFR-D where they are not."""
    from ggp.players.classic_player import ClassicPlayer
    from ggp.search.classic.mcts import MCTS
    from ggp.search.evaluator import MixedEvaluator
    from ggp.training.workers import searched_depths

    game = load("tictactoe.gdl")
    path = tmp_path / "best.pt"
    make_checkpoint("tictactoe.gdl", path)
    player = make_player(f"cfr+nn:{path},rollout=0.25", np.random.default_rng(0), game)
    assert isinstance(player, NetCFRPlayer)
    puct = player.puct_player(game)
    assert isinstance(puct, ClassicPlayer) and puct.settings.algorithm == "mcts"
    mixed = puct.load(game)
    assert isinstance(mixed, MixedEvaluator) and mixed.weight == 0.25
    assert mixed.first is player.load(game)
    player.settings = CFRSettings(max_time_s=0.05)
    for seed in range(2):
        opponent = RandomPlayer(np.random.default_rng(seed))
        players = {game.role("xplayer"): player, game.role("oplayer"): opponent}
        record = run_match(game, players, np.random.default_rng(seed), play_clock_s=30)
        assert record.replacements == ()
        assert player.last_search is None  # no CFR search ran
        assert player.depths and max(player.depths) >= 1  # PUCT's, kept after the match
        assert searched_depths(player) == tuple(player.depths)
    cfr = make_player(f"cfr+nn:{path},search=cfr", np.random.default_rng(0), game)
    assert isinstance(cfr, NetCFRPlayer) and cfr.puct_player(game) is None
    plain = make_player(f"cfr+nn:{path},rollout=0", np.random.default_rng(0), game)
    assert isinstance(plain, NetCFRPlayer)
    plain_puct = plain.puct_player(game)
    assert plain_puct is not None and plain_puct.load(game) is plain.load(game)
    plain_puct.start(MatchInfo("m", game, game.role("xplayer")))
    assert isinstance(plain_puct._search, MCTS) and plain_puct._search.prior is plain.load(game)
    monty = load("montyhall.gdl")  # the car is hidden: CFR-D, and no PUCT on demand
    monty_path = tmp_path / "monty.pt"
    make_checkpoint("montyhall.gdl", monty_path)
    hidden = make_player(f"cfr+nn:{monty_path}", np.random.default_rng(0), monty)
    assert isinstance(hidden, NetCFRPlayer) and hidden.puct_player(monty) is None
    forced = make_player(f"cfr+nn:{monty_path},search=mcts", np.random.default_rng(0), monty)
    assert isinstance(forced, NetCFRPlayer)
    with pytest.raises(GameError, match="search=mcts needs a game whose moves are public"):
        forced.puct_player(monty)
    with pytest.raises(GameError, match="option search must be auto, cfr, mcts, not 'ab'"):
        make_player(f"cfr+nn:{path},search=ab", np.random.default_rng(0), game)
    with pytest.raises(GameError, match=r"option rollout must be a number in 0\.\.1"):
        make_player(f"cfr+nn:{path},rollout=2", np.random.default_rng(0), game)
    quick = make_player(f"cfr+nn:{path},time=0.05", np.random.default_rng(0), game)
    assert isinstance(quick, NetCFRPlayer)
    assert (quick.settings.max_time_s, quick.settings.min_time_s) == (0.05, 0.05)
    quick_puct = quick.puct_player(game)
    assert quick_puct is not None and quick_puct.settings.max_time_s == 0.05
    for bad in ("0", "-1", "inf", "soon"):
        with pytest.raises(GameError, match="option time must be a number of seconds > 0"):
            make_player(f"cfr+nn:{path},time={bad}", np.random.default_rng(0), game)
