"""Exact Meier values against fixed opponents, checked against simulation and REFERENCE.md."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ggp.game import Game
from ggp.players.handcrafted import MeierPlayer
from ggp.players.meier_values import (
    BestResponse,
    BestResponsePlayer,
    best_response_values,
    random_values,
)
from ggp.players.random_player import RandomPlayer

from conftest import GAMES, mean_score


def test_values_against_random_match_reference() -> None:
    # REFERENCE.md: random vs random, player 1 wins 0.348423 exactly; the best response
    # to random play scores 98.04 as player 1 (and 95.24 as player 2; the recursion
    # gives 95.28).
    assert random_values("random").first == pytest.approx(34.8423, abs=1e-4)
    assert random_values("random").second == pytest.approx(100 - 34.8423, abs=1e-4)
    assert best_response_values("random").first == pytest.approx(98.04, abs=0.01)
    assert best_response_values("random").second == pytest.approx(95.24, abs=0.05)


def test_best_response_bounds_every_strategy() -> None:
    for opponent in ("random", "handcrafted"):
        best, rand = best_response_values(opponent), random_values(opponent)  # type: ignore[arg-type]
        assert best.first > rand.first and best.second > rand.second
    # The handcrafted player is much harder to exploit than random play.
    handcrafted = best_response_values("handcrafted")
    assert handcrafted.first == pytest.approx(81.97, abs=0.01)
    assert handcrafted.second == pytest.approx(62.98, abs=0.01)


@pytest.mark.parametrize("role", ["p1", "p2"])
def test_random_against_handcrafted_matches_simulation(role: str) -> None:
    # The recursion models the MeierPlayer of ggp.players.handcrafted: simulate it.
    games = 1500
    score = mean_score(
        Game.from_file(GAMES / "meier.gdl"),
        role,
        lambda i: RandomPlayer(np.random.default_rng(i)),
        lambda i: MeierPlayer(np.random.default_rng(10_000 + i)),
        games,
        match_seed=20_000,
    )
    exact = getattr(random_values("handcrafted"), "first" if role == "p1" else "second") / 100
    sigma = math.sqrt(exact * (1 - exact) / games)
    assert abs(score - exact) < 4 * sigma


@pytest.mark.parametrize("opponent", ["random", "handcrafted"])
@pytest.mark.parametrize("role", ["p1", "p2"])
def test_best_response_player_scores_the_value(role: str, opponent: str) -> None:
    # The move-by-move best response, played through the engine, scores what the
    # recursion says the best response is worth: the ceilings are reached, not only bounds.
    games = 1500
    other = RandomPlayer if opponent == "random" else MeierPlayer
    score = mean_score(
        Game.from_file(GAMES / "meier.gdl"),
        role,
        lambda i: BestResponsePlayer(opponent),  # type: ignore[arg-type]
        lambda i: other(np.random.default_rng(10_000 + i)),
        games,
        match_seed=20_000,
    )
    values = best_response_values(opponent)  # type: ignore[arg-type]
    exact = (values.first if role == "p1" else values.second) / 100
    sigma = math.sqrt(exact * (1 - exact) / games)
    assert abs(score - exact) < 4 * sigma


def test_best_response_decisions() -> None:
    response = BestResponse("handcrafted")
    # With Meier (21) in hand, claim it; a "Meier" claim is always called.
    assert response.claim(-1, 20) == 20
    assert response.calls(5, 20)
    # Random play's claims are bluffs 94-97% of the time, worth more than rolling on
    # (at most 95.3): call them all.
    random = BestResponse("random")
    assert all(random.calls(0, claim) for claim in range(1, 21))
    # The handcrafted player's first claim is the truth more often the higher it is:
    # believe it up to 64, call it from 65 (rank 13) up.
    assert [response.calls(-1, claim) for claim in range(21)] == [False] * 13 + [True] * 8
    with pytest.raises(ValueError, match="no claim beats rank 20"):
        response.claim(20, 3)
