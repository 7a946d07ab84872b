"""The `ggp` command line: help, `ggp check` summaries and refusals."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from ggp.cli import main

from conftest import GAMES, SHARED, requires_shared

TICTACTOE = """
(role xplayer) (role oplayer)
(init (cell 1 b)) (init (cell 2 b)) (init (control xplayer))
(<= (legal ?p (mark ?c)) (true (control ?p)) (true (cell ?c b)))
(<= (legal xplayer noop) (true (control oplayer)))
(<= (legal oplayer noop) (true (control xplayer)))
(<= (next (cell ?c x)) (does xplayer (mark ?c)))
(<= (next (cell ?c o)) (does oplayer (mark ?c)))
(<= (next (cell ?c ?v)) (true (cell ?c ?v)) (distinct ?v b))
(<= (next (cell ?c b)) (true (cell ?c b)) (not (marked ?c)))
(<= (marked ?c) (does ?p (mark ?c)))
(<= (next (control oplayer)) (true (control xplayer)))
(<= (next (control xplayer)) (true (control oplayer)))
(<= open (true (cell ?c b)))
(<= terminal (not open))
(<= (goal xplayer 100) (true (cell 1 x)))
(<= (goal xplayer 0) (not (true (cell 1 x))))
(<= (goal oplayer 100) (not (true (cell 1 x))))
(<= (goal oplayer 0) (true (cell 1 x)))
"""


def test_help_lists_only_implemented_commands(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["--help"])
    assert info.value.code == 0
    out = capsys.readouterr().out
    commands = {  # "    name  help"; a wrapped help line starts with more spaces
        line.split()[0] for line in out.splitlines() if re.match(r"    \S", line)
    }
    implemented = {
        *("check", "info", "play", "bench", "solve", "serve", "match", "train", "eval"),
        "exploit",
        "tune",
        "tournament",
        "battlesnake",
    }
    assert commands == implemented


def test_check_help_documents_the_options(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["check", "--help"])
    out = capsys.readouterr().out
    for option in ("--strict", "--playouts", "--seed", "--reasoner", "file:line:col"):
        assert option in out


def test_check_prints_a_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = tmp_path / "tiny.gdl"
    game.write_text(TICTACTOE)
    assert main(["check", str(game), "--playouts", "5"]) == 0
    out = capsys.readouterr().out
    assert f"{game}: valid GDL" in out
    assert "roles: xplayer oplayer" in out
    assert "chance: no" in out
    assert "hidden information: no" in out
    assert "simultaneous moves: no" in out
    assert "legal 3" in out and "role 2" in out


def test_check_refuses_a_bad_file_with_its_position(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = tmp_path / "bad.gdl"
    game.write_text("(role x)\n(<= (legal x noop)\n   (true (s 1)\n")
    assert main(["check", str(game)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"{game}:2:1: unexpected end of input")


def test_check_refuses_a_semantic_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    game = tmp_path / "arity.gdl"
    game.write_text(TICTACTOE + "\n(<= (legal xplayer (mark 1) 3) (true (control xplayer)))\n")
    assert main(["check", str(game), "--playouts", "0"]) == 2
    err = capsys.readouterr().err
    assert f"{game}:" in err and "legal always has arity 2" in err


def test_check_warns_of_a_function_with_two_arities(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    game = tmp_path / "arity.gdl"
    game.write_text(TICTACTOE + "\n(<= (legal xplayer (mark 1 2)) (true (control xplayer)))\n")
    assert main(["check", str(game), "--playouts", "0"]) == 0
    captured = capsys.readouterr()
    assert f"{game}:21:1: warning: function mark used with arity 2 here and arity 1 at" in (
        captured.err
    )
    assert "warnings: 1" in captured.out
    assert main(["check", str(game), "--playouts", "0", "--strict"]) == 2


@pytest.mark.skipif(not (GAMES / "meier.gdl").exists(), reason="games/meier.gdl not written yet")
def test_check_meier_through_the_console_script() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "ggp", "check", str(GAMES / "meier.gdl")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "roles: random p1 p2" in result.stdout
    assert "chance: yes" in result.stdout
    assert "hidden information: yes" in result.stdout


@requires_shared
def test_check_refuses_the_invalid_corpus_file_when_strict(
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = SHARED / "gdl" / "ggp-base-tests" / "test_invalid_sentence_arities_differ.kif"
    assert main(["check", str(path), "--playouts", "0"]) == 0  # a warning: managers play it
    assert f"{path}:14:1: warning: relation foo" in capsys.readouterr().err
    assert main(["check", str(path), "--strict"]) == 2
    err = capsys.readouterr().err
    assert f"{path}:14:1: relation foo used with arity 2 here" in err


def test_bench_prints_every_mode(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", str(GAMES / "tictactoe.gdl"), "--seconds", "0.2", "--batch", "256"]) == 0
    out = capsys.readouterr().out
    assert "propnet" in out
    for mode in ("single-state, cache off", "single-state, cache on", "batched, 256 states"):
        assert mode in out
    assert "cache: " in out and "% hits" in out


def test_bench_on_the_top_down_prover(capsys: pytest.CaptureFixture[str]) -> None:
    game = str(GAMES / "tictactoe.gdl")
    assert main(["bench", game, "--seconds", "0.2", "--no-cache", "--reasoner", "topdown"]) == 0
    out = capsys.readouterr().out
    assert "random playouts to the end, topdown" in out
    assert "single-state, cache off" in out
    assert "batched: not available (the game runs on the topdown, no propnet)" in out


def test_solve_kuhn_prints_value_policy_and_exploitability(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["solve", str(GAMES / "kuhn_poker.gdl"), "--iterations", "1000"]) == 0
    out = capsys.readouterr().out
    assert "12 information sets" in out
    assert "p1 48.611" in out  # 50 + 25 * (-1/18)
    assert "p2 [noop / (my_card q); noop / (played p1 bet)]: call 0.333, fold 0.667" in out
    exploitability = float(out.split("exploitability: ")[1].split()[0])
    assert exploitability < 25 * 1e-3  # 1e-3 chips; a chip is 25 goal points here


def test_exploit_kuhn_prints_values_gains_and_exploitability(
    capsys: pytest.CaptureFixture[str],
) -> None:
    game = str(GAMES / "kuhn_poker.gdl")
    assert main(["exploit", game, "--player", "random", "--workers", "1", "--no-progress"]) == 0
    out = capsys.readouterr().out
    assert "full game tree of 55 nodes" in out
    assert "12 information sets (p1 6, p2 6), 1 s per decision, 1 worker(s)" in out
    assert "p1: value 53.1250, best response 62.5000, gain 9.375" in out
    assert "p2: value 46.8750, best response 60.4167, gain 13.5417" in out
    # 11/24 chip (OpenSpiel's value for uniform play), 25 goal points a chip.
    assert "exploitability: 11.4583 goal points (NashConv 22.9167 / 2 deciding role(s))" in out


def test_exploit_refuses_a_tree_above_max_nodes(capsys: pytest.CaptureFixture[str]) -> None:
    game = str(GAMES / "tictactoe.gdl")
    status = main(["exploit", game, "--player", "random", "--max-nodes", "500", "--workers", "1"])
    assert status == 1
    err = capsys.readouterr().err
    assert "tictactoe.gdl: the game tree exceeds 500 nodes at depth" in err
    assert "raise --max-nodes" in err


@requires_shared
def test_play_vs_a_spec_with_options_and_a_network_of_other_rules(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # The corpus meier.kif with the network of games/meier.gdl (other rules): the opponent
    # is the search-only cfr player, with one warning, and never the random fallback.
    import io

    checkpoint = Path(__file__).resolve().parents[1] / "checkpoints" / "meier" / "latest.pt"
    monkeypatch.setattr(sys, "stdin", io.StringIO("1\n" * 60))
    path = str(SHARED / "gdl" / "gdl2" / "meier.kif")
    status = main(
        ["play", path, "--as", "p2", "--vs", f"cfr+nn:{checkpoint},mix=0.5", "--seed", "3"]
    )
    out, err = capsys.readouterr()
    assert status == 0, err
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "was trained for" in warnings[0]
    assert "search-only cfr" in warnings[0]
    assert "Goals: " in out and "replaced the move" not in out
    with pytest.raises(SystemExit):
        main(["play", path, "--vs", "random:x"])  # random takes no argument
