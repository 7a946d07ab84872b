"""Search figures (issue: imperfect-information search), measured in one run.

1. Monty Hall: the CFR player's switch rate and mean goal over many games.
2. Meier, search only (no network), <= 1 s per move: score vs random as p1 and as p2
   (win 1, draw 0.5; 95% normal interval). Published search-only figures: 83 / 80.
3. CFR speed: iterations per second on Kuhn poker (ours beside OpenSpiel's C++ and Python
   CFR+, when open_spiel is installed) and on meier subgames.

    python benchmarks/bench_search.py [--monty 1000] [--meier 100] [--workers 2]
"""

from __future__ import annotations

import argparse
import math
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from ggp.game import Game
from ggp.match import run_match
from ggp.players.cfr_player import CFRPlayer, CFRSettings
from ggp.players.random_player import RandomPlayer
from ggp.search.cfr import CFRSolver
from ggp.search.evaluator import RolloutEvaluator
from ggp.search.history import ObservationHistory
from ggp.search.sampler import PosteriorSampler
from ggp.search.tree import build_tree

ROOT = Path(__file__).resolve().parents[1]
GAMES = ROOT / "games"


def monty_game(seed: int) -> tuple[bool, int]:
    game = Game.from_file(GAMES / "montyhall.gdl")
    player = CFRPlayer(
        CFRSettings(min_time_s=0.05, max_time_s=0.3), rng=np.random.default_rng(seed)
    )
    record = run_match(game, {game.role("candidate"): player}, np.random.default_rng(10**6 + seed))
    switched = any("switch" in joint[game.role_index("candidate")] for joint in record.joint_moves)
    return switched, record.goals[game.role_index("candidate")]


def meier_game(args: tuple[str, int]) -> float:
    role, seed = args
    game = Game.from_file(GAMES / "meier.gdl")
    other = "p2" if role == "p1" else "p1"
    players = {
        game.role(role): CFRPlayer(
            CFRSettings(min_time_s=0.5, max_time_s=1.0), rng=np.random.default_rng(seed)
        ),
        game.role(other): RandomPlayer(np.random.default_rng(10**6 + seed)),
    }
    record = run_match(game, players, np.random.default_rng(2 * 10**6 + seed))
    mine, theirs = record.goals[game.role_index(role)], record.goals[game.role_index(other)]
    return 1.0 if mine > theirs else 0.5 if mine == theirs else 0.0


def interval(scores: list[float]) -> str:
    n = len(scores)
    mean = float(np.mean(scores))
    half = 1.96 * math.sqrt(max(mean * (1 - mean), 1e-12) / n)
    return f"{100 * mean:.1f} ± {100 * half:.1f}"


def cfr_speed() -> list[str]:
    rows = []
    kuhn = Game.from_file(GAMES / "kuhn_poker.gdl")
    solver = CFRSolver(build_tree(kuhn))
    solver.iterate(10)
    start = time.perf_counter()
    solver.iterate(2000)
    ours = (time.perf_counter() - start) / 2000
    rows.append(f"| Kuhn poker, ggp CFR+ (numpy) | {1000 * ours:.4f} | {1 / ours:,.0f} |")
    try:
        import pyspiel
        from open_spiel.python.algorithms import cfr as cfr_py

        game = pyspiel.load_game("kuhn_poker")
        solver_cpp = pyspiel.CFRPlusSolver(game)
        start = time.perf_counter()
        for _ in range(2000):
            solver_cpp.evaluate_and_update_policy()
        cpp = (time.perf_counter() - start) / 2000
        rows.append(f"| Kuhn poker, OpenSpiel CFR+ (C++) | {1000 * cpp:.4f} | {1 / cpp:,.0f} |")
        solver_py = cfr_py.CFRPlusSolver(game)
        start = time.perf_counter()
        for _ in range(200):
            solver_py.evaluate_and_update_policy()
        py = (time.perf_counter() - start) / 200
        rows.append(f"| Kuhn poker, OpenSpiel CFR+ (Python) | {1000 * py:.4f} | {1 / py:,.0f} |")
        rows.append(f"| ggp / OpenSpiel C++ time per iteration | {ours / cpp:.1f}x | |")
    except ImportError:
        rows.append("| OpenSpiel | not installed (pip install open_spiel==2.0.2) | |")
    # Meier subgames: p2's view after p1's first claim, depth 2 and 3.
    meier = Game.from_file(GAMES / "meier.gdl")
    rng = np.random.default_rng(0)
    state = meier.initial_state()
    history = ObservationHistory(meier.role("p2"))
    for _ in range(2):
        joint = tuple(
            moves[int(rng.integers(len(moves)))]
            for moves in (meier.legal_moves(state, r) for r in meier.roles)
        )
        p2 = meier.role_index("p2")
        history = history.extend(joint[p2], meier.percepts(state, joint, "p2"))
        state = meier.next_state(state, joint)
    roots = PosteriorSampler(meier).sample_many(history, 100, rng)
    for depth in (2, 3):
        tree = build_tree(meier, roots, depth=depth, evaluator=RolloutEvaluator(8, rng))
        solver = CFRSolver(tree)
        solver.iterate(5)
        start = time.perf_counter()
        solver.iterate(100)
        per = (time.perf_counter() - start) / 100
        rows.append(
            f"| meier subgame, depth {depth} ({len(tree.node_state):,} nodes, "
            f"{tree.num_infosets:,} infosets), ggp CFR+ | {1000 * per:.3f} | {1 / per:,.0f} |"
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--monty", type=int, default=1000, help="Monty Hall games")
    parser.add_argument("--meier", type=int, default=100, help="meier games per role")
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()

    print("| measure | ms per iteration | iterations/s |")
    print("| --- | --- | --- |")
    for row in cfr_speed():
        print(row, flush=True)

    with ProcessPoolExecutor(args.workers) as pool:
        start = time.perf_counter()
        monty = list(pool.map(monty_game, range(args.monty), chunksize=20))
        switch = np.mean([s for s, _ in monty])
        goal = np.mean([g for _, g in monty])
        print(
            f"\nMonty Hall, CFR player, {args.monty} games: switches {switch:.3f}, "
            f"mean goal {goal:.1f} ({time.perf_counter() - start:.0f} s)",
            flush=True,
        )
        print("\n| meier, search only, <= 1 s per move | vs random |")
        print("| --- | --- |")
        for role in ("p1", "p2"):
            start = time.perf_counter()
            scores = list(pool.map(meier_game, [(role, i) for i in range(args.meier)]))
            print(
                f"| CFR player as {role}, {args.meier} games | {interval(scores)} "
                f"({time.perf_counter() - start:.0f} s) |",
                flush=True,
            )


if __name__ == "__main__":
    main()
