"""`ggp info` (ggp.info) and `ggp play` (the human player, the player registry)."""

from __future__ import annotations

import io
import subprocess
import sys
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from ggp.cli import main
from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.parser import parse_term
from ggp.gdl.terms import Const, Term
from ggp.info import GameInfo, PlayoutStats, PropnetSize, game_info, sample_playouts
from ggp.match import MatchRecord, run_match
from ggp.players.human import HumanPlayer, PlayerQuit, format_board
from ggp.players.random_player import RandomPlayer
from ggp.players.registry import make_player, player_names
from ggp.reasoning.propnet_machine import PropnetStateMachine

from conftest import GAMES, ROOT


@cache
def load(name: str) -> Game:
    return Game.from_file(GAMES / name)


def base_propositions(game: Game) -> tuple[Term, ...]:
    assert isinstance(game.machine, PropnetStateMachine)
    return game.machine.propnet.base


# --------------------------------------------------------------------------------------
# ggp info
# --------------------------------------------------------------------------------------

#: (file, roles, chance, hidden information, simultaneous moves), as games/README.md says.
#: Monty Hall's first turn (random hides, the candidate picks) is not simultaneous in
#: this sense: random is chance, not a player making a choice.
EXPECTED = [
    ("meier.gdl", ("random", "p1", "p2"), True, True, False),
    ("blindtictactoe.gdl", ("x", "o", "random"), True, True, True),
    ("blindtictactoe_biased.gdl", ("x", "o"), False, True, True),
    ("montyhall.gdl", ("candidate", "random"), True, True, False),
    ("scissors_paper_rock.gdl", ("player1", "player2"), False, True, True),
    ("kuhn_poker.gdl", ("random", "p1", "p2"), True, True, False),
    ("leduc_poker.gdl", ("random", "p1", "p2"), True, True, False),
    ("tictactoe.gdl", ("xplayer", "oplayer"), False, False, False),
    ("connect_four.gdl", ("red", "black"), False, False, False),
]


def test_every_game_has_expected_figures() -> None:
    assert {row[0] for row in EXPECTED} == {p.name for p in GAMES.glob("*.gdl")}


@pytest.mark.parametrize(("name", "roles", "chance", "hidden", "simultaneous"), EXPECTED)
def test_game_info(
    name: str, roles: tuple[str, ...], chance: bool, hidden: bool, simultaneous: bool
) -> None:
    info = game_info(load(name), 30, np.random.default_rng(0))
    assert (info.roles, info.has_chance, info.has_hidden_information) == (roles, chance, hidden)
    assert info.simultaneous == simultaneous
    assert info.reasoner == "propnet"
    assert info.propnet is not None
    net = info.propnet
    assert net.components > net.gates > 0 and net.base > 0 and net.inputs > 0
    stats = info.playouts
    assert stats.playouts == 30 and stats.unfinished == 0
    assert 1 <= stats.mean_length <= stats.max_length
    assert len(stats.mean_branching) == len(roles)
    assert all(b >= 1 for b in stats.mean_branching)
    assert eval(repr(info)) == info  # an eval-able repr, no dicts


def test_game_info_known_figures() -> None:
    spr = game_info(load("scissors_paper_rock.gdl"), 5, np.random.default_rng(0))
    assert spr.playouts == PlayoutStats(5, True, 1.0, 1, 0, (3.0, 3.0))
    monty = game_info(load("montyhall.gdl"), 20, np.random.default_rng(0)).playouts
    assert (monty.mean_length, monty.max_length) == (3.0, 3)
    assert monty.mean_branching[0] == 2.0  # 3 doors, then noop, then noop or switch
    tictactoe = game_info(load("tictactoe.gdl"), 50, np.random.default_rng(0)).playouts
    assert 5 <= tictactoe.mean_length <= tictactoe.max_length <= 9


def test_game_info_is_repeatable_and_seeded() -> None:
    game = load("meier.gdl")
    first = game_info(game, 40, np.random.default_rng(7))
    assert game_info(game, 40, np.random.default_rng(7)) == first
    assert isinstance(first, GameInfo) and isinstance(first.propnet, PropnetSize)


def test_game_info_with_the_prover_has_no_propnet() -> None:
    game = Game.from_file(GAMES / "montyhall.gdl", reasoner="prover")
    info = game_info(game, 5, np.random.default_rng(0))
    assert info.reasoner == "prover" and info.propnet is None


def test_sample_playouts_cuts_off_long_games() -> None:
    stats = sample_playouts(load("connect_four.gdl"), 3, np.random.default_rng(0), max_steps=2)
    assert (stats.unfinished, stats.max_length) == (3, 2)
    with pytest.raises(ValueError, match="at least 1"):
        sample_playouts(load("connect_four.gdl"), 0, np.random.default_rng(0))


def test_sample_playouts_stop_when_the_time_runs_out(capsys: pytest.CaptureFixture[str]) -> None:
    # A budget already spent: one playout, cut off before its first step.
    stats = sample_playouts(load("connect_four.gdl"), 5, np.random.default_rng(0), seconds=-1.0)
    assert (stats.playouts, stats.unfinished, stats.max_length) == (1, 1, 0)
    path = str(GAMES / "connect_four.gdl")
    assert main(["info", path, "--playouts", "5", "--seconds", "-1"]) == 0
    assert (
        "1 random playouts, seed 0; 1 cut off; 5 asked, the -1 s ran out" in capsys.readouterr().out
    )


def test_info_command(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(GAMES / "meier.gdl")
    assert main(["info", path, "--playouts", "20", "--seed", "3"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == path
    assert "  roles: random p1 p2" in lines
    assert "  chance: yes" in lines
    assert "  hidden information: yes" in lines
    assert "  simultaneous moves: no (seen in 20 random playouts, seed 3)" in lines
    assert any(
        line.startswith("  reasoner: propnet, ") and "base" in line and "gates" in line
        for line in lines
    )
    assert any(line.startswith("  game length: mean ") for line in lines)
    branching = next(line for line in lines if line.startswith("  branching factor"))
    assert "random 12." in branching and " p1 " in branching and " p2 " in branching
    assert main(["info", path, "--playouts", "20", "--seed", "3"]) == 0
    assert capsys.readouterr().out == out  # seeded: the same figures again


def test_info_command_with_the_prover(capsys: pytest.CaptureFixture[str]) -> None:
    path = str(GAMES / "scissors_paper_rock.gdl")
    assert main(["info", path, "--playouts", "3", "--reasoner", "prover"]) == 0
    assert "  reasoner: prover (as asked; no propnet)" in capsys.readouterr().out


def test_info_command_refuses_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["info", str(GAMES / "meier.gdl"), "--playouts", "0"])
    assert info.value.code == 2
    bad = tmp_path / "bad.gdl"
    bad.write_text("(role x\n")
    assert main(["info", str(bad)]) == 2
    assert f"{bad}:1:1:" in capsys.readouterr().err


# --------------------------------------------------------------------------------------
# The pieces of ggp play
# --------------------------------------------------------------------------------------


def test_registry() -> None:
    assert "random" in player_names()
    assert isinstance(make_player("random", np.random.default_rng(0)), RandomPlayer)
    with pytest.raises(GameError, match="no player called 'nobody'"):
        make_player("nobody", np.random.default_rng(0))


def test_format_board_connect_four_uses_the_whole_extent() -> None:
    game = load("connect_four.gdl")
    extent = base_propositions(game)
    empty = format_board((), extent)
    assert empty is not None
    lines = empty.splitlines()
    assert lines[0].split() == [str(c) for c in range(1, 8)]
    assert [line.split()[0] for line in lines[1:7]] == [str(r) for r in range(6, 0, -1)]
    board = format_board([parse_term("(cell 3 1 red)")], extent)
    assert board is not None
    assert board.splitlines()[6].split() == ["1", ".", ".", "red", ".", ".", ".", "."]
    assert format_board([parse_term("(control red)")]) is None


def public_game(name: str) -> Game:
    game = Game.from_file(GAMES / name)
    assert game.moves_public  # classic GDL: Game adds the public-moves percept rule
    return game


def human_match(
    name: str, role: str, text: str, *, show_board: bool, public: bool = False
) -> tuple[str, MatchRecord]:
    """Play a match with a HumanPlayer fed ``text``; returns its output and the record."""
    game = public_game(name) if public else load(name)
    output = io.StringIO()
    human = HumanPlayer(
        io.StringIO(text), output, show_board=show_board, rng=np.random.default_rng(1)
    )
    players = {
        r: human if r.name == role else RandomPlayer(np.random.default_rng(2))
        for r in game.player_roles
    }
    record = run_match(game, players, np.random.default_rng(3), play_clock_s=1e9)
    return output.getvalue(), record


def test_human_player_draws_the_true_board_of_a_gdl_game() -> None:
    out, record = human_match("tictactoe.gdl", "xplayer", "1\n" * 9, show_board=True, public=True)
    assert record.replacements == ()
    assert "The game is over." in out
    # the last board drawn is the true final state
    game = public_game("tictactoe.gdl")
    state = game.initial_state()
    for joint in record.joint_moves:
        state = game.next_state(state, joint)
    final = format_board(game.state_facts(state), base_propositions(game))
    assert final is not None and out.rstrip().endswith(final + "\nThe game is over.")


def test_human_player_asks_again_after_bad_input() -> None:
    bad = ["", "hello", "0", "99", "\u00b2", "(mark 9 9)", "(mark 1", "?", "history"]
    text = "\n".join([*bad, "mark 2 2"])
    out, record = human_match(
        "tictactoe.gdl", "xplayer", text + "\n" + "1\n" * 9, show_board=True, public=True
    )
    assert record.replacements == ()
    assert record.joint_moves[0] == ("(mark 2 2)", "noop")
    assert "hello is not one of your moves now" in out
    assert "There is no move number 0" in out
    assert "There is no move number 99" in out
    assert "(mark 9 9) is not one of your moves now" in out
    assert "Not a move: '(mark 1'" in out
    assert "'quit' ends the match" in out
    assert "Nothing has happened yet." in out
    assert "\u00b2 is not one of your moves now" in out


def test_human_player_sees_no_hidden_state() -> None:
    out, record = human_match("meier.gdl", "p1", "1\n" * 100, show_board=False)
    assert record.replacements == ()
    assert "(roll" not in out  # random's moves are never shown
    assert "(dice" not in out and "(turn" not in out  # nor state facts
    assert "(has_dice" in out or "(my_dice" in out  # but its own percepts are


class UnreadableOnce(io.StringIO):
    """A stream whose first line is not valid text."""

    failed = False

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        if not self.failed:
            self.failed = True
            raise UnicodeDecodeError("utf-8", b"\xff", 0, 1, "invalid start byte")
        return super().readline(-1 if size is None else size)


def test_human_player_survives_undecodable_input() -> None:
    game = load("montyhall.gdl")
    output = io.StringIO()
    human = HumanPlayer(UnreadableOnce("2\nswitch\n"), output, rng=np.random.default_rng(0))
    record = run_match(game, {Const("candidate"): human}, np.random.default_rng(0))
    assert record.replacements == ()
    assert record.joint_moves[0][0] == "(choose 2)"
    assert "could not be read" in output.getvalue()


def test_human_player_end_of_input_quits() -> None:
    with pytest.raises(PlayerQuit):
        human_match("tictactoe.gdl", "xplayer", "", show_board=True, public=True)
    with pytest.raises(PlayerQuit):
        human_match("tictactoe.gdl", "xplayer", "quit\n", show_board=True, public=True)


# --------------------------------------------------------------------------------------
# ggp play
# --------------------------------------------------------------------------------------


def play(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], text: str, *args: str
) -> tuple[int, str, str]:
    monkeypatch.setattr(sys, "stdin", io.StringIO(text))
    status = main(["play", *args])
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_play_tictactoe(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(GAMES / "tictactoe.gdl")
    status, out, _ = play(monkeypatch, capsys, "1\n" * 9, path, "--as", "oplayer", "--seed", "5")
    assert status == 0
    assert f"{path}: you play oplayer against random as xplayer (seed 5)." in out
    assert "(rows: 1st argument of cell, columns: 2nd)" in out  # the board is drawn
    assert "Goals: xplayer " in out and "You (oplayer) scored " in out
    again = play(monkeypatch, capsys, "1\n" * 9, path, "--as", "oplayer", "--seed", "5")
    assert again == (0, out, "")  # seeded: the same match


@pytest.mark.parametrize(
    ("name", "role"),
    [("blindtictactoe.gdl", "o"), ("meier.gdl", "p2"), ("kuhn_poker.gdl", "p1")],
)
def test_play_gdl2_game_hides_the_state(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str, role: str
) -> None:
    status, out, _ = play(
        monkeypatch, capsys, "1\n" * 60, str(GAMES / name), "--as", role, "--seed", "1"
    )
    assert status == 0
    assert "You see only your own moves and percepts, never the true state." in out
    assert "argument of cell" not in out and "(cell" not in out  # no board, no state
    assert "Goals: " in out


def test_play_montyhall_alone(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, _ = play(
        monkeypatch, capsys, "1\nswitch\n", str(GAMES / "montyhall.gdl"), "--seed", "0"
    )
    assert status == 0
    assert "you play candidate against nobody but chance" in out
    assert "you played switch" in out and "(open_door " in out
    assert "Goals: candidate " in out


def test_play_end_of_input(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status, out, err = play(monkeypatch, capsys, "", str(GAMES / "connect_four.gdl"), "--seed", "0")
    assert status == 1
    assert "End of input: the match is abandoned." in out
    assert "Goals" not in out and "Traceback" not in err


def test_play_refuses_bad_roles(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(GAMES / "meier.gdl")
    status, _, err = play(monkeypatch, capsys, "", path, "--as", "random")
    assert status == 1 and "random is chance" in err
    status, _, err = play(monkeypatch, capsys, "", path, "--as", "p3")
    assert status == 1 and "no role p3" in err
    with pytest.raises(SystemExit):
        main(["play", path, "--vs", "nobody"])


def test_play_in_a_subprocess_with_piped_input() -> None:
    command = [sys.executable, "-m", "ggp", "play", "games/connect_four.gdl", "--seed", "4"]
    done = subprocess.run(
        command, input="4\n" * 30, capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert "(columns: 1st argument of cell, rows: 2nd)" in done.stdout
    assert "Goals: red " in done.stdout
    ended = subprocess.run(
        command, input="4\n", capture_output=True, text=True, cwd=ROOT, timeout=60
    )
    assert ended.returncode == 1
    assert "End of input: the match is abandoned." in ended.stdout
    assert "Traceback" not in ended.stderr


def test_public_moves_make_the_role_know_the_state() -> None:
    game = public_game("connect_four.gdl")
    assert game.roles == (Const("red"), Const("black"))
    state = game.initial_state()
    joint = ("(drop 3)", "noop")
    seen = {str(p) for p in game.percepts(state, joint, "black")}
    assert seen == {"(did red (drop 3))", "(did black noop)"}
