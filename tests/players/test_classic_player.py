"""The classic search players: specs and options, legal and anytime play in matches."""

from __future__ import annotations

import gc
import threading

import numpy as np
import pytest

from ggp.collector import collector_paused
from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.terms import Const
from ggp.match import run_match
from ggp.players import classic_player
from ggp.players.base import MatchInfo, Observation, Player
from ggp.players.classic_player import ALGORITHMS, ClassicPlayer, parse_options
from ggp.players.random_player import RandomPlayer
from ggp.players.registry import make_player, player_names, split_specs
from ggp.search.classic import MCTS, HeuristicEvaluator

from conftest import GAMES, SHARED, requires_shared

SPECS = list(ALGORITHMS)

#: A GDL-II game where chance hides a coin: 0 ends the game at once, 1 lets the player
#: choose ``a`` (100) or ``b`` (0). The player, asked to move, sees only ``started``:
#: half of the histories of its observations have ended the game.
HIDDEN_END_KIF = """
(role player) (role random)
(init (step 0))
(<= (legal random (coin 0)) (true (step 0)))
(<= (legal random (coin 1)) (true (step 0)))
(<= (legal random noop) (true (step 1)))
(<= (legal player noop) (true (step 0)))
(<= (legal player a) (true (step 1)))
(<= (legal player b) (true (step 1)))
(<= (sees player started) (true (step 0)))
(<= (next (coin ?c)) (does random (coin ?c)))
(<= (next (step 1)) (true (step 0)))
(<= (next (step 2)) (true (step 1)))
(<= (next (chose ?m)) (does player ?m))
(<= terminal (true (coin 0)))
(<= terminal (true (step 2)))
(<= (goal player 100) (true (chose a)))
(<= (goal player 0) (not (true (chose a))))
(<= (goal random 0) (true (step 0)))
(<= (goal random 0) (not (true (step 0))))
"""


def test_every_algorithm_is_a_registry_spec() -> None:
    assert set(SPECS) <= set(player_names())
    game = Game.from_file(GAMES / "tictactoe.gdl")
    for name in SPECS:
        player = make_player(f"{name}:depth=3,time=0.5", np.random.default_rng(0), game)
        assert isinstance(player, ClassicPlayer) and player.name == name
        assert player.settings.max_depth == 3 and player.settings.max_time_s == 0.5
    assert split_specs("random,mcts:c=0.7,eval=heuristic,pvs") == [
        "random",
        "mcts:c=0.7,eval=heuristic",
        "pvs",
    ]


def test_options() -> None:
    assert parse_options("mcts", None).evaluation == "rollout"
    assert parse_options("alphabeta", None).evaluation == "heuristic"
    settings = parse_options("mcts", "c=0.7, simulations=500, eval=heuristic")
    assert (settings.exploration, settings.simulations, settings.evaluation) == (
        0.7,
        500,
        "heuristic",
    )
    assert parse_options("pvs", "net=run/best.pt").evaluation == "nn"
    assert parse_options("alphabeta", "utility=margin").utility == "margin"
    assert parse_options("mcts", "net=run/best.pt,rollout=0.5").rollout_weight == 0.5
    for name, argument, message in [
        ("mcts", "rollout=0.5", "into eval=nn only"),
        ("mcts", "eval=nn,rollout=1.5", "a weight in 0..1"),
        ("pvs", "deep=3", "no option"),
        ("pvs", "depth", "no option"),
        ("pvs", "depth=0", "number >= 1"),
        ("pvs", "time=soon", "number"),
        ("pvs", "eval=oracle", "eval must be"),
        ("paranoid", "utility=margin", "own goal"),
        ("alphabeta", "utility=mine", "own or margin"),
        ("negamax", None, "no classic search"),
    ]:
        with pytest.raises(GameError, match=message):
            parse_options(name, argument)


def test_a_network_that_does_not_fit_fails_at_once() -> None:
    game = Game.from_file(GAMES / "tictactoe.gdl")
    with pytest.raises(GameError):
        make_player("pvs:eval=nn,net=checkpoints/meier/latest.pt", np.random.default_rng(0), game)


def _play(game: Game, players: dict[str, Player], seed: int) -> tuple[int, ...]:
    record = run_match(
        game,
        {game.role(r): p for r, p in players.items()},
        np.random.default_rng(seed),
        play_clock_s=10.0,
    )
    assert not record.replacements
    return record.goals


@pytest.mark.parametrize("name", SPECS)
def test_plays_whole_matches_against_random(name: str) -> None:
    game = Game.from_file(GAMES / "tictactoe.gdl")
    for seed in range(2):
        player = make_player(f"{name}:time=0.05", np.random.default_rng(seed), game)
        other = RandomPlayer(np.random.default_rng(100 + seed))
        _play(game, {"xplayer": player, "oplayer": other}, seed)


def test_remembers_the_search() -> None:
    game = Game.from_file(GAMES / "tictactoe.gdl")
    player = ClassicPlayer(parse_options("pvs", "depth=2"), evaluator=HeuristicEvaluator())
    player.start(MatchInfo("m", game, game.role("xplayer")))
    move = player.play(Observation(0, None, frozenset()), deadline=float("inf"))
    assert player.last_search is not None and player.last_search.move == move
    assert player.last_search.depth == 2
    with pytest.raises(GameError):
        ClassicPlayer(parse_options("pvs", None)).play(Observation(0, None, frozenset()), 0.0)


def test_without_a_clock_the_search_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ggp play`` gives no clock (an infinite deadline): a search without depth= or
    simulations= stops after UNCLOCKED_TIME_S (made short here); one with them is not
    cut."""
    monkeypatch.setattr(classic_player, "UNCLOCKED_TIME_S", 0.01)
    game = Game.from_file(GAMES / "tictactoe.gdl")
    start = Observation(0, None, frozenset())
    legal = game.legal_moves(game.initial_state(), "xplayer")
    for spec in SPECS:
        player = make_player(spec, np.random.default_rng(0), game)
        player.start(MatchInfo("m", game, game.role("xplayer")))
        assert player.play(start, float("inf")) in legal  # mcts no longer refuses
    bounded = ClassicPlayer(parse_options("mcts", "simulations=64"), np.random.default_rng(0))
    bounded.start(MatchInfo("m", game, game.role("xplayer")))
    bounded.play(start, float("inf"))
    assert bounded.last_search is not None and bounded.last_search.simulations == 64
    deep = ClassicPlayer(parse_options("alphabeta", "depth=4"))
    deep.start(MatchInfo("m", game, game.role("xplayer")))
    deep.play(start, float("inf"))
    assert deep.last_search is not None and deep.last_search.depth == 4


def test_the_collector_is_paused_during_a_move_only() -> None:
    assert gc.isenabled()
    game = Game.from_file(GAMES / "tictactoe.gdl")
    player = ClassicPlayer(parse_options("pvs", "depth=2"))
    player.start(MatchInfo("m", game, game.role("xplayer")))
    player.play(Observation(0, None, frozenset()), float("inf"))
    assert gc.isenabled()
    # Players searching in parallel threads: enabled again when the last one leaves.
    inside = threading.Event()
    leave = threading.Event()

    def search() -> None:
        with collector_paused():
            inside.set()
            leave.wait(10)

    thread = threading.Thread(target=search)
    thread.start()
    inside.wait(10)
    with collector_paused():
        assert not gc.isenabled()
    assert not gc.isenabled()  # the other thread still searches
    leave.set()
    thread.join()
    assert gc.isenabled()
    player.stop(Observation(1, None, frozenset()))


def test_follows_the_state_from_the_percepts() -> None:
    game = Game.from_file(GAMES / "tictactoe.gdl")
    player = ClassicPlayer(parse_options("alphabeta", "depth=9"))
    player.start(MatchInfo("m", game, game.role("oplayer")))
    state = game.initial_state()
    turn = 0
    mine = player.play(Observation(turn, None, frozenset()), float("inf"))
    assert str(mine) == "noop"
    joint = ["(mark 1 1)", "noop"]
    percepts = game.percepts(state, joint, "oplayer")
    answer = player.play(Observation(1, mine, percepts), float("inf"))
    assert answer in game.legal_moves(game.next_state(state, joint), "oplayer")
    assert str(answer) == "(mark 2 2)"  # the only reply to a corner that does not lose


@requires_shared
@pytest.mark.parametrize("name", SPECS)
def test_connect_four_against_mcts(name: str) -> None:
    game = Game.from_file(SHARED / "gdl" / "gdl" / "connectFour.kif")
    player = make_player(f"{name}:time=0.03", np.random.default_rng(0), game)
    other = make_player("mcts:time=0.03", np.random.default_rng(1), game)
    _play(game, {"red": player, "black": other}, 0)


def test_plays_a_gdl_ii_game_from_one_consistent_history() -> None:
    game = Game.from_file(GAMES / "blindtictactoe.gdl")
    for name in ("pvs", "maxn", "mcts"):
        player = make_player(f"{name}:time=0.03", np.random.default_rng(0), game)
        other = RandomPlayer(np.random.default_rng(1))
        _play(game, {"x": player, "o": other}, 3)


@pytest.mark.parametrize("name", SPECS)
def test_searches_a_history_that_has_not_ended_the_game(name: str) -> None:
    game = Game.from_text(HIDDEN_END_KIF)
    start = Observation(0, None, frozenset())
    asked = Observation(1, Const("noop"), frozenset({Const("started")}))
    options = "simulations=200" if name == "mcts" else "depth=2"
    for seed in range(8):
        player = ClassicPlayer(parse_options(name, options), np.random.default_rng(seed))
        player.start(MatchInfo("m", game, game.role("player")))
        assert str(player.play(start, float("inf"))) == "noop"
        assert str(player.play(asked, float("inf"))) == "a"
        assert player.last_search is not None and player.last_search.solved


def test_the_network_plugs_in_as_leaf_evaluator() -> None:
    game = Game.from_file(GAMES / "meier.gdl")
    player = make_player("paranoid:eval=nn,depth=2,time=0.2", np.random.default_rng(0), game)
    assert isinstance(player, ClassicPlayer)
    assert type(player.load(game)).__name__ == "NetEvaluator"
    other = RandomPlayer(np.random.default_rng(1))
    _play(game, {"p1": player, "p2": other}, 0)


def test_mcts_with_the_network_takes_it_as_prior_too() -> None:
    game = Game.from_file(GAMES / "meier.gdl")
    player = make_player("mcts:eval=nn,simulations=50", np.random.default_rng(0), game)
    assert isinstance(player, ClassicPlayer)
    player.start(MatchInfo("m", game, game.role("p1")))
    search = player._search
    assert isinstance(search, MCTS) and search.prior is player.load(game)
    assert search.settings.prior_exploration == 1.25
    _play(game, {"p1": player, "p2": RandomPlayer(np.random.default_rng(1))}, 0)
    tuned = make_player("mcts:eval=nn,c=2", np.random.default_rng(0), game)
    plain = make_player("mcts:c=0.7", np.random.default_rng(0), game)
    for spec_player, c, prior in ((tuned, 2.0, True), (plain, 0.7, False)):
        assert isinstance(spec_player, ClassicPlayer)
        spec_player.start(MatchInfo("m", game, game.role("p1")))
        made = spec_player._search
        assert isinstance(made, MCTS) and (made.prior is not None) == prior
        assert (made.settings.prior_exploration if prior else made.settings.exploration) == c


@pytest.mark.parametrize(
    ("spec", "cut_after"),
    [*((spec, 400) for spec in [*SPECS, "rtmm"]), *((spec, 0) for spec in SPECS)],
)
def test_a_reasoner_query_cut_at_its_deadline_ends_the_search_with_a_move(
    spec: str, cut_after: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Through the prover a single query can outlast the search's own clock; cut at the
    # deadline (OutOfTime), it ends the search like its clock does: the move of the last
    # finished iteration (or the best so far; a random legal move when the cut came
    # before the root was expanded), not an error that leaves the move to the referee.
    from ggp.errors import OutOfTime
    from ggp.reasoning.prover import ProverStateMachine

    game = Game.from_file(GAMES / "connect_four.gdl", reasoner="prover")
    role = game.roles[0]
    game.legal_moves(game.initial_state(), role)  # the root's own queries are answered
    game.is_terminal(game.initial_state())
    checks = iter(range(cut_after))

    def runs_out(self: ProverStateMachine) -> None:
        if next(checks, None) is None:
            raise OutOfTime("the prover's query stopped at the deadline")

    player = make_player(spec, np.random.default_rng(0), game)
    player.start(MatchInfo("m", game, role))
    monkeypatch.setattr(ProverStateMachine, "_check_deadline", runs_out)
    move = player.play(Observation(0, None, frozenset()), float("inf"))
    assert next(checks, None) is None  # the cut came inside the search
    assert move in game.legal_moves(game.initial_state(), role)


@pytest.mark.parametrize("spec", ["mcts", "alphabeta", "idapos"])
def test_a_clock_inside_the_margin_is_warned_of(
    spec: str, caplog: pytest.LogCaptureFixture
) -> None:
    game = Game.from_file(
        GAMES / ("battlesnake/duel_7x7.gdl" if spec == "idapos" else "tictactoe.gdl")
    )
    player = make_player(spec, np.random.default_rng(0), game)
    player.start(MatchInfo("m", game, game.player_roles[0], play_clock_s=1.0))
    assert "leaves no time" not in caplog.text
    player.start(MatchInfo("m", game, game.player_roles[0], play_clock_s=0.1))
    assert f"{spec}: the play clock of 0.1 s leaves no time" in caplog.text
