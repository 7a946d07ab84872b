"""What dropping a full MCTS tree costs a move: freed at once, or a slice after each batch.

MCTS keeps its tree from move to move and drops it when it passes
:attr:`~ggp.search.classic.mcts.MCTSSettings.max_nodes`. Until 2026-12-03 the next move
cleared it at once, inside its clock (RTS-Full at 0.1 s a move: moves of 0.49 and 0.74 s);
now it is handed to :class:`~ggp.search.classic.dropped.Dropped` and freed
:data:`~ggp.search.classic.dropped.DEFAULT_SLICE` nodes after each batch. One run:

1. grows a tree of ``--nodes`` nodes (``max_nodes`` set just below) by searching the
   game's start with the paper's evaluation (RTS games) or the generic heuristic, and
   times clearing it at once (the old way);
2. grows it again, times the next search (one batch of 8), which drops it and frees one
   slice, then every further slice until the tree is gone (their sum, mean and longest).

    python benchmarks/bench_mcts_drop.py [--game games/rts/rts_8x8_full.gdl]
        [--nodes 100000] [--seed 0]
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from ggp.game import Game
from ggp.players.rts_players import rtmm_evaluator
from ggp.reasoning.state_machine import State
from ggp.rts.state import is_battlecity, is_rts
from ggp.search.classic.heuristics import HeuristicEvaluator
from ggp.search.classic.mcts import MCTS, MCTSSettings
from ggp.search.evaluator import Evaluator

ROOT = Path(__file__).resolve().parents[1]


def grow(search: MCTS, state: State, nodes: int) -> float:
    """Search ``state`` until the tree holds ``nodes`` nodes; returns the seconds."""
    started = time.perf_counter()
    while len(search._nodes) < nodes:
        if search.search(state, max_simulations=nodes - len(search._nodes)).solved:
            raise SystemExit(f"the start is solved at {len(search._nodes)} nodes")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--game", default=str(ROOT / "games/rts/rts_8x8_full.gdl"))
    parser.add_argument("--nodes", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    game = Game.from_file(args.game)
    evaluator: Evaluator = HeuristicEvaluator()
    if is_rts(game) or is_battlecity(game):
        evaluator = rtmm_evaluator("rts" if is_rts(game) else "battlecity", game)
    role = game.player_roles[0]
    search = MCTS(
        game,
        role,
        evaluator,
        MCTSSettings(max_nodes=args.nodes - 1),
        np.random.default_rng(args.seed),
    )
    state = game.initial_state()
    name = Path(args.game).name

    seconds = grow(search, state, args.nodes)
    grown = len(search._nodes)
    print(f"{name}, {role}: grew {grown:,} nodes in {seconds:.1f} s")
    started = time.perf_counter()
    search._nodes.clear()  # what the search did until 2026-12-03, inside the next move
    at_once = time.perf_counter() - started
    print(f"cleared at once: {at_once:.3f} s ({1e6 * at_once / grown:.2f} us a node)")

    seconds = grow(search, state, args.nodes)
    grown = len(search._nodes)
    print(f"grew {grown:,} nodes again in {seconds:.1f} s")
    started = time.perf_counter()
    search.search(state, max_simulations=8)  # drops the tree, one batch, one slice freed
    move = time.perf_counter() - started
    dropped = search._dropped
    print(f"the next search (8 simulations) drops it: {1e3 * move:.1f} ms")
    times = []
    while dropped:
        started = time.perf_counter()
        dropped.free()
        times.append(time.perf_counter() - started)
    print(
        f"then {len(times):,} slices of {dropped.slice_size} free it: {sum(times):.3f} s in all, "
        f"{1e3 * statistics.mean(times):.2f} ms a slice at the mean, {1e3 * max(times):.2f} ms "
        "the longest"
    )


if __name__ == "__main__":
    main()
