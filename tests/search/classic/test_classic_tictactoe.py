"""Tic-tac-toe: every classic search finds the game's value, 50, and never loses.

"Never loses" is proved, not sampled: against the deterministic player (searching to the
end of the game, or until its MCTS root is proven, with a seeded generator), every
reply of the opponent at every one of its turns is tried, and every game reached ends
with the player's goal at least 50.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest

from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.players.base import MatchInfo
from ggp.players.classic_player import ClassicPlayer, parse_options
from ggp.reasoning.state_machine import State
from ggp.search.classic import (
    MCTS,
    MTDF,
    PVS,
    AlphaBeta,
    MaxN,
    Minimax,
    Paranoid,
    TreeSearch,
    iterative_deepening,
)

from conftest import GAMES

ALGORITHMS = ["alphabeta", "pvs", "mtdf", "paranoid", "maxn", "mcts"]
DEPTH_FIRST: list[type[TreeSearch]] = [AlphaBeta, PVS, MTDF, Paranoid, MaxN]


@pytest.fixture(scope="module")
def tictactoe() -> Game:
    return Game.from_file(GAMES / "tictactoe.gdl")


@pytest.mark.parametrize("search_class", DEPTH_FIRST, ids=lambda c: c.__name__)
@pytest.mark.parametrize("role", ["xplayer", "oplayer"])
def test_depth_first_value_from_the_start_is_50(
    tictactoe: Game, search_class: type[TreeSearch], role: str
) -> None:
    result = iterative_deepening(search_class(tictactoe, role), tictactoe.initial_state())
    assert result.value == 50.0
    assert result.solved and result.depth == 9
    # Every fixed-depth search of the whole game agrees.
    assert search_class(tictactoe, role).search_depth(
        tictactoe.initial_state(), 9, None
    ).value == pytest.approx(50.0)


def test_plain_minimax_value_from_the_start_is_50(tictactoe: Game) -> None:
    search = Minimax(tictactoe, "xplayer")
    assert search.search_depth(tictactoe.initial_state(), 9, None).value == 50.0
    # The whole game tree: 549,945 move sequences, plus the root and its sub-ply nodes.
    assert search.nodes == 549_946


def test_mcts_proves_the_value_50(tictactoe: Game) -> None:
    search = MCTS(tictactoe, "xplayer", rng=np.random.default_rng(0))
    result = search.search(tictactoe.initial_state(), max_simulations=200_000)
    assert result.solved
    assert result.value == 50.0


def _worst_goal(game: Game, role: str, choose: Callable[[State], Term]) -> int:
    """The lowest goal of ``role`` over every game where it plays ``choose`` and the
    other roles play every legal move, each state visited once."""
    me = game.role_index(role)
    worst = 100
    seen: set[State] = set()
    stack = [game.initial_state()]
    while stack:
        state = stack.pop()
        if state in seen:
            continue
        seen.add(state)
        if game.is_terminal(state):
            worst = min(worst, game.goals(state)[me])
            continue
        expansion = game.expand(state)
        mine = expansion.legal[me]
        move = mine[0] if len(mine) == 1 else choose(state)
        assert move in mine
        stack.extend(
            child
            for joint, child in zip(expansion.joints, expansion.states, strict=True)
            if joint[me] == move
        )
    return worst


@pytest.mark.parametrize("algorithm", ALGORITHMS)
@pytest.mark.parametrize("role", ["xplayer", "oplayer"])
def test_never_loses_against_any_opponent(tictactoe: Game, algorithm: str, role: str) -> None:
    options = "simulations=100000" if algorithm == "mcts" else "depth=9"
    player = ClassicPlayer(parse_options(algorithm, options), np.random.default_rng(1))
    player.start(MatchInfo("enumeration", tictactoe, tictactoe.role(role)))
    choices: dict[State, Term] = {}

    def choose(state: State) -> Term:
        if state not in choices:
            result = player.choose(state)
            assert result.solved  # the player knew the value of every move it made
            choices[state] = result.move
        return choices[state]

    assert _worst_goal(tictactoe, role, choose) >= 50
