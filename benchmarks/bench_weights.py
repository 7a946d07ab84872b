"""Battlesnake heuristic weights against each other (issue 15, point 3): mean placement.

IDAPOS to a fixed depth (no clock: the games depend on their seeds only) with weights A
(default ``tuned``) and weights B (default ``paper``), in two set-ups:

- ``head-to-head``: A and B fill the seats half and half (in a duel one each), the seats
  rotating game by game over every arrangement;
- ``reflex``: one search snake among reflex snakes (greedy, aggressive, tail chaser, drawn
  by the seed), the same seeds and seats once with A and once with B (paired games).

Prints each side's mean placement (1 = best) with its standard deviation and the standard
error of the mean, and for the paired set-up the mean difference A - B with its standard
error.

    python benchmarks/bench_weights.py [--game games/battlesnake/standard_11x11.gdl]
        [--a tuned] [--b paper] [--games 48] [--depth 1] [--seed 0] [--workers 1]
"""

from __future__ import annotations

import argparse
import itertools
import math
import statistics
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

from ggp.battlesnake.weights import SnakeWeights, snake_weights
from ggp.game import Game
from ggp.training.tune import FitnessGame, play_fitness_game

ROOT = Path(__file__).resolve().parents[1]
REFLEX = ("snake:greedy", "snake:aggressive", "snake:tailchaser")


def summary(name: str, values: list[float]) -> str:
    mean = statistics.mean(values)
    sd = statistics.stdev(values) if len(values) > 1 else 0.0
    return (
        f"{name}: mean placement {mean:.3f} (sd {sd:.2f}, se {sd / math.sqrt(len(values)):.3f},"
        f" {len(values)} placements)"
    )


def head_to_head(
    game_path: str, a: SnakeWeights, b: SnakeWeights, snakes: int, games: int, depth: int, seed: int
) -> list[FitnessGame]:
    """Half the seats A, half B, the arrangement rotating game by game."""
    arrangements = [
        tuple(a if i in chosen else b for i in range(snakes))
        for chosen in itertools.combinations(range(snakes), snakes // 2)
    ]
    seeds = np.random.SeedSequence(seed).generate_state(games, dtype=np.uint64)
    return [
        FitnessGame(game_path, arrangements[g % len(arrangements)], depth, int(seeds[g]), f"h{g}")
        for g in range(games)
    ]


def with_reflex(
    game_path: str, weights: SnakeWeights, snakes: int, games: int, depth: int, seed: int
) -> list[FitnessGame]:
    """One search snake (seat rotating) among reflex snakes drawn by ``seed``."""
    rng = np.random.default_rng(seed)
    tasks = []
    for g in range(games):
        seats: list[SnakeWeights | str] = [REFLEX[int(i)] for i in rng.integers(3, size=snakes)]
        seats[g % snakes] = weights
        tasks.append(FitnessGame(game_path, tuple(seats), depth, int(rng.integers(2**63)), f"r{g}"))
    return tasks


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--game", default=str(ROOT / "games/battlesnake/standard_11x11.gdl"))
    parser.add_argument("--a", default="tuned", help="weights A (paper, tuned or a file)")
    parser.add_argument("--b", default="paper", help="weights B")
    parser.add_argument("--games", type=int, default=48, help="games per set-up (and side)")
    parser.add_argument("--depth", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--setups", default="head-to-head,reflex")
    args = parser.parse_args()
    a, b = snake_weights(args.a), snake_weights(args.b)
    snakes = len(Game.from_file(args.game).player_roles)
    print(
        f"{args.game}: A = {args.a}, B = {args.b}; IDAPOS to depth {args.depth}, seed {args.seed}"
    )
    print(f"A: {a}\nB: {b}")
    pool = ProcessPoolExecutor(args.workers) if args.workers > 1 else None
    run = pool.map if pool is not None else map
    setups = args.setups.split(",")
    if "head-to-head" in setups:
        started = time.monotonic()
        tasks = head_to_head(args.game, a, b, snakes, args.games, args.depth, args.seed)
        ours: list[float] = []
        theirs: list[float] = []
        margins: list[float] = []  # per game: A's mean placement less B's
        for task, places in zip(tasks, run(play_fitness_game, tasks), strict=True):
            mine = [p for seat, p in zip(task.seats, places, strict=True) if seat is a]
            other = [p for seat, p in zip(task.seats, places, strict=True) if seat is not a]
            ours.extend(mine)
            theirs.extend(other)
            margins.append(statistics.mean(mine) - statistics.mean(other))
        print(f"head-to-head, {args.games} games, {time.monotonic() - started:.0f} s")
        print("  " + summary("A", ours))
        print("  " + summary("B", theirs))
        sd = statistics.stdev(margins) if len(margins) > 1 else 0.0
        print(
            f"  A - B per game: {statistics.mean(margins):+.3f} (se "
            f"{sd / math.sqrt(len(margins)):.3f}; {sum(m < 0 for m in margins)} games A placed "
            f"better, {sum(m > 0 for m in margins)} worse)"
        )
    if "reflex" in setups:
        started = time.monotonic()
        found = {}
        for name, weights in (("A", a), ("B", b)):
            tasks = with_reflex(args.game, weights, snakes, args.games, args.depth, args.seed)
            found[name] = [
                places[t.seats.index(weights)]
                for t, places in zip(tasks, run(play_fitness_game, tasks), strict=True)
            ]
        print(f"among reflex snakes, {args.games} paired games, {time.monotonic() - started:.0f} s")
        print("  " + summary("A", found["A"]))
        print("  " + summary("B", found["B"]))
        diff = [x - y for x, y in zip(found["A"], found["B"], strict=True)]
        sd = statistics.stdev(diff) if len(diff) > 1 else 0.0
        print(
            f"  A - B: {statistics.mean(diff):+.3f} (se {sd / math.sqrt(len(diff)):.3f}; "
            f"{sum(d < 0 for d in diff)} games A placed better, {sum(d > 0 for d in diff)} worse)"
        )
    if pool is not None:
        pool.shutdown()


if __name__ == "__main__":
    main()
