"""The protocol logic of ``ggp serve``: message text in, :class:`Reply` out (no HTTP).

:class:`PlayerService` parses each message and answers it: INFO (``busy`` during a match),
PREVIEW (the game is compiled in the background), START (a new
:class:`~ggp.protocol.session.MatchSession`, or ``busy`` for another match while one is
in progress), and PLAY, STOP and ABORT, which go to the match in progress. A match whose
manager fell silent for long (:attr:`ServeSettings.idle_timeout_s`) is dropped at the
next START or INFO. Every reply is in the manager's letter case (moves spelled as in its
rules). A malformed message gets 400 with the :class:`~ggp.errors.ProtocolError` text,
an unknown match 404, a message out of turn 409; the service keeps serving.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from concurrent.futures import wait

import numpy as np

from ggp.errors import GGPError, ProtocolError
from ggp.game import Game
from ggp.gdl.terms import Description
from ggp.players.base import Player
from ggp.protocol.game_cache import GameCache
from ggp.protocol.messages import (
    Abort,
    Info,
    Play,
    Preview,
    Start,
    Stop,
    format_info_reply,
    format_word,
    parse_message,
    uses_upper_case,
)
from ggp.protocol.session import MatchSession, PlayerFactory, Reply, ServeSettings

__all__ = ["PlayerService"]

logger = logging.getLogger(__name__)


class PlayerService:
    """The protocol logic of an HTTP player: message text in, :class:`Reply` out.

    Thread-safe: the HTTP server calls :meth:`handle` from one thread per request.

    Args:
        settings: How to play.
        factory: Makes the player for each match (default: the registry spec
            ``settings.player``).
    """

    def __init__(self, settings: ServeSettings, factory: PlayerFactory | None = None) -> None:
        self.settings = settings
        if factory is None:
            from ggp.players.registry import make_player

            spec = settings.player

            def factory(rng: np.random.Generator, game: Game) -> Player:
                return make_player(spec, rng, game)

        self.factory = factory
        self.games = GameCache(settings.game_cache_size, settings.reasoner)
        self._seeds = np.random.SeedSequence(settings.seed)
        self._lock = threading.Lock()
        self._session: MatchSession | None = None
        self._finished: deque[tuple[str, str]] = deque(maxlen=100)
        self.matches_played = 0

    def game(self, rules: Description) -> Game:
        """The compiled game of ``rules`` (from the cache of the last few).

        Raises:
            GDLError: The rules are not valid GDL / GDL-II.
            GameError: The game cannot be built.
        """
        return self.games.get(rules)

    # -- sessions -------------------------------------------------------------------------

    def _current(self, now: float) -> MatchSession | None:
        """The match in progress, after dropping it if its manager fell silent."""
        session = self._session
        if session is None:
            return None
        clocks = max(session.start_clock_s, session.play_clock_s)
        idle = max(self.settings.idle_timeout_s, 3 * clocks)
        if now - session.last_activity > idle and not session.step_lock.locked():
            logger.warning("match %s: no message for %.0f s; dropped", session.match_id, idle)
            session.log.write("expired", idle_s=round(now - session.last_activity, 1))
            player = session.player
            if player is not None:
                session.player_worker.submit(player.abort)
            self._end_locked(session, "expired")
            return None
        return session

    def end(self, session: MatchSession, outcome: str) -> None:
        """Forget ``session`` (stopped, aborted, refused or expired)."""
        with self._lock:
            self._end_locked(session, outcome)

    def _end_locked(self, session: MatchSession, outcome: str) -> None:
        if self._session is session:
            self._session = None
            self._finished.append((session.key, outcome))
            if outcome == "stopped":
                self.matches_played += 1
        session.close()

    @property
    def busy(self) -> bool:
        """Whether a match is in progress."""
        with self._lock:
            return self._current(time.monotonic()) is not None

    def close(self) -> None:
        """Abort the match in progress, if any."""
        with self._lock:
            session = self._session
        if session is not None:
            session.abort()

    # -- messages -------------------------------------------------------------------------

    def handle(self, body: bytes | str, received: float | None = None) -> Reply:
        """Answer one message.

        Args:
            body: The request body.
            received: When it arrived (``time.monotonic()``); clocks count from then.

        Returns:
            200 with the KIF reply; 400 for a malformed message, 404 for an unknown
            match, 409 for a message out of turn, 500 for an internal error (logged).
        """
        received = time.monotonic() if received is None else received
        text = body.decode("utf-8", "replace") if isinstance(body, bytes) else body
        try:
            message = parse_message(body)
        except ProtocolError as e:
            logger.info("malformed message: %s", e)
            return Reply(400, str(e))
        upper = uses_upper_case(text)
        try:
            if isinstance(message, Info):
                return self._info(upper, received)
            if isinstance(message, Preview):
                return self._preview(message, upper)
            if isinstance(message, Start):
                return self._start(message, upper, received)
            session = self._session_for(message.match_id)
            if session is None:
                return self._unknown(message)
            if isinstance(message, Play):
                return session.play(message, received, text)
            if isinstance(message, Stop):
                return session.stop(message, received)
            return session.abort()
        except GGPError as e:  # a message this game cannot make sense of
            return Reply(400, str(e))
        except Exception as e:
            logger.exception("internal error on %r", text[:200])
            return Reply(500, f"internal error: {e!r}")

    def _session_for(self, match_id: str) -> MatchSession | None:
        with self._lock:
            session = self._session
        if session is not None and session.key == match_id.lower():
            return session
        return None

    def _unknown(self, message: Play | Stop | Abort) -> Reply:
        key = message.match_id.lower()
        finished = [outcome for k, outcome in self._finished if k == key]
        if finished and isinstance(message, Stop | Abort):
            upper = self._session is not None and self._session.upper
            word = "done" if isinstance(message, Stop) else "aborted"
            return Reply(200, format_word(word, upper))
        kind = type(message).__name__.upper()
        if finished:
            return Reply(409, f"{kind} for match {message.match_id}, which has {finished[-1]}")
        return Reply(404, f"{kind} for unknown match {message.match_id}")

    def _info(self, upper: bool, received: float) -> Reply:
        with self._lock:
            busy = self._current(received) is not None
        status = "busy" if busy else "available"
        return Reply(200, format_info_reply(self.settings.name, status, upper=upper))

    def _preview(self, message: Preview, upper: bool) -> Reply:
        if not self.busy:  # compile the game now, so that START finds it ready

            def warm() -> None:
                try:
                    self.games.get(message.rules)
                except GGPError as e:
                    logger.warning("previewed rules cannot be played: %s", e)

            threading.Thread(target=warm, name="ggp-preview", daemon=True).start()
        return Reply(200, format_word("ready", upper))

    def _start(self, message: Start, upper: bool, received: float) -> Reply:
        with self._lock:
            current = self._current(received)
            if current is None:
                rng = np.random.default_rng(self._seeds.spawn(1)[0])
                session = MatchSession(self, message, upper, rng, received)
                self._session = session
        if current is None:
            logger.info("match %s: %s as %s", message.match_id, self.settings.player, message.role)
            return session.start(received)
        if current.key != message.match_id.lower():
            return Reply(200, format_word("busy", upper))
        # The same START again: ready once the game exists (or the start clock is up).
        budget = self.settings.budget_s(message.start_clock_s)
        wait([current.game_future], timeout=max(received + budget - time.monotonic(), 0.0))
        return Reply(200, format_word("ready", upper))
