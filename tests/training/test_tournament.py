"""Tournaments: seating, placements, the log that resumes, and the table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ggp.errors import GameError, OutOfTime
from ggp.training.evaluate import format_left
from ggp.training.tournament import (
    TournamentTable,
    format_tournament,
    seating,
    tournament,
    tournament_left,
    welch,
)

ROOT = Path(__file__).resolve().parents[2]
TICTACTOE = ROOT / "games" / "tictactoe.gdl"
DUEL = ROOT / "games" / "battlesnake" / "duel_7x7.gdl"


def test_seating_permutes_the_field_by_the_game_seed() -> None:
    field = ["b", "a", "b", "a"]
    seats = [seating(field, 0, i)[0] for i in range(20)]
    assert all(sorted(s) == ["a", "a", "b", "b"] for s in seats)
    assert len(set(seats)) > 1  # the seating changes from game to game
    assert seating(field, 0, 3) == seating(list(reversed(field)), 0, 3)  # order is irrelevant
    assert seating(field, 0, 3)[1] != seating(field, 1, 3)[1]


def test_welch() -> None:
    t, p = welch([1.0, 1.0, 2.0, 2.0], [1.0, 1.0, 2.0, 2.0])
    assert t == 0 and p == 1
    t, p = welch([1.0] * 50 + [2.0] * 50, [2.0] * 90 + [1.0] * 10)
    assert t < -6 and p < 1e-8
    assert welch([1.0], [2.0, 3.0]) == (0.0, 1.0)


def test_a_tournament_ranks_resumes_and_logs(tmp_path: Path) -> None:
    log = tmp_path / "t.jsonl"
    field = ["random", "alphabeta:depth=9"]
    first = tournament(TICTACTOE, field, 6, backend="inline", play_clock_s=1.0, log=log)
    assert first.games == 6 and len(log.read_text().splitlines()) == 6
    for line in log.read_text().splitlines():
        record = json.loads(line)
        assert sorted(record["placements"]) in ([1.0, 2.0], [1.5, 1.5])
        assert record["goals"] in ([100, 0], [0, 100], [50, 50])
        assert sorted(record["seats"]) == sorted(field)
    assert {s.spec for s in first.standings} == set(field)
    assert sum(s.seats for s in first.standings) == 12
    # a longer tournament plays only the games the log lacks, and keeps the first six
    second = tournament(TICTACTOE, field, 10, backend="inline", play_clock_s=1.0, log=log)
    assert second.games == 10 and len(log.read_text().splitlines()) == 10
    means = {s.spec: s.mean for s in second.standings}
    assert means["alphabeta:depth=9"] < means["random"]  # perfect play never loses
    assert means["random"] + means["alphabeta:depth=9"] == pytest.approx(3.0)
    text = format_tournament(second)
    assert "| `random` | 10 |" in text and "Welch t" in text
    with log.open("a") as out:  # a half-written record left by a kill is dropped
        out.write('{"game": "tictactoe')
    third = tournament(TICTACTOE, field, 10, backend="inline", play_clock_s=1.0, log=log)
    assert third.games == 10 and log.read_text().endswith("\n")


def test_what_a_tournament_has_left_is_read_from_its_log(tmp_path: Path) -> None:
    log = tmp_path / "t.jsonl"
    field = ["random", "alphabeta:depth=9"]
    (row,) = tournament_left(TICTACTOE, field, 5, play_clock_s=1.0, log=log)  # no log yet
    assert (row.logged, row.asked, row.seconds) == (0, 5, None)
    tournament(TICTACTOE, field, 3, backend="inline", play_clock_s=1.0, log=log)
    seconds = [json.loads(line)["seconds"] for line in log.read_text().splitlines()]
    with log.open("a") as out:  # a record being written by a run beside it
        out.write('{"game": "tictactoe')
    before = log.read_bytes()
    (row,) = tournament_left(TICTACTOE, list(reversed(field)), 5, play_clock_s=1.0, log=log)
    assert log.read_bytes() == before  # only read: the run's record is not cut off
    assert (row.logged, row.asked) == (3, 5)
    assert row.seconds == pytest.approx(sum(seconds) / 3)
    # another seed or clock asks for other games
    assert tournament_left(TICTACTOE, field, 5, seed=1, play_clock_s=1.0, log=log)[0].logged == 0
    assert tournament_left(TICTACTOE, field, 5, play_clock_s=2.0, log=log)[0].logged == 0
    assert format_left([row]).splitlines()[-1].startswith("left: 2 of 5 games, about ")


def test_a_stop_time_starts_no_more_games_and_the_rerun_goes_on(tmp_path: Path) -> None:
    """At ``stop_at`` no game is started; those running are logged, and running again
    plays the rest: the same table as one run."""
    field = ["random", "alphabeta:depth=1"]
    log = tmp_path / "t.jsonl"
    ticks = iter(range(100))  # a clock that moves on a second each time it is read
    with pytest.raises(OutOfTime, match=r"2 game\(s\) played in this run and logged, 4 not"):
        tournament(TICTACTOE, field, 6, backend="inline", log=log, stop_at=2.0,
                   clock=lambda: float(next(ticks)))  # fmt: skip
    assert len(log.read_text().splitlines()) == 2  # read at 0 and 1: two games; at 2 none
    rest = tournament(TICTACTOE, field, 6, backend="inline", log=log, stop_at=1e12)
    whole = tournament(TICTACTOE, field, 6, backend="inline", log=tmp_path / "whole.jsonl")
    assert rest.games == 6

    def placements(table: TournamentTable) -> list[tuple[str, float, float]]:
        return [(s.spec, s.mean, s.first) for s in table.standings]

    assert placements(rest) == placements(whole)
    # a stop time already past with workers in processes: nothing is started
    with pytest.raises(OutOfTime, match=r"0 game\(s\) played in this run and logged, 3 not"):
        tournament(TICTACTOE, field, 9, workers=2, log=log, stop_at=0.0)
    assert len(log.read_text().splitlines()) == 6
    with pytest.raises(GameError, match="a stop time needs a log"):
        tournament(TICTACTOE, field, 1, backend="inline", stop_at=0.0)


def test_snakes_rank_by_placement_and_searches_report_their_depth(tmp_path: Path) -> None:
    field = ["snake:greedy", "idapos:depth=2"]
    log = tmp_path / "duel.jsonl"
    table = tournament(DUEL, field, 2, backend="inline", play_clock_s=1.0, log=log)
    assert table.games == 2
    for s in table.standings:
        assert 1.0 <= s.mean <= 2.0 and s.replaced == 0
    depth = {s.spec: s.depth for s in table.standings}
    assert depth["snake:greedy"] is None
    assert depth["idapos:depth=2"] is not None and depth["idapos:depth=2"][2] == 2
    again = tournament(DUEL, field, 2, backend="inline", play_clock_s=1.0, log=log)
    assert again.standings == table.standings  # read back from the log


def test_the_field_must_fill_every_seat(tmp_path: Path) -> None:
    with pytest.raises(GameError, match="2 player roles"):
        tournament(TICTACTOE, ["random"] * 3, 1, backend="inline")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("not json\n")
    with pytest.raises(GameError, match=r"bad\.jsonl:1: not a game record"):
        tournament(TICTACTOE, ["random", "random"], 1, backend="inline", log=bad)
