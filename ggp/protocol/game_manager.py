"""A game manager (``ggp match``): runs matches between local and remote players.

Remote players are GGP players behind HTTP (``http://host:port``), driven by
:class:`RemotePlayer`, which speaks the protocol of ``../shared/protocol/README.md`` on
behalf of the local referee :func:`ggp.match.run_match`: START with the rules and the
clocks, ``(PLAY id turn lastmove percepts)`` each turn (GDL-II), or the GDL-I messages
``(PLAY id NIL)`` / ``(PLAY id (m1 ... mk))`` to a player declared GDL-I, and STOP or
ABORT at the end. The referee plays ``random`` itself (never contacting anyone for it),
asks the remote players all at once, allows each the play clock plus 1 s, replaces a late,
failed or illegal reply by a random legal move and records that.

:func:`play_matches` runs N matches and returns one :class:`MatchReport` per match (the
match record plus who played what and how long the replies took); :func:`score_table`
summarises them.
"""

from __future__ import annotations

import http.client
import json
import logging
import math
import secrets
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlsplit

import numpy as np

from ggp.errors import GameError, GGPError, ProtocolError
from ggp.game import Game
from ggp.gdl.terms import Const, Func, Term
from ggp.match import MatchRecord, run_match
from ggp.players.base import MatchInfo, Observation, Player
from ggp.protocol.messages import (
    Abort,
    Play,
    Start,
    StepMessage,
    Stop,
    format_message,
    parse_move_reply,
)

__all__ = [
    "DEFAULT_PORT",
    "GRACE_S",
    "RemotePlayer",
    "PlayerEntry",
    "MatchReport",
    "RoleScore",
    "is_remote_spec",
    "play_matches",
    "score_table",
]

logger = logging.getLogger(__name__)

S = TypeVar("S", bound=StepMessage)

#: The usual port of a GGP player.
DEFAULT_PORT = 9147

#: Seconds managers allow beyond each clock for the network.
GRACE_S = 1.0


def is_remote_spec(spec: str) -> bool:
    """Whether a player spec names a remote player (``http://host:port``)."""
    return spec.lower().startswith("http://")


class RemotePlayer:
    """A GGP player behind HTTP, as a :class:`~ggp.players.base.Player` for the referee.

    Args:
        url: ``http://host[:port][/path]`` (port 9147 when not given).
        gdl1: Send GDL-I messages (the previous joint move; only for classic GDL games).
        grace_s: Seconds allowed beyond each clock before a request times out.

    Attributes:
        latencies_s: The round-trip time of every PLAY answered, in seconds.
        start_reply: What START got (None before START or when it failed).
    """

    runs_remotely = True

    def __init__(self, url: str, *, gdl1: bool = False, grace_s: float = GRACE_S) -> None:
        parts = urlsplit(url)
        if parts.scheme.lower() != "http" or not parts.hostname:
            raise GameError(f"a remote player is http://host:port, not {url!r}")
        try:
            port = parts.port or DEFAULT_PORT
        except ValueError as e:
            raise GameError(f"bad port in {url!r}: {e}") from None
        self.name = url
        self.url = url
        self.host = parts.hostname
        self.port = port
        self.path = parts.path or "/"
        self.gdl1 = gdl1
        self.grace_s = grace_s
        self.latencies_s: list[float] = []
        self.start_reply: str | None = None
        self._match: MatchInfo | None = None

    def __repr__(self) -> str:
        return f"RemotePlayer({self.url!r}, gdl1={self.gdl1!r}, grace_s={self.grace_s!r})"

    def post(self, text: str, timeout_s: float) -> str:
        """Send one message and return the reply body, stripped.

        Raises:
            ProtocolError: No connection, no reply within ``timeout_s``, or an HTTP status
                other than 200 (the error quotes the player's explanation).
        """
        connection = http.client.HTTPConnection(self.host, self.port, timeout=max(timeout_s, 0.01))
        data = text.encode("utf-8")
        try:
            connection.request(
                "POST",
                self.path,
                body=data,
                headers={
                    "Content-Type": "text/acl",
                    "Accept": "text/delim",
                    "Sender": "ggp",
                    "Receiver": f"{self.host}:{self.port}",
                    "Connection": "close",
                },
            )
            response = connection.getresponse()
            body = response.read().decode("utf-8", "replace").strip()
        except TimeoutError:
            raise ProtocolError(f"{self.url}: no reply within {timeout_s:.2f} s") from None
        except (OSError, http.client.HTTPException) as e:
            raise ProtocolError(f"{self.url}: {e!r}") from None
        finally:
            connection.close()
        if response.status != 200:
            raise ProtocolError(f"{self.url} answered HTTP {response.status}: {body[:300]}")
        return body

    # -- the Player protocol --------------------------------------------------------------

    def start(self, match: MatchInfo) -> None:
        """Send START and wait for ``ready`` (a failure is logged: moves get replaced)."""
        if self.gdl1 and not match.game.moves_public:
            raise GameError(
                f"{self.url} is declared GDL-I, which only classic GDL games (no sees) allow"
            )
        self._match = match
        self.latencies_s = []
        self.start_reply = None
        message = Start(
            match.match_id,
            match.role,
            match.game.description,
            match.start_clock_s,
            match.play_clock_s,
        )
        try:
            reply = self.post(format_message(message), match.start_clock_s + self.grace_s)
        except ProtocolError as e:
            logger.warning("START: %s", e)
            return
        self.start_reply = reply
        if reply.lower() != "ready":
            logger.warning("%s answered START with %r", self.url, reply[:100])

    def _message(self, observation: Observation, kind: type[S]) -> S:
        match = self._match
        if match is None:
            raise GameError("play() before start()")
        if not self.gdl1:
            terms = tuple(sorted(observation.percepts, key=str))
            return kind(match.match_id, observation.turn, observation.last_move, terms)
        if observation.last_move is None:
            return kind(match.match_id, None, None, None)
        moves: list[Term] = []
        for role in match.game.roles:
            did = [
                p.args[1]
                for p in observation.percepts
                if isinstance(p, Func) and p.name == "did" and p.arity == 2 and p.args[0] == role
            ]
            if len(did) != 1:
                raise GameError(f"the percepts do not tell the move of {role} (GDL-I)")
            moves.append(did[0])
        return kind(match.match_id, None, None, tuple(moves))

    def play(self, observation: Observation, deadline: float) -> Term:
        """Send PLAY; the reply, parsed (any case), before ``deadline`` + grace.

        Raises:
            ProtocolError: No reply in time, an HTTP error, or a reply that is no term.
        """
        text = format_message(self._message(observation, Play))
        sent = time.monotonic()
        reply = self.post(text, deadline - sent + self.grace_s)
        self.latencies_s.append(time.monotonic() - sent)
        return parse_move_reply(reply)

    def stop(self, observation: Observation) -> None:
        """Send STOP with the final observation (a failure is logged)."""
        match = self._match
        if match is None:
            return
        try:
            self.post(
                format_message(self._message(observation, Stop)),
                match.play_clock_s + self.grace_s,
            )
        except GGPError as e:
            logger.warning("STOP: %s", e)
        self._match = None

    def abort(self) -> None:
        """Send ABORT (a failure is logged)."""
        match = self._match
        if match is None:
            return
        try:
            self.post(format_message(Abort(match.match_id)), match.play_clock_s + self.grace_s)
        except GGPError as e:
            logger.warning("ABORT: %s", e)
        self._match = None


# ------------------------------------------------------------------- matches


@dataclass(frozen=True)
class PlayerEntry:
    """Who played a role.

    Attributes:
        role: The role.
        spec: The player spec (a registry name or ``http://host:port``).
        gdl1: Whether it was sent GDL-I messages.
    """

    role: str
    spec: str
    gdl1: bool = False


@dataclass(frozen=True)
class MatchReport:
    """One match as ``ggp match`` writes it (JSON).

    Attributes:
        game: The game file.
        players: ``[player roles]`` who played each role.
        start_clock_s: The start clock.
        play_clock_s: The play clock.
        started_at: When the match started (ISO 8601, UTC).
        seconds: Wall-clock duration of the match.
        record: Moves, percepts per role, goals, replacements and move times.
        reply_latencies_s: ``{role: [turns]}`` round trips of each remote player's PLAYs.
    """

    game: str
    players: tuple[PlayerEntry, ...]
    start_clock_s: float
    play_clock_s: float
    started_at: str
    seconds: float
    record: MatchRecord
    reply_latencies_s: Mapping[str, tuple[float, ...]]

    def to_json(self) -> str:
        """The report as a JSON document (one top-level field per line)."""
        data: dict[str, Any] = {
            "game": self.game,
            "players": [vars(entry) for entry in self.players],
            "start_clock_s": self.start_clock_s,
            "play_clock_s": self.play_clock_s,
            "started_at": self.started_at,
            "seconds": round(self.seconds, 4),
            "record": self.record.to_json_dict(),
            "reply_latencies_s": {r: list(v) for r, v in self.reply_latencies_s.items()},
        }
        lines = [f"  {json.dumps(key)}: {json.dumps(value)}" for key, value in data.items()]
        return "{\n" + ",\n".join(lines) + "\n}"


PlayerMaker = Callable[[str, np.random.Generator, Game], Player]


def _default_maker(spec: str, rng: np.random.Generator, game: Game) -> Player:
    from ggp.players.registry import make_player

    return make_player(spec, rng, game)


def play_matches(
    game: Game,
    game_name: str,
    entries: Sequence[PlayerEntry],
    *,
    games: int = 1,
    start_clock_s: float = 10.0,
    play_clock_s: float = 5.0,
    seed: int | None = None,
    out_dir: Path | None = None,
    maker: PlayerMaker = _default_maker,
    on_match: Callable[[MatchReport, Path | None], None] | None = None,
) -> list[MatchReport]:
    """Play ``games`` matches and write each one's report to ``out_dir``.

    Args:
        game: The rules.
        game_name: How the reports name the game (its file).
        entries: A player for every role but ``random``.
        games: Number of matches.
        start_clock_s: Start clock of each match.
        play_clock_s: Play clock of each match.
        seed: Seed of the matches (None: fresh entropy).
        out_dir: Where the JSON reports go (None: not written).
        maker: Makes a local player from its spec (default: the registry).
        on_match: Called after each match with its report and file.

    Raises:
        GameError: A role without a player, ``random`` given a player, or a bad spec.
    """
    by_role = {game.role(e.role): e for e in entries}
    if game.random_role is not None and game.random_role in by_role:
        raise GameError("random is chance, played by the game manager: give it no player")
    for role in game.player_roles:
        if role not in by_role:
            raise GameError(f"no player for role {role}")
        entry = by_role[role]
        if entry.gdl1 and not is_remote_spec(entry.spec):
            raise GameError(f"GDL-I for {role}: only remote players take GDL-I messages")
        if entry.gdl1 and not game.moves_public:
            raise GameError(f"GDL-I for {role}: only classic GDL games (no sees) allow it")
    seeds = np.random.SeedSequence(seed)
    stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime()) + secrets.token_hex(2)
    reports: list[MatchReport] = []
    for index in range(games):
        streams = seeds.spawn(len(game.player_roles) + 1)
        players: dict[Const, Player] = {}
        for role, stream in zip(game.player_roles, streams[1:], strict=True):
            entry = by_role[role]
            if is_remote_spec(entry.spec):
                players[role] = RemotePlayer(entry.spec, gdl1=entry.gdl1)
            else:
                players[role] = maker(entry.spec, np.random.default_rng(stream), game)
        match_id = f"ggp{stamp}-{index + 1}"
        started_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
        started = time.monotonic()
        try:
            record = run_match(
                game,
                players,
                np.random.default_rng(streams[0]),
                match_id=match_id,
                start_clock_s=start_clock_s,
                play_clock_s=play_clock_s,
                grace_s=GRACE_S,
            )
        except BaseException:
            for player in players.values():
                if isinstance(player, RemotePlayer):
                    player.abort()
            raise
        report = MatchReport(
            game=game_name,
            players=tuple(by_role[r] for r in game.player_roles),
            start_clock_s=start_clock_s,
            play_clock_s=play_clock_s,
            started_at=started_at,
            seconds=time.monotonic() - started,
            record=record,
            reply_latencies_s={
                role.name: tuple(round(t, 5) for t in player.latencies_s)
                for role, player in players.items()
                if isinstance(player, RemotePlayer)
            },
        )
        path = None
        if out_dir is not None:
            out_dir.mkdir(parents=True, exist_ok=True)
            path = out_dir / f"{match_id}.json"
            path.write_text(report.to_json() + "\n", encoding="utf-8")
        reports.append(report)
        if on_match is not None:
            on_match(report, path)
    return reports


@dataclass(frozen=True)
class RoleScore:
    """One role's results over several matches.

    Attributes:
        role: The role.
        spec: Who played it.
        games: Matches played.
        mean_goal: Mean goal value (0..100).
        stderr: Standard error of the mean goal (0 for one match).
        min_goal: The lowest goal.
        max_goal: The highest goal.
        replaced: Moves of this role the referee replaced (late, failed or illegal).
        moves: Moves this role made.
        max_reply_s: The slowest reply.
    """

    role: str
    spec: str
    games: int
    mean_goal: float
    stderr: float
    min_goal: int
    max_goal: int
    replaced: int
    moves: int
    max_reply_s: float


def score_table(reports: Sequence[MatchReport]) -> list[RoleScore]:
    """Each role's results over ``reports`` (all of one game, with the same players)."""
    if not reports:
        return []
    first = reports[0]
    rows: list[RoleScore] = []
    for entry in first.players:
        index = first.record.roles.index(entry.role)
        goals = np.array([r.record.goals[index] for r in reports], dtype=np.float64)
        replaced = sum(1 for r in reports for x in r.record.replacements if x.role == entry.role)
        times = [s[index] for r in reports for s in r.record.move_seconds]
        stderr = float(goals.std(ddof=1) / math.sqrt(len(goals))) if len(goals) > 1 else 0.0
        rows.append(
            RoleScore(
                role=entry.role,
                spec=entry.spec,
                games=len(reports),
                mean_goal=float(goals.mean()),
                stderr=stderr,
                min_goal=int(goals.min()),
                max_goal=int(goals.max()),
                replaced=replaced,
                moves=len(times),
                max_reply_s=max(times, default=0.0),
            )
        )
    return rows
