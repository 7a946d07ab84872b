"""``ggp serve`` over HTTP: a stdlib ``ThreadingHTTPServer`` in front of a
:class:`~ggp.protocol.service.PlayerService`.

Each POST is answered with ``HTTP/1.0 200 OK``, ``Content-Type: text/acl``, a correct
``Content-Length``, ``Access-Control-Allow-Origin: *``, and the connection is closed (see
``../shared/protocol/README.md``): the Dresden manager reads the body until the socket
closes, ggp-base reads Content-Length. A request without Content-Length gets 411, a
larger one than :attr:`~ggp.protocol.session.ServeSettings.max_body_bytes` 413, a method
other than POST 405 (OPTIONS: the CORS preflight of browser-based managers).
"""

from __future__ import annotations

import logging
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from ggp.protocol.service import PlayerService
from ggp.protocol.session import PlayerFactory, Reply, ServeSettings

__all__ = ["PlayerHTTPServer", "make_server", "start_server_thread"]

logger = logging.getLogger(__name__)


class _Handler(BaseHTTPRequestHandler):
    """One request: POST a message, get the reply; the connection then closes."""

    protocol_version = "HTTP/1.0"
    server_version = "ggp"
    timeout = 30.0  # seconds a silent or half-sent request may hold its thread
    server: PlayerHTTPServer

    def do_POST(self) -> None:
        received = time.monotonic()
        length_text = self.headers.get("Content-Length")
        if length_text is None:
            self._send(Reply(411, "a POST needs a Content-Length header"))
            return
        try:
            length = int(length_text)
            if length < 0:
                raise ValueError(length_text)
        except ValueError:
            self._send(Reply(400, f"bad Content-Length {length_text!r}"))
            return
        if length > self.server.service.settings.max_body_bytes:
            self._send(Reply(413, f"message of {length} bytes is too large"))
            return
        try:
            body = self.rfile.read(length)
        except OSError as e:
            logger.info("connection from %s dropped while sending: %s", self.client_address, e)
            return
        if len(body) < length:
            logger.info(
                "connection from %s dropped: %d of %d bytes", self.client_address, len(body), length
            )
            self._send(Reply(400, f"incomplete message: {len(body)} of {length} bytes"))
            return
        self._send(self.server.service.handle(body, received))

    def do_OPTIONS(self) -> None:
        """CORS preflight of browser-based managers."""
        self._send(Reply(204, ""))

    def do_GET(self) -> None:
        self._send(Reply(405, "a GGP player answers POST requests only"))

    do_PUT = do_DELETE = do_PATCH = do_HEAD = do_GET

    def _send(self, reply: Reply) -> None:
        """Write the whole reply in one go (headers and body in one segment), then close."""
        data = reply.body.encode("utf-8")
        phrase = self.responses.get(reply.status, ("",))[0]
        content = "text/acl" if reply.status == 200 else "text/plain; charset=utf-8"
        head = [
            f"{self.protocol_version} {reply.status} {phrase}",
            f"Server: {self.version_string()}",
            f"Date: {self.date_time_string()}",
            f"Content-Type: {content}",
            f"Content-Length: {len(data)}",
            "Access-Control-Allow-Origin: *",
        ]
        if reply.status == 204:
            head.append("Access-Control-Allow-Methods: POST, OPTIONS")
            head.append("Access-Control-Allow-Headers: Content-Type, Sender, Receiver")
        head.append("Connection: close")
        message = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
        if self.command != "HEAD":
            message += data
        try:
            self.wfile.write(message)
        except OSError as e:
            logger.info("could not reply to %s: %s", self.client_address, e)
        self.log_request(reply.status, len(data))
        self.close_connection = True

    def log_message(self, format: str, *args: Any) -> None:
        logger.debug("%s %s", self.address_string(), format % args)


class PlayerHTTPServer(ThreadingHTTPServer):
    """A :class:`ThreadingHTTPServer` answering GGP messages with a :class:`PlayerService`.

    Args:
        address: ``(host, port)``; port 0 picks a free one (see :attr:`url`).
        service: The protocol logic.
    """

    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, address: tuple[str, int], service: PlayerService) -> None:
        super().__init__(address, _Handler)
        self.service = service

    @property
    def url(self) -> str:
        """``http://host:port/`` as bound."""
        host, port = self.server_address[:2]
        return f"http://{host!s}:{port}/"

    def handle_error(self, request: Any, client_address: Any) -> None:
        logger.exception("error while serving %s", client_address)

    def server_close(self) -> None:
        super().server_close()
        self.service.close()


def make_server(
    settings: ServeSettings,
    host: str = "127.0.0.1",
    port: int = 9147,
    factory: PlayerFactory | None = None,
) -> PlayerHTTPServer:
    """A bound server (not yet serving): call ``serve_forever()`` on it."""
    return PlayerHTTPServer((host, port), PlayerService(settings, factory))


def start_server_thread(
    settings: ServeSettings,
    host: str = "127.0.0.1",
    port: int = 0,
    factory: PlayerFactory | None = None,
) -> tuple[PlayerHTTPServer, threading.Thread]:
    """A server serving in a daemon thread (for tests and benchmarks).

    Stop it with ``server.shutdown(); server.server_close()``.
    """
    server = make_server(settings, host, port, factory)
    thread = threading.Thread(
        target=server.serve_forever, args=(0.05,), name="ggp-serve", daemon=True
    )
    thread.start()
    return server, thread
