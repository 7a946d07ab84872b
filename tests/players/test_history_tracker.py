"""The history tracker: a history of the latest observations or none, never an older one;
resynchronising from the reported moves when no history of the rules explains them."""

from __future__ import annotations

import logging
import time

import numpy as np
import pytest

from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.players.base import MatchInfo, Observation
from ggp.players.history_tracker import HistoryTracker
from ggp.search.clock import OutOfTime
from ggp.search.consistency import SampledHistory, check_consistent

from conftest import GAMES


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


def test_out_of_time_is_said_and_caught_up_later_never_answered_from_an_older_history() -> None:
    game, tracker = monty_tracker(0)
    # The kept history cannot be extended: a fresh one is needed, and the time is up.
    with pytest.raises(OutOfTime):
        tracker.legal_moves(deadline=time.monotonic() - 1)
    assert len(tracker.sample.joint_moves) == 1  # kept, not answered from
    moves = tracker.legal_moves()
    assert list(map(str, moves)) == ["noop", "switch"]
    check_consistent(game, tracker.history, tracker.sample)
    assert not tracker.lost
    with pytest.raises(GameError, match="cannot explain"):
        tracker.adopt(SampledHistory((game.initial_state(),), ()))


def test_lost_track_resynchronises_from_the_reported_moves_and_logs_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Tic-tac-toe read with every move public; the manager reports that oplayer marked a
    # cell on xplayer's turn, which the rules forbid: no history explains it.
    game = Game.from_file(GAMES / "tictactoe.gdl")
    tracker = HistoryTracker(MatchInfo("m", game, game.role("xplayer")), np.random.default_rng(0))
    t = game.term

    def did(x: str, o: str) -> frozenset[Term]:
        return frozenset({t(f"(did xplayer {x})"), t(f"(did oplayer {o})")})

    with caplog.at_level(logging.WARNING, logger="ggp.players.history_tracker"):
        tracker.observe(Observation(1, t("(mark 1 1)"), did("(mark 1 1)", "(mark 3 3)")))
        assert list(map(str, tracker.legal_moves())) == ["noop"]
        assert tracker.lost
        tracker.replied(t("noop"))
        tracker.observe(Observation(2, t("noop"), did("noop", "(mark 2 2)")))
        facts = {str(f) for f in game.state_facts(tracker.current().state)}
        # The reported moves are followed: xplayer's own mark and oplayer's (2 2).
        assert {"(cell 1 1 x)", "(cell 2 2 o)", "(control xplayer)"} <= facts
        sent = tracker.legal_moves()[0]
        tracker.replied(sent)  # the manager applies another move instead: sent is refused
        tracker.observe(Observation(3, t("(mark 3 1)"), did("(mark 3 1)", "noop")))
        tracker.observe(Observation(4, t("noop"), did("noop", "(mark 3 2)")))
        assert tracker.replaced == [sent]
        moves = tracker.legal_moves()
        assert moves and sent not in moves
    lost = [r for r in caplog.records if "lost track" in r.getMessage()]
    assert len(lost) == 1 and "after 0 of 1 steps" in lost[0].getMessage()


def test_a_replaced_move_stays_offered_while_the_tracker_is_in_sync() -> None:
    # A late reply is replaced too; while the history is known, its legal moves are.
    game, tracker = monty_tracker(0)
    tracker.legal_moves()
    tracker.replied(game.term("switch"))
    tracker.observe(Observation(3, game.term("noop"), frozenset()))
    assert tracker.replaced == [game.term("switch")] and not tracker.lost


#: Chance tosses a coin nobody sees; the player may go on heads and has no legal move on
#: tails (rules written carelessly, as Blind Breakthrough's are: a role can be left with
#: no legal move in a history consistent with what it saw). The one ``sees`` rule, never
#: true, makes it GDL-II: nobody sees the toss.
STUCK_ON_TAILS = """
(role player) (role random)
(init (step 0))
(<= (legal random (toss h)) (true (step 0)))
(<= (legal random (toss t)) (true (step 0)))
(<= (legal random noop) (true (step 1)))
(<= (legal player noop) (true (step 0)))
(<= (legal player go) (true (step 1)) (true (coin h)))
(<= (next (coin ?s)) (does random (toss ?s)))
(<= (next (step 1)) (true (step 0)))
(<= (next (step 2)) (true (step 1)))
(<= terminal (true (step 2)))
(goal player 100) (goal random 0)
(<= (sees player never) (true (step 5)))
"""


@pytest.mark.parametrize("seed", range(8))
def test_a_history_that_leaves_the_role_no_move_is_drawn_again(seed: int) -> None:
    game = Game.from_text(STUCK_ON_TAILS)
    tracker = HistoryTracker(MatchInfo("m", game, game.role("player")), np.random.default_rng(seed))
    tracker.observe(Observation(0, None, frozenset()))
    assert list(map(str, tracker.legal_moves())) == ["noop"]
    tracker.observe(Observation(1, game.term("noop"), frozenset()))
    # Asked to move at step 1, the player's coin must have come up heads.
    assert list(map(str, tracker.legal_moves())) == ["go"]
    assert "(coin h)" in {str(f) for f in game.state_facts(tracker.sample.state)}
