"""The Game facade: the public API, argument checking and the LRU transition cache."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from ggp import Game, GameError, GroundingError, GroundingLimits, parse_term
from ggp.errors import SettingError
from ggp.gdl.embed import with_public_moves
from ggp.gdl.parser import parse_file
from ggp.gdl.terms import Const
from ggp.reasoning.ground import ground

from conftest import GAMES


@pytest.fixture(scope="module")
def tictactoe() -> Game:
    return Game.from_file(GAMES / "tictactoe.gdl")


@pytest.fixture(scope="module")
def meier() -> Game:
    return Game.from_file(GAMES / "meier.gdl")


def test_roles_in_file_order_with_random(meier: Game) -> None:
    assert meier.roles == (Const("random"), Const("p1"), Const("p2"))
    assert meier.random_role == Const("random")
    assert meier.player_roles == (Const("p1"), Const("p2"))
    assert meier.reasoner == "propnet"


def test_states_are_immutable_hashable_and_print_as_kif(tictactoe: Game) -> None:
    s = tictactoe.initial_state()
    assert hash(s) == hash(tictactoe.initial_state()) and s == tictactoe.initial_state()
    with pytest.raises(AttributeError):
        s.key = 0  # type: ignore[misc]
    facts = sorted(map(str, tictactoe.state_facts(s)))
    assert "(cell 1 1 b)" in facts and "(control xplayer)" in facts
    assert tictactoe.state_from_facts(facts) == s  # KIF text parses back


def test_moves_print_and_parse_as_kif(tictactoe: Game) -> None:
    s = tictactoe.initial_state()
    moves = tictactoe.legal_moves(s, "xplayer")
    assert [str(m) for m in moves][:2] == ["(mark 1 1)", "(mark 1 2)"]
    assert all(parse_term(str(m)) is m for m in moves)
    assert tictactoe.legal_moves(s, "oplayer") == (Const("noop"),)


def test_joint_moves_as_sequences_mappings_or_text(tictactoe: Game) -> None:
    s = tictactoe.initial_state()
    a = tictactoe.next_state(s, ["(mark 2 2)", "noop"])
    b = tictactoe.next_state(s, {"oplayer": "noop", "xplayer": "(MARK 2 2)"})
    c = tictactoe.next_state(s, (parse_term("(mark 2 2)"), Const("noop")))
    assert a == b == c
    assert "(cell 2 2 x)" in map(str, tictactoe.state_facts(a))


@pytest.mark.parametrize(
    ("joint", "message"),
    [
        (["(mark 2 2)"], "has 1 moves, the game has 2 roles"),
        ({"xplayer": "(mark 2 2)"}, "no move for role(s) oplayer"),
        (["(mark 2 2)", "(mark 1 1)"], "illegal"),
        ("(mark 2 2) noop", "not the string"),
    ],
)
def test_bad_joint_moves_are_refused(tictactoe: Game, joint: object, message: str) -> None:
    with pytest.raises(GameError, match=message.replace("(", r"\(").replace(")", r"\)")):
        tictactoe.next_state(tictactoe.initial_state(), joint)  # type: ignore[arg-type]


def test_unknown_role_and_foreign_state_are_refused(tictactoe: Game, meier: Game) -> None:
    with pytest.raises(GameError, match="no role nobody in this game"):
        tictactoe.legal_moves(tictactoe.initial_state(), "nobody")
    with pytest.raises(GameError):
        tictactoe.is_terminal(meier.initial_state())


def test_percepts_of_meier_roll(meier: Game) -> None:
    s = meier.initial_state()
    roll = next(m for m in meier.legal_moves(s, "random") if str(m) == "(roll p1 3 1)")
    joint = (roll, Const("noop"), Const("noop"))
    assert {str(p) for p in meier.percepts(s, joint, "p1")} >= {"(my_dice 3 1)"}
    assert "(my_dice 3 1)" not in {str(p) for p in meier.percepts(s, joint, "p2")}


def test_transition_cache_counts_hits_and_misses(tictactoe: Game) -> None:
    game = Game(tictactoe.machine, tictactoe.description, reasoner="propnet", cache_size=2)
    s = game.initial_state()
    joint = ["(mark 1 1)", "noop"]
    t = game.next_state(s, joint)
    assert game.next_state(s, joint) is t
    game.percepts(s, joint, "xplayer")
    info = game.cache_info()
    assert (info.hits, info.misses, info.size, info.maxsize) == (2, 1, 1, 2)
    for move in ("(mark 1 2)", "(mark 1 3)"):  # evicts the least recently used entry
        game.next_state(s, [move, "noop"])
    assert game.cache_info().size == 2
    game.cache_clear()
    assert game.cache_info().hits == 0


def test_cache_off(tictactoe: Game) -> None:
    game = Game(tictactoe.machine, tictactoe.description, reasoner="propnet", cache_size=0)
    s = game.initial_state()
    game.next_state(s, ["(mark 1 1)", "noop"])
    assert game.cache_info().maxsize == 0 and game.cache_info().size == 0


def test_the_native_kernel_answers_the_playout_queries(tictactoe: Game) -> None:
    """The fast path (one C call per query) answers exactly as the methods do, and hands
    every argument it does not take itself to them: role names, strings, mappings, lists,
    illegal moves, foreign states."""
    machine = tictactoe.machine
    if getattr(machine, "backend", None) != "native":
        pytest.skip("no native kernel on this machine")
    game = tictactoe.with_cache(0)
    for query in (game.legal_moves, game.next_state, game.is_terminal):
        assert type(query).__name__ == "builtin_function_or_method"
    cached = tictactoe.with_cache(1000)  # legal moves and terminal natively, next through the cache
    assert type(cached.legal_moves).__name__ == "builtin_function_or_method"
    assert type(cached.next_state).__name__ == "method"
    rng = np.random.default_rng(5)
    for _ in range(10):
        state = game.initial_state()
        while not game.is_terminal(state):
            assert not Game.is_terminal(game, state) and not cached.is_terminal(state)
            joint = []
            for role in game.roles:
                moves = game.legal_moves(state, role)
                assert (
                    moves == Game.legal_moves(game, state, role) == cached.legal_moves(state, role)
                )
                assert moves == game.legal_moves(state, role.name)
                joint.append(moves[int(rng.integers(len(moves)))])
            after = game.next_state(state, tuple(joint))
            assert after == Game.next_state(game, state, joint) == game.next_state(state, joint)
            assert after == cached.next_state(state, joint)
            assert after == game.next_state(state, dict(zip(game.roles, joint, strict=True)))
            assert after == game.next_state(state, [str(m) for m in joint])
            state = after
        assert Game.is_terminal(game, state) and cached.is_terminal(state)
    assert cached.cache_info().misses > 0
    start = game.initial_state()
    for joint in (["(mark 1 1)", "(mark 1 2)"], ["noop", "noop"], ["(mark 9 9)", "noop"], ["x"]):
        with pytest.raises(GameError) as fast_error:
            game.next_state(start, joint)
        with pytest.raises(GameError) as slow_error:
            Game.next_state(game, start, joint)
        assert str(fast_error.value) == str(slow_error.value)
    other = Game.from_file(GAMES / "tictactoe.gdl", cache_size=0)
    for query in (
        lambda: game.legal_moves(other.initial_state(), "xplayer"),
        lambda: game.next_state(other.initial_state(), ["(mark 1 1)", "noop"]),
        lambda: game.is_terminal(other.initial_state()),
        lambda: game.legal_moves(start, "nobody"),
        lambda: cached.legal_moves(other.initial_state(), "xplayer"),
        lambda: cached.is_terminal(other.initial_state()),
    ):
        with pytest.raises(GameError):
            query()


def test_a_game_with_the_fast_path_is_collected(tictactoe: Game) -> None:
    """The native fast path refers back to its Game (its fallbacks): the cycle is freed."""
    import gc
    import weakref

    game = tictactoe.with_cache(0)
    ref = weakref.ref(game)
    del game
    gc.collect()
    assert ref() is None


def test_prover_and_propnet_agree_through_the_facade() -> None:
    fast = Game.from_file(GAMES / "blindtictactoe.gdl")
    slow = Game.from_file(GAMES / "blindtictactoe.gdl", reasoner="prover")
    assert (fast.reasoner, slow.reasoner) == ("propnet", "prover")
    rng = np.random.default_rng(3)
    for _ in range(20):
        a, b = fast.initial_state(), slow.initial_state()
        while not fast.is_terminal(a):
            assert not slow.is_terminal(b)
            legal = [fast.legal_moves(a, r) for r in fast.roles]
            assert legal == [slow.legal_moves(b, r) for r in slow.roles]
            joint = tuple(m[int(rng.integers(len(m)))] for m in legal)
            for r in fast.roles:
                assert fast.percepts(a, joint, r) == slow.percepts(b, joint, r)
            a, b = fast.next_state(a, joint), slow.next_state(b, joint)
            assert fast.state_facts(a) == slow.state_facts(b)
        assert slow.is_terminal(b) and fast.goals(a) == slow.goals(b)


def test_too_large_to_ground_falls_back_to_the_top_down_prover(
    caplog: pytest.LogCaptureFixture,
) -> None:
    tiny = GroundingLimits(max_atoms=20)
    game = Game.from_file(GAMES / "tictactoe.gdl", limits=tiny)
    assert game.reasoner == "topdown"
    assert "using the top-down prover" in caplog.text
    with pytest.raises(GroundingError, match="relation"):
        Game.from_file(GAMES / "tictactoe.gdl", reasoner="propnet", limits=tiny)


def test_out_of_time_falls_back_to_the_top_down_prover_with_one_line(
    caplog: pytest.LogCaptureFixture,
) -> None:
    no_time = GroundingLimits(max_seconds=0.0)  # any CPU time spent is too much
    game = Game.from_file(GAMES / "tictactoe.gdl", limits=no_time)
    assert game.reasoner == "topdown"
    (record,) = [r for r in caplog.records if "top-down prover" in r.getMessage()]
    message = record.getMessage()
    assert "\n" not in message
    assert message.startswith(str(GAMES / "tictactoe.gdl") + ": grounding takes more than 0 s")
    assert "GroundingLimits.max_seconds" in message
    with pytest.raises(GroundingError, match="max_seconds"):
        Game.from_file(GAMES / "tictactoe.gdl", reasoner="propnet", limits=no_time)


def test_out_of_memory_falls_back_to_the_top_down_prover(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    grown = itertools.count(0, 2**30)  # the process grows 1 GiB between two looks
    monkeypatch.setattr("ggp.reasoning.budget.resident_bytes", lambda: next(grown))
    game = Game.from_file(GAMES / "tictactoe.gdl", limits=GroundingLimits(max_memory_mb=1500))
    assert game.reasoner == "topdown"
    assert "GroundingLimits.max_memory_mb; 2,048 MiB" in caplog.text


def test_past_the_work_limit_falls_back_whatever_the_clock(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Sizes decide, not CPU time: with no time budget at all the same game falls back.
    few = GroundingLimits(max_derivations=50, max_seconds=None)
    game = Game.from_file(GAMES / "tictactoe.gdl", limits=few)
    assert game.reasoner == "topdown"
    assert game.grounding_failure is not None
    assert game.grounding_failure.startswith("grounding exceeds 50 derivations")
    assert "(GroundingLimits.max_derivations) while evaluating " in game.grounding_failure
    assert "GroundingLimits.max_derivations" in caplog.text
    with pytest.raises(GroundingError, match="max_derivations"):
        Game.from_file(GAMES / "tictactoe.gdl", reasoner="propnet", limits=few)
    assert Game.from_file(GAMES / "tictactoe.gdl").reasoner == "propnet"  # the defaults


@pytest.mark.slow
@pytest.mark.parametrize("name", ["rts/rts_8x8_full.gdl", "battlesnake/eight_11x11.gdl"])
def test_our_largest_games_fit_the_default_work_limit_with_room(name: str) -> None:
    # The largest games of games/ ground as auto grounds them (every move made public)
    # in well under the default limit, on a machine of any speed; a change that doubles
    # their size shows here before a slower machine plays them by the top-down prover.
    limits = GroundingLimits(max_seconds=None)
    program = ground(with_public_moves(parse_file(GAMES / name)), limits)
    assert 100_000 < program.stats.derivations < 1_000_000 // 2  # half the default


def test_no_budget_grounds_as_before() -> None:
    unlimited = GroundingLimits(max_seconds=None, max_memory_mb=None)
    game = Game.from_file(GAMES / "tictactoe.gdl", reasoner="propnet", limits=unlimited)
    assert game.reasoner == "propnet"


def test_random_playouts_means(meier: Game) -> None:
    values = meier.random_playouts([meier.initial_state()] * 2, 2000, np.random.default_rng(0))
    assert values.shape == (2, 3)
    p1_wins = values[:, 1] / 100  # goals are 100 / 0
    assert np.all(np.abs(p1_wins - 0.348) < 0.04)


def test_expand_gives_every_joint_move_and_its_successor(tictactoe: Game) -> None:
    s = tictactoe.next_state(tictactoe.initial_state(), ["(mark 2 2)", "noop"])
    expansion = tictactoe.expand(s)
    assert [len(m) for m in expansion.legal] == [1, 8] and len(expansion) == 8
    assert expansion.strides == (8, 1)
    for i, (joint, child) in enumerate(zip(expansion.joints, expansion.states, strict=True)):
        assert joint == (expansion.legal[0][0], expansion.legal[1][i])
        assert child == tictactoe.next_state(s, joint)
        assert expansion.child([0, i]) is child
    assert "1x8 joint moves" in repr(expansion)


def test_expand_simultaneous_moves_in_product_order() -> None:
    game = Game.from_file(GAMES / "scissors_paper_rock.gdl")
    expansion = game.expand(game.initial_state())
    sizes = [len(m) for m in expansion.legal]
    assert len(expansion) == int(np.prod(sizes)) == 9
    strides = expansion.strides
    for index, joint in enumerate(expansion.joints):
        moves = [expansion.legal[r].index(joint[r]) for r in range(len(sizes))]
        assert sum(i * s for i, s in zip(moves, strides, strict=True)) == index


def test_legal_moves_many(tictactoe: Game) -> None:
    s = tictactoe.initial_state()
    t = tictactoe.next_state(s, ["(mark 1 1)", "noop"])
    assert tictactoe.legal_moves_many([s, t], "oplayer") == [
        tictactoe.legal_moves(s, "oplayer"),
        tictactoe.legal_moves(t, "oplayer"),
    ]
    assert len(tictactoe.legal_moves_many([t], "oplayer")[0]) == 8


def test_zobrist_keys_agree_between_reasoners_and_tell_states_apart() -> None:
    fast = Game.from_file(GAMES / "tictactoe.gdl")
    slow = Game.from_file(GAMES / "tictactoe.gdl", reasoner="prover")
    a, b = fast.initial_state(), slow.initial_state()
    keys = {fast.zobrist(a)}
    for joint in (["(mark 1 1)", "noop"], ["noop", "(mark 2 2)"], ["(mark 3 1)", "noop"]):
        a, b = fast.next_state(a, joint), slow.next_state(b, joint)
        assert fast.zobrist(a) == slow.zobrist(b) < 2**64
        keys.add(fast.zobrist(a))
    assert len(keys) == 4


def test_grounding_budget_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("GGP_GROUNDING_SECONDS", "GGP_GROUNDING_MEMORY_MB", "GGP_GROUNDING_DERIVATIONS"):
        monkeypatch.delenv(name, raising=False)
    limits = GroundingLimits()
    assert (limits.max_derivations, limits.max_seconds, limits.max_memory_mb) == (
        1_000_000,
        60.0,
        2048,
    )
    monkeypatch.setenv("GGP_GROUNDING_SECONDS", "none")
    monkeypatch.setenv("GGP_GROUNDING_MEMORY_MB", "500")
    monkeypatch.setenv("GGP_GROUNDING_DERIVATIONS", "2500000")
    limits = GroundingLimits()
    assert (limits.max_seconds, limits.max_memory_mb) == (None, 500)
    assert limits.max_derivations == 2_500_000
    monkeypatch.setenv("GGP_GROUNDING_DERIVATIONS", "none")
    assert GroundingLimits().max_derivations is None
    monkeypatch.setenv("GGP_GROUNDING_DERIVATIONS", "a million")
    with pytest.raises(SettingError, match="GGP_GROUNDING_DERIVATIONS='a million'"):
        GroundingLimits()
    monkeypatch.delenv("GGP_GROUNDING_DERIVATIONS")
    monkeypatch.setenv("GGP_GROUNDING_SECONDS", "eight")
    with pytest.raises(SettingError, match="GGP_GROUNDING_SECONDS='eight': expected a number"):
        Game.from_file(GAMES / "tictactoe.gdl")


def test_what_game_offers_about_its_reasoner(tictactoe: Game) -> None:
    base = tictactoe.base_propositions
    assert base is not None and len(base) == 29  # 27 cell marks and 2 control facts
    assert [str(m) for m in tictactoe.all_moves("oplayer") or ()][:2] == [
        "(mark 1 1)",
        "(mark 1 2)",
    ]
    assert len(tictactoe.all_moves("xplayer") or ()) == 10  # 9 marks and noop
    size = tictactoe.propnet_size
    assert size is not None and (size.base, size.inputs) == (29, 20)
    start = tictactoe.initial_state()
    bits = tictactoe.state_bits([start, start])
    assert bits.shape == (2, 29)
    held = {str(base[i]) for i in np.flatnonzero(bits[0])}
    assert held == {str(f) for f in tictactoe.state_facts(start)}
    batch = tictactoe.playout_batch(100, np.random.default_rng(0))
    assert batch is not None and batch.goals.shape == (100, 2)
    assert batch.lengths.min() >= 5 and batch.lengths.max() <= 9

    prover = Game.from_file(GAMES / "tictactoe.gdl", reasoner="prover")
    assert prover.base_propositions is None and prover.all_moves("xplayer") is None
    assert prover.propnet_size is None
    assert prover.playout_batch(10, np.random.default_rng(0)) is None
    with pytest.raises(GameError, match="no grounded base propositions"):
        prover.state_bits([prover.initial_state()])


def test_views_share_the_reasoner_with_caches_of_their_own(tictactoe: Game) -> None:
    view = tictactoe.with_cache(10)
    assert view.machine is tictactoe.machine and view.cache_info().maxsize == 10
    start = view.initial_state()
    view.next_state(start, ["(mark 1 1)", "noop"])
    assert view.cache_info().misses == 1 and tictactoe.cache_info() != view.cache_info()
    prover = Game.from_file(GAMES / "tictactoe.gdl", reasoner="prover").locked()
    shared = prover.with_cache(0)
    assert shared.machine is prover.machine  # the same lock
    state = shared.next_state(shared.initial_state(), ["(mark 2 2)", "noop"])
    assert "(cell 2 2 x)" in {str(f) for f in prover.state_facts(state)}
