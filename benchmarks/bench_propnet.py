"""Reasoner speed on every game, every backend, in one markdown table.

A *state* is one step of a random playout: the legal moves of every role, the next
state and the terminal check (the gdl-perf convention, as ``ggp bench --no-cache``).
Per game and backend:

- **native** / **python**: the propnet with the C kernel or in pure Python
  (``PropnetStateMachine(backend=...)``); *single* is one state per call through
  ``Game`` with the cache off (as ``ggp bench --no-cache``: the native backend answers
  there in one C call per query), *batched* is ``random_playouts`` over ``--batch`` states at once;
- **topdown**: ``TopDownStateMachine``, the goal-directed evaluation of the un-ground
  rules that ``auto`` falls back to, one state per call;
- **prover**: the reference ``ProverStateMachine``, one state per call;
- **ratios**: native single / prover single and topdown single / prover single,
  measured in the same run.

Each game is measured in a fresh process, so that its **load** time (what
``Game.from_file`` with ``reasoner="auto"`` takes: grounding and compiling, or the
fallback to the prover) and its **peak RSS** are its own.

Issue 13 targets (2-core machine): single >= 50k states/s on
bsnake_n11_k4_H100_L20_T100 and >= 300k on breakthrough; batched >= 2M on
bsnake_n11_k4_H100_L20_T100.

    python benchmarks/bench_propnet.py [--seconds 3] [--prover-seconds 2] [--batch 16384]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GAMES = (
    "gdl/gdl/ticTacToe.kif",
    "gdl/gdl/connectFour.kif",
    "gdl/gdl/breakthrough.kif",
    "gdl/gdl2/meier.kif",
    "gdl/gdl2/blindtictactoe.kif",
    "scale/bsnake_n7_k2_H100_L20_T100.kif",
    "scale/bsnake_n11_k4_H100_L20_T100.kif",
    "scale/bsnake_n11_k4_H100_L121_T300.kif",
    "scale/chess.kif",
)


def measure(path: Path, seconds: float, prover_seconds: float, batch: int, seed: int) -> dict:
    """One game's figures (run in a child process of its own)."""
    from ggp.bench import batched_rate, single_rate
    from ggp.game import Game
    from ggp.gdl.parser import parse_file
    from ggp.reasoning.propnet_machine import PropnetStateMachine
    from ggp.reasoning.prover import ProverStateMachine
    from ggp.reasoning.topdown import TopDownStateMachine

    start = time.perf_counter()
    game = Game.from_file(path)
    row: dict = {
        "load_s": time.perf_counter() - start,
        "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "reasoner": game.reasoner,
        "failure": game.grounding_failure,
    }
    description = parse_file(path)
    if game.reasoner == "propnet":
        machine = game.machine
        assert isinstance(machine, PropnetStateMachine)
        row["nodes"] = machine.propnet.stats.nodes
        for backend in ("native", "python"):
            m = machine if machine.backend == backend else None
            if m is None:
                m = PropnetStateMachine(description, backend=backend)
            view = Game(m, game.description, reasoner="propnet", cache_size=0)
            row[f"{backend}_single"] = single_rate(view, seconds, seed).states_per_s
            row[f"{backend}_batched"] = batched_rate(view, batch, seconds, seed).states_per_s
    topdown = TopDownStateMachine(description)
    row["topdown_single"] = single_rate(topdown, seconds, seed).states_per_s
    prover = ProverStateMachine(description)
    row["prover_single"] = single_rate(prover, prover_seconds, seed).states_per_s
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", type=Path, default=ROOT.parent / "shared")
    parser.add_argument("--seconds", type=float, default=3.0, help="per propnet measurement")
    parser.add_argument("--prover-seconds", type=float, default=2.0)
    parser.add_argument("--batch", type=int, default=16384, help="states per batched call")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--games", nargs="*", default=list(GAMES), help="paths under --shared")
    parser.add_argument("--child", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        row = measure(args.child, args.seconds, args.prover_seconds, args.batch, args.seed)
        print(json.dumps(row))
        return

    from ggp.bench import human

    print(
        f"Random playouts, states/s (single: one state per call; batched: {args.batch:,} "
        "states per call); load: Game.from_file, reasoner auto; a fresh process per game\n"
    )
    print(
        "| game | load s | peak RSS MB | nodes | native single | native batched "
        "| python single | python batched | topdown single | prover single "
        "| native / prover | topdown / prover |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in args.games:
        path = args.shared / name
        command = [
            sys.executable,
            __file__,
            "--child",
            str(path),
            *("--seconds", str(args.seconds), "--prover-seconds", str(args.prover_seconds)),
            *("--batch", str(args.batch), "--seed", str(args.seed)),
        ]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            print(f"| {path.name} | failed: {done.stderr.strip().splitlines()[-1]} |")
            continue
        row = json.loads(done.stdout.strip().splitlines()[-1])
        prover = row["prover_single"]
        if row["reasoner"] == "propnet":
            rates = " | ".join(
                human(row[f"{backend}_{mode}"])
                for backend in ("native", "python")
                for mode in ("single", "batched")
            )
            ratio = f"{row['native_single'] / prover:,.0f}x"
            nodes = f"{row['nodes']:,}"
        else:
            rates = " | ".join(["no propnet"] * 4)
            ratio = "—"
            nodes = f"{row['reasoner']}: {row['failure']}"
        topdown = row["topdown_single"]
        print(
            f"| {path.name} | {row['load_s']:.2f} | {row['rss_mb']:.0f} | {nodes} | {rates} "
            f"| {human(topdown)} | {human(prover) if prover >= 10 else f'{prover:.2g}'} "
            f"| {ratio} | {topdown / prover:,.0f}x |",
            flush=True,
        )


if __name__ == "__main__":
    main()
