"""`ggp match` between two `ggp serve` processes on loopback (Meier, Tic-Tac-Toe)."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from ggp.cli import main
from ggp.protocol.game_manager import RemotePlayer
from ggp.protocol.messages import parse_info_reply

from conftest import GAMES, ROOT

LOOPBACK = "127.0.0.1"


def start_serve(log_dir: Path, seed: int) -> tuple[subprocess.Popen[str], str]:
    """A `ggp serve` process on a free loopback port, ready; and its URL."""
    process = subprocess.Popen(
        [
            *(sys.executable, "-m", "ggp", "serve", "--port", "0", "--host", LOOPBACK),
            *("--log-dir", str(log_dir), "--seed", str(seed), "--margin", "0.3"),
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # "ggp serve: ... on http://127.0.0.1:PORT/"
        if f"http://{LOOPBACK}:" not in line:
            error = process.stderr.read() if process.stderr else ""
            raise AssertionError(f"ggp serve did not start: {line}{error}")
        url = line.rsplit(" ", 1)[1].strip()
        deadline = time.monotonic() + 20
        while True:  # ready when it answers INFO
            try:
                reply = RemotePlayer(url).post("(info)", 2.0)
                assert parse_info_reply(reply).status == "available"
                return process, url
            except Exception:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.05)
    except BaseException:
        stop_serve(process)
        raise


def stop_serve(process: subprocess.Popen[str]) -> None:
    process.terminate()
    try:
        process.wait(5)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait(5)


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    logs = tmp_path_factory.mktemp("serve-logs")
    started: list[subprocess.Popen[str]] = []
    try:
        first, url1 = start_serve(logs / "one", 1)
        started.append(first)
        second, url2 = start_serve(logs / "two", 2)
        started.append(second)
        yield url1, url2
    finally:
        for process in started:
            stop_serve(process)


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "ggp", "match", *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )


def records(out: Path) -> list[dict[str, object]]:
    return [json.loads(p.read_text()) for p in sorted(out.glob("*.json"))]


def test_meier_between_two_served_players(servers: tuple[str, str], tmp_path: Path) -> None:
    url1, url2 = servers
    result = run_cli(
        str(GAMES / "meier.gdl"),
        "--player",
        f"p1={url1}",
        "--player",
        f"P2={url2}",
        "--startclock",
        "3",
        "--playclock",
        "1",
        "--games",
        "3",
        "--seed",
        "0",
        "--out",
        str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.count("match ggp") == 3
    assert "| p1 | http://127.0.0.1:" in result.stdout  # the score table
    found = records(tmp_path)
    assert len(found) == 3
    for report in found:
        record = report["record"]
        assert isinstance(record, dict)
        assert record["roles"] == ["random", "p1", "p2"]
        assert record["replacements"] == []
        assert sorted(record["goals"][1:]) == [0, 100]
        assert len(record["percepts"]) == len(record["joint_moves"]) == len(record["move_seconds"])
        latencies = report["reply_latencies_s"]
        assert isinstance(latencies, dict)
        assert len(latencies["p1"]) == len(record["joint_moves"])
        assert max(latencies["p1"] + latencies["p2"]) < 1.0


def test_tictactoe_gdl2_against_gdl1(servers: tuple[str, str], tmp_path: Path) -> None:
    url1, url2 = servers
    result = run_cli(
        str(GAMES / "tictactoe.gdl"),
        "--player",
        f"xplayer={url1}",
        "--player",
        f"oplayer={url2}",
        "--gdl1",
        "oplayer",
        "--startclock",
        "3",
        "--playclock",
        "1",
        "--games",
        "2",
        "--out",
        str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    found = records(tmp_path)
    assert len(found) == 2
    for report in found:
        record = report["record"]
        assert isinstance(record, dict)
        assert record["replacements"] == [] and sum(record["goals"]) == 100
        assert report["players"] == [
            {"role": "xplayer", "spec": url1, "gdl1": False},
            {"role": "oplayer", "spec": url2, "gdl1": True},
        ]


def test_local_against_remote_with_chance(servers: tuple[str, str], tmp_path: Path) -> None:
    result = run_cli(
        str(GAMES / "meier.gdl"),
        "--player",
        f"p1={servers[0]}",
        "--player",
        "p2=random",
        "--playclock",
        "1",
        "--out",
        str(tmp_path),
    )
    assert result.returncode == 0, result.stderr
    assert "p2 random" in result.stdout and len(records(tmp_path)) == 1


def test_an_absent_player_gets_its_moves_replaced(tmp_path: Path) -> None:
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind((LOOPBACK, 0))
        port = s.getsockname()[1]
    code = main(
        [
            "match",
            str(GAMES / "montyhall.gdl"),
            "--player",
            f"candidate=http://{LOOPBACK}:{port}",
            "--startclock",
            "0.2",
            "--playclock",
            "0.2",
            "--out",
            str(tmp_path),
        ]
    )
    assert code == 0
    (report,) = records(tmp_path)
    record = report["record"]
    assert isinstance(record, dict)
    replaced = record["replacements"]
    assert isinstance(replaced, list) and len(replaced) == 3
    assert all(r["role"] == "candidate" and "error" in r["reason"] for r in replaced)


def test_bad_player_arguments(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = str(GAMES / "meier.gdl")
    assert main(["match", game, "--player", "random=random", "--no-record"]) == 1
    assert "random is chance" in capsys.readouterr().err
    assert main(["match", game, "--player", "p3=random", "--no-record"]) == 1
    assert "no role p3" in capsys.readouterr().err
    assert main(["match", game, "--player", "p1=nobody", "--no-record"]) == 1
    assert "no player called 'nobody'" in capsys.readouterr().err
    assert main(["match", game, "--gdl1", "p1", "--player", "p1=http://127.0.0.1:1"]) == 1
    assert "GDL-I" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["match", game, "--player", "p1"])
