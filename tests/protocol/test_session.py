"""A served match as managers really play it: percepts as they send them (public moves or
none for a classic game), a manager whose percepts contradict the rules, and the goals
in the log's stop event."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from ggp.game import Game
from ggp.gdl.terms import Const
from ggp.match import run_match
from ggp.players.base import Player
from ggp.players.random_player import RandomPlayer
from ggp.protocol.game_manager import RemotePlayer
from ggp.protocol.http_handler import PlayerHTTPServer, start_server_thread
from ggp.protocol.messages import parse_message, parse_move_reply
from ggp.protocol.service import PlayerService
from ggp.protocol.session import ServeSettings

from conftest import GAMES, SHARED, requires_shared

TRANSCRIPT = SHARED / "protocol" / "gamecontroller-gdl1-tictactoe.txt"

#: Cells the manager applies for xplayer in the lost-track test (no line with (1 1)).
X_CELLS = ("(mark 1 2)", "(mark 2 1)", "(mark 2 3)", "(mark 3 2)")


def events(log_dir: Path) -> list[dict[str, object]]:
    (log,) = log_dir.glob("*.jsonl")
    return [json.loads(line) for line in log.read_text().splitlines()]


def recorded_tictactoe() -> tuple[str, list[tuple[str, str]]]:
    """The START of a recorded Dresden GameController match of Tic-Tac-Toe (GDL-I), and
    the joint moves its PLAY and STOP messages report, in role order (xplayer, oplayer)."""
    bodies = [
        line for line in TRANSCRIPT.read_text(encoding="utf-8").splitlines() if line.startswith("(")
    ]
    start = bodies[0]
    joints = []
    for body in bodies[2:]:
        terms = re.fullmatch(r"\((?:PLAY|STOP) M2 \((.*)\)\)", body)
        assert terms is not None, body
        parts = re.findall(r"\([^()]*\)|[^\s()]+", terms.group(1))
        assert len(parts) == 2, body
        joints.append((parts[0], parts[1]))
    return start, joints


def as_gdl2(joints: list[tuple[str, str]], public: bool) -> list[str]:
    """The same match as the Dresden manager sends it to a GDL-II player: turn, the
    applied move, and the percepts (the moves, or ``()`` as for the rules as written)."""
    messages = ["(PLAY M2 0 NIL NIL)"]
    for turn, (x, o) in enumerate(joints, start=1):
        seen = f"((DID XPLAYER {x}) (DID OPLAYER {o}))" if public else "()"
        kind = "STOP" if turn == len(joints) else "PLAY"
        messages.append(f"({kind} M2 {turn} {x} {seen})")
    return messages


@requires_shared
@pytest.mark.parametrize("public", [True, False], ids=["public moves", "no percepts"])
def test_a_classic_game_follows_the_percepts_the_manager_sends(
    tmp_path: Path, public: bool
) -> None:
    start, joints = recorded_tictactoe()
    service = PlayerService(ServeSettings(log_dir=tmp_path, seed=0, margin_s=0.5))
    assert service.handle(start).body == "READY"
    truth = Game.from_description(parse_message(start).rules)  # type: ignore[union-attr]
    state = truth.initial_state()
    for message, joint in zip(as_gdl2(joints, public), [*joints, None], strict=True):
        reply = service.handle(message)
        assert reply.status == 200, reply.body
        if joint is None:
            assert reply.body == "DONE"
            break
        move = parse_move_reply(reply.body)
        if public:  # the state is known: every reply is legal in it
            assert move in truth.legal_moves(state, "XPLAYER")
        state = truth.next_state(state, joint)
    log = events(tmp_path)
    plays = [e for e in log if e["event"] == "play"]
    assert len(plays) == len(joints)
    # The player never lost track, so it never guessed: its moves or its tracker's.
    assert not any("guess" in str(e["source"]) for e in plays)
    assert not any(e["event"] == "lost-track" for e in log)
    (mode,) = [e for e in log if e["event"] == "percepts"]
    assert mode["mode"] == ("public" if public else "as written") and mode["turn"] == 1
    stop = log[-1]
    assert stop["event"] == "stop"
    # x completed the diagonal (1 3) (2 2) (3 1): whatever o did, x won.
    assert stop["goals"] == {"xplayer": 100, "oplayer": 0}


def test_lost_track_resynchronises_and_never_repeats_a_replaced_move(tmp_path: Path) -> None:
    # Tic-Tac-Toe as GDL-II with public moves, from a manager whose first percepts say that
    # oplayer marked (3 3) on xplayer's turn: no history of the rules explains that.
    rules = "(" + " ".join(map(str, Game.from_file(GAMES / "tictactoe.gdl").description)) + ")"
    service = PlayerService(ServeSettings(log_dir=tmp_path, seed=0, margin_s=0.5))
    assert service.handle(f"(start m xplayer {rules} 10 5)").body == "ready"

    def did(x: str, o: str) -> str:
        return f"((did xplayer {x}) (did oplayer {o}))"

    service.handle("(play m 0 nil nil)")
    assert service.handle(f"(play m 1 (mark 1 1) {did('(mark 1 1)', '(mark 3 3)')})").body == (
        "noop"
    )
    taken = {"(mark 1 1)"}  # the board as the player can follow it
    replaced: list[str] = []
    turn = 2
    for o in ("(mark 2 2)", "(mark 1 3)", "(mark 3 3)"):  # oplayer marks; xplayer's reply
        taken.add(o)  # is then replaced by another move
        sent = service.handle(f"(play m {turn} noop {did('noop', o)})").body
        assert sent.startswith("(mark") and sent not in taken and sent not in replaced
        applied = next(m for m in X_CELLS if m not in taken and m != sent)
        taken.add(applied)
        replaced.append(sent)
        reply = service.handle(f"(play m {turn + 1} {applied} {did(applied, 'noop')})")
        assert reply.body == "noop"
        turn += 2
    assert service.handle("(abort m)").body == "aborted"
    log = events(tmp_path)
    assert len([e for e in log if e["event"] == "lost-track"]) == 1  # logged once
    assert [e["sent"] for e in log if e["event"] == "replaced"] == replaced


@pytest.fixture
def served(tmp_path: Path) -> Iterator[PlayerHTTPServer]:
    server, _ = start_server_thread(ServeSettings(log_dir=tmp_path, seed=0, margin_s=0.3))
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(("name", "role"), [("montyhall.gdl", "candidate"), ("meier.gdl", "p2")])
def test_the_stop_event_records_the_goals_of_a_gdl2_match(
    served: PlayerHTTPServer, tmp_path: Path, name: str, role: str
) -> None:
    game = Game.from_file(GAMES / name)
    players: dict[Const, Player] = {
        r: RemotePlayer(served.url) if r == game.role(role) else RandomPlayer(rng)
        for r, rng in zip(game.player_roles, np.random.default_rng(1).spawn(3), strict=False)
    }
    record = run_match(
        game, players, np.random.default_rng(3), start_clock_s=5, play_clock_s=1, grace_s=1
    )
    stop = events(tmp_path)[-1]
    assert stop["event"] == "stop"
    goals = dict(zip(record.roles, record.goals, strict=True))
    assert stop["goals"] == goals


@requires_shared
def test_a_network_of_other_rules_is_served_as_search_only_cfr(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # The Dresden manager's Meier (the corpus rules) with the network of games/meier.gdl:
    # one warning, then the player's own (searched) moves, not a match of random moves.
    checkpoint = GAMES.parent / "checkpoints" / "meier" / "latest.pt"
    settings = ServeSettings(player=f"cfr+nn:{checkpoint}", log_dir=tmp_path, seed=0)
    service = PlayerService(settings)
    transcript = SHARED / "protocol" / "gamecontroller-gdl2-meier-p1.txt"
    bodies = [line for line in transcript.read_text().splitlines() if line.startswith("(")]
    with caplog.at_level(logging.WARNING):
        for body in bodies:
            assert service.handle(body).status == 200
    warnings = [r.getMessage() for r in caplog.records if "search-only cfr" in r.getMessage()]
    assert len(warnings) == 1 and "was trained for" in warnings[0]
    log = events(tmp_path)
    assert not any(e["event"] == "player-error" for e in log)
    plays = [e for e in log if e["event"] == "play"]
    assert plays and all(e["source"] == "player" for e in plays)
