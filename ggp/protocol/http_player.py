"""A GGP player over HTTP (``ggp serve``): GDL-II and GDL-I, one match at a time.

:class:`PlayerService` holds the protocol logic (message text in, :class:`Reply` out; no
HTTP), and :class:`PlayerHTTPServer` puts it behind a stdlib ``ThreadingHTTPServer``
answering each POST with ``HTTP/1.0 200 OK``, ``Content-Type: text/acl``, a correct
``Content-Length``, ``Access-Control-Allow-Origin: *``, and closing the connection (see
``../shared/protocol/README.md``).

How a match is played:

- START builds the game (grounding; the compiled reasoner is kept in a small cache keyed
  by the rules, so a game played again starts at once), makes a fresh player from the
  registry spec and calls its ``start()`` (loading a checkpoint, say) in a worker thread,
  and replies ``ready`` when that is done or when the start clock (less the margin) is
  about to run out, whichever comes first.
- Each PLAY is turned into the :class:`~ggp.players.base.Observation` the player expects
  (GDL-II: the turn, the applied last move and the percepts, exactly as sent; GDL-I: the
  previous joint move becomes this role's move and the percepts ``(did ROLE MOVE)`` for
  every role, which is what :class:`~ggp.game.Game` gives a classic GDL game) and queued
  to the player's worker thread, which calls ``play()`` with a deadline. A second worker
  keeps its own history tracker to know the legal moves. The reply is the player's move
  if it comes by the play clock less the margin and is legal, else a random legal move
  (the player's late search finishes in its thread and is thrown away; the next
  observation waits behind it in the queue, so the player's history stays whole).
- STOP and ABORT end the match (``done``, ``aborted``). INFO answers ``busy`` during a
  match, and so does a START for another match. A match whose manager fell silent for
  long (:attr:`ServeSettings.idle_timeout_s`) is dropped at the next START or INFO.

Every reply is in the manager's letter case (moves spelled as in its rules). A malformed
message gets HTTP 400 with the :class:`~ggp.errors.ProtocolError` text, an unknown match
404, a message out of turn 409; the server keeps serving. Each match writes a JSON-lines
log under :attr:`ServeSettings.log_dir`.

Thread safety: the compiled propnet is pure (its memo tables are dicts, safe under the
GIL) and is shared by the threads of a match and by later matches; each thread family
gets its own :class:`~ggp.game.Game` wrapper, so the transition caches (not thread-safe)
are never shared. The reference prover keeps mutable caches, so a shared prover is
wrapped in a lock.
"""

from __future__ import annotations

import hashlib
import json
import logging
import queue
import re
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from concurrent.futures import Future, wait
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import IO, Any, TypeVar

import numpy as np

from ggp.errors import GameError, GGPError, ProtocolError
from ggp.game import Game, ReasonerName
from ggp.gdl.terms import Const, Description, Func, Term
from ggp.players.base import MatchInfo, Observation, Player
from ggp.players.random_player import HistoryTracker
from ggp.protocol.messages import (
    Abort,
    Info,
    Play,
    Preview,
    Start,
    StepMessage,
    Stop,
    format_info_reply,
    format_move,
    format_word,
    parse_message,
    spelling_of,
    uses_upper_case,
)
from ggp.reasoning.state_machine import State

__all__ = [
    "ServeSettings",
    "Reply",
    "PlayerFactory",
    "PlayerService",
    "PlayerHTTPServer",
    "make_server",
    "start_server_thread",
    "observation_from_message",
]

logger = logging.getLogger(__name__)

T = TypeVar("T")

#: Builds a fresh player for one match from its randomness and the game.
PlayerFactory = Callable[[np.random.Generator, Game], Player]

#: The player's own deadline is this much before the reply is due (hand-over time).
_HANDOVER_S = 0.05


@dataclass(frozen=True)
class ServeSettings:
    """How ``ggp serve`` plays.

    Attributes:
        player: The registry spec of the player (``random``, ``cfr``, ``cfr+nn:PATH``...).
        name: The name INFO gives.
        margin_s: Reply this long before the start or play clock runs out (at the
            latest at a quarter of the clock).
        log_dir: Where the per-match JSON-lines logs go (None: no logs).
        seed: Seed of every match's randomness (None: fresh entropy).
        idle_timeout_s: A match with no message for this long (and at least three
            clocks) is dropped when another match wants to start.
        max_body_bytes: Larger requests are refused (HTTP 413).
        game_cache_size: Compiled games kept for the next matches.
        reasoner: ``auto`` (the propnet, or the prover for a game too large to ground),
            ``propnet`` or ``prover``.
    """

    player: str = "random"
    name: str = "ggp"
    margin_s: float = 0.5
    log_dir: Path | None = Path("runs/serve")
    seed: int | None = None
    idle_timeout_s: float = 60.0
    max_body_bytes: int = 16 * 1024 * 1024
    game_cache_size: int = 4
    reasoner: ReasonerName = "auto"

    def budget_s(self, clock_s: float) -> float:
        """Seconds from a message's arrival until its reply is due."""
        return max(clock_s - self.margin_s, clock_s / 4)


@dataclass(frozen=True)
class Reply:
    """An HTTP reply: status code and body (KIF for 200, an explanation otherwise)."""

    status: int
    body: str


# ------------------------------------------------------------------- threads


class _Worker:
    """One daemon thread running submitted jobs in order (never joined at exit)."""

    def __init__(self, name: str) -> None:
        self._jobs: queue.SimpleQueue[tuple[Callable[[], Any], Future[Any]] | None] = (
            queue.SimpleQueue()
        )
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)
        self._thread.start()

    def submit(self, job: Callable[[], T]) -> Future[T]:
        future: Future[T] = Future()
        self._jobs.put((job, future))
        return future

    def close(self) -> None:
        """Finish the queued jobs, then end the thread."""
        self._jobs.put(None)

    def _run(self) -> None:
        while True:
            item = self._jobs.get()
            if item is None:
                return
            job, future = item
            if not future.set_running_or_notify_cancel():
                continue
            try:
                future.set_result(job())
            except BaseException as e:  # handed to whoever reads the future
                future.set_exception(e)


class _LockedMachine:
    """A state machine whose calls are serialised by a lock (for the prover)."""

    def __init__(self, machine: Any) -> None:
        self._machine = machine
        self._lock = threading.Lock()

    @property
    def roles(self) -> tuple[Const, ...]:
        roles: tuple[Const, ...] = self._machine.roles
        return roles

    def _call(self, name: str, *args: Any) -> Any:
        with self._lock:
            return getattr(self._machine, name)(*args)

    def initial_state(self) -> State:
        state: State = self._call("initial_state")
        return state

    def legal_moves(self, state: State, role: Const) -> tuple[Term, ...]:
        moves: tuple[Term, ...] = self._call("legal_moves", state, role)
        return moves

    def next_state(self, state: State, joint: Sequence[Term]) -> State:
        result: State = self._call("next_state", state, joint)
        return result

    def percepts(self, state: State, joint: Sequence[Term], role: Const) -> frozenset[Term]:
        result: frozenset[Term] = self._call("percepts", state, joint, role)
        return result

    def is_terminal(self, state: State) -> bool:
        return bool(self._call("is_terminal", state))

    def goals(self, state: State) -> tuple[int, ...]:
        goals: tuple[int, ...] = self._call("goals", state)
        return goals

    def state_facts(self, state: State) -> frozenset[Term]:
        facts: frozenset[Term] = self._call("state_facts", state)
        return facts

    def state_from_facts(self, facts: frozenset[Term]) -> State:
        state: State = self._call("state_from_facts", facts)
        return state


def _wrapper(base: Game, cache_size: int) -> Game:
    """A new :class:`Game` over ``base``'s reasoner with its own transition cache."""
    game = Game(
        base.machine,
        base.description,
        reasoner=base.reasoner,
        warnings=base.warnings,
        cache_size=cache_size,
    )
    game.moves_public = base.moves_public
    return game


class _GameCache:
    """Compiled games by their rules, least recently used dropped first."""

    def __init__(self, size: int, reasoner: ReasonerName = "auto") -> None:
        self._size = size
        self._reasoner: ReasonerName = reasoner
        self._games: OrderedDict[tuple[object, ...], Game] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, rules: Description) -> Game:
        """The game for ``rules``, built (and validated) when not cached.

        Raises:
            GDLError: The rules are not valid GDL / GDL-II.
            GameError: The game cannot be built.
        """
        key = tuple(rules.rules)
        with self._lock:
            game = self._games.get(key)
            if game is not None:
                self._games.move_to_end(key)
                return game
            game = Game.from_description(rules, reasoner=self._reasoner)
            if game.reasoner != "propnet":
                shared = Game(
                    _LockedMachine(game.machine),
                    game.description,
                    reasoner=game.reasoner,
                    warnings=game.warnings,
                )
                shared.moves_public = game.moves_public
                game = shared
            self._games[key] = game
            while len(self._games) > self._size:
                self._games.popitem(last=False)
            return game


# ------------------------------------------------------------------- observations


def _did_percepts(game: Game, terms: Sequence[Term]) -> bool:
    """Whether ``terms`` are the public-move percepts ``(did ROLE MOVE)`` of every role."""
    roles = [t.args[0] for t in terms if isinstance(t, Func) and t.name == "did" and t.arity == 2]
    return len(roles) == len(terms) and sorted(map(str, roles)) == sorted(map(str, game.roles))


def observation_from_message(
    game: Game, role: Const, message: StepMessage, turn: int, last_reply: Term | None
) -> Observation:
    """The observation a PLAY or STOP message gives ``role``.

    Args:
        game: The rules.
        role: The player's role.
        message: The message.
        turn: The turn it is for (the message's own in the GDL-II form).
        last_reply: The move this player sent last turn (the short GDL-II form of older
            managers carries no last move; the player assumes its move was applied).

    Returns:
        GDL-II: the turn, last move and percepts as sent. GDL-I ``(PLAY id (m1 ... mk))``
        in a classic GDL game: this role's move and the percepts ``(did ROLE MOVE)`` for
        every role, as :class:`~ggp.game.Game` gives them. ``NIL``: turn 0, nothing seen.

    Raises:
        ProtocolError: A GDL-I joint move with the wrong number of moves.
    """
    if not message.short_form:
        return Observation(turn, message.last_move, frozenset(message.terms or ()))
    terms = message.terms
    if terms is None:
        return Observation(turn, None, frozenset())
    if game.moves_public and not _did_percepts(game, terms):
        if len(terms) != len(game.roles):
            names = " ".join(r.name for r in game.roles)
            raise ProtocolError(
                f"the previous joint move has {len(terms)} move(s), the game has "
                f"{len(game.roles)} roles ({names})"
            )
        percepts = frozenset(Func("did", (r, m)) for r, m in zip(game.roles, terms, strict=True))
        return Observation(turn, terms[game.role_index(role)], percepts)
    if game.moves_public:  # older GDL-II managers: the percepts (did ROLE MOVE)
        mine = [t.args[1] for t in terms if t.args[0] == role]
        return Observation(turn, mine[0], frozenset(terms))
    return Observation(turn, last_reply, frozenset(terms))


# ------------------------------------------------------------------- logs


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class _MatchLog:
    """One JSON object per line: what a match's messages were and what was answered."""

    def __init__(self, directory: Path | None, match_id: str) -> None:
        self._lock = threading.Lock()
        self._file: IO[str] | None = None
        self.path: Path | None = None
        if directory is None:
            return
        try:
            directory.mkdir(parents=True, exist_ok=True)
            stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
            safe = re.sub(r"[^A-Za-z0-9_.-]", "_", match_id)[:64] or "match"
            path = directory / f"{stamp}-{safe}.jsonl"
            counter = 1
            while path.exists():
                counter += 1
                path = directory / f"{stamp}-{safe}-{counter}.jsonl"
            self._file = path.open("w", encoding="utf-8")
            self.path = path
        except OSError as e:
            logger.error("cannot write the match log in %s: %s", directory, e)

    def write(self, event: str, **fields: object) -> None:
        with self._lock:
            if self._file is None:
                return
            record = {"time": _now_iso(), "event": event, **fields}
            self._file.write(json.dumps(record, default=str) + "\n")
            self._file.flush()

    def close(self) -> None:
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None


# ------------------------------------------------------------------- one match


class _NoPlayer(Exception):
    """The player failed to start: every move is a fallback."""


class _Session:
    """The state of the match in progress."""

    def __init__(
        self,
        service: PlayerService,
        message: Start,
        upper: bool,
        rng: np.random.Generator,
        received: float,
    ) -> None:
        self.service = service
        self.settings = service.settings
        self.match_id = message.match_id
        self.key = message.match_id.lower()
        self.role = message.role
        self.rules = message.rules
        self.start_clock_s = message.start_clock_s
        self.play_clock_s = message.play_clock_s
        self.upper = upper
        self.spelling = spelling_of(message.rules)
        streams = rng.spawn(3)
        self.player_rng, self.fallback_rng, self.rng = streams
        self.started = received
        self.last_activity = received
        self.ended = threading.Event()
        self.step_lock = threading.Lock()
        self.next_turn = 0
        self.replies: dict[int, str] = {}
        self.last_reply: Term | None = None
        self.last_legal: tuple[Term, ...] = ()
        self.game: Game | None = None
        self.player: Player | None = None
        self.tracker: HistoryTracker | None = None
        self.game_future: Future[Game] = Future()
        self.player_worker = _Worker(f"ggp-player-{self.match_id}")
        self.fallback_worker = _Worker(f"ggp-fallback-{self.match_id}")
        self.log = _MatchLog(self.settings.log_dir, self.match_id)

    # -- set-up ---------------------------------------------------------------------------

    def set_up(self) -> float:
        """Build the game and the player (in the player's worker); returns seconds taken."""
        started = time.monotonic()
        try:
            base = self.service.games.get(self.rules)
            if self.role not in base.player_roles:
                roles = " ".join(r.name for r in base.player_roles)
                raise GameError(f"cannot play the role {self.role}: the roles are {roles}")
        except BaseException as e:
            self.game_future.set_exception(e)
            raise
        game = _wrapper(base, cache_size=100_000)
        self.game = game
        self.game_future.set_result(base)
        info = MatchInfo(self.match_id, game, self.role, self.start_clock_s, self.play_clock_s)
        try:
            player = self.service.factory(self.player_rng, game)
            player.start(info)
            self.player = player
        except Exception as e:
            logger.exception("the player could not start; playing random legal moves")
            self.log.write("player-error", during="start", error=repr(e))
        return time.monotonic() - started

    def set_up_fallback(self) -> None:
        """Build the history tracker for legal fallback moves (in the fallback worker)."""
        base = self.game_future.result()
        game = _wrapper(base, cache_size=0)
        info = MatchInfo(self.match_id, game, self.role, self.start_clock_s, self.play_clock_s)
        self.tracker = HistoryTracker(info, self.fallback_rng)

    def start(self, received: float) -> Reply:
        deadline = received + self.settings.budget_s(self.start_clock_s)
        set_up = self.player_worker.submit(self.set_up)
        self.fallback_worker.submit(self.set_up_fallback)
        self.log.write(
            "start",
            match_id=self.match_id,
            role=self.role.name,
            start_clock_s=self.start_clock_s,
            play_clock_s=self.play_clock_s,
            player=self.settings.player,
            rules_sha256=hashlib.sha256(" ".join(map(str, self.rules.rules)).encode()).hexdigest(),
        )
        wait([set_up], timeout=max(deadline - time.monotonic(), 0.0))
        if set_up.done() and set_up.exception() is not None:
            error = set_up.exception()
            self.log.write("refused", error=str(error))
            self.service.end(self, "refused")
            return Reply(400, f"cannot play these rules: {error}")
        ready_s = time.monotonic() - received
        if set_up.done():
            self.log.write(
                "ready",
                set_up_s=round(set_up.result(), 4),
                ready_s=round(ready_s, 4),
                reasoner=self.game.reasoner if self.game else None,
            )
        else:
            logger.warning("%s: set-up still running at the start clock", self.match_id)
            self.log.write("ready", set_up_s=None, ready_s=round(ready_s, 4))
        return Reply(200, format_word("ready", self.upper))

    # -- turns ----------------------------------------------------------------------------

    def _convert(self, message: StepMessage, turn: int, last_reply: Term | None) -> Observation:
        game = self.game
        if game is None:
            game = _wrapper(self.game_future.result(), cache_size=0)
        return observation_from_message(game, self.role, message, turn, last_reply)

    def _turn_of(self, message: StepMessage) -> int | Reply:
        """The turn ``message`` is for, or a reply (a duplicate or a refusal)."""
        name = "STOP" if isinstance(message, Stop) else "PLAY"
        if message.turn is not None:
            turn = message.turn
        elif message.terms is None or (not message.terms and self.next_turn == 0):
            turn = 0
        else:
            turn = self.next_turn
            if turn == 0:
                return Reply(409, f"the first {name} of match {self.match_id} must carry NIL")
        if turn < self.next_turn and isinstance(message, Play) and turn in self.replies:
            self.log.write("duplicate", turn=turn, reply=self.replies[turn])
            return Reply(200, self.replies[turn])
        if turn != self.next_turn:
            return Reply(
                409,
                f"{name} for turn {turn} of match {self.match_id}: expected turn {self.next_turn}",
            )
        return turn

    def play(self, message: Play, received: float, text: str) -> Reply:
        deadline = received + self.settings.budget_s(self.play_clock_s)
        # A repeat of the PLAY in progress waits for its answer, which comes at the latest at
        # the same deadline: allow it half the margin more (still within the play clock).
        patience = deadline - time.monotonic() + self.settings.margin_s / 2
        if not self.step_lock.acquire(timeout=max(patience, 0.0)):
            return Reply(409, f"match {self.match_id}: still busy with turn {self.next_turn - 1}")
        try:
            self.last_activity = received
            turn = self._turn_of(message)
            if isinstance(turn, Reply):
                return turn
            last_reply = self.last_reply
            observation: Observation | None = None
            if self.game_future.done() and self.game_future.exception() is None:
                observation = self._convert(message, turn, last_reply)  # may raise

            def observe() -> Observation:
                if observation is not None:
                    return observation
                return self._convert(message, turn, last_reply)

            player_deadline = deadline - _HANDOVER_S

            def ask_player() -> Term:
                obs = observe()
                if self.player is None:
                    raise _NoPlayer("no player (it failed to start)")
                return self.player.play(obs, player_deadline)

            def legal_moves() -> tuple[Term, ...]:
                obs = observe()
                tracker = self.tracker
                assert tracker is not None
                tracker.observe(obs)
                return tracker.legal_moves(player_deadline)

            asked = self.player_worker.submit(ask_player)
            legal_future = self.fallback_worker.submit(legal_moves)
            move, source, legal = self._choose(asked, legal_future, deadline, received)
            reply = format_move(move, self.spelling, upper=self.upper)
            self.replies[turn] = reply
            self.last_reply = move
            self.next_turn = turn + 1
            self.last_activity = time.monotonic()
            self.log.write(
                "play",
                turn=turn,
                message=text if len(text) < 2000 else text[:2000] + "...",
                last_move=None
                if observation is None or observation.last_move is None
                else str(observation.last_move),
                percepts=None if observation is None else sorted(map(str, observation.percepts)),
                reply=reply,
                source=source,
                legal_moves=None if legal is None else len(legal),
                reply_s=round(time.monotonic() - received, 4),
            )
            return Reply(200, reply)
        finally:
            self.step_lock.release()

    def _choose(
        self,
        asked: Future[Term],
        legal_future: Future[tuple[Term, ...]],
        deadline: float,
        received: float,
    ) -> tuple[Term, str, tuple[Term, ...] | None]:
        """The move to reply, where it came from, and the legal moves if known."""
        wait([asked], timeout=max(deadline - time.monotonic(), 0.0))
        move: Term | None = None
        source = "player"
        if asked.done():
            error = asked.exception()
            if error is None:
                move = asked.result()
            elif isinstance(error, _NoPlayer):
                source = f"fallback: {error}"
            else:
                logger.warning("%s: the player failed: %r", self.match_id, error)
                source = f"fallback: player error {error!r}"
        else:
            source = f"fallback: player late after {time.monotonic() - received:.2f} s"
        wait([legal_future], timeout=max(deadline - time.monotonic(), 0.0))
        legal: tuple[Term, ...] | None = None
        if legal_future.done():
            error = legal_future.exception()
            if error is None:
                legal = legal_future.result()
                if legal:
                    self.last_legal = legal
            else:
                logger.warning("%s: legal moves unknown: %r", self.match_id, error)
        if move is not None and legal is not None and move not in legal:
            source = f"fallback: player's move {move} is illegal"
            move = None
        if move is not None:
            return move, source, legal
        if legal:
            return legal[int(self.rng.integers(len(legal)))], source, legal
        logger.error("%s: no legal move known in time; replying a guess", self.match_id)
        guess = self.last_legal[0] if self.last_legal else Const("nil")
        return guess, source + "; no legal move known: a guess", legal

    def stop(self, message: Stop, received: float) -> Reply:
        budget = self.settings.budget_s(self.play_clock_s)
        deadline = received + budget
        acquired = self.step_lock.acquire(timeout=max(deadline - time.monotonic(), 0.0))
        try:
            done = Reply(200, format_word("done", self.upper))
            turn = self._turn_of(message)
            if isinstance(turn, Reply):
                logger.warning("%s: %s", self.match_id, turn.body)
                turn = self.next_turn
            try:
                observation = self._convert(message, turn, self.last_reply)
            except (GGPError, ValueError) as e:
                self.log.write("stop", turn=turn, error=str(e))
                self.service.end(self, "stopped")
                return done
            player = self.player

            def stop_player() -> None:
                if player is not None:
                    player.stop(observation)

            def final_goals() -> tuple[int, ...] | None:
                tracker = self.tracker
                assert tracker is not None
                tracker.observe(observation)
                state = tracker.current().state
                if tracker.game.moves_public and tracker.game.is_terminal(state):
                    return tracker.game.goals(state)
                return None

            self.player_worker.submit(stop_player)
            goals_future = self.fallback_worker.submit(final_goals)
            wait([goals_future], timeout=max(deadline - time.monotonic(), 0.0))
            goals = None
            if goals_future.done() and goals_future.exception() is None:
                goals = goals_future.result()
            self.log.write(
                "stop",
                turn=turn,
                last_move=str(observation.last_move),
                percepts=sorted(map(str, observation.percepts)),
                goals=None
                if goals is None
                else dict(zip(map(str, self.game_roles()), goals, strict=True)),
            )
            self.service.end(self, "stopped")
            return done
        finally:
            if acquired:
                self.step_lock.release()

    def game_roles(self) -> tuple[Const, ...]:
        return self.game.roles if self.game is not None else ()

    def abort(self) -> Reply:
        player = self.player

        def abort_player() -> None:
            if player is not None:
                player.abort()

        self.player_worker.submit(abort_player)
        self.log.write("abort")
        self.service.end(self, "aborted")
        return Reply(200, format_word("aborted", self.upper))

    def close(self) -> None:
        """End the workers after their queued jobs (a late search is not waited for)."""
        self.ended.set()
        self.player_worker.close()
        self.fallback_worker.close()
        self.log.close()


# ------------------------------------------------------------------- the service


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
        self.games = _GameCache(settings.game_cache_size, settings.reasoner)
        self._seeds = np.random.SeedSequence(settings.seed)
        self._lock = threading.Lock()
        self._session: _Session | None = None
        self._finished: deque[tuple[str, str]] = deque(maxlen=100)
        self.matches_played = 0

    # -- sessions -------------------------------------------------------------------------

    def _current(self, now: float) -> _Session | None:
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

    def end(self, session: _Session, outcome: str) -> None:
        """Forget ``session`` (stopped, aborted, refused or expired)."""
        with self._lock:
            self._end_locked(session, outcome)

    def _end_locked(self, session: _Session, outcome: str) -> None:
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

    def _session_for(self, match_id: str) -> _Session | None:
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
                session = _Session(self, message, upper, rng, received)
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


# ------------------------------------------------------------------- HTTP


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
