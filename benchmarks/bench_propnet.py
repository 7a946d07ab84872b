"""Reasoner speed: random playouts to the end, states per second, as a markdown table.

A *state* is one step of a random playout: the legal moves of every role, the next
state and the terminal check (the gdl-perf convention). Measured per game:

- **single**: the propnet one state at a time through the StateMachine API
  (``legal_moves`` for each role, ``next_state``, ``is_terminal``), no cache; moves are
  picked with uniforms drawn beforehand from a numpy Generator;
- **batched**: ``random_playouts`` over ``--batch`` states at once (one bit per state,
  moves picked with numpy), states counted as the sum of the playout lengths;
- **prover**: the reference ``ProverStateMachine`` with the single-state loop.

Issue targets (2-core machine): single >= 50k states/s on ticTacToe and >= 20k on meier;
batched >= 3M states/s on ticTacToe and connectFour. With ``--scale`` it also times
grounding and compiling the large generated games of ../shared/scale.

    python benchmarks/bench_propnet.py [--seconds 3] [--batch 16384] [--scale]
"""

from __future__ import annotations

import argparse
import resource
import time
from dataclasses import dataclass
from pathlib import Path

from ggp.bench import batched_rate, human, single_rate
from ggp.gdl.parser import parse_file
from ggp.reasoning.compile import compile_batch, compile_single
from ggp.reasoning.ground import ground
from ggp.reasoning.propnet import build_propnet
from ggp.reasoning.propnet_machine import PropnetStateMachine
from ggp.reasoning.prover import ProverStateMachine

ROOT = Path(__file__).resolve().parents[1]
GAMES = (
    "gdl/ticTacToe",
    "gdl/connectFour",
    "gdl/breakthrough",
    "gdl2/meier",
    "gdl2/blindtictactoe",
)
TARGETS = {
    "ticTacToe": ("50k", "3M"),
    "connectFour": ("", "3M"),
    "meier": ("20k", ""),
}


@dataclass
class Row:
    game: str
    base: int
    inputs: int
    nodes: int
    build_s: float
    single: float
    batched: float
    prover: float


def bench_game(path: Path, args: argparse.Namespace) -> Row:
    description = parse_file(path)
    start = time.perf_counter()
    machine = PropnetStateMachine(description)
    machine.compiled_batch  # noqa: B018 - compile now, so the build time includes it
    build_s = time.perf_counter() - start
    net = machine.propnet
    single = single_rate(machine, args.seconds, args.seed).states_per_s
    batched = batched_rate(machine, args.batch, args.seconds, args.seed).states_per_s
    prover_machine = ProverStateMachine(description)
    prover = single_rate(prover_machine, args.prover_seconds, args.seed).states_per_s
    return Row(
        path.stem, len(net.base), len(net.inputs), net.stats.nodes, build_s, single, batched, prover
    )


def bench_scale(path: Path) -> str:
    description = parse_file(path)
    t0 = time.perf_counter()
    program = ground(description)
    t1 = time.perf_counter()
    net = build_propnet(program)
    t2 = time.perf_counter()
    compile_single(net)
    t3 = time.perf_counter()
    compile_batch(net)
    t4 = time.perf_counter()
    rss_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return (
        f"| {path.name} | {len(net.base):,} | {len(program.rules):,} | {net.stats.nodes:,} "
        f"| {t1 - t0:.2f} | {t2 - t1:.2f} | {t3 - t2:.2f} | {t4 - t3:.2f} | {t4 - t0:.2f} "
        f"| {rss_mb:.0f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--seconds", type=float, default=3.0, help="per propnet measurement")
    parser.add_argument("--prover-seconds", type=float, default=2.0)
    parser.add_argument("--batch", type=int, default=16384, help="states per batched call")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--games", nargs="*", default=list(GAMES))
    parser.add_argument("--scale", action="store_true", help="also time the scale games")
    args = parser.parse_args()

    print(
        f"Random playouts, states/s (single: one state per call; batched: {args.batch:,} "
        "states per call)\n"
    )
    print(
        "| game | base | inputs | nodes | build s | propnet single | propnet batched "
        "| prover | single / prover | target single | target batched |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in args.games:
        row = bench_game(args.shared / "gdl" / f"{name}.kif", args)
        single_target, batch_target = TARGETS.get(row.game, ("", ""))
        print(
            f"| {row.game} | {row.base} | {row.inputs} | {row.nodes:,} | {row.build_s:.2f} "
            f"| {human(row.single)} | {human(row.batched)} | {human(row.prover)} "
            f"| {row.single / row.prover:.0f}x | {single_target} | {batch_target} |",
            flush=True,
        )
    if args.scale:
        print("\nGrounding and compiling the scale games (seconds; RSS is the peak so far)\n")
        print(
            "| file | base | ground rules | nodes | ground | propnet | compile single "
            "| compile batch | total | peak RSS MB |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for path in sorted((args.shared / "scale").glob("*.kif")):
            print(bench_scale(path), flush=True)


if __name__ == "__main__":
    main()
