"""Where loading a game's propositional network spends its CPU time, phase by phase.

Per game, each run in a fresh process (terms are interned per process, so a second load
in the same process would find them made): CPU seconds to parse and validate, to ground
(``ground``: the joins, then the rule instances), to build the network
(``build_propnet``: hash-consed gates, factoring, compaction) and to lay out the native
kernel (``kernel_spec``), with the ground rule and node counts. The budget that
``reasoner="auto"`` gives grounding and building together is 8 CPU s
(``GroundingLimits.max_seconds``): the games near it are the ones to watch.

    python benchmarks/bench_grounding.py [--runs 3] [GAME ...]
    python benchmarks/bench_grounding.py --python OTHER/.venv/bin/python ...   # another checkout

With ``--compare DIR`` every run alternates between this checkout and the checkout in DIR
(its own ``ggp`` package, the same interpreter), so that the two are measured side by side
on a machine whose load changes.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GAMES = (
    "games/battlesnake/standard_11x11.gdl",
    "games/battlesnake/eight_11x11.gdl",
    "games/rts/rts_8x8_melee.gdl",
    "games/rts/rts_8x8_full.gdl",
    "../shared/gdl/gdl/breakthrough.kif",
)
PHASES = ("parse", "ground", "build", "kernel")


def measure(path: str) -> dict[str, float]:
    """One load's phases (in this process: call it in a fresh one)."""
    import time

    from ggp.gdl.embed import with_public_moves
    from ggp.gdl.parser import parse_file
    from ggp.gdl.validate import check, summarize
    from ggp.reasoning.ground import GroundingLimits, ground
    from ggp.reasoning.kernel import kernel_spec
    from ggp.reasoning.propnet import build_propnet

    clock = time.process_time
    t0 = clock()
    description = parse_file(path)
    check(description)
    if not summarize(description).has_sees:
        description = with_public_moves(description)
    t1 = clock()
    program = ground(description, GroundingLimits(max_seconds=None))
    t2 = clock()
    net = build_propnet(program)
    t3 = clock()
    kernel_spec(net)
    t4 = clock()
    return {
        "parse": t1 - t0,
        "ground": t2 - t1,
        "build": t3 - t2,
        "kernel": t4 - t3,
        "rules": len(program.rules),
        "nodes": len(net.ops),
    }


def run_child(root: Path, path: str) -> dict[str, float]:
    env = dict(os.environ, PYTHONPATH=str(root))
    out = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", path],
        env=env,
        cwd=root,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    record: dict[str, float] = json.loads(out.splitlines()[-1])
    return record


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("games", nargs="*", default=list(GAMES), help="game files")
    parser.add_argument("--runs", type=int, default=3, help="fresh processes per game")
    parser.add_argument("--compare", type=Path, help="another checkout, measured alternately")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(measure(args.child)))
        return
    roots = [("this", ROOT)] + ([("other", args.compare.resolve())] if args.compare else [])
    print("| game | checkout | ground rules | nodes | " + " | ".join(PHASES) + " | total |")
    print("| --- " * (5 + len(PHASES)) + "|")
    for game in args.games:
        if not (ROOT / game).is_file():
            print(f"| {game} | not found: skipped | | | | | | | |")
            continue
        path = str((ROOT / game).resolve())
        runs: dict[str, list[dict[str, float]]] = {name: [] for name, _ in roots}
        for _ in range(args.runs):
            for name, root in roots:
                runs[name].append(run_child(root, path))
        for name, _ in roots:
            rows = runs[name]
            med = {k: statistics.median(r[k] for r in rows) for k in PHASES}
            total = statistics.median(sum(r[k] for k in PHASES) for r in rows)
            cells = " | ".join(f"{med[k]:.2f}" for k in PHASES)
            print(
                f"| {Path(game).name} | {name} | {int(rows[0]['rules']):,} | "
                f"{int(rows[0]['nodes']):,} | {cells} | {total:.2f} |"
            )


if __name__ == "__main__":
    main()
