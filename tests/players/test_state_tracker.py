"""TrackedPlayer: the match's state followed for the players that choose from states."""

from __future__ import annotations

import math
import time

import pytest

from ggp.errors import OutOfTime
from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.players.base import MatchInfo, Observation
from ggp.players.state_tracker import TrackedPlayer
from ggp.reasoning.state_machine import State

from conftest import GAMES


class LastMove(TrackedPlayer):
    """Plays the last legal move, asking the reasoner for the terminal check first."""

    def choose_move(self, state: State, deadline: float = math.inf) -> Term:
        match = self.started()
        match.game.is_terminal(
            match.game.next_state(
                state, [match.game.legal_moves(state, role)[-1] for role in match.game.roles]
            )
        )
        return match.game.legal_moves(state, match.role)[-1]


def test_a_query_past_the_deadline_stops_with_out_of_time() -> None:
    # Through the prover a query that would run past the move's deadline stops there
    # (OutOfTime, for the referee's fallback) instead of answering late.
    game = Game.from_file(GAMES / "tictactoe.gdl", reasoner="prover")
    player = LastMove()
    player.start(MatchInfo("m", game, game.role("xplayer")))
    with pytest.raises(OutOfTime):
        player.play(Observation(0, None, frozenset()), time.monotonic() - 1)
    player = LastMove()
    player.start(MatchInfo("m", game, game.role("xplayer")))
    move = player.play(Observation(0, None, frozenset()), time.monotonic() + 60)
    assert str(move) == "(mark 3 3)"
