"""benchmarks/eval_tables.py: the tables of issues 14 and 16 read back from `ggp eval` logs.

The script is not part of the package (it lives beside the logs it reads), so it is loaded
from its file. Each test writes a small log of known games and checks the printed cells.
"""

from __future__ import annotations

import importlib.util
import json
from collections.abc import Iterable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "eval_tables.py"


@pytest.fixture(scope="module")
def tables() -> ModuleType:
    spec = importlib.util.spec_from_file_location("eval_tables", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def record(player: str, opponent: str, role: str, seed: int, score: float, **extra: Any) -> str:
    fields = {
        "game": "g.kif:000",
        "game_path": "g.kif",
        "player": player,
        "opponent": opponent,
        "role": role,
        "seed": seed,
        "play_clock_s": 1.0,
        "score": score,
    }
    return json.dumps(fields | extra)


def write(tmp_path: Path, lines: Iterable[str]) -> Path:
    path = tmp_path / "eval-g.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def row(text: str, start: str) -> list[str]:
    """The cells of the table line beginning with `start`."""
    (line,) = [line for line in text.splitlines() if line.startswith(start)]
    return [cell.strip() for cell in line.strip("|").split("|")]


def test_round_robin_counts_either_seating_from_the_rows_side(
    tables: ModuleType, tmp_path: Path
) -> None:
    log = write(
        tmp_path,
        [
            # a beats b 3 of 4 (two seatings: a's games and b's), draws c twice
            record("a", "b", "white", 1, 1.0),
            record("a", "b", "black", 2, 1.0),
            record("b", "a", "white", 3, 1.0),
            record("b", "a", "black", 4, 0.0),
            record("a", "c", "white", 5, 0.5),
            record("a", "c", "black", 6, 0.5),
            record("a", "random", "white", 7, 1.0),  # not among the three: left out
        ],
    )
    text = tables.round_robin(log, ["a", "b", "c"])
    assert row(text, "| `a`") == ["`a`", "", "4: 75.0 [30.1, 95.4]", "2: 50.0 [9.5, 90.5]",
                                  "6: 66.7 [30.0, 90.3]"]  # fmt: skip
    assert row(text, "| `b`") == ["`b`", "4: 25.0 [4.6, 69.9]", "", "", "4: 25.0 [4.6, 69.9]"]
    assert row(text, "| `c`")[1:4] == ["2: 50.0 [9.5, 90.5]", "", ""]


def test_a_match_logged_twice_counts_once_the_later_record(
    tables: ModuleType, tmp_path: Path
) -> None:
    log = write(
        tmp_path,
        [
            record("a", "b", "white", 1, 0.0),
            "",
            record("a", "b", "white", 1, 1.0),  # the same match, from a merged log
            record("a", "b", "white", 2, 1.0, play_clock_s=0.5),  # another clock: another match
        ],
    )
    assert row(tables.round_robin(log, ["a", "b"]), "| `a`")[2] == "2: 100.0 [34.2, 100.0]"


def test_vs_keeps_only_the_named_columns(tables: ModuleType, tmp_path: Path) -> None:
    log = write(
        tmp_path,
        [
            record("a", "random", "white", 1, 1.0, depths=[3, 4, 5], machine="M"),
            record("a", "mcts", "white", 2, 0.0, depths=[4], machine="M"),
            record("a", "b", "white", 3, 1.0, machine="M"),
        ],
    )
    text = tables.table(log, ["random", "mcts"])
    assert "vs b" not in text and "| player | role | vs random | vs mcts |" in text
    assert row(text, "| `a`") == ["`a`", "white", "1: 100.0 [20.7, 100.0]; 4 (3-5); A",
                                  "1: 0.0 [0.0, 79.3]; 4 (4-4); A"]  # fmt: skip
    assert "vs b" in tables.table(log)


def test_best_ranks_by_the_mcts_column_and_puts_mcts_last(
    tables: ModuleType, tmp_path: Path
) -> None:
    lines = []
    for player, wins in [("a", 2), ("b", 1), ("c", 0), ("mcts", 2)]:
        for role in ["white", "black"]:
            lines += [record(player, "mcts", role, s, float(s < wins)) for s in range(2)]
    log = write(tmp_path, lines)
    assert tables.best(log, 3, games=2) == ["a", "b", "mcts"]
    assert tables.best(log, 2, games=2) == ["a", "mcts"]  # a tie: the known order decides


def test_best_refuses_a_column_still_being_played(tables: ModuleType, tmp_path: Path) -> None:
    log = write(tmp_path, [record("a", "mcts", "white", 1, 1.0)])
    with pytest.raises(SystemExit, match=r"short of 2 games a cell: a as white: 1, mcts as"):
        tables.best(log, 1, games=2)


def test_a_line_that_is_not_a_record_names_its_place(tables: ModuleType, tmp_path: Path) -> None:
    log = write(tmp_path, [record("a", "b", "white", 1, 1.0), '{"player": "a"}'])
    with pytest.raises(SystemExit, match=r"eval-g\.jsonl:2: not a match record"):
        tables.round_robin(log, ["a", "b"])


def test_the_machines_speed_is_summed_up_where_records_have_it(
    tables: ModuleType, tmp_path: Path
) -> None:
    log = write(
        tmp_path,
        [
            record("a", "b", "blue", 1, 1.0, speed=4.5),
            record("a", "b", "blue", 2, 0.5, speed=9.0),
            record("a", "b", "red", 3, 0.0, speed=5.0),
            record("a", "b", "red", 4, 0.0),  # logged before the probe
        ],
    )
    line = ("Machine speed (M loop iterations/s, the worker's probe before each game): "
            "median 5 (4.5-9) over 3 games; 1 logged without it")  # fmt: skip
    assert line in tables.table(log).splitlines()
    assert line in tables.wdl_table(log).splitlines()
    older = write(tmp_path, [record("a", "b", "blue", 1, 1.0)])
    assert "Machine speed" not in tables.table(older) + tables.wdl_table(older)


def test_wdl_says_whose_moves_the_referee_replaced(tables: ModuleType, tmp_path: Path) -> None:
    log = write(
        tmp_path,
        [
            record("a", "b", "blue", 1, 0.0, replaced=2, opponent_replaced=1),
            record("a", "b", "red", 2, 1.0, replaced=1),  # logged before the opponents' count
            record("b", "a", "blue", 3, 1.0, replaced=0, opponent_replaced=0),
        ],
    )
    lines = tables.wdl_table(log).splitlines()
    assert lines[-1] == (
        "Moves the referee replaced (late or illegal) in the row player's games: `a` 3 in 2 "
        "games (the opponents' 1, in the 1 that log it); `b` 0 in 1 games (the opponents' 0, "
        "in the 1 that log it)"
    )
    none = write(tmp_path, [record("a", "b", "blue", 1, 1.0, replaced=0, opponent_replaced=0)])
    assert "replaced" not in tables.wdl_table(none)


def test_wdl_prints_the_column_players_depths_where_logged(
    tables: ModuleType, tmp_path: Path
) -> None:
    log = write(
        tmp_path,
        [
            record("a", "b", "blue", 1, 1.0, depths=[5, 6, 7], opponent_depths=[3, 4]),
            record("a", "b", "red", 2, 0.0, depths=[5], opponent_depths=None),
            record("a", "c", "red", 3, 0.0, depths=[2]),  # logged before the field
            record("b", "c", "red", 4, 0.0, depths=[2], opponent_depths=[8]),
        ],
    )
    lines = tables.wdl_table(log).splitlines()
    assert lines[-3] == (
        "Depth per searched move of the row player (RTMM: lookahead in clock units past the "
        "root), median (lowest-deepest): `a` 5 (2-7; 5 moves); `b` 2 (2-2; 1 moves)"
    )
    assert lines[-1] == (
        "Depth per searched move of the column player, in the games that log it (since "
        "2026-12-07), median (lowest-deepest): `b` 3.5 (3-4; 2 moves); `c` 8 (8-8; 1 moves)"
    )
    older = write(tmp_path, [record("a", "b", "blue", 1, 1.0, depths=[5])])
    assert "column player" not in tables.wdl_table(older)


def test_wdl_first_games_keeps_those_ggp_eval_games_n_plays(
    tables: ModuleType, tmp_path: Path
) -> None:
    # three games a seat against `b` on one map, played with --seed 0: match i's seed is
    # match_seed(0, role, "b", i); --games 2 keeps matches 0 and 1 of each seat
    seeds = {role: [tables.match_seed(0, role, "b", i) for i in range(3)] for role in ("x", "y")}
    log = write(
        tmp_path,
        [record("a", "b", role, seeds[role][i], score) for role, scores in
         (("x", [1.0, 0.5, 0.0]), ("y", [1.0, 1.0, 0.0])) for i, score in enumerate(scores)],
    )  # fmt: skip
    assert row(tables.wdl_table(log), "| `a`") == ["`a`", "3-1-2"]
    assert row(tables.wdl_table(log, first=2), "| `a`") == ["`a`", "3-1-0"]
    assert row(tables.wdl_table(log, first=1), "| `a`") == ["`a`", "2-0-0"]
    # another --seed names other games: none of these
    assert "| `a`" not in tables.wdl_table(log, first=3, seed=1)


def test_wdl_pools_named_specs_as_one_row_and_keeps_the_vs_columns(
    tables: ModuleType, tmp_path: Path
) -> None:
    log = write(
        tmp_path,
        [
            record("net:small", "r", "x", 1, 1.0),
            record("net:arena", "r", "y", 2, 0.5),
            record("net:arena", "f", "x", 3, 0.0),
            record("a", "net:small", "x", 4, 0.0),  # a column of the renamed spec too
        ],
    )
    names = {"net:small": "net", "net:arena": "net"}
    text = tables.wdl_table(log, names=names)
    assert "net:" not in text and "| row \\ vs | f | net | r |" in text  # unknown: by name
    assert row(text, "| `net`") == ["`net`", "0-0-1", "", "1-1-0"]
    assert row(text, "| `a`") == ["`a`", "", "0-0-1", ""]
    text = tables.wdl_table(log, names=names, columns=["r"])
    assert "| row \\ vs | r |" in text and "| `a`" not in text
