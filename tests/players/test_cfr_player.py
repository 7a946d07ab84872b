"""The CFR player: sound play from observations, anytime, never illegal."""

from __future__ import annotations

import dataclasses
import logging
import time

import numpy as np
import pytest

from ggp.errors import GameError, NoConsistentHistoryError
from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.match import run_match
from ggp.players import cfr_player
from ggp.players.base import MatchInfo, Observation
from ggp.players.cfr_player import CFRPlayer, CFRSettings, SearchResult
from ggp.players.history_tracker import HistoryTracker
from ggp.players.random_player import RandomPlayer
from ggp.search.history import ObservationHistory
from ggp.search.sampler import OutOfTime, PosteriorSampler, SampledHistory

from conftest import GAMES, HIDDEN_LEGAL_KIF

FAST = CFRSettings(min_time_s=0.02, max_time_s=0.2, samples=50)


class Recording(CFRPlayer):
    """A CFR player that keeps the result of each search."""

    def __init__(self, settings: CFRSettings, rng: np.random.Generator) -> None:
        super().__init__(settings, rng=rng)
        self.searches: list[SearchResult] = []

    def search(self, stop_at: float, min_until: float) -> SearchResult:
        result = super().search(stop_at, min_until)
        self.searches.append(result)
        return result


def test_monty_hall_always_switches() -> None:
    game = Game.from_file(GAMES / "montyhall.gdl")
    candidate = game.role("candidate")
    switched = 0
    for seed in range(20):
        player = CFRPlayer(FAST, rng=np.random.default_rng(seed))
        record = run_match(game, {candidate: player}, np.random.default_rng(1000 + seed))
        assert not record.replacements
        last = record.joint_moves[-1][game.role_index(candidate)]
        switched += last == "switch"
    # The published system switched only 2/3 of the time (strategy fusion).
    assert switched == 20


@pytest.mark.parametrize("policy", ["average", "random-iteration"])
def test_never_illegal_in_meier(policy: str) -> None:
    game = Game.from_file(GAMES / "meier.gdl")
    settings = CFRSettings(min_time_s=0.02, max_time_s=0.1, samples=20, policy=policy)  # type: ignore[arg-type]
    for seed in range(4):
        players = {
            game.role("p1"): CFRPlayer(settings, rng=np.random.default_rng(seed)),
            game.role("p2"): RandomPlayer(np.random.default_rng(seed)),
        }
        record = run_match(game, players, np.random.default_rng(seed), play_clock_s=5.0)
        assert not record.replacements


def test_blind_tictactoe_simultaneous_moves_are_legal() -> None:
    game = Game.from_file(GAMES / "blindtictactoe.gdl")
    settings = CFRSettings(min_time_s=0.02, max_time_s=0.1, samples=20)
    players = {
        role: CFRPlayer(settings, rng=np.random.default_rng(i))
        for i, role in enumerate(game.player_roles)
    }
    record = run_match(game, players, np.random.default_rng(7), play_clock_s=5.0)
    assert not record.replacements


def test_anytime_answers_before_a_tight_deadline() -> None:
    game = Game.from_file(GAMES / "meier.gdl")
    # It would like 5 s per move, but the referee's clock allows 0.4 s: every reply must
    # still come in time (a late reply would be recorded as replaced).
    slow = CFRSettings(min_time_s=5.0, max_time_s=10.0, margin_s=0.1)
    for seed in range(2):
        players = {
            game.role("p1"): RandomPlayer(np.random.default_rng(seed)),
            game.role("p2"): CFRPlayer(slow, rng=np.random.default_rng(seed)),
        }
        record = run_match(game, players, np.random.default_rng(seed), play_clock_s=0.4)
        assert not record.replacements
        p2 = game.role_index("p2")
        assert max(times[p2] for times in record.move_seconds) < 0.4


def test_search_spends_the_minimum_budget_when_no_deeper_tree_fits() -> None:
    # Meier's first move: no tree within 3,000 nodes reaches the end of the game, so the player
    # keeps iterating on its deepest tree until the minimum budget is spent.
    game = Game.from_file(GAMES / "meier.gdl")
    settings = CFRSettings(
        min_time_s=0.6,
        max_time_s=2.0,
        margin_s=0.0,
        samples=20,
        max_nodes=3000,
        whole_game_nodes=0,  # the depth-limited search from sampled histories
    )
    players = {
        game.role("p1"): Recording(settings, rng=np.random.default_rng(0)),
        game.role("p2"): RandomPlayer(np.random.default_rng(1)),
    }
    run_match(game, players, np.random.default_rng(2), play_clock_s=5.0)
    first = players[game.role("p1")].searches[0]  # the claim after the first roll
    assert not first.complete
    # (The budget counts from the start of play(), a moment before the search starts.)
    assert first.seconds >= 0.9 * settings.min_time_s


@pytest.mark.parametrize("weight", [0.0, 0.5, 1.0])
def test_modelled_opponents_still_legal_in_blind_tictactoe(weight: float) -> None:
    game = Game.from_file(GAMES / "blindtictactoe.gdl")
    settings = CFRSettings(min_time_s=0.02, max_time_s=0.1, samples=20, model_weight=weight)
    players = {
        game.role("x"): CFRPlayer(settings, rng=np.random.default_rng(0)),
        game.role("o"): RandomPlayer(np.random.default_rng(1)),
    }
    record = run_match(game, players, np.random.default_rng(7), play_clock_s=5.0)
    assert not record.replacements


def test_plays_only_moves_legal_in_every_history_it_cannot_rule_out() -> None:
    # The rules hide whether bold, left and right are legal; safe and wait always are.
    game = Game.from_text(HIDDEN_LEGAL_KIF)
    player_role = game.role("player")
    for seed in range(6):
        player = CFRPlayer(FAST, rng=np.random.default_rng(seed))
        record = run_match(game, {player_role: player}, np.random.default_rng(seed))
        assert not record.replacements
        assert str(record.joint_moves[-1][game.role_index(player_role)]) == "safe"
        assert player.last_search is not None
        assert list(map(str, player.last_search.moves)) == ["safe", "wait"]


def test_out_of_time_sampling_still_answers_with_a_legal_move(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def out_of_time(
        self: PosteriorSampler,
        history: ObservationHistory,
        n: int,
        rng: np.random.Generator,
        *,
        deadline: float | None = None,
    ) -> list[tuple[SampledHistory, float]]:
        raise OutOfTime("the exact filter stopped at step 1")

    monkeypatch.setattr(PosteriorSampler, "sample_many", out_of_time)
    game = Game.from_file(GAMES / "blindtictactoe.gdl")
    players = {
        game.role("x"): CFRPlayer(FAST, rng=np.random.default_rng(0)),
        game.role("o"): RandomPlayer(np.random.default_rng(1)),
    }
    with caplog.at_level(logging.INFO, logger="ggp.players.cfr_player"):
        record = run_match(game, players, np.random.default_rng(0))
    assert not record.replacements
    assert "no history sampled in time" in caplog.text


def test_the_fallback_looks_for_a_history_until_the_clock_margin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A history of the latest observations takes longer than the move's time budget
    # (max_time_s) but comes before the clock: the fallback waits for it, not the referee.
    def out_of_time(*args: object, **kwargs: object) -> list[tuple[SampledHistory, float]]:
        raise OutOfTime("the exact filter stopped at step 1")

    original = HistoryTracker.legal_moves
    asked: list[float] = []

    def slow_legal_moves(self: HistoryTracker, deadline: float | None = None) -> tuple[Term, ...]:
        assert deadline is not None
        asked.append(deadline - time.monotonic())
        if deadline - time.monotonic() < 2.0:  # found only after two seconds
            raise OutOfTime("backtracking stopped after 1 states")
        return original(self, deadline)

    monkeypatch.setattr(PosteriorSampler, "sample_many", out_of_time)
    monkeypatch.setattr(HistoryTracker, "legal_moves", slow_legal_moves)
    game = Game.from_file(GAMES / "blindtictactoe.gdl")
    player = CFRPlayer(FAST, rng=np.random.default_rng(0))
    player.start(MatchInfo("m", game, game.role("x")))
    move = player.play(Observation(0, None, frozenset()), time.monotonic() + 5.0)
    assert move in game.legal_moves(game.initial_state(), "x")
    assert max(asked) > 4.0 > FAST.max_time_s  # asked until the clock's margin


#: Chance tosses a coin the player does not see (the player waits), then the player looks
#: and is shown it, then calls it: its legal moves differ at every step.
COIN_KIF = """
(role player) (role random)
(side h) (side t)
(init (step 0))
(<= (legal random (toss ?s)) (true (step 0)) (side ?s))
(<= (legal random noop) (not (true (step 0))))
(<= (legal player wait) (true (step 0)))
(<= (legal player look) (true (step 1)))
(<= (legal player (call ?s)) (true (step 2)) (side ?s))
(<= (next (coin ?s)) (does random (toss ?s)))
(<= (next (coin ?s)) (true (coin ?s)))
(<= (next (step 1)) (true (step 0)))
(<= (next (step 2)) (true (step 1)))
(<= (next (step 3)) (true (step 2)))
(<= (next (called ?s)) (does player (call ?s)))
(<= (sees player (coin ?s)) (true (step 1)) (true (coin ?s)))
(<= terminal (true (step 3)))
(<= (goal player 100) (true (called ?s)) (true (coin ?s)))
(<= (goal player 0) (true (called ?s)) (not (true (coin ?s))))
(<= (goal random 0) (true (step 3)))
"""


def test_the_fallback_never_comes_from_an_older_history() -> None:
    # The player's history tracker drew one coin while the player waited; shown the other
    # coin, with no time left to look for a new history, it must not answer from the old
    # one (whose only move, look, is illegal now): a legal call, or no move at all.
    game = Game.from_text(COIN_KIF)
    role = game.role("player")
    outcomes = set()
    for seen in ("h", "t"):
        player = CFRPlayer(FAST, rng=np.random.default_rng(0))
        player.start(MatchInfo("coin", game, role))
        later = time.monotonic() + 60
        assert str(player.play(Observation(0, None, frozenset()), later)) == "wait"
        assert str(player.play(Observation(1, game.term("wait"), frozenset()), later)) == "look"
        shown = frozenset({game.term(f"(coin {seen})")})
        try:
            move = player.play(Observation(2, game.term("look"), shown), time.monotonic() - 1)
        except OutOfTime:
            outcomes.add("no move known in time")
        else:
            assert str(move) in {"(call h)", "(call t)"}
            outcomes.add("legal")
    assert outcomes == {"no move known in time", "legal"}


def test_an_injected_engine_error_is_not_swallowed(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # Only NoConsistentHistoryError and OutOfTime turn into a fallback move; an error of
    # the engine inside the search (here in the leaf playouts) reaches the referee, which
    # logs it with its traceback and records the replacement.
    def broken(*args: object, **kwargs: object) -> object:
        raise GameError("injected engine error")

    monkeypatch.setattr(Game, "random_playouts", broken)
    game = Game.from_file(GAMES / "montyhall.gdl")
    candidate = game.role("candidate")
    depth_limited = dataclasses.replace(FAST, whole_game_nodes=0)  # leaves, not the whole game
    player = CFRPlayer(depth_limited, rng=np.random.default_rng(0))
    player.start(MatchInfo("m", game, candidate))
    with pytest.raises(GameError, match="injected engine error"):
        player.play(Observation(0, None, frozenset()), time.monotonic() + 60)
    with caplog.at_level(logging.ERROR, logger="ggp.match"):
        record = run_match(game, {candidate: player}, np.random.default_rng(0))
    assert record.replacements[0].reason == "error: injected engine error"
    failures = [r for r in caplog.records if "failed at step 0" in r.getMessage()]
    assert failures and failures[0].exc_info is not None  # with its traceback


def test_no_consistent_history_is_not_a_game_error() -> None:
    assert not issubclass(NoConsistentHistoryError, GameError)


def test_a_small_game_is_solved_whole_and_the_solve_goes_on_from_move_to_move() -> None:
    # Kuhn poker's whole tree has 55 nodes: the player solves it from the initial state
    # (every information set the true one) and keeps the solver for its later moves.
    game = Game.from_file(GAMES / "kuhn_poker.gdl")
    player = Recording(FAST, rng=np.random.default_rng(0))
    searches = player.searches
    for seed in range(6):
        players = {
            game.role("p1"): player,
            game.role("p2"): RandomPlayer(np.random.default_rng(seed)),
        }
        run_match(game, players, np.random.default_rng(seed))
    assert searches and all(s.complete and s.nodes == 55 for s in searches)
    iterations = [s.iterations for s in searches]
    assert iterations == sorted(iterations) and iterations[-1] > iterations[0]


def test_the_whole_game_is_not_built_again_once_found_too_large(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    whole: list[int] = []  # the limits of the whole-game builds

    def build_tree(game: Game, *args: object, **kwargs: object) -> object:
        if "max_nodes" in kwargs and not args:
            whole.append(kwargs["max_nodes"])  # type: ignore[arg-type]
        return original(game, *args, **kwargs)

    original = cfr_player.build_tree
    monkeypatch.setattr(cfr_player, "build_tree", build_tree)
    game = Game.from_file(GAMES / "blindtictactoe.gdl")
    settings = dataclasses.replace(FAST, whole_game_nodes=500)
    first, second = (CFRPlayer(settings, rng=np.random.default_rng(i)) for i in range(2))
    for player in (first, second):  # both search from samples; the second builds nothing
        player.start(MatchInfo("m", game, game.role("x")))
        player.play(Observation(0, None, frozenset()), time.monotonic() + 5.0)
        assert player.last_search is not None and player.last_search.nodes != 500
    assert cfr_player._TOO_LARGE[game] == 500
    assert whole == [500]
