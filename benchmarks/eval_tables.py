"""Print the evaluation tables held in `ggp eval --log` files (issue 14, point 6).

The tables of 100 games a cell at 1 s a move take tens of hours of 2 cores, so they are
played in parts, by `ggp eval ... --log benchmarks/data/eval-GAME.jsonl` runs on several
days and machines (each record names its machine and, since 2026-12-02, how fast it ran:
the worker's speed probe before the game), and read back here: one row per
player and role, one column per opponent; each cell the games played so far, the score
out of 100 (win 1, draw 0.5) with its 95% interval, the searches' depth per move (median,
lowest-deepest; MCTS: the deepest tree node) and the machines that played it.

With ``--wdl`` (the RTS tables of issue 16, as the RTMM paper prints them): one row per
player, each cell its wins-draws-losses against the column over both seats; below it the
depth the row players' searches reached per move (RTMM's: its lookahead in clock units),
where the log has it, the column players' (logs since 2026-12-07), and the moves the
referee replaced (late or illegal) in each row player's games, its own and (logs since
2026-12-06) its opponents'. With ``--wdl --pool``, one table of all the logs given, each
pairing's games summed (the RTMM paper's Table 1 sums its maps); with ``--wdl --games N``
only each cell's first N games, those `ggp eval --games N` plays (with ``--seed``, the seed
the tables were played with), so that maps logged at different lengths pool evenly; with
``--wdl --as SPEC=NAME`` (repeatable) SPEC's games count as NAME's, as row and column (each
map's own network as one player).
With ``--round-robin P,Q,R``: the cross table of those players (issue 14's round robin
of the best three), each cell the row's score against the column over both roles, from
the games of either seating (`--player P --vs Q` or `--player Q --vs P`), the diagonal
(self-play) left blank, and each row's score over all its games against the others.
With ``--vs P,Q``: the tables with only those columns (a game's `random` and
`mcts` columns, its round robin's games left to ``--round-robin``). With ``--best N``:
the round robin's players, the N that score highest against `mcts` over both roles once
that column is complete (`mcts` last where it is among them).

    .venv/bin/python benchmarks/eval_tables.py [--wdl [--pool]] [benchmarks/data/eval-*.jsonl ...]
    .venv/bin/python benchmarks/eval_tables.py --wdl --pool --games 25 [--as SPEC=NAME] LOG LOG
    .venv/bin/python benchmarks/eval_tables.py --vs random,mcts LOG
    .venv/bin/python benchmarks/eval_tables.py --round-robin mcts,mtdf,paranoid LOG
    .venv/bin/python benchmarks/eval_tables.py --best 3 LOG
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import defaultdict
from dataclasses import fields
from pathlib import Path
from typing import Any

from ggp.training.evaluate import MatchKey, match_key, match_seed, wilson_interval
from ggp.training.workers import MatchTask

DATA = Path(__file__).with_name("data")


def table(path: Path, columns: list[str] | None = None) -> str:
    """The Markdown table of one log; with `columns`, only the games against those
    opponents (e.g. a table's `random` and `mcts` columns without its round robin's)."""
    cells: dict[tuple[str, str, str], list[dict[str, Any]]] = defaultdict(list)
    games: set[str] = set()
    for record in _records(path):
        if columns is None or record["opponent"] in columns:
            cells[(record["player"], record["role"], record["opponent"])].append(record)
            games.add(record["game"])
    players = sorted({p for p, _, _ in cells}, key=_order)
    roles = sorted({r for _, r, _ in cells})
    opponents = sorted({o for _, _, o in cells}, key=_order)
    machines = sorted({str(r.get("machine", "?")) for rs in cells.values() for r in rs})
    lines = [
        f"**{', '.join(sorted(games))}** ({path}): games, score [95% interval], depth "
        "median (lowest-deepest), machines ("
        + "; ".join(f"{chr(ord('A') + i)}: {m}" for i, m in enumerate(machines))
        + ")",
        *_speeds([r for rs in cells.values() for r in rs]),
        "",
        "| player | role | " + " | ".join(f"vs {o}" for o in opponents) + " |",
        "| --- | --- |" + " --- |" * len(opponents),
    ]
    for player in players:
        for role in roles:
            row = [f"`{player}`", role]
            for opponent in opponents:
                records = cells.get((player, role, opponent), [])
                row.append(_cell(records, machines) if records else "")
            if any(row[2:]):
                lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def wdl_table(
    *paths: Path,
    first: int | None = None,
    seed: int = 0,
    columns: list[str] | None = None,
    names: dict[str, str] | None = None,
) -> str:
    """The W-D-L table of one log, or of several pooled (the games of each pairing
    summed, as the RTMM paper's Table 1 sums its maps): rows the players, both seats
    pooled. With `first`, only the games `ggp eval --games FIRST --seed SEED` plays in
    each cell (a log with more a cell on one map than on another pooled evenly); with
    `columns`, only the games against those opponents; `names` counts a spec's games as
    another's, as row and as column (each map's own network as one player)."""
    names = names or {}
    kept: dict[tuple[str, str], set[int]] = {}  # (role, opponent): the first games' seeds
    cells: dict[tuple[str, str], list[float]] = defaultdict(list)
    depths: dict[str, list[int]] = defaultdict(list)
    their_depths: dict[str, list[int]] = defaultdict(list)  # the column's, where logged
    late: dict[str, list[dict[str, Any]]] = defaultdict(list)  # the row player's records
    games: set[str] = set()
    every: list[dict[str, Any]] = []
    for path in paths:
        for record in _records(path):
            if first is not None:
                cell = (record["role"], record["opponent"])
                if cell not in kept:
                    kept[cell] = {match_seed(seed, *cell, i) for i in range(first)}
                if record["seed"] not in kept[cell]:
                    continue
            player = names.get(record["player"], record["player"])
            opponent = names.get(record["opponent"], record["opponent"])
            if columns is not None and opponent not in columns:
                continue
            every.append(record)
            late[player].append(record)
            cells[(player, opponent)].append(float(record["score"]))
            depths[player] += [int(d) for d in record.get("depths", [])]
            their_depths[opponent] += [int(d) for d in record.get("opponent_depths") or []]
            games.add(record["game"])
    players = sorted({p for p, _ in cells}, key=_order)
    opponents = sorted({o for _, o in cells}, key=_order)
    lines = [
        f"**{', '.join(sorted(games))}** ({', '.join(map(str, paths))}): wins-draws-losses "
        "of the row against the column, both seats",
        *_speeds(every),
        "",
        "| row \\ vs | " + " | ".join(opponents) + " |",
        "| --- |" + " --- |" * len(opponents),
    ]
    for player in players:
        row = [f"`{player}`"]
        for opponent in opponents:
            scores = cells.get((player, opponent), [])
            wins, draws = sum(s == 1 for s in scores), sum(s == 0.5 for s in scores)
            row.append(f"{wins}-{draws}-{len(scores) - wins - draws}" if scores else "")
        lines.append("| " + " | ".join(row) + " |")
    for whose, by_spec, specs in (
        ("row player (RTMM: lookahead in clock units past the root)", depths, players),
        ("column player, in the games that log it (since 2026-12-07)", their_depths, opponents),
    ):
        spreads = [
            f"`{spec}` {statistics.median(d):g} ({min(d)}-{max(d)}; {len(d)} moves)"
            for spec in specs
            if (d := by_spec[spec])
        ]
        if spreads:
            lines += ["", f"Depth per searched move of the {whose}, median (lowest-deepest): "]
            lines[-1] += "; ".join(spreads)
    if any(r.get("replaced") or r.get("opponent_replaced") for r in every):
        lines += ["", "Moves the referee replaced (late or illegal) in the row player's games: "]
        lines[-1] += "; ".join(_replaced(p, late[p]) for p in players)
    return "\n".join(lines)


def _replaced(player: str, records: list[dict[str, Any]]) -> str:
    """`player`'s replaced moves over its games and, where the records keep them
    (since 2026-12-06), its opponents' in those games."""
    text = f"`{player}` {sum(int(r.get('replaced', 0)) for r in records)} in {len(records)} games"
    theirs = [int(r["opponent_replaced"]) for r in records if "opponent_replaced" in r]
    if theirs:
        text += f" (the opponents' {sum(theirs)}, in the {len(theirs)} that log it)"
    return text


def round_robin(path: Path, players: list[str]) -> str:
    """The cross table of `players` in one log: the row's score against the column over
    both roles, the games of either seating counted (a game of Q against P scores 1 - s
    for P), and each row's mean score over all its games against the others."""
    scores: dict[tuple[str, str], list[float]] = defaultdict(list)
    games: set[str] = set()
    for record in _records(path):
        player, opponent, score = record["player"], record["opponent"], float(record["score"])
        if player in players and opponent in players and player != opponent:
            scores[(player, opponent)].append(score)
            scores[(opponent, player)].append(1 - score)
            games.add(record["game"])
    lines = [
        f"**{', '.join(sorted(games))}** ({path}): round robin, the row's games, score out of "
        "100 [95% interval] against the column, both roles",
        "",
        "| row \\ vs | " + " | ".join(f"`{p}`" for p in players) + " | all |",
        "| --- |" + " --- |" * (len(players) + 1),
    ]
    for player in players:
        row, every = [f"`{player}`"], []
        for opponent in players:
            cell = scores.get((player, opponent), [])  # none on the diagonal
            row.append(_score(cell) if cell else "")
            every += cell
        lines.append("| " + " | ".join([*row, _score(every) if every else ""]) + " |")
    return "\n".join(lines)


def best(path: Path, count: int, against: str = "mcts", games: int = 100) -> list[str]:
    """The ``count`` players of the log that score highest against ``against`` over both
    roles (``against`` itself by its games against itself), ``against`` last where it is
    among them: `play_tables.sh`'s round robin plays each player against those after it,
    so the pairings with ``against`` are the table's own games. Exits with the cells short
    of ``games`` games (a role) while any is: a part-played column chooses nothing."""
    records = _records(path)
    players = {r["player"] for r in records} | {against}
    roles = {r["role"] for r in records}
    cells: dict[tuple[str, str], list[float]] = {(p, r): [] for p in players for r in roles}
    for record in records:
        if record["opponent"] == against:
            cells[(record["player"], record["role"])].append(float(record["score"]))
    short = sorted(f"{p} as {r}: {len(s)}" for (p, r), s in cells.items() if len(s) < games)
    if short:
        sys.exit(f"{path}: the column against {against} is short of {games} games a cell: "
                 + ", ".join(short))  # fmt: skip
    scores: dict[str, list[float]] = defaultdict(list)
    for (player, _), cell in cells.items():
        scores[player] += cell  # both roles, so none is empty
    ranked = sorted(scores, key=lambda p: (-sum(scores[p]) / len(scores[p]), _order(p)))
    chosen = ranked[:count]
    return [p for p in chosen if p != against] + [p for p in chosen if p == against]


def _score(scores: list[float]) -> str:
    mean = sum(scores) / len(scores)
    low, high = wilson_interval(mean, len(scores))
    return f"{len(scores)}: {100 * mean:.1f} [{100 * low:.1f}, {100 * high:.1f}]"


def _records(path: Path) -> list[dict[str, Any]]:
    """The log's match records, each match once: logs merged from several runs may hold a
    match twice, and the later record counts, as for `ggp eval`'s resume (its match key)."""
    records: dict[MatchKey, dict[str, Any]] = {}
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            task = MatchTask(**{f.name: record[f.name] for f in fields(MatchTask)})
            key = match_key(task, str(record["game"]))
        except (ValueError, KeyError, TypeError) as e:
            sys.exit(f"{path}:{number}: not a match record ({e})")
        records[key] = record
    return list(records.values())


def _order(spec: str) -> tuple[int, str]:
    known = ["random", "alphabeta", "pvs", "mtdf", "paranoid", "maxn", "mcts"]
    known += ["rtsbot:random", "rtsbot:follower", "rtmm:time=0.05", "rrtmm:time=0.05"]
    known += ["rtsbot:stochastic", "rtsbot:rush", "rtmm:time=0.1", "rrtmm:time=0.1"]
    return (known.index(spec) if spec in known else len(known), spec)


def _cell(records: list[dict[str, Any]], machines: list[str]) -> str:
    depths = [int(d) for r in records for d in r.get("depths", [])]
    depth = f"; {statistics.median(depths):g} ({min(depths)}-{max(depths)})" if depths else ""
    where = "".join(
        sorted({chr(ord("A") + machines.index(str(r.get("machine", "?")))) for r in records})
    )
    return f"{_score([float(r['score']) for r in records])}{depth}; {where}"


def _speeds(records: list[dict[str, Any]]) -> list[str]:
    """The line under a table's title on how fast the machines ran its games (the
    ``speed`` each record's worker measured just before it, ggp.training.evaluate.
    speed_probe): none where no record has it (the logs before 2026-12-02)."""
    speeds = sorted(float(r["speed"]) for r in records if "speed" in r)
    if not speeds:
        return []
    without = len(records) - len(speeds)
    return [
        "",
        f"Machine speed (M loop iterations/s, the worker's probe before each game): median "
        f"{statistics.median(speeds):g} ({speeds[0]:g}-{speeds[-1]:g}) over {len(speeds)} "
        f"games" + (f"; {without} logged without it" if without else ""),
    ]


def _relative(path: Path) -> Path:
    try:
        return path.relative_to(Path.cwd())
    except ValueError:
        return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="*", type=Path, help="logs (default benchmarks/data/eval-*)")
    parser.add_argument("--wdl", action="store_true", help="W-D-L over both seats (RTS tables)")
    parser.add_argument(
        "--pool", action="store_true", help="with --wdl: one table of all the logs (maps summed)"
    )
    parser.add_argument(
        "--games",
        type=int,
        metavar="N",
        help="with --wdl: only the first N games a cell, those `ggp eval --games N` plays",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="with --games: the tables' --seed (default 0)"
    )
    parser.add_argument(
        "--vs",
        metavar="P,Q,...",
        help="only the columns of these opponents (e.g. random,mcts: without the round robin)",
    )
    parser.add_argument(
        "--as",
        dest="names",
        action="append",
        default=[],
        metavar="SPEC=NAME",
        help="with --wdl: count SPEC's games as NAME's (each map's network as one row)",
    )
    parser.add_argument(
        "--round-robin",
        metavar="P,Q,...",
        help="the cross table of these players in each log (both roles, either seating)",
    )
    parser.add_argument(
        "--best",
        type=int,
        metavar="N",
        help="print the N players that score highest against mcts (the round robin's)",
    )
    args = parser.parse_args()
    if args.pool and not args.wdl:
        parser.error("--pool sums W-D-L tables: give --wdl too")
    if args.games is not None and not args.wdl:
        parser.error("--games counts the W-D-L tables' games: give --wdl too")
    if args.games is not None and args.games < 1:
        parser.error(f"--games must be at least 1, not {args.games}")
    if args.round_robin and args.wdl:
        parser.error("--round-robin prints scores over both roles: leave out --wdl")
    if args.vs and (args.round_robin or args.best):
        parser.error("--vs chooses the columns of the tables: leave out the other modes")
    if args.names and not args.wdl:
        parser.error("--as names the W-D-L tables' rows: give --wdl too")
    if bad := [name for name in args.names if "=" not in name]:
        parser.error(f"--as takes SPEC=NAME, not {bad[0]!r}")
    names = {spec: name for spec, name in (given.rsplit("=", 1) for given in args.names)}
    # the default logs named as RESULTS.md names them: relative to the folder the command
    # runs in where they lie beneath it
    logs = args.logs or [_relative(path) for path in sorted(DATA.glob("eval-*.jsonl"))]
    columns = args.vs.split(",") if args.vs else None
    if args.best:
        print("\n".join(",".join(best(path, args.best)) for path in logs))
    elif args.round_robin:
        players = args.round_robin.split(",")
        print("\n\n".join(round_robin(path, players) for path in logs))
    elif args.wdl:
        groups = [logs] if args.pool else [[path] for path in logs]
        print(
            "\n\n".join(
                wdl_table(*group, first=args.games, seed=args.seed, columns=columns, names=names)
                for group in groups
            )
        )
    else:
        print("\n\n".join(table(path, columns) for path in logs))


if __name__ == "__main__":
    main()
