"""`ggp serve` as a server in a thread on a loopback port: every message, case, busy,
refusals that leave the server serving, dropped connections, and slow players answered
in time."""

from __future__ import annotations

import http.client
import json
import socket
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np
import pytest

from ggp.game import Game
from ggp.gdl.parser import parse_term
from ggp.gdl.terms import Const, Term
from ggp.match import run_match
from ggp.players.base import MatchInfo, Observation, Player
from ggp.players.random_player import RandomPlayer
from ggp.protocol.game_manager import RemotePlayer
from ggp.protocol.http_handler import PlayerHTTPServer, start_server_thread
from ggp.protocol.session import PlayerFactory, ServeSettings

from conftest import GAMES

MONTY = (GAMES / "montyhall.gdl").read_text()
MONTY_RULES = "(" + " ".join(str(r) for r in Game.from_text(MONTY).description.rules) + ")"


# ------------------------------------------------------------------- helpers


class Served:
    """A server in a thread, with helpers to talk to it."""

    def __init__(self, server: PlayerHTTPServer) -> None:
        self.server = server
        self.host, self.port = server.server_address[:2]  # type: ignore[misc]

    @property
    def url(self) -> str:
        return self.server.url

    def post(self, body: str | bytes, timeout: float = 10.0) -> tuple[int, str]:
        connection = http.client.HTTPConnection(str(self.host), int(self.port), timeout=timeout)
        try:
            data = body.encode() if isinstance(body, str) else body
            connection.request("POST", "/", body=data, headers={"Content-Type": "text/acl"})
            response = connection.getresponse()
            return response.status, response.read().decode()
        finally:
            connection.close()

    def raw(self, data: bytes, timeout: float = 10.0) -> bytes:
        """Send raw bytes, read until the server closes the connection."""
        with socket.create_connection((str(self.host), int(self.port)), timeout=timeout) as s:
            s.sendall(data)
            chunks = []
            while chunk := s.recv(65536):
                chunks.append(chunk)
        return b"".join(chunks)

    def ok(self, body: str, timeout: float = 10.0) -> str:
        status, text = self.post(body, timeout)
        assert status == 200, text
        return text


def serve(tmp_path: Path, factory: PlayerFactory | None = None, **settings: object) -> Served:
    options: dict[str, object] = {"log_dir": tmp_path / "logs", "seed": 0, "margin_s": 0.3}
    options.update(settings)
    server, _ = start_server_thread(ServeSettings(**options), factory=factory)  # type: ignore[arg-type]
    return Served(server)


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    s = serve(tmp_path)
    yield s
    s.server.shutdown()
    s.server.server_close()


def monty_legal(turn: int) -> set[str]:
    if turn == 0:
        return {"(choose 1)", "(choose 2)", "(choose 3)"}
    return {"noop"} if turn == 1 else {"noop", "switch"}


# ------------------------------------------------------------------- the basics


def test_info_reply_headers_and_close(served: Served) -> None:
    data = served.raw(
        b"POST / HTTP/1.0\r\nContent-type: text/acl\r\nContent-length: 6\r\n\r\n(info)"
    )
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode().split("\r\n")
    assert lines[0] == "HTTP/1.0 200 OK"
    headers = {k.lower(): v.strip() for k, _, v in (line.partition(":") for line in lines[1:])}
    assert headers["content-type"] == "text/acl"
    assert headers["access-control-allow-origin"] == "*"
    assert int(headers["content-length"]) == len(body)
    assert body == b"((name ggp) (status available))"  # and then the server closed


def test_cors_preflight_and_get(served: Served) -> None:
    data = served.raw(b"OPTIONS / HTTP/1.1\r\nHost: x\r\n\r\n").decode()
    assert data.startswith("HTTP/1.0 204") and "Access-Control-Allow-Origin: *" in data
    data = served.raw(b"GET / HTTP/1.0\r\n\r\n").decode()
    assert data.startswith("HTTP/1.0 405") and "POST" in data


def test_monty_hall_lower_case(served: Served) -> None:
    assert served.ok("(preview " + MONTY_RULES + " 5)") == "ready"
    assert served.ok(f"(start m1 candidate {MONTY_RULES} 5 1)") == "ready"
    first = served.ok("(play m1 0 nil nil)")
    assert first in monty_legal(0)
    assert served.ok(f"(play m1 1 {first} ())") == "noop"
    assert served.ok("(play m1 2 noop ((open_door 2)))") in monty_legal(2)
    assert served.ok("(stop m1 3 switch ((car 3)))") == "done"
    assert served.ok("(info)") == "((name ggp) (status available))"


def test_monty_hall_upper_case_and_old_short_form(served: Served) -> None:
    upper = MONTY_RULES.upper()
    assert served.ok(f"(START M1 CANDIDATE {upper} 5 1)") == "READY"
    first = served.ok("(PLAY M1 NIL)")  # an older GDL-II manager: no turn, no last move
    assert first.lower() in monty_legal(0) and first == first.upper()
    assert served.ok("(PLAY M1 ())") == "NOOP"
    assert served.ok("(PLAY M1 ((OPEN_DOOR 2)))").lower() in monty_legal(2)
    assert served.ok("(STOP M1 ())") == "DONE"


def test_gdl1_tictactoe_messages(served: Served) -> None:
    rules = "(" + " ".join(map(str, Game.from_file(GAMES / "tictactoe.gdl").description)) + ")"
    assert served.ok(f"(start m1 oplayer {rules} 5 1)") == "ready"
    assert served.ok("(play m1 nil)") == "noop"
    reply = served.ok("(play m1 ((mark 2 2) noop))")
    assert reply.startswith("(mark") and reply != "(mark 2 2)"
    status, text = served.post("(play m1 ((mark 1 1)))")  # one move for two roles
    assert status == 400 and "2 roles" in text
    assert served.ok("(abort m1)") == "aborted"


def test_remote_players_in_run_match_gdl2_and_gdl1(served: Served, tmp_path: Path) -> None:
    monty = Game.from_text(MONTY)
    for seed in range(3):
        record = run_match(
            monty,
            {Const("candidate"): RemotePlayer(served.url)},
            np.random.default_rng(seed),
            match_id=f"monty{seed}",
            start_clock_s=5,
            play_clock_s=1,
            grace_s=1,
        )
        assert not record.replacements and len(record.joint_moves) == 3
    tictactoe = Game.from_file(GAMES / "tictactoe.gdl")
    remote = RemotePlayer(served.url, gdl1=True)
    record = run_match(
        tictactoe,
        {Const("xplayer"): remote, Const("oplayer"): RandomPlayer(np.random.default_rng(1))},
        np.random.default_rng(1),
        match_id="ttt",
        start_clock_s=5,
        play_clock_s=1,
        grace_s=1,
    )
    assert not record.replacements
    assert len(remote.latencies_s) == len(record.joint_moves)
    logs = sorted((tmp_path / "logs").glob("*ttt*.jsonl"))
    assert len(logs) == 1
    events = [json.loads(line) for line in logs[0].read_text().splitlines()]
    assert [e["event"] for e in events][:2] == ["start", "ready"]
    plays = [e for e in events if e["event"] == "play"]
    assert len(plays) == len(record.joint_moves) and all(e["source"] == "player" for e in plays)
    assert plays[1]["percepts"] == sorted(
        f"(did {r} {m})" for r, m in zip(record.roles, record.joint_moves[0], strict=True)
    )
    stop = events[-1]
    assert stop["event"] == "stop"
    assert stop["goals"] == dict(zip(record.roles, record.goals, strict=True))


# ------------------------------------------------------------------- one match at a time


def test_busy_during_a_match(served: Served) -> None:
    assert served.ok(f"(start m1 candidate {MONTY_RULES} 5 1)") == "ready"
    assert served.ok("(info)") == "busy"
    assert served.ok("(INFO)") == "BUSY"
    assert served.ok(f"(start m2 candidate {MONTY_RULES} 5 1)") == "busy"
    assert served.ok(f"(start m1 candidate {MONTY_RULES} 5 1)") == "ready"  # a repeat
    status, text = served.post("(play m2 0 nil nil)")
    assert status == 404 and "m2" in text
    assert served.ok("(play m1 0 nil nil)") in monty_legal(0)
    assert served.ok("(abort m1)") == "aborted"
    assert served.ok("(info)") == "((name ggp) (status available))"
    assert served.ok("(abort m1)") == "aborted"  # again: harmless
    status, text = served.post("(play m1 1 (choose 1) ())")
    assert status == 409 and "aborted" in text
    assert served.ok(f"(start m2 candidate {MONTY_RULES} 5 1)") == "ready"


def test_a_silent_match_is_dropped(tmp_path: Path) -> None:
    s = serve(tmp_path, idle_timeout_s=0.3)
    try:
        assert s.ok(f"(start m1 candidate {MONTY_RULES} 0.1 0.1)") == "ready"
        assert s.ok("(info)") == "busy"
        time.sleep(0.5)
        assert s.ok(f"(start m2 candidate {MONTY_RULES} 5 1)") == "ready"
        status, _ = s.post("(play m1 0 nil nil)")
        assert status == 409
    finally:
        s.server.shutdown()
        s.server.server_close()


# ------------------------------------------------------------------- refusals


@pytest.mark.parametrize(
    ("body", "status", "expected"),
    [
        (b"", 400, "empty message"),
        (b"(play m1 0 nil nil", 400, "never closed"),
        (b"hello", 400, "starts with a keyword"),
        (b"(launch m1)", 400, "unknown message"),
        (b"(play m1 0 nil)", 400, "takes 2 or 4"),
        (b"(start m1 candidate ((role candidate) (<= )) 5 1)", 400, "not well-formed"),
        (b"(start m1 candidate ((role candidate) (role candidate)) 5 1)", 400, "cannot play"),
        (b"(info \xff)", 400, "not UTF-8"),
        (b"(start m1 nobody " + MONTY_RULES.encode() + b" 5 1)", 400, "cannot play the role"),
        (b"(start m1 x ((role x) (init (s 1))) 5 1)", 400, "no legal rule"),
        (b"(start m1 random " + MONTY_RULES.encode() + b" 5 1)", 400, "cannot play the role"),
        (b"(play nobody 0 nil nil)", 404, "unknown match nobody"),
        (b"(stop nobody 1 noop ())", 404, "unknown match"),
        (b"(abort nobody)", 404, "unknown match"),
    ],
)
def test_bad_requests_get_a_4xx_and_the_server_keeps_serving(
    served: Served, body: bytes, status: int, expected: str
) -> None:
    got, text = served.post(body)
    assert got == status and expected in text
    assert served.ok("(info)") == "((name ggp) (status available))"


def test_http_level_refusals(served: Served) -> None:
    data = served.raw(b"POST / HTTP/1.0\r\n\r\n(info)").decode()
    assert data.startswith("HTTP/1.0 411")
    data = served.raw(b"POST / HTTP/1.0\r\nContent-Length: x\r\n\r\n(info)").decode()
    assert data.startswith("HTTP/1.0 400")
    data = served.raw(b"POST / HTTP/1.0\r\nContent-Length: 99999999999\r\n\r\n").decode()
    assert data.startswith("HTTP/1.0 413")
    assert served.ok("(info)") == "((name ggp) (status available))"


def test_turns_out_of_order_and_repeats(served: Served) -> None:
    assert served.ok(f"(start m1 candidate {MONTY_RULES} 5 1)") == "ready"
    status, text = served.post("(play m1 1 (choose 1) ())")
    assert status == 409 and "expected turn 0" in text
    first = served.ok("(play m1 0 nil nil)")
    assert served.ok("(play m1 0 nil nil)") == first  # a repeat gets the same answer
    status, text = served.post("(play m1 2 noop ((open_door 2)))")
    assert status == 409 and "expected turn 1" in text
    status, text = served.post("(play m1 1 (choose 9) ())")  # no such move: history broken
    assert status == 200  # still a reply (the tracker cannot place it; a guess is sent)
    assert served.ok("(abort m1)") == "aborted"


# ------------------------------------------------------------------- dropped connections


def test_dropped_connections(served: Served) -> None:
    # Headers promise more than is sent, then the client goes away.
    with socket.create_connection((str(served.host), int(served.port)), timeout=5) as s:
        s.sendall(b"POST / HTTP/1.0\r\nContent-Length: 100\r\n\r\n(info")
    # Connect and say nothing.
    with socket.create_connection((str(served.host), int(served.port)), timeout=5):
        pass
    assert served.ok(f"(start m1 candidate {MONTY_RULES} 5 1)") == "ready"
    # A PLAY whose sender does not wait for the reply still moves the match on.
    body = b"(play m1 0 nil nil)"
    with socket.create_connection((str(served.host), int(served.port)), timeout=5) as s:
        s.sendall(b"POST / HTTP/1.0\r\nContent-Length: %d\r\n\r\n" % len(body) + body)
        s.shutdown(socket.SHUT_RDWR)
    deadline = time.monotonic() + 5
    while True:  # the server may still be on turn 0 for a moment
        status, text = served.post("(play m1 1 (choose 2) ())")
        if status == 200 or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    assert status == 200 and text == "noop"
    assert served.ok("(stop m1 2 noop ((open_door 3)))") == "done"
    assert served.ok("(info)") == "((name ggp) (status available))"


# ------------------------------------------------------------------- slow and bad players


class ScriptedPlayer:
    """A random player that can be slow, fail or cheat; records what it was told."""

    name = "scripted"

    def __init__(
        self,
        rng: np.random.Generator,
        *,
        delay_s: float = 0.0,
        start_delay_s: float = 0.0,
        fail_start: bool = False,
        fail_play: bool = False,
        illegal: bool = False,
    ) -> None:
        self.inner = RandomPlayer(rng)
        self.delay_s = delay_s
        self.start_delay_s = start_delay_s
        self.fail_start = fail_start
        self.fail_play = fail_play
        self.illegal = illegal
        self.release = threading.Event()
        self.observations: list[Observation] = []
        self.stopped: Observation | None = None
        self.aborted = False

    def start(self, match: MatchInfo) -> None:
        self.release.wait(self.start_delay_s)
        if self.fail_start:
            raise RuntimeError("no checkpoint")
        self.inner.start(match)

    def play(self, observation: Observation, deadline: float) -> Term:
        self.observations.append(observation)
        self.release.wait(self.delay_s)  # ignores the deadline: a runaway search
        if self.fail_play:
            raise RuntimeError("search crashed")
        move = self.inner.play(observation, deadline)
        return parse_term("(choose 9)") if self.illegal else move

    def stop(self, observation: Observation) -> None:
        self.stopped = observation

    def abort(self) -> None:
        self.aborted = True


def scripted(
    tmp_path: Path, margin_s: float = 0.3, **options: float | bool
) -> tuple[Served, list[ScriptedPlayer]]:
    made: list[ScriptedPlayer] = []

    def factory(rng: np.random.Generator, game: Game) -> Player:
        player = ScriptedPlayer(rng, **options)  # type: ignore[arg-type]
        made.append(player)
        return player

    return serve(tmp_path, factory, margin_s=margin_s), made


#: Clocks of the deadline tests: a reply is due 1 s before the play clock runs out, a
#: margin that a loaded 2-core machine meets; the slow players take 30 s.
SLOW_CLOCKS = "5 3"
SLOW_MARGIN_S = 1.0


def test_a_slow_player_is_answered_for_in_time(tmp_path: Path) -> None:
    s, made = scripted(tmp_path, delay_s=30.0, margin_s=SLOW_MARGIN_S)
    try:
        assert s.ok(f"(start m1 candidate {MONTY_RULES} {SLOW_CLOCKS})") == "ready"
        began = time.monotonic()
        replies: list[str] = []
        repeat = threading.Thread(target=lambda: replies.append(s.ok("(play m1 0 nil nil)")))
        repeat.start()  # the same PLAY again while the first waits: the same answer
        first = s.ok("(play m1 0 nil nil)")
        took = time.monotonic() - began
        # Sent before the play clock (3 s), not before the reply was due (3 s - 1 s).
        assert first in monty_legal(0) and 2.0 <= took < 3.0
        repeat.join(5)
        assert replies == [first]
        began = time.monotonic()
        assert s.ok("(info)") == "busy"  # a request mid-search is answered, not queued
        assert time.monotonic() - began < 3.0  # (behind the search it would take 30 s)
        began = time.monotonic()
        assert s.ok(f"(play m1 1 {first} ())") == "noop"  # queued behind the slow search
        assert time.monotonic() - began < 3.0
        player = made[0]
        player.release.set()  # the search ends; the queued observation follows in order
        deadline = time.monotonic() + 5
        while len(player.observations) < 2 and time.monotonic() < deadline:
            time.sleep(0.01)
        assert [(o.turn, o.last_move) for o in player.observations] == [
            (0, None),
            (1, parse_term(first)),
        ]
        assert s.ok("(stop m1 2 noop ((open_door 2)))") == "done"
        logs = list((tmp_path / "logs").glob("*.jsonl"))
        events = [json.loads(line) for line in logs[0].read_text().splitlines()]
        sources = [e["source"] for e in events if e["event"] == "play"]
        assert all(source.startswith("fallback: player late") for source in sources)
    finally:
        made[0].release.set()
        s.server.shutdown()
        s.server.server_close()


def test_abort_mid_search(tmp_path: Path) -> None:
    s, made = scripted(tmp_path, delay_s=30.0, margin_s=SLOW_MARGIN_S)
    try:
        assert s.ok(f"(start m1 candidate {MONTY_RULES} {SLOW_CLOCKS})") == "ready"
        replies: list[str] = []
        thread = threading.Thread(target=lambda: replies.append(s.ok("(play m1 0 nil nil)")))
        thread.start()
        time.sleep(0.2)
        began = time.monotonic()
        assert s.ok("(abort m1)") == "aborted"
        assert time.monotonic() - began < 3.0  # not behind the 30 s search
        thread.join(5)
        assert replies and replies[0] in monty_legal(0)
        made[0].release.set()
        deadline = time.monotonic() + 5
        while not made[0].aborted and time.monotonic() < deadline:
            time.sleep(0.01)
        assert made[0].aborted
    finally:
        made[0].release.set()
        s.server.shutdown()
        s.server.server_close()


@pytest.mark.parametrize(
    "options",
    [{"fail_play": True}, {"illegal": True}, {"fail_start": True}],
    ids=["play fails", "illegal move", "start fails"],
)
def test_failing_players_still_get_legal_moves_sent(
    tmp_path: Path, options: dict[str, bool]
) -> None:
    s, _ = scripted(tmp_path, **options)
    try:
        assert s.ok(f"(start m1 candidate {MONTY_RULES} 5 1)") == "ready"
        first = s.ok("(play m1 0 nil nil)")
        assert first in monty_legal(0)
        assert s.ok(f"(play m1 1 {first} ())") == "noop"
        assert s.ok("(play m1 2 noop ((open_door 2)))") in monty_legal(2)
        assert s.ok("(stop m1 3 noop ())") == "done"
    finally:
        s.server.shutdown()
        s.server.server_close()


def test_slow_set_up_still_replies_ready_in_time(tmp_path: Path) -> None:
    s, made = scripted(tmp_path, start_delay_s=30.0, margin_s=SLOW_MARGIN_S)
    try:
        began = time.monotonic()
        assert s.ok(f"(start m1 candidate {MONTY_RULES} 3 3)") == "ready"
        assert 2.0 <= time.monotonic() - began < 3.0  # sent before the start clock
        began = time.monotonic()
        assert s.ok("(play m1 0 nil nil)") in monty_legal(0)  # the fallback's move
        assert time.monotonic() - began < 3.0
    finally:
        made[0].release.set()
        s.server.shutdown()
        s.server.server_close()


def test_the_player_is_told_exactly_what_the_messages_say(tmp_path: Path) -> None:
    s, made = scripted(tmp_path)
    try:
        assert s.ok(f"(START M1 CANDIDATE {MONTY_RULES.upper()} 5 1)") == "READY"
        s.ok("(PLAY M1 0 NIL NIL)")
        s.ok("(PLAY M1 1 (CHOOSE 1) ())")  # whatever was replied, the applied move counts
        s.ok("(PLAY M1 2 NOOP ((OPEN_DOOR 2)))")
        assert s.ok("(STOP M1 3 SWITCH ((CAR 3)))") == "DONE"
        rules = (GAMES / "tictactoe.gdl").read_text()
        assert s.ok(f"(start m2 oplayer ({rules}) 5 1)") == "ready"
        s.ok("(play m2 nil)")
        s.ok("(play m2 ((mark 2 2) noop))")
        assert s.ok("(stop m2 (noop (mark 1 1)))") == "done"
        deadline = time.monotonic() + 5
        while (made[0].stopped is None or made[1].stopped is None) and time.monotonic() < deadline:
            time.sleep(0.01)
    finally:
        s.server.shutdown()
        s.server.server_close()
    monty, ttt = made
    t = parse_term
    assert monty.observations == [
        Observation(0, None, frozenset()),
        Observation(1, t("(choose 1)"), frozenset()),
        Observation(2, t("noop"), frozenset({t("(open_door 2)")})),
    ]
    assert monty.stopped == Observation(3, t("switch"), frozenset({t("(car 3)")}))
    assert ttt.observations == [
        Observation(0, None, frozenset()),
        Observation(
            1, t("noop"), frozenset({t("(did xplayer (mark 2 2))"), t("(did oplayer noop)")})
        ),
    ]
    assert ttt.stopped == Observation(
        2, t("(mark 1 1)"), frozenset({t("(did xplayer noop)"), t("(did oplayer (mark 1 1))")})
    )


class _FakeManagerTarget(BaseHTTPRequestHandler):
    """A remote 'player' that answers START and STOP but cheats or dawdles at PLAY."""

    protocol_version = "HTTP/1.0"
    mode = "illegal"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["Content-Length"])).decode()
        reply = "ready" if "start" in body else "done"
        if "(play" in body:
            if self.mode == "late":
                time.sleep(0.6)
            reply = "(choose 9)"
        data = reply.encode()
        try:
            self.send_response(200)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except OSError:  # the referee stopped waiting
            pass

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.mark.parametrize("mode", ["illegal", "late"])
def test_the_referee_replaces_illegal_and_late_remote_replies(mode: str) -> None:
    handler = type("Target", (_FakeManagerTarget,), {"mode": mode})
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True).start()
    try:
        game = Game.from_text(MONTY)
        url = f"http://127.0.0.1:{server.server_address[1]}"
        record = run_match(
            game,
            {Const("candidate"): RemotePlayer(url, grace_s=0.2)},
            np.random.default_rng(0),
            play_clock_s=0.2,
            grace_s=0.2,
        )
    finally:
        server.shutdown()
        server.server_close()
    assert len(record.replacements) == 3
    reasons = {r.reason.split(":")[0].split(" ")[0] for r in record.replacements}
    assert reasons == ({"illegal"} if mode == "illegal" else {"error"})


def test_a_shared_prover_is_serialised(tmp_path: Path) -> None:
    s = serve(tmp_path, reasoner="prover", player="cfr", margin_s=0.7)
    try:
        for seed in range(2):
            record = run_match(
                Game.from_text(MONTY),
                {Const("candidate"): RemotePlayer(s.url)},
                np.random.default_rng(seed),
                match_id=f"prover{seed}",
                start_clock_s=5,
                play_clock_s=1,
                grace_s=1,
            )
            assert not record.replacements
    finally:
        s.server.shutdown()
        s.server.server_close()
    events = [
        json.loads(line)
        for log in (tmp_path / "logs").glob("*.jsonl")
        for line in log.read_text().splitlines()
    ]
    assert {e["reasoner"] for e in events if e["event"] == "ready"} == {"prover"}
