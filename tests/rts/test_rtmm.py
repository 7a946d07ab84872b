"""RTMM / RRTMM (ggp.search.classic.rtmm), the paper's evaluations and bots (ggp.rts),
and their players: known values, the time model, and games played to the end."""

from __future__ import annotations

import functools
import math
from pathlib import Path

import numpy as np
import pytest

from ggp.errors import GameError
from ggp.game import Game
from ggp.match import run_match
from ggp.players.base import MatchInfo
from ggp.players.classic_player import make_evaluator, parse_options
from ggp.players.registry import make_player
from ggp.players.rts_players import RtmmPlayer, parse_rtmm_options
from ggp.protocol.game_manager import RemotePlayer
from ggp.protocol.http_handler import start_server_thread
from ggp.protocol.session import ServeSettings
from ggp.rts.bots import bot_move
from ggp.rts.evaluation import (
    BattleCityEvaluator,
    RtsEvaluator,
    battlecity_difference,
    forwarded,
    rts_difference,
)
from ggp.rts.state import is_battlecity, is_rts, read_board, read_field
from ggp.search.classic.rtmm import RTMM
from ggp.training.workers import searched_depths

ROOT = Path(__file__).resolve().parents[2]
GAMES = ROOT / "games"


@functools.cache
def load(name: str) -> Game:
    return Game.from_file(GAMES / name)


def play(game: Game, state, moves: dict[str, str]):  # type: ignore[no-untyped-def]
    return game.next_state(state, [moves.get(r.name, "noop") for r in game.roles])


# --------------------------------------------------------------------- the search


def test_rtmm_solves_tictactoe_to_its_known_value() -> None:
    game = load("tictactoe.gdl")
    result = RTMM(game, "xplayer").search(game.initial_state(), max_lookahead=9)
    assert result.solved and result.value == 50.0
    assert result.iterations == 9  # no clock fact: one step per iteration, 1..9


def test_rtmm_takes_an_immediate_win() -> None:
    game = load("tictactoe.gdl")
    state = game.initial_state()
    for x, o in (((1, 1), (2, 1)), ((1, 2), (2, 2))):
        state = play(game, state, {"xplayer": f"(mark {x[0]} {x[1]})"})
        state = play(game, state, {"oplayer": f"(mark {o[0]} {o[1]})"})
    result = RTMM(game, "xplayer").search(state, max_lookahead=1)
    assert str(result.move) == "(mark 1 3)" and result.value == 100.0


def test_simultaneous_steps_are_searched_max_first() -> None:
    """Scissors-paper-rock (scissors wins double): MAX picks first and MIN answers
    knowing it, so the value is the max-min of the payoff table: rock, answered by
    paper, 25 (the paper's RTMM: max-min when both can act; RRTMM never flips the root)."""
    game = load("scissors_paper_rock.gdl")
    for randomized in (False, True):
        search = RTMM(game, "player1", randomized=randomized, rng=np.random.default_rng(1))
        result = search.search(game.initial_state(), max_lookahead=1)
        assert result.value == 25.0 and str(result.move) == "rock"


def test_the_clock_is_the_games_counter_and_simulate_steps_advance_it() -> None:
    melee = load("rts/rts_8x8_melee.gdl")
    clock = RTMM(melee, "blue").clock
    assert clock is not None
    state = melee.initial_state()
    # four order steps (each side orders its four lights), then ticks while all are busy
    for _ in range(4):
        assert clock(state) == 0
        moves = {
            r.name: str(next(m for m in melee.legal_moves(state, r) if "idle" in str(m)))
            for r in melee.roles
        }
        state = play(melee, state, moves)
    assert all(melee.legal_moves(state, r) == (melee.term("noop"),) for r in melee.roles)
    state = play(melee, state, {})
    assert clock(state) == 1
    city = load("rts/battlecity_small.gdl")
    assert RTMM(city, "red").clock is not None


def test_rrtmm_flips_who_picks_first_below_the_root_but_stays_sound() -> None:
    """With no simultaneous node below the root (tic-tac-toe), RRTMM is RTMM."""
    game = load("tictactoe.gdl")
    search = RTMM(game, "oplayer", randomized=True, rng=np.random.default_rng(3))
    state = play(game, game.initial_state(), {"xplayer": "(mark 2 2)"})
    result = search.search(state, max_lookahead=8)
    assert result.solved and result.value == 50.0


def test_rtmm_refuses_chance_and_needs_a_bound() -> None:
    with pytest.raises(GameError, match="two-player games without chance"):
        RTMM(load("montyhall.gdl"), "candidate")
    game = load("rts/battlecity_small.gdl")
    with pytest.raises(GameError, match="deadline or a lookahead"):
        RTMM(game, "blue").search(game.initial_state())


def test_a_deadline_in_the_past_still_gives_a_legal_move() -> None:
    game = load("rts/battlecity_small.gdl")
    state = game.initial_state()
    result = RTMM(game, "blue").search(state, deadline=0.0)
    assert result.move in game.legal_moves(state, "blue") and result.iterations == 0


# --------------------------------------------------------------------- evaluations


def test_battlecity_evaluation_is_the_papers_l1_difference() -> None:
    game = load("rts/battlecity_small.gdl")
    state = game.initial_state()
    assert battlecity_difference(read_field(game, state)) == 0  # the map is symmetric
    # blue drives up, towards red's base: the difference grows by one per cell
    state = play(game, state, {"blue": "(do up hold)", "red": "(do none hold)"})
    assert battlecity_difference(read_field(game, state)) == 1
    values = BattleCityEvaluator().evaluate(game, [state]).values
    assert values[0, 0] > 50 > values[0, 1] and values[0].sum() == pytest.approx(100)


def test_rts_evaluations_count_costs_hit_points_and_running_attacks() -> None:
    game = load("rts/rts_8x8_melee.gdl")
    facts = [
        "(unit 3 3 blue light)",
        "(hp 3 3 4)",
        "(unit 4 3 red light)",
        "(hp 4 3 2)",
        "(doing 3 3 attack right)",
        "(left 3 3 2)",
        "(gold blue 0)",
        "(gold red 0)",
        "(time 7)",
    ]
    board = read_board(game, game.state_from_facts(facts))
    assert rts_difference(board) == 0  # the paper's text: one light each
    assert forwarded(board)[(4, 3)].hp == 0  # blue's attack lands: 2 damage
    # hit-point weighted: 2 - 2 * 2/4, plus half of 2 - 2 * 0/4
    assert rts_difference(board, hp_weighted=True) == pytest.approx(1 + 0.5 * 2)
    values = RtsEvaluator(hp_weighted=True).evaluate(game, [game.state_from_facts(facts)])
    assert values.values[0, 0] > 50


# --------------------------------------------------------------------- bots


def test_follower_heads_for_the_enemy_and_random_spares_its_base() -> None:
    game = load("rts/battlecity_small.gdl")
    rng = np.random.default_rng(0)
    state = game.initial_state()
    legal = game.legal_moves(state, "blue")
    move = bot_move("follower", game, state, 0, legal, rng)
    assert str(move).endswith("fire)") and "down" not in str(move)
    # blue's tank below... a state with blue's own base straight ahead of its gun
    facts = [
        "(tank blue 5 7)",
        "(facing blue down)",
        "(rest blue)",
        "(tank red 3 3)",
        "(facing red down)",
        "(step 4)",
    ]
    state = game.state_from_facts(facts)
    legal = game.legal_moves(state, "blue")
    for seed in range(10):
        move = bot_move("random", game, state, 0, legal, np.random.default_rng(seed))
        assert str(move) == "(do none hold)"  # resting, and the base (5, 9) is in line


def test_rush_attacks_an_adjacent_enemy_and_stochastic_plays_legal_moves() -> None:
    game = load("rts/rts_8x8_melee.gdl")
    facts = [
        "(unit 3 3 blue light)",
        "(hp 3 3 4)",
        "(unit 4 3 red light)",
        "(hp 4 3 4)",
        "(gold blue 0)",
        "(gold red 0)",
        "(time 0)",
    ]
    state = game.state_from_facts(facts)
    legal = game.legal_moves(state, "blue")
    rng = np.random.default_rng(0)
    assert str(bot_move("rush", game, state, 0, legal, rng)) == "(order 3 3 attack right)"
    picks = {str(bot_move("stochastic", game, state, 0, legal, rng)) for _ in range(200)}
    assert picks <= {str(m) for m in legal} and "(order 3 3 attack right)" in picks
    with pytest.raises(GameError, match="no RTS bot"):
        bot_move("nobody", game, state, 0, legal, rng)


def test_the_board_readers_need_no_propositional_network() -> None:
    """A game past the grounding budget is played by the top-down prover (RTS-Full under
    a small GGP_GROUNDING_SECONDS): the games are still recognised and read alike."""
    for name in ("rts/rts_8x8_melee.gdl", "rts/battlecity_small.gdl"):
        net = load(name)
        prover = Game.from_file(GAMES / name, reasoner="topdown")
        assert prover.base_propositions is None
        assert (is_rts(prover), is_battlecity(prover)) == (is_rts(net), is_battlecity(net))
        assert is_rts(prover) != is_battlecity(prover)
        state, other = net.initial_state(), prover.initial_state()
        rng = np.random.default_rng(1)
        for _ in range(12):
            if net.is_terminal(state):
                break
            if is_rts(net):
                assert read_board(prover, other) == read_board(net, state)
            else:
                assert read_field(prover, other) == read_field(net, state)
            joint = [rng.choice(net.legal_moves(state, role)) for role in net.roles]
            state, other = net.next_state(state, joint), prover.next_state(other, joint)
    melee = Game.from_file(GAMES / "rts/rts_8x8_melee.gdl", reasoner="topdown")
    rng = np.random.default_rng(0)
    players = {
        melee.role("blue"): make_player("rtsbot:rush", rng, melee),
        melee.role("red"): make_player("rtsbot:stochastic", rng, melee),
    }
    record = run_match(melee, players, rng, play_clock_s=2.0, max_steps=6000)
    assert record.replacements == () and sorted(record.goals) in ([0, 100], [50, 50])


# --------------------------------------------------------------------- players


@pytest.mark.parametrize(
    ("game_name", "blue", "red"),
    [
        ("rts/rts_8x8_melee.gdl", "rtmm:time=0.05", "rtsbot:rush"),
        ("rts/rts_8x8_melee.gdl", "rtsbot:rush", "rrtmm:time=0.02"),
        ("rts/battlecity_small.gdl", "rtsbot:follower", "rrtmm:time=0.02"),
        ("rts/battlecity_small.gdl", "rtmm:time=0.02", "rtsbot:random"),
        ("rts/battlecity_small.gdl", "rtsbot:follower", "alphabeta:eval=battlecity,time=0.02"),
        ("rts/rts_8x8_melee.gdl", "mcts:eval=rts,time=0.02", "rtsbot:rush"),
    ],
)
def test_games_between_the_search_and_the_bots_end_with_every_reply_legal_and_in_time(
    game_name: str, blue: str, red: str
) -> None:
    """Whole games under the referee: nothing replaced (late or illegal), a result.
    (Strength is measured in the RESULTS tables, not here: a clocked search is not
    deterministic.)"""
    game = load(game_name)
    rng = np.random.default_rng(0)
    players = {
        game.role("blue"): make_player(blue, rng, game),
        game.role("red"): make_player(red, rng, game),
    }
    record = run_match(game, players, rng, play_clock_s=2.0, max_steps=6000)
    assert record.replacements == ()
    assert sorted(record.goals) in ([0, 100], [50, 50])


def test_searching_ahead_in_idle_steps_changes_when_a_move_is_searched_not_which() -> None:
    """``idle=S``: the next decision's search starts in the steps before it, where the
    player has no choice (the paper's game loop). With a lookahead bound instead of a
    clock both players search the same trees, so they play the same game."""
    game = load("rts/rts_8x8_melee.gdl")
    games = []
    for idle in ("", ",idle=0.01"):
        rng = np.random.default_rng(0)
        rtmm = make_player(f"rtmm:lookahead=2{idle}", rng, game)
        players = {game.role("blue"): rtmm, game.role("red"): make_player("rtsbot:rush", rng, game)}
        record = run_match(game, players, rng, play_clock_s=30.0, max_steps=6000)
        assert isinstance(rtmm, RtmmPlayer) and record.replacements == ()
        games.append((record.joint_moves, rtmm.pondered_moves, len(rtmm.depths)))
    (plain, none, searched), (idle_game, pondered, searched_idle) = games
    assert idle_game == plain and searched_idle == searched
    assert none == 0 and 0 < pondered <= searched


def test_player_options_and_misuse() -> None:
    assert parse_rtmm_options("rtmm", "step=3,lookahead=12").step == 3
    with pytest.raises(GameError, match="rtmm option"):
        parse_rtmm_options("rtmm", "depth=3")
    game = load("tictactoe.gdl")
    bot = make_player("rtsbot:rush", np.random.default_rng(0), game)
    with pytest.raises(GameError, match="rts_8x8"):
        bot.start(MatchInfo("m", game, game.role("xplayer")))
    player = RtmmPlayer(parse_rtmm_options("rtmm", "eval=rts"))
    with pytest.raises(GameError, match="eval=rts"):
        player.start(MatchInfo("m", game, game.role("xplayer")))
    player = RtmmPlayer(parse_rtmm_options("rtmm", "lookahead=9"))
    player.start(MatchInfo("m", game, game.role("xplayer")))
    assert player.choose_move(game.initial_state(), math.inf) in game.legal_moves(
        game.initial_state(), "xplayer"
    )
    # the lookahead each searched move reached, for the tables' depth column
    assert player.last_search is not None and player.last_search.lookahead >= 1
    assert searched_depths(player) == (player.last_search.lookahead,)
    player.start(MatchInfo("m2", game, game.role("xplayer")))
    assert searched_depths(player) == ()


@pytest.mark.parametrize("spec", ["rtmm:time=0.05", "rtsbot:follower"])
def test_the_players_serve_a_game_manager(spec: str, tmp_path: Path) -> None:
    """``ggp serve --player SPEC`` plays BattleCity for a game manager over HTTP to the
    end, every reply legal and in time."""
    server, _ = start_server_thread(
        ServeSettings(player=spec, log_dir=tmp_path, margin_s=0.3, seed=0)
    )
    try:
        game = load("rts/battlecity_small.gdl")
        rng = np.random.default_rng(0)
        remote = RemotePlayer(server.url)
        record = run_match(
            game,
            {game.role("blue"): remote, game.role("red"): make_player("rtsbot:random", rng, game)},
            rng,
            match_id="bc",
            start_clock_s=10,
            play_clock_s=1,
            grace_s=1,
            max_steps=700,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert record.replacements == ()
    assert len(remote.latencies_s) == len(record.joint_moves)
    assert sorted(record.goals) in ([0, 100], [50, 50])


def test_the_classic_searches_take_the_papers_evaluations() -> None:
    rng = np.random.default_rng(0)
    battlecity, melee = load("rts/battlecity_small.gdl"), load("rts/rts_8x8_melee.gdl")
    settings = parse_options("alphabeta", "eval=battlecity")
    assert isinstance(make_evaluator(settings, battlecity, rng), BattleCityEvaluator)
    evaluator = make_evaluator(parse_options("mcts", "eval=rts-cost"), melee, rng)
    assert isinstance(evaluator, RtsEvaluator) and not evaluator.hp_weighted
    with pytest.raises(GameError, match="battlecity"):
        make_evaluator(settings, melee, rng)
