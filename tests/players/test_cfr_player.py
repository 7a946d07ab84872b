"""The CFR player: sound play from observations, anytime, never illegal."""

from __future__ import annotations

import logging
import time

import numpy as np
import pytest

from ggp.errors import GameError
from ggp.game import Game
from ggp.match import run_match
from ggp.players.base import MatchInfo, Observation
from ggp.players.cfr_player import CFRPlayer, CFRSettings, SearchResult
from ggp.players.random_player import HistoryTracker, RandomPlayer
from ggp.search.history import ObservationHistory
from ggp.search.sampler import OutOfTime, PosteriorSampler, SampledHistory, check_consistent

from conftest import GAMES, HIDDEN_LEGAL_KIF

FAST = CFRSettings(min_time_s=0.02, max_time_s=0.2, samples=50)


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
    settings = CFRSettings(min_time_s=0.6, max_time_s=2.0, margin_s=0.0, samples=20, max_nodes=3000)
    searches: list[SearchResult] = []

    class Recording(CFRPlayer):
        def search(self, stop_at: float, min_until: float) -> SearchResult:
            result = super().search(stop_at, min_until)
            searches.append(result)
            return result

    players = {
        game.role("p1"): Recording(settings, rng=np.random.default_rng(0)),
        game.role("p2"): RandomPlayer(np.random.default_rng(1)),
    }
    run_match(game, players, np.random.default_rng(2), play_clock_s=5.0)
    first = searches[0]  # the claim after the first roll
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


def monty_tracker(seed: int) -> tuple[Game, HistoryTracker]:
    """A candidate's tracker that guessed the car behind door 3, then saw door 3 opened."""
    game = Game.from_file(GAMES / "montyhall.gdl")
    tracker = HistoryTracker(
        MatchInfo("m", game, game.role("candidate")), np.random.default_rng(seed)
    )
    start = game.initial_state()
    joint = game.joint_move(["(choose 1)", "(hide_car 3)"])
    tracker.observe(Observation(1, game.term("(choose 1)"), frozenset()))
    tracker.adopt(SampledHistory((start, game.next_state(start, joint)), (joint,)))
    tracker.observe(Observation(2, game.term("noop"), frozenset({game.term("(open_door 3)")})))
    return game, tracker


def test_tracker_guesses_when_out_of_time_and_catches_up_later() -> None:
    game, tracker = monty_tracker(0)
    # The guess cannot be extended: a fresh history is needed, and the time is up.
    guess = tracker.legal_moves(deadline=time.monotonic() - 1)
    assert list(map(str, guess)) == ["noop"]  # the moves of the stale guess's state
    assert len(tracker.sample.joint_moves) == 1
    moves = tracker.legal_moves()
    assert list(map(str, moves)) == ["noop", "switch"]
    check_consistent(game, tracker.history, tracker.sample)
    with pytest.raises(GameError, match="cannot explain"):
        tracker.adopt(SampledHistory((game.initial_state(),), ()))


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
