"""Replay every recorded game-manager transcript (../shared/protocol) against the server:
every PLAY gets a legal move in time, in the manager's letter case."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from ggp.game import Game
from ggp.players.base import MatchInfo, Observation
from ggp.players.history_tracker import HistoryTracker
from ggp.protocol.http_handler import PlayerHTTPServer, start_server_thread
from ggp.protocol.messages import Play, Start, Stop, parse_message, parse_move_reply
from ggp.protocol.session import ServeSettings

from conftest import SHARED, requires_shared

PROTOCOL = SHARED / "protocol"
TRANSCRIPTS = sorted(PROTOCOL.glob("*.txt")) if PROTOCOL.is_dir() else []

pytestmark = [
    requires_shared,
    pytest.mark.skipif(not TRANSCRIPTS, reason=f"no transcripts in {PROTOCOL}"),
]


@dataclass(frozen=True)
class Request:
    headers: tuple[tuple[str, str], ...]
    body: bytes


def read_transcript(path: Path) -> list[Request]:
    """The requests of one transcript: a '> POST /' header line, then the body line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    requests = []
    for i, line in enumerate(lines):
        if line.startswith("> POST /"):
            fields = line[len("> POST /") :].split(" | ")
            headers = tuple(
                (name.strip(), value.strip())
                for name, _, value in (f.partition(":") for f in fields)
                if name.strip()
            )
            requests.append(Request(headers, lines[i + 1].encode("utf-8")))
    return requests


def send(server: PlayerHTTPServer, request: Request) -> tuple[str, str]:
    """POST with the manager's own headers (their letter case included)."""
    host, port = server.server_address[:2]
    head = ["POST / HTTP/1.0"]
    for name, value in request.headers:
        if name.lower() == "content-length":
            assert int(value) == len(request.body), "the transcript's Content-Length is off"
        head.append(f"{name}: {value}")
    data = ("\r\n".join(head) + "\r\n\r\n").encode() + request.body
    with socket.create_connection((str(host), int(port)), timeout=10) as s:
        s.sendall(data)
        chunks = []
        while chunk := s.recv(65536):
            chunks.append(chunk)
    reply_head, _, body = b"".join(chunks).partition(b"\r\n\r\n")
    return reply_head.decode().split("\r\n")[0], body.decode()


class Referee:
    """Knows the legal moves of the player's role from the messages it was sent."""

    def __init__(self, start: Start) -> None:
        self.game = Game.from_description(start.rules)
        self.role = start.role
        info = MatchInfo(start.match_id, self.game, start.role)
        self.tracker = HistoryTracker(info, np.random.default_rng(0))
        self.state = self.game.initial_state()
        self.turn = 0

    def legal_after(self, message: Play | Stop) -> tuple[str, ...]:
        """Take in the message's news; the role's legal moves now."""
        if message.short_form:  # GDL-I: the whole joint move; the state is known
            if message.terms is not None:
                self.state = self.game.next_state(self.state, message.terms)
            moves = self.game.legal_moves(self.state, self.role)
        else:  # GDL-II: only what the role saw
            assert message.turn == self.turn
            self.tracker.observe(
                Observation(self.turn, message.last_move, frozenset(message.terms or ()))
            )
            moves = self.tracker.legal_moves()
        self.turn += 1
        return tuple(map(str, moves))


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[PlayerHTTPServer]:
    settings = ServeSettings(log_dir=tmp_path_factory.mktemp("logs"), seed=0, margin_s=0.5)
    server, _ = start_server_thread(settings)
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize("path", TRANSCRIPTS, ids=[p.name for p in TRANSCRIPTS])
@pytest.mark.parametrize("player", ["random", "cfr"])
def test_every_play_gets_a_legal_reply(
    path: Path, player: str, server: PlayerHTTPServer, tmp_path: Path
) -> None:
    if player != "random":  # a searching player behind its own server, clocks cut short
        settings = ServeSettings(player=player, log_dir=tmp_path, seed=1, margin_s=0.75)
        server, _ = start_server_thread(settings)
    requests = read_transcript(path)
    assert requests and b"START" in requests[0].body.upper()
    referee: Referee | None = None
    plays = 0
    try:
        for request in requests:
            text = request.body.decode()
            message = parse_message(text)
            upper = text == text.upper()
            if isinstance(message, Start):
                referee = Referee(message)
                play_clock_s = message.play_clock_s
                if player != "random":  # a short clock keeps the test fast
                    text = text[: text.rstrip().rstrip(")").rstrip().rfind(" ")] + " 1)"
                    request = Request(request.headers, text.encode())
                    play_clock_s = 1.0
            began = time.monotonic()
            status, reply = send(server, Request(request.headers, text.encode()))
            took = time.monotonic() - began
            assert status == "HTTP/1.0 200 OK", (text, reply)
            if isinstance(message, Start):
                assert reply == ("READY" if upper else "ready")
            elif isinstance(message, Stop):
                assert reply == ("DONE" if upper else "done")
            else:
                assert isinstance(message, Play) and referee is not None
                legal = referee.legal_after(message)
                move = parse_move_reply(reply)
                assert str(move) in legal, f"{reply} is not legal: {legal}"
                assert reply == (reply.upper() if upper else reply.lower())
                assert took < play_clock_s
                plays += 1
        assert plays > 0
    finally:
        if player != "random":
            server.shutdown()
            server.server_close()
