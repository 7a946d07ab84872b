"""The leaf-evaluator seam observes the move clock (issue 18): rollouts through the
prover and the propnet stop at the deadline, and a tree or an MCTS batch whose leaves were
valued past it is refused."""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import numpy as np
import pytest

from ggp.game import Game
from ggp.reasoning.state_machine import State
from ggp.search.classic.mcts import MCTS
from ggp.search.clock import OutOfTime
from ggp.search.evaluator import LeafEstimate, RolloutEvaluator
from ggp.search.tree import build_tree

from conftest import GAMES


@pytest.mark.parametrize("reasoner", ["prover", "propnet"])
def test_rollouts_stop_at_the_deadline(reasoner: str) -> None:
    # The prover plays one playout at a time; the propnet plays them all in one batched
    # (bit-sliced) call, which once ignored the deadline: RTS-Full's playouts run ~2,000
    # steps, and a batch of eight took 3.6 s whatever the clock.
    game = Game.from_file(GAMES / "tictactoe.gdl", reasoner=reasoner)
    assert game.reasoner == reasoner
    start = game.initial_state()
    evaluator = RolloutEvaluator(1000, np.random.default_rng(0))
    # A deadline already passed: not one step of the 1,000 playouts is played.
    past = evaluator.evaluate(game, [start, start], deadline=time.monotonic() - 1.0)
    assert past.values.shape == (2, 2) and not past.values.any()
    # No deadline: every playout is played (x wins, loses or draws: means in 0..100).
    full = RolloutEvaluator(20, np.random.default_rng(0)).evaluate(game, [start])
    assert full.values.sum() > 0


class PastTheDeadline:
    """Values every leaf 50, but only once the deadline it was given has passed."""

    def __init__(self) -> None:
        self.deadlines: list[float | None] = []

    def evaluate(
        self, game: Game, states: Sequence[State], deadline: float | None = None
    ) -> LeafEstimate:
        self.deadlines.append(deadline)
        assert deadline is not None
        while time.monotonic() <= deadline:
            time.sleep(0.001)
        return LeafEstimate(np.full((len(states), len(game.roles)), 50.0))


def test_a_tree_valued_past_its_deadline_is_refused() -> None:
    game = Game.from_file(GAMES / "tictactoe.gdl")
    evaluator = PastTheDeadline()
    deadline = time.monotonic() + 0.05
    with pytest.raises(OutOfTime, match="no time left to evaluate"):
        build_tree(game, depth=1, evaluator=evaluator, deadline=deadline)
    assert evaluator.deadlines == [deadline]  # the evaluator was told the deadline


def test_mcts_values_by_the_deadline_and_drops_values_past_it() -> None:
    # Its leaf batch gets the search's deadline; values that come after it (playouts cut
    # there, perhaps) are not backed up, and the move is still legal and on time.
    game = Game.from_file(GAMES / "tictactoe.gdl")
    state = game.initial_state()
    evaluator = PastTheDeadline()
    search = MCTS(game, "xplayer", evaluator, rng=np.random.default_rng(0))
    deadline = time.monotonic() + 0.05
    result = search.search(state, deadline)
    assert evaluator.deadlines == [deadline]
    assert result.simulations == 0 and search.evaluations == 0
    assert result.move in game.legal_moves(state, "xplayer")


def test_mcts_says_once_when_no_simulation_fits_the_time(caplog: pytest.LogCaptureFixture) -> None:
    # A user whose evaluator (long random playouts) cannot value one batch in a move's
    # time learns it, and how to mend it, once: not on every move, and not for a first
    # move alone (its time may go to warming up).
    game = Game.from_file(GAMES / "tictactoe.gdl")
    search = MCTS(game, "xplayer", PastTheDeadline(), rng=np.random.default_rng(0))
    warnings: list[str] = []
    with caplog.at_level(logging.WARNING, logger="ggp.search.classic.mcts"):
        for _ in range(3):
            search.search(game.initial_state(), time.monotonic() + 0.02)
            records = [r for r in caplog.records if r.levelno == logging.WARNING]
            warnings.append(" | ".join(r.getMessage() for r in records))
    assert warnings[0] == ""
    assert "no simulation finished" in warnings[1] and "rollout=0" in warnings[1]
    assert warnings[2] == warnings[1]  # said once
