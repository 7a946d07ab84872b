"""A search run in time slices (ggp/search/classic/pondering.py): it pauses between slices
and resumes with its stack, so slicing changes nothing but when the work is done."""

from __future__ import annotations

import math
import time

from ggp.game import Game
from ggp.search.classic.pondering import Pondering
from ggp.search.classic.rtmm import RTMM

MELEE = "games/rts/rts_8x8_melee.gdl"


def test_a_sliced_search_does_exactly_the_work_of_one_run() -> None:
    game = Game.from_file(MELEE)
    root = game.initial_state()
    whole = RTMM(game, "blue").search(root, math.inf, max_lookahead=3)
    search = RTMM(game, "blue")
    pondering = Pondering(search, lambda until: search.search(root, until, 3))
    slices = 0
    while not pondering.done:
        pondering.run_for(time.monotonic() + 0.002)
        slices += 1
    result = pondering.finish(time.monotonic())
    assert slices > 3  # it was cut, and resumed where it stopped: the same nodes
    assert (result.move, result.value, result.lookahead) == (
        whole.move,
        whole.value,
        whole.lookahead,
    )
    assert (result.nodes, result.leaves, result.iterations) == (
        whole.nodes,
        whole.leaves,
        whole.iterations,
    )
    assert search.pause is None


def test_a_paused_search_waits_and_a_cancelled_one_ends() -> None:
    game = Game.from_file(MELEE)
    root = game.initial_state()
    search = RTMM(game, "blue")
    pondering = Pondering(search, lambda until: search.search(root, until))
    pondering.run_for(time.monotonic() + 0.02)
    nodes = search.nodes
    time.sleep(0.02)
    assert search.nodes == nodes and not pondering.done  # paused between slices
    assert pondering.searched_s >= 0.015  # the slice's 0.02 s, less the call's own start
    pondering.run_for(time.monotonic() + 0.02)
    assert search.nodes > nodes
    result = pondering.finish(time.monotonic() + 0.01)
    assert pondering.done and result.move in game.legal_moves(root, "blue")
    assert pondering.searched_s >= 0.04  # three slices of 0.05 s in all
    stopped = Pondering(search, lambda until: search.search(root, until))
    stopped.run_for(time.monotonic() + 0.01)
    stopped.cancel()
    assert stopped.done and search.pause is None
