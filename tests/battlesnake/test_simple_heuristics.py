"""The simple opponents as leaf heuristics, and IDAPOS's other searches (Table 1's columns)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import pytest

from ggp.battlesnake.board import Board, SnakeBody, board_state
from ggp.battlesnake.heuristics import LIVE_HIGH, LIVE_LOW, sigma
from ggp.battlesnake.reflex import HUNGRY
from ggp.battlesnake.simple_heuristics import SimpleHeuristicEvaluator, simple_value
from ggp.errors import GameError
from ggp.game import Game
from ggp.players.base import MatchInfo
from ggp.players.idapos_player import IdaposPlayer, parse_idapos_options

GAMES = Path(__file__).resolve().parents[2] / "games" / "battlesnake"

ME = SnakeBody(((1, 1), (1, 0), (0, 0)), 100)
SHORT = SnakeBody(((1, 3), (1, 4)), 100)  # two cells, its head two steps above ours
LONG = SnakeBody(((5, 5), (5, 6), (6, 6), (6, 5)), 100)


def test_greedy_is_length_and_food() -> None:
    near = Board(7, 0, (ME, LONG), frozenset({(2, 1)}))  # one step to the food
    far = Board(7, 0, (ME, LONG), frozenset({(3, 3)}))
    m, m_plus, f = sigma(-1), sigma(0), math.exp(-0.2)
    assert simple_value("greedy", near, 0) == pytest.approx(m + f * (m_plus - m))
    assert simple_value("greedy", near, 0) > simple_value("greedy", far, 0)


def test_aggressive_hunts_only_shorter_snakes() -> None:
    board = Board(7, 0, (ME, SHORT, LONG), frozenset())
    assert simple_value("aggressive", board, 0) - simple_value("greedy", board, 0) == (
        pytest.approx(math.exp(-0.2 * 1))  # the short head is 2 steps away
    )
    alone = Board(7, 0, (ME, LONG), frozenset())  # the only other snake is longer
    assert simple_value("aggressive", alone, 0) == simple_value("greedy", alone, 0)


def test_tail_chaser_stays_by_its_tail_until_hungry() -> None:
    coiled = SnakeBody(((1, 1), (1, 0), (0, 0), (0, 1)), 100)  # the head is next to the tail
    board = Board(7, 0, (coiled, LONG), frozenset({(3, 3)}))
    assert simple_value("tailchaser", board, 0) == 1.0
    stretched = SnakeBody(((3, 1), (2, 1), (1, 1), (0, 1)), 100)
    assert simple_value("tailchaser", Board(7, 0, (stretched, LONG), frozenset()), 0) == (
        pytest.approx(math.exp(-0.2 * 4))  # (0, 2) or (0, 0), each 4 steps from the head
    )
    hungry = Board(7, 0, (SnakeBody(coiled.body, HUNGRY), LONG), frozenset({(3, 3)}))
    assert simple_value("tailchaser", hungry, 0) == simple_value("greedy", hungry, 0)


def test_evaluator_values_stay_in_the_live_range_and_follow_the_heuristic() -> None:
    game = Game.from_file(GAMES / "duel_7x7.gdl")
    near = board_state(game, Board(7, 0, (ME, LONG), frozenset({(2, 1)})))
    far = board_state(game, Board(7, 0, (ME, LONG), frozenset({(3, 3)})))
    values = SimpleHeuristicEvaluator("greedy").evaluate(game, [near, far]).values
    assert ((values[:, :2] >= LIVE_LOW) & (values[:, :2] <= LIVE_HIGH)).all()
    assert values[0, 0] > values[1, 0]  # nearer the food is better for us


@pytest.mark.parametrize(
    ("search", "leaf"),
    [
        ("maxn", "snake"),
        ("alphabeta", "greedy"),
        ("minimax", "aggressive"),
        ("idapos", "tailchaser"),
        ("idapos", "snake"),
    ],
)
def test_every_search_and_heuristic_plays_a_safe_move(search: str, leaf: str) -> None:
    game = Game.from_file(GAMES / "standard_11x11.gdl")
    player = IdaposPlayer(parse_idapos_options(f"search={search},eval={leaf},depth=2"))
    player.start(MatchInfo("m", game, game.roles[0]))
    me = SnakeBody(((0, 5), (1, 5), (2, 5)), 90)  # at the left edge, heading left
    near = SnakeBody(((1, 8), (1, 9), (1, 10)), 90)
    far = (SnakeBody(((9, 9), (9, 10), (10, 10)), 90), SnakeBody(((9, 1), (9, 0), (10, 0)), 90))
    board = Board(11, 3, (me, near, *far), frozenset({(5, 5)}))
    assert player.search(board, math.inf) in ("up", "down")
    simulated = player.last_played_out
    assert len(simulated) == 2
    if search == "idapos":  # locality: the far snakes are frozen at depth 1
        assert simulated[0] == 1
    else:  # every live snake at every depth
        assert simulated == [4, 4]


def test_bad_options_are_refused() -> None:
    with pytest.raises(GameError, match="search=idapos"):
        parse_idapos_options("search=mcts")
    with pytest.raises(GameError, match="eval=snake"):
        parse_idapos_options("eval=nn")
    assert np.isclose(parse_idapos_options("eval=greedy,margin=0.02").margin_s, 0.02)
