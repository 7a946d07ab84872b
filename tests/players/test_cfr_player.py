"""The CFR player: sound play from observations, anytime, never illegal."""

from __future__ import annotations

import numpy as np
import pytest

from ggp.game import Game
from ggp.match import run_match
from ggp.players.cfr_player import CFRPlayer, CFRSettings, SearchResult
from ggp.players.random_player import RandomPlayer

from conftest import GAMES

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
        def search(self, stop_at: float, min_until: float) -> SearchResult | None:
            result = super().search(stop_at, min_until)
            assert result is not None
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
