"""Exact Blind Tic-Tac-Toe values against the random player, checked against simulation."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.players.base import MatchInfo, Observation
from ggp.players.blindtictactoe_values import BestResponse, BestResponsePlayer, policy_value
from ggp.players.random_player import RandomPlayer

from conftest import GAMES, mean_score

#: Centre, corners, edges.
ORDER = (4, 0, 8, 2, 6, 1, 3, 5, 7)


def fixed_order(tried: int, held: int) -> dict[int, float]:
    return {next(c for c in ORDER if not tried >> c & 1): 1.0}


def uniform_first(tried: int, held: int) -> dict[int, float]:
    """A uniformly random first cell, then the cells in ORDER."""
    if not tried:
        return {c: 1 / 9 for c in range(9)}
    return fixed_order(tried, held)


class FixedOrderPlayer:
    """Tries the cells in ORDER, whatever it sees."""

    name = "fixed-order"

    def start(self, match: MatchInfo) -> None:
        self.game = match.game

    def play(self, observation: Observation, deadline: float) -> Term:
        cell = ORDER[observation.turn]
        return self.game.term(f"(mark {cell // 3 + 1} {cell % 3 + 1})")

    def stop(self, observation: Observation) -> None:
        pass

    def abort(self) -> None:
        pass


@pytest.mark.parametrize("role", ["x", "o"])
def test_fixed_order_value_matches_simulation(role: str) -> None:
    games = 1500
    score = mean_score(
        Game.from_file(GAMES / "blindtictactoe.gdl"),
        role,
        lambda i: FixedOrderPlayer(),
        lambda i: RandomPlayer(np.random.default_rng(i)),
        games,
        match_seed=10_000,
    )
    exact = policy_value(fixed_order) / 100
    assert exact == pytest.approx(0.7340, abs=1e-4)
    sigma = math.sqrt(0.25 / games)  # the score's spread is at most 1/2 per game
    assert abs(score - exact) < 4 * sigma


def test_values_agree_under_board_symmetry() -> None:
    rotate = (6, 3, 0, 7, 4, 1, 8, 5, 2)  # a quarter turn
    rotated = tuple(rotate[c] for c in ORDER)

    def rotated_order(tried: int, held: int) -> dict[int, float]:
        return {next(c for c in rotated if not tried >> c & 1): 1.0}

    assert policy_value(rotated_order) == pytest.approx(policy_value(fixed_order))
    # A centre first move is worth more than a random one.
    assert policy_value(uniform_first) < policy_value(fixed_order)


def test_policy_must_try_an_untried_cell() -> None:
    with pytest.raises(ValueError, match="cell 4 was tried before"):
        policy_value(lambda tried, held: {4: 1.0})


@pytest.fixture(scope="module")
def response() -> BestResponse:
    solved = BestResponse()
    solved.value()  # about 20 s
    return solved


@pytest.mark.slow
def test_best_response_value(response: BestResponse) -> None:
    # The same value came out without the symmetry reduction (in 6.6 min).
    best = response.value()
    assert best == pytest.approx(82.7216, abs=1e-4)
    assert best > policy_value(fixed_order) > policy_value(uniform_first)
    # The best first move is the centre.
    tried, held, belief = BestResponse.START
    assert response.best_cell(tried, held, belief) == 4


@pytest.mark.slow
@pytest.mark.parametrize("role", ["x", "o"])
def test_best_response_player_scores_the_value(response: BestResponse, role: str) -> None:
    games = 1500
    score = mean_score(
        Game.from_file(GAMES / "blindtictactoe.gdl"),
        role,
        lambda i: BestResponsePlayer(response),
        lambda i: RandomPlayer(np.random.default_rng(i)),
        games,
        match_seed=10_000,
    )
    sigma = math.sqrt(0.25 / games)
    assert abs(score - response.value() / 100) < 4 * sigma


def test_information_set_after_a_step() -> None:
    tried, held, belief = BestResponse.after(*BestResponse.START, 4, True)
    assert (tried, held) == (1 << 4, 1 << 4)
    # The opponent tried another cell and got it (twice the weight: either tiebreak), or
    # tried the centre too and lost the tiebreak.
    assert belief == tuple(
        sorted((1 << c, 0 if c == 4 else 1 << c, 1 if c == 4 else 2) for c in range(9))
    )
    # Failing: the opponent tried the centre in the same turn and won the tiebreak.
    assert BestResponse.after(*BestResponse.START, 4, False) == (1 << 4, 0, ((16, 16, 1),))
    with pytest.raises(ValueError, match="was tried before"):
        BestResponse.after(1 << 4, 1 << 4, belief, 4, True)
