"""One served match: from START to STOP or ABORT (the protocol logic of ``ggp serve``).

How a match is played:

- START builds the game (:class:`~ggp.protocol.game_cache.GameCache`), makes a fresh
  player from the registry spec and calls its ``start()`` (loading a checkpoint, say) in
  a worker thread, and replies ``ready`` when that is done or when the start clock (less
  the margin) is about to run out, whichever comes first.
- Each PLAY is turned into the :class:`~ggp.players.base.Observation` the player expects
  (:func:`observation_from_message`) and queued to the player's worker thread, which
  calls ``play()`` with a deadline. A second worker keeps its own
  :class:`~ggp.players.history_tracker.HistoryTracker` to know the legal moves. The
  reply is the player's move if it comes by the play clock less the margin and is
  legal, else a random legal move (the player's late search finishes in its thread and
  is thrown away; the next observation waits behind it in the queue, so the player's
  history stays whole).
- STOP and ABORT end the match (``done``, ``aborted``).

Percepts as the manager sends them. A classic game (no ``sees`` rules) is read by
:class:`~ggp.game.Game` with every move public. Managers differ: GDL-I messages carry the
joint move, and some GDL-II managers send the percepts ``(did ROLE MOVE)``, but the
Dresden GameController sends a classic game's GDL-II players empty percepts ``()``. The
first PLAY after turn 0 tells which: with empty percepts, the match goes on with the
rules as written (:func:`~ggp.gdl.embed.without_percepts`: nobody sees anything), for
which a new player is started (the old one has seen nothing but turn 0), and the log
records ``percepts`` once.

Lost track. If no history of the rules explains the observations (a manager whose
percepts contradict the rules), the tracker resynchronises from the moves the manager
reports (``lost-track``, logged once); from then on a move the manager has replaced is
never sent again. Every replaced move is logged (``replaced``).

The match log (:class:`~ggp.protocol.match_log.MatchLog`) has the events ``start``,
``ready`` (or ``refused``), ``play`` (message, applied last move, percepts, reply, its
source, the number of legal moves, seconds), ``replaced``, ``percepts``, ``lost-track``,
``player-error``, ``duplicate``, ``stop`` (with ``goals``: each role's goal where the
observations determine it, else null; null altogether if none could be computed in
time), ``abort`` and ``expired``.
"""

from __future__ import annotations

import hashlib
import logging
import queue
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol, TypeVar

import numpy as np

from ggp.errors import GameError, GGPError, NoConsistentHistoryError, ProtocolError
from ggp.game import Game, ReasonerName
from ggp.gdl.embed import without_percepts
from ggp.gdl.terms import Const, Description, Func, Term
from ggp.players.base import MatchInfo, Observation, Player
from ggp.players.history_tracker import HistoryTracker
from ggp.protocol.match_log import MatchLog
from ggp.protocol.messages import (
    Play,
    Start,
    StepMessage,
    Stop,
    format_move,
    format_word,
    spelling_of,
)
from ggp.search.clock import OutOfTime
from ggp.search.posterior import PosteriorSampler

__all__ = [
    "ServeSettings",
    "Reply",
    "PlayerFactory",
    "SessionHost",
    "MatchSession",
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


class SessionHost(Protocol):
    """What a session needs from the service that runs it."""

    @property
    def settings(self) -> ServeSettings: ...

    @property
    def factory(self) -> PlayerFactory: ...

    def game(self, rules: Description) -> Game:
        """The compiled game of ``rules`` (shared, cached)."""
        ...

    def end(self, session: MatchSession, outcome: str) -> None:
        """Forget ``session`` (stopped, aborted, refused or expired)."""
        ...


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


# ------------------------------------------------------------------- observations


def _did_percepts(game: Game, terms: tuple[Term, ...]) -> bool:
    """Whether ``terms`` are the public-move percepts ``(did ROLE MOVE)`` of every role."""
    roles = [t.args[0] for t in terms if isinstance(t, Func) and t.name == "did" and t.arity == 2]
    return len(roles) == len(terms) and sorted(map(str, roles)) == sorted(map(str, game.roles))


def observation_from_message(
    game: Game,
    role: Const,
    message: StepMessage,
    turn: int,
    last_reply: Term | None,
    *,
    moves_public: bool | None = None,
) -> Observation:
    """The observation a PLAY or STOP message gives ``role``.

    Args:
        game: The rules.
        role: The player's role.
        message: The message.
        turn: The turn it is for (the message's own in the GDL-II form).
        last_reply: The move this player sent last turn (the short GDL-II form of older
            managers carries no last move; the player assumes its move was applied).
        moves_public: Whether the player reads every move as public (default
            ``game.moves_public``: a classic game read as GDL-II reads it); False for a
            classic game whose manager sends empty percepts (the rules as written).

    Returns:
        GDL-II: the turn, last move and percepts as sent. GDL-I ``(PLAY id (m1 ... mk))``
        in a classic game: this role's move and the percepts ``(did ROLE MOVE)`` for
        every role, as :class:`~ggp.game.Game` gives them. ``NIL``: turn 0, nothing seen.

    Raises:
        ProtocolError: A GDL-I joint move with the wrong number of moves.
    """
    public = game.moves_public if moves_public is None else moves_public
    if not message.short_form:
        return Observation(turn, message.last_move, frozenset(message.terms or ()))
    terms = message.terms
    if terms is None:
        return Observation(turn, None, frozenset())
    if public and not _did_percepts(game, terms):
        if len(terms) != len(game.roles):
            names = " ".join(r.name for r in game.roles)
            raise ProtocolError(
                f"the previous joint move has {len(terms)} move(s), the game has "
                f"{len(game.roles)} roles ({names})"
            )
        percepts = frozenset(Func("did", (r, m)) for r, m in zip(game.roles, terms, strict=True))
        return Observation(turn, terms[game.role_index(role)], percepts)
    if public:  # older GDL-II managers: the percepts (did ROLE MOVE)
        mine = [t.args[1] for t in terms if t.args[0] == role]
        return Observation(turn, mine[0], frozenset(terms))
    return Observation(turn, last_reply, frozenset(terms))


def _hides_moves(game: Game, message: StepMessage) -> bool:
    """Whether a message after turn 0 of a classic game carries empty percepts (the
    manager reads the rules as written) rather than the moves."""
    return game.moves_public and message.terms is not None and not message.terms


# ------------------------------------------------------------------- one match


class _NoPlayer(Exception):
    """The player failed to start: every move is a fallback."""


@dataclass(frozen=True)
class _Legal:
    """What the fallback worker knows at a turn."""

    moves: tuple[Term, ...]  # the role's legal moves (a guess if ``lost``)
    lost: bool  # the tracker lost track (see HistoryTracker)
    replaced: tuple[Term, ...]  # moves this player sent that the manager replaced


#: How a classic game's percepts come: not yet known, the moves, or none at all.
PerceptMode = Literal["unknown", "public", "as written"]


class MatchSession:
    """The state of the match in progress (see the module docstring).

    Args:
        host: The service running it.
        message: The START message.
        upper: Whether the manager writes in upper case.
        rng: The match's randomness.
        received: When START arrived (``time.monotonic()``).
    """

    def __init__(
        self,
        host: SessionHost,
        message: Start,
        upper: bool,
        rng: np.random.Generator,
        received: float,
    ) -> None:
        self.host = host
        self.settings = host.settings
        self.match_id = message.match_id
        self.key = message.match_id.lower()
        self.role = message.role
        self.rules = message.rules
        self.start_clock_s = message.start_clock_s
        self.play_clock_s = message.play_clock_s
        self.upper = upper
        self.spelling = spelling_of(message.rules)
        self.player_rng, self.fallback_rng, self.rng, self.restart_rng = rng.spawn(4)
        self.started = received
        self.last_activity = received
        self.ended = threading.Event()
        self.step_lock = threading.Lock()
        self.next_turn = 0
        self.replies: dict[int, str] = {}
        self.last_reply: Term | None = None
        self.last_legal: tuple[Term, ...] = ()
        self.replaced: tuple[Term, ...] = ()
        self.lost_logged = False
        self.percept_mode: PerceptMode = "unknown"
        self.as_written: Future[Game] | None = None
        self.game: Game | None = None
        self.player: Player | None = None
        self.tracker: HistoryTracker | None = None
        self.game_future: Future[Game] = Future()
        self.player_worker = _Worker(f"ggp-player-{self.match_id}")
        self.fallback_worker = _Worker(f"ggp-fallback-{self.match_id}")
        self.log = MatchLog(self.settings.log_dir, self.match_id)

    def _info(self, game: Game) -> MatchInfo:
        return MatchInfo(self.match_id, game, self.role, self.start_clock_s, self.play_clock_s)

    # -- set-up ---------------------------------------------------------------------------

    def set_up(self) -> float:
        """Build the game and the player (in the player's worker); returns seconds taken."""
        started = time.monotonic()
        try:
            base = self.host.game(self.rules)
            if self.role not in base.player_roles:
                roles = " ".join(r.name for r in base.player_roles)
                raise GameError(f"cannot play the role {self.role}: the roles are {roles}")
        except BaseException as e:
            self.game_future.set_exception(e)
            raise
        game = base.with_cache(100_000)
        self.game = game
        self.game_future.set_result(base)
        self._start_player(game, self.player_rng, "start")
        return time.monotonic() - started

    def _start_player(self, game: Game, rng: np.random.Generator, during: str) -> None:
        """Make and start the player for ``game`` (in the player's worker)."""
        try:
            player = self.host.factory(rng, game)
            player.start(self._info(game))
            self.player = player
        except Exception as e:
            self.player = None
            logger.exception("the player could not start; playing random legal moves")
            self.log.write("player-error", during=during, error=repr(e))

    def set_up_fallback(self) -> None:
        """Build the history tracker for legal fallback moves (in the fallback worker)."""
        base = self.game_future.result()
        self.tracker = HistoryTracker(self._info(base.with_cache(0)), self.fallback_rng)

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
            self.host.end(self, "refused")
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

    # -- percepts as the manager sends them -----------------------------------------------

    def _classic(self) -> bool:
        """Whether the game is built and is a classic game (no ``sees`` rules)."""
        future = self.game_future
        return future.done() and future.exception() is None and future.result().moves_public

    def _prepare_as_written(self) -> None:
        """Build the classic game's rules as written in the background (a GDL-II
        manager may send empty percepts; the first PLAY after turn 0 tells)."""
        if self.as_written is not None:
            return
        future: Future[Game] = Future()
        self.as_written = future

        def build() -> None:
            try:
                future.set_result(self.host.game(without_percepts(self.rules)))
            except BaseException as e:
                future.set_exception(e)

        threading.Thread(target=build, name=f"ggp-rules-{self.match_id}", daemon=True).start()

    def _follow_percepts(self, message: StepMessage, turn: int) -> None:
        """At the first message after turn 0 of a classic game: if the manager sends
        empty percepts, go on with the rules as written (see the module docstring)."""
        if self.percept_mode != "unknown" or turn == 0 or not self.game_future.done():
            return
        base = self.game_future.result()
        if not base.moves_public:
            self.percept_mode = "public"  # not a classic game: percepts as sent
            return
        if not _hides_moves(base, message):
            self.percept_mode = "public"
            self.log.write("percepts", mode="public", turn=turn)
            return
        self.percept_mode = "as written"
        logger.info("%s: the manager sends no percepts: the rules as written", self.match_id)
        self.log.write("percepts", mode="as written", turn=turn)
        self._prepare_as_written()
        as_written = self.as_written
        assert as_written is not None

        def restart_player() -> None:
            try:
                game = as_written.result().with_cache(100_000)
            except Exception as e:
                logger.error("%s: the rules as written cannot be played: %r", self.match_id, e)
                return
            old, self.game = self.player, game
            if old is not None:
                old.abort()
            self._start_player(game, self.restart_rng, "restart")

        def restart_tracker() -> None:
            try:
                game = as_written.result().with_cache(0)
            except Exception:
                return  # logged by restart_player
            self.tracker = HistoryTracker(self._info(game), self.fallback_rng)

        self.player_worker.submit(restart_player)
        self.fallback_worker.submit(restart_tracker)

    # -- turns ----------------------------------------------------------------------------

    def _convert(self, message: StepMessage, turn: int, last_reply: Term | None) -> Observation:
        game = self.game
        if game is None:
            game = self.game_future.result().with_cache(0)
        public = None if self.percept_mode != "as written" else False
        return observation_from_message(
            game, self.role, message, turn, last_reply, moves_public=public
        )

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

    def _note_applied(self, observation: Observation | None, turn: int) -> None:
        """Log a reply the manager replaced by another move."""
        sent = self.last_reply
        if observation is None or observation.last_move is None or sent is None:
            return
        if observation.last_move != sent:
            self.log.write(
                "replaced", turn=turn - 1, sent=str(sent), applied=str(observation.last_move)
            )

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
            if turn == 0 and not message.short_form and self._classic():
                self._prepare_as_written()  # a GDL-II manager: it may send no percepts
            self._follow_percepts(message, turn)
            last_reply = self.last_reply
            observation: Observation | None = None
            if self.game_future.done() and self.game_future.exception() is None:
                observation = self._convert(message, turn, last_reply)  # may raise
            self._note_applied(observation, turn)

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

            def legal_moves() -> _Legal:
                obs = observe()
                tracker = self.tracker
                assert tracker is not None
                tracker.observe(obs)
                moves = tracker.legal_moves(player_deadline)
                return _Legal(moves, tracker.lost, tuple(tracker.replaced))

            asked = self.player_worker.submit(ask_player)
            legal_future = self.fallback_worker.submit(legal_moves)
            move, source, legal = self._choose(asked, legal_future, deadline, received)
            reply = format_move(move, self.spelling, upper=self.upper)

            def replied() -> None:
                if self.tracker is not None:
                    self.tracker.replied(move)

            self.fallback_worker.submit(replied)
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

    def _known_legal(self, legal_future: Future[_Legal]) -> _Legal | None:
        """The fallback worker's answer, if it came in time and worked."""
        if not legal_future.done():
            return None
        error = legal_future.exception()
        if error is not None:
            if isinstance(error, OutOfTime | NoConsistentHistoryError):
                logger.info("%s: legal moves unknown: %s", self.match_id, error)
            else:
                logger.error("%s: legal moves unknown", self.match_id, exc_info=error)
            return None
        known = legal_future.result()
        self.replaced = known.replaced
        if known.lost and not self.lost_logged:
            self.lost_logged = True
            self.log.write(
                "lost-track",
                turn=self.next_turn,
                detail="no history of the rules explains the observations; "
                "resynchronising from the moves the manager reports",
            )
        if known.moves and not known.lost:
            self.last_legal = known.moves
        return known

    def _choose(
        self,
        asked: Future[Term],
        legal_future: Future[_Legal],
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
                logger.error("%s: the player failed", self.match_id, exc_info=error)
                self.log.write("player-error", during="play", error=repr(error))
                source = f"fallback: player error {error!r}"
        else:
            source = f"fallback: player late after {time.monotonic() - received:.2f} s"
        wait([legal_future], timeout=max(deadline - time.monotonic(), 0.0))
        known = self._known_legal(legal_future)
        legal = None if known is None or known.lost else known.moves
        if move is not None and legal is not None and move not in legal:
            source = f"fallback: player's move {move} is illegal"
            move = None
        if move is not None and move in self.replaced and (known is None or known.lost):
            source = f"fallback: the manager replaced {move} before"
            move = None
        if move is not None:
            return move, source, legal
        if known is not None and known.moves:
            return known.moves[int(self.rng.integers(len(known.moves)))], source, legal
        guesses = [m for m in self.last_legal if m not in self.replaced] or list(self.last_legal)
        logger.error("%s: no legal move known in time; replying a guess", self.match_id)
        guess = guesses[int(self.rng.integers(len(guesses)))] if guesses else Const("nil")
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
            self._follow_percepts(message, turn)
            try:
                observation = self._convert(message, turn, self.last_reply)
            except (GGPError, ValueError) as e:
                self.log.write("stop", turn=turn, error=str(e))
                self.host.end(self, "stopped")
                return done
            self._note_applied(observation, turn)

            def stop_player() -> None:
                player = self.player
                if player is not None:
                    player.stop(observation)

            def final_goals() -> dict[str, int | None] | None:
                tracker = self.tracker
                assert tracker is not None
                tracker.observe(observation)
                return _final_goals(tracker, self.fallback_rng, deadline)

            self.player_worker.submit(stop_player)
            goals_future = self.fallback_worker.submit(final_goals)
            wait([goals_future], timeout=max(deadline - time.monotonic(), 0.0))
            goals = None
            if goals_future.done():
                error = goals_future.exception()
                if error is None:
                    goals = goals_future.result()
                elif not isinstance(error, OutOfTime | NoConsistentHistoryError):
                    logger.error("%s: goals unknown", self.match_id, exc_info=error)
            self.log.write(
                "stop",
                turn=turn,
                last_move=str(observation.last_move),
                percepts=sorted(map(str, observation.percepts)),
                goals=goals,
            )
            self.host.end(self, "stopped")
            return done
        finally:
            if acquired:
                self.step_lock.release()

    def abort(self) -> Reply:
        def abort_player() -> None:
            player = self.player
            if player is not None:
                player.abort()

        self.player_worker.submit(abort_player)
        self.log.write("abort")
        self.host.end(self, "aborted")
        return Reply(200, format_word("aborted", self.upper))

    def close(self) -> None:
        """End the workers after their queued jobs (a late search is not waited for)."""
        self.ended.set()
        self.player_worker.close()
        self.fallback_worker.close()
        self.log.close()


def _final_goals(
    tracker: HistoryTracker, rng: np.random.Generator, deadline: float
) -> dict[str, int | None] | None:
    """Each role's goal at the end of the match, where the observations determine it.

    With public moves the final state is known. Otherwise every terminal state of the
    posterior belief (exact, or its particles) is looked at: a role's goal is given where
    it is the same in all of them, None where it is not. None altogether if the belief
    has no terminal state, or if the tracker lost track.

    Raises:
        OutOfTime: The belief was not computed by ``deadline``.
    """
    game = tracker.game
    names = [role.name for role in game.roles]
    if tracker.lost:
        return None
    if game.moves_public:
        states: tuple[Any, ...] = (tracker.current(deadline).state,)
    else:
        belief = PosteriorSampler(game).belief(tracker.history, rng, deadline=deadline)
        states = belief.states
    ends = [game.goals(state) for state in states if game.is_terminal(state)]
    if not ends:
        return None
    return {
        name: ends[0][i] if all(goals[i] == ends[0][i] for goals in ends) else None
        for i, name in enumerate(names)
    }
