"""``ggp battlesnake serve``: a ggp snake on the official Battlesnake HTTP API (v1).

``GET /`` gives the snake's look; ``POST /start``, ``/move``, ``/end`` carry the official
JSON (``{game, turn, board, you}``; ../shared/REFERENCE-SEARCH.md section 2.10). Each
board is mapped onto a state of the GDL game for its size and snake count
(:func:`~ggp.battlesnake.generate.search_variant`: the standard rules without food
spawning, which a search can afford; or ``--game``): ``you`` is
``snake1``, the others ``snake2``.. in the order the ``/start`` board lists them; a snake
missing from a later board was eliminated. The player chooses from that state
(:class:`~ggp.players.base.StatePlayer`) and its move goes back as ``up``, ``down``,
``left`` or ``right`` before the game's ``timeout`` less the margin.

Bad JSON or a board no state describes gets HTTP 400 with the reason; the server stays up.

Example (the service without HTTP):
    >>> service = BattlesnakeService(SnakeServerSettings(player="snake:greedy"))
    >>> service.handle("GET", "/", b"").body["apiversion"]
    '1'
    >>> service.handle("POST", "/move", b"{").status
    400
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import numpy as np

import ggp
from ggp.battlesnake.board import Board, BoardError, SnakeBody, board_state, search_game
from ggp.battlesnake.generate import search_variant
from ggp.errors import GGPError
from ggp.game import Game
from ggp.players.base import MatchInfo, StatePlayer
from ggp.players.registry import make_player

__all__ = [
    "SnakeServerSettings",
    "BattlesnakeService",
    "ApiReply",
    "RequestError",
    "make_snake_server",
]

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT_MS = 500


class RequestError(GGPError):
    """A request the API cannot answer (bad JSON, a board no state describes)."""


@dataclass(frozen=True)
class SnakeServerSettings:
    """How the snake plays and looks.

    Attributes:
        player: The player spec; it must choose from states (``snake:...``, ``alphabeta``,
            ``maxn``, ...).
        game: A GDL file for every board (default: by board size and snake count).
        margin_ms: Reply this long before the game's timeout.
        seed: Seed of the players' randomness.
        look: ``GET /``'s ``author``, ``color``, ``head``, ``tail``.
    """

    player: str = "idapos"
    game: Path | None = None
    margin_ms: int = 100
    seed: int | None = None
    look: Mapping[str, str] = field(
        default_factory=lambda: {
            "author": "ggp",
            "color": "#2f7d4f",
            "head": "default",
            "tail": "default",
        }
    )


@dataclass(frozen=True)
class ApiReply:
    """An HTTP status and a JSON body."""

    status: int
    body: dict[str, Any]


@dataclass
class _Match:
    game: Game
    ids: list[str]  # snake id of each snake role, "you" first
    player: StatePlayer
    max_turn: int


def _field(obj: Any, key: str, kind: type | tuple[type, ...], where: str) -> Any:
    if not isinstance(obj, dict) or key not in obj:
        raise RequestError(f"{where}: no {key!r}")
    value = obj[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is not bool):
        raise RequestError(f"{where}.{key}: expected {getattr(kind, '__name__', kind)}")
    return value


def _point(obj: Any, where: str) -> tuple[int, int]:
    return _field(obj, "x", int, where), _field(obj, "y", int, where)


class BattlesnakeService:
    """Requests in, replies out (no HTTP: :func:`make_snake_server` adds it)."""

    def __init__(
        self, settings: SnakeServerSettings, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.settings = settings
        self.clock = clock
        self._games: dict[tuple[int, int], Game] = {}
        self._matches: dict[str, _Match] = {}
        self._lock = threading.Lock()
        self._rng = np.random.default_rng(settings.seed)

    def preload(self, boards: tuple[tuple[int, int], ...] = ((11, 2), (11, 4))) -> None:
        """Ground the games of these ``(size, snakes)`` boards now (seconds each), so that
        a game's first request does not wait for it."""
        for size, snakes in boards:
            self._game(size, snakes)

    # ------------------------------------------------------------------ requests

    def handle(
        self, method: str, path: str, body: bytes, received: float | None = None
    ) -> ApiReply:
        """Answer one request; never raises."""
        received = self.clock() if received is None else received
        try:
            if method == "GET" and path in ("/", ""):
                return ApiReply(
                    200, {"apiversion": "1", **self.settings.look, "version": ggp.__version__}
                )
            if method != "POST" or path not in ("/start", "/move", "/end"):
                return ApiReply(404, {"error": f"no {method} {path}"})
            try:
                payload = json.loads(body)
            except (ValueError, UnicodeDecodeError) as e:
                raise RequestError(f"not JSON: {e}") from e
            if path == "/start":
                self._match(payload, fresh=True)
                return ApiReply(200, {})
            if path == "/end":
                game_id = _field(_field(payload, "game", dict, "request"), "id", str, "game")
                with self._lock:
                    self._matches.pop(game_id, None)
                return ApiReply(200, {})
            return ApiReply(200, self._move(payload, received))
        except (RequestError, BoardError) as e:
            logger.info("%s %s: 400 %s", method, path, e)
            return ApiReply(400, {"error": str(e)})
        except Exception as e:  # a bug: say so, keep serving
            logger.exception("%s %s failed", method, path)
            return ApiReply(500, {"error": f"{type(e).__name__}: {e}"})

    def _move(self, payload: Any, received: float) -> dict[str, Any]:
        game_info = _field(payload, "game", dict, "request")
        timeout = game_info.get("timeout", DEFAULT_TIMEOUT_MS)
        if not isinstance(timeout, int) or timeout <= 0:
            raise RequestError(f"game.timeout: expected a positive int, not {timeout!r}")
        match = self._match(payload, fresh=False)
        board = self._board(payload, match)
        state = board_state(match.game, board)
        deadline = received + (timeout - self.settings.margin_ms) / 1000
        move = match.player.choose_move(state, deadline)
        if move.name not in ("up", "down", "left", "right"):
            raise RequestError(f"the player answered {move} (not a move of the move phase)")
        return {"move": move.name, "shout": ""}

    # ------------------------------------------------------------------ boards

    def _match(self, payload: Any, fresh: bool) -> _Match:
        game_info = _field(payload, "game", dict, "request")
        game_id = _field(game_info, "id", str, "game")
        with self._lock:
            match = self._matches.get(game_id)
        if match is not None and not fresh:
            return match
        board = _field(payload, "board", dict, "request")
        you = _field(_field(payload, "you", dict, "request"), "id", str, "you")
        width, height = _field(board, "width", int, "board"), _field(board, "height", int, "board")
        if width != height:
            raise RequestError(f"the board is {width} x {height}; only square boards are encoded")
        snakes = _field(board, "snakes", list, "board")
        ids = [_field(s, "id", str, "board.snakes[]") for s in snakes]
        if you not in ids:
            raise RequestError(f"you ({you!r}) are not among the board's snakes")
        ids = [you] + [i for i in ids if i != you]
        game = self._game(width, len(ids))
        roles = [r for r in game.roles if r != game.random_role]
        if len(ids) > len(roles):
            raise RequestError(f"{len(ids)} snakes on the board; the game has {len(roles)}")
        ids += [f"(missing {i})" for i in range(len(ids), len(roles))]
        player = make_player(self.settings.player, self._rng, game)
        if not isinstance(player, StatePlayer):
            raise RequestError(f"the player {self.settings.player!r} cannot choose from a board")
        player.start(MatchInfo(game_id, game, roles[0], play_clock_s=DEFAULT_TIMEOUT_MS / 1000))
        turns = [int(p.args[0].name) for p in game.base_propositions or () if p.name == "turn"]
        match = _Match(game, ids, player, max(turns, default=0))
        with self._lock:
            self._matches[game_id] = match
        return match

    def _game(self, size: int, snakes: int) -> Game:
        key = (size, snakes)
        with self._lock:
            game = self._games.get(key)
        if game is not None:
            return game
        if self.settings.game is not None:
            game = Game.from_file(self.settings.game)
        else:
            try:
                search_variant(size, snakes)  # the board's size and count are encoded
            except ValueError as e:
                raise RequestError(str(e)) from e
            game = search_game(size, snakes)
        with self._lock:
            self._games[key] = game
        return game

    def _board(self, payload: Any, match: _Match) -> Board:
        board = _field(payload, "board", dict, "request")
        size = _field(board, "width", int, "board")
        turn = _field(payload, "turn", int, "request")
        if turn < 0:
            raise RequestError(f"turn {turn} is negative")
        you = _field(_field(payload, "you", dict, "request"), "id", str, "you")
        if you != match.ids[0]:
            raise RequestError(f"you ({you!r}) are not the snake {match.ids[0]!r} of this game")
        by_id: dict[str, SnakeBody] = {}
        for k, snake in enumerate(_field(board, "snakes", list, "board")):
            where = f"board.snakes[{k}]"
            sid = _field(snake, "id", str, where)
            if sid not in match.ids:
                raise RequestError(f"{where}: snake {sid!r} was not on the board at the start")
            health = _field(snake, "health", int, where)
            body = tuple(_point(p, f"{where}.body[]") for p in _field(snake, "body", list, where))
            if not body:
                raise RequestError(f"{where}: an empty body")
            if not 1 <= health <= 100:
                raise RequestError(f"{where}: health {health} is not 1..100")
            by_id[sid] = SnakeBody(body, health)
        if match.ids[0] not in by_id:
            raise RequestError("you are not on the board")
        food = frozenset(_point(p, "board.food[]") for p in _field(board, "food", list, "board"))
        snakes = tuple(by_id.get(i) for i in match.ids)
        # past the GDL game's turn cap the rules are the same: stay one turn before it
        return Board(size, min(turn, match.max_turn - 1), snakes, food)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.0"
    server_version = "ggp-battlesnake"
    timeout = 30.0
    server: SnakeHTTPServer

    def _reply(self, method: str) -> None:
        received = time.monotonic()
        body = b""
        if method == "POST":
            length = self.headers.get("Content-Length")
            try:
                size = int(length) if length is not None else -1
            except ValueError:
                size = -1
            if size < 0 or size > 1 << 22:
                self._send(ApiReply(400, {"error": f"bad Content-Length {length!r}"}))
                return
            body = self.rfile.read(size)
        self._send(self.server.service.handle(method, self.path, body, received))

    def do_GET(self) -> None:
        self._reply("GET")

    def do_POST(self) -> None:
        self._reply("POST")

    def _send(self, reply: ApiReply) -> None:
        data = json.dumps(reply.body).encode()
        self.send_response(reply.status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s " + format, self.client_address[0], *args)


class SnakeHTTPServer(ThreadingHTTPServer):
    """The HTTP server of a :class:`BattlesnakeService`."""

    daemon_threads = True

    def __init__(self, address: tuple[str, int], service: BattlesnakeService) -> None:
        super().__init__(address, _Handler)
        self.service = service

    @property
    def url(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}"


def make_snake_server(settings: SnakeServerSettings, host: str, port: int) -> SnakeHTTPServer:
    """A server for ``settings`` on ``host:port`` (0: any free port); call serve_forever."""
    return SnakeHTTPServer((host, port), BattlesnakeService(settings))
