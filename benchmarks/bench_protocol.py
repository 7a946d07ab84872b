"""Endurance of `ggp serve`: many consecutive matches against one served player.

Starts `ggp serve` as a separate process on a free loopback port and has the game manager
(`ggp.protocol.game_manager.play_matches`) run N matches of a fast game against it, the
served player taking the first role and local random players the others. Reports:

- reply latency of every PLAY as the manager measured it (p50 / p90 / p99 / max);
- missed deadlines (a reply later than the play clock) and replaced moves;
- the server's resident memory (VmRSS) and thread count after the first match, after a
  tenth of the matches, and at the end (memory should stay flat);
- how many replies the server sent for a late or failed player (from its match logs);
- that the server still answers INFO ``available`` at the end (no crash).

    python benchmarks/bench_protocol.py [--matches 200] [--game games/tictactoe.gdl]
        [--player random] [--playclock 1] [--margin 0.3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import numpy as np

from ggp.game import Game
from ggp.protocol.game_manager import MatchReport, PlayerEntry, RemotePlayer, play_matches
from ggp.protocol.messages import parse_info_reply

ROOT = Path(__file__).resolve().parents[1]


def proc_status(pid: int) -> tuple[float, int]:
    """Resident memory in MiB and number of threads of process ``pid`` (Linux)."""
    rss_kib, threads = 0, 0
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            rss_kib = int(line.split()[1])
        elif line.startswith("Threads:"):
            threads = int(line.split()[1])
    return rss_kib / 1024, threads


def start_server(player: str, margin: float, log_dir: Path) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "ggp", "serve", "--port", "0", "--host", "127.0.0.1"),
            *("--player", player, "--margin", str(margin), "--log-dir", str(log_dir)),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    if "http://" not in line:
        process.kill()
        raise SystemExit(f"ggp serve did not start: {line!r}")
    url = line.rsplit(" ", 1)[1].strip()
    for _ in range(200):
        try:
            RemotePlayer(url).post("(info)", 2.0)
            return process, url
        except Exception:
            time.sleep(0.05)
    process.kill()
    raise SystemExit("ggp serve does not answer INFO")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--matches", type=int, default=200)
    parser.add_argument("--game", default=str(ROOT / "games" / "tictactoe.gdl"))
    parser.add_argument("--player", default="random", help="the served player's spec")
    parser.add_argument("--playclock", type=float, default=1.0)
    parser.add_argument("--startclock", type=float, default=2.0)
    parser.add_argument("--margin", type=float, default=0.3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    game = Game.from_file(args.game)
    roles = game.player_roles
    entries = [PlayerEntry(roles[0].name, "served")] + [
        PlayerEntry(r.name, "random") for r in roles[1:]
    ]
    with tempfile.TemporaryDirectory() as tmp:
        process, url = start_server(args.player, args.margin, Path(tmp))
        entries[0] = PlayerEntry(roles[0].name, url)
        memory: list[tuple[int, float, int]] = [(0, *proc_status(process.pid))]
        checkpoints = {1, max(args.matches // 10, 1), args.matches // 2, args.matches}

        def note(report: MatchReport, path: Path | None) -> None:
            done = len(reports_seen) + 1
            reports_seen.append(report)
            if done in checkpoints:
                memory.append((done, *proc_status(process.pid)))

        reports_seen: list[MatchReport] = []
        started = time.monotonic()
        try:
            reports = play_matches(
                game,
                args.game,
                entries,
                games=args.matches,
                start_clock_s=args.startclock,
                play_clock_s=args.playclock,
                seed=args.seed,
                on_match=note,
            )
            alive = process.poll() is None
            status = parse_info_reply(RemotePlayer(url).post("(info)", 2.0)).status
        finally:
            process.terminate()
            process.wait(10)
        seconds = time.monotonic() - started
        sources = Counter(
            json.loads(line).get("source", "")
            for log in Path(tmp).glob("*.jsonl")
            for line in log.read_text().splitlines()
            if '"event": "play"' in line
        )

    latencies = np.array(
        [t for r in reports for t in r.reply_latencies_s.get(roles[0].name, ())], dtype=np.float64
    )
    replaced = [x for r in reports for x in r.record.replacements if x.role == roles[0].name]
    late = int((latencies > args.playclock).sum())
    p50, p90, p99 = np.percentile(latencies, [50, 90, 99]) * 1000
    print(
        f"{args.game}: {len(reports)} matches against `ggp serve --player {args.player}` as "
        f"{roles[0]} in {seconds:.1f} s; play clock {args.playclock:g} s, margin "
        f"{args.margin:g} s"
    )
    print(f"server alive at the end: {alive}; INFO status: {status}")
    fallbacks = sum(n for source, n in sources.items() if source != "player")
    print(
        f"PLAY replies: {len(latencies)}; sent by the server for a late or failed player: "
        f"{fallbacks} (server logs: {dict(sources)})"
    )
    print("| p50 ms | p90 ms | p99 ms | max ms | late (> play clock) | replaced moves |")
    print("| --- | --- | --- | --- | --- | --- |")
    print(
        f"| {p50:.1f} | {p90:.1f} | {p99:.1f} | {latencies.max() * 1000:.1f} | {late} | "
        f"{len(replaced)} |"
    )
    print("| after match | server RSS MiB | threads |")
    print("| --- | --- | --- |")
    for done, rss, threads in memory:
        print(f"| {done} | {rss:.1f} | {threads} |")


if __name__ == "__main__":
    main()
