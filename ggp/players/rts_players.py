"""The RTMM paper's players for the real-time games of ``games/rts/``: the search
(spec ``rtmm``, and ``rrtmm`` for the randomized variant) and the scripted bots (spec
``rtsbot:NAME``, NAME one of :data:`~ggp.rts.bots.BOTS`).

``rtmm`` / ``rrtmm`` search with :class:`~ggp.search.classic.rtmm.RTMM` each step where
the player has a choice, until the deadline less a margin (or ``time=S`` seconds), and
play the best move of the last finished iteration. Options (``rtmm:KEY=VALUE,...``):

- ``eval=battlecity|rts|rts-cost|heuristic``: the leaf evaluation (default: the paper's
  for the game: ``battlecity`` on BattleCity; ``rts`` on the 8x8 RTS, the unit terms of
  the first microRTS code's function, which the paper's experiments ran: hit-point
  weighted unit costs plus half those after the running actions land (not its resource,
  building and closeness terms); ``rts-cost`` is the paper text's plain cost difference;
  the generic GDL heuristic elsewhere).
- ``step=N``: the least cutoff increment, in clock units (default 1);
- ``time=S``: seconds per move at most; ``margin=S``: seconds kept before the deadline
  (default 0.05); ``lookahead=N``: the furthest cutoff, in clock units past the root;
- ``idle=S``: seconds of search per step where the player has no choice but the state of
  its next decision is already certain (nobody else can act before it): the search of
  that state starts early and resumes step after step, its stack kept
  (:class:`~ggp.search.classic.pondering.Pondering`), and the decision step adds its
  ``time``. This is the paper's game loop (REFERENCE-SEARCH.md 3.3: every cycle in
  which we act next continues the search, so idle cycles chain into deep searches): at
  its 100 ms a cycle, ``idle=0.2`` on the 8x8 RTS (a tick is 2 cycles). Default 0: each
  decision searches only in its own step.

Example:
    >>> settings = parse_rtmm_options("rrtmm", "eval=rts-cost,time=0.1,idle=0.2")
    >>> settings.randomized, settings.evaluation, settings.max_time_s, settings.idle_s
    (True, 'rts-cost', 0.1, 0.2)
"""

from __future__ import annotations

import gc
import math
import time
from dataclasses import dataclass, replace
from typing import Literal, cast, get_args

import numpy as np

from ggp.collector import collect_frozen, collector_paused
from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.players.base import MatchInfo, Observation
from ggp.players.state_tracker import TrackedPlayer
from ggp.reasoning.state_machine import State
from ggp.rts.bots import BOTS, bot_move
from ggp.rts.evaluation import BattleCityEvaluator, RtsEvaluator
from ggp.rts.state import is_battlecity, is_rts
from ggp.search.classic.heuristics import HeuristicEvaluator
from ggp.search.classic.pondering import Pondering
from ggp.search.classic.rtmm import RTMM, RTMMResult
from ggp.search.evaluator import Evaluator

__all__ = [
    "RtmmSettings",
    "RtmmPlayer",
    "RtsBotPlayer",
    "parse_rtmm_options",
    "rts_bot_player",
    "UNCLOCKED_TIME_S",
]

RtsEvaluation = Literal["auto", "battlecity", "rts", "rts-cost", "heuristic"]
#: Seconds per move without a clock or ``time=``.
UNCLOCKED_TIME_S = 0.1
#: Steps without a choice followed at most, looking for the next decision.
MAX_FORCED_STEPS = 10_000


@dataclass(frozen=True)
class RtmmSettings:
    """How an :class:`RtmmPlayer` searches (module docstring).

    Attributes:
        randomized: RRTMM.
        evaluation: The leaf evaluation (``auto``: the paper's for the game).
        step: The least cutoff increment (clock units).
        max_time_s: Seconds per move at most (None: the clock decides).
        margin_s: Seconds kept before the deadline.
        max_lookahead: The furthest cutoff past the root (None: no limit).
        idle_s: Seconds of search ahead per step without a choice (0: none).
    """

    randomized: bool = False
    evaluation: RtsEvaluation = "auto"
    step: int = 1
    max_time_s: float | None = None
    margin_s: float = 0.05
    max_lookahead: int | None = None
    idle_s: float = 0.0


def parse_rtmm_options(name: str, argument: str | None) -> RtmmSettings:
    """The settings of spec ``name[:argument]`` (``name`` ``rtmm`` or ``rrtmm``).

    Raises:
        GameError: An unknown option or a bad value.
    """
    settings = RtmmSettings(randomized=name == "rrtmm")
    for item in (argument or "").split(","):
        if not item.strip():
            continue
        key, _, value = (part.strip() for part in item.partition("="))
        try:
            if key == "eval" and value in get_args(RtsEvaluation):
                settings = replace(settings, evaluation=cast(RtsEvaluation, value))
            elif key == "step" and int(value) >= 1:
                settings = replace(settings, step=int(value))
            elif key == "time" and float(value) > 0:
                settings = replace(settings, max_time_s=float(value))
            elif key == "margin" and float(value) >= 0:
                settings = replace(settings, margin_s=float(value))
            elif key == "lookahead" and int(value) >= 1:
                settings = replace(settings, max_lookahead=int(value))
            elif key == "idle" and float(value) >= 0:
                settings = replace(settings, idle_s=float(value))
            else:
                raise ValueError
        except ValueError:
            raise GameError(
                f"{name} option {item!r}: expected eval=battlecity|rts|rts-cost|heuristic, "
                "step=N, time=S, margin=S, lookahead=N or idle=S"
            ) from None
    return settings


def rtmm_evaluator(evaluation: RtsEvaluation, game: Game) -> Evaluator:
    """The leaf evaluator ``evaluation`` names, for ``game``.

    Raises:
        GameError: A game-specific evaluation for another game.
    """
    if evaluation == "auto":
        evaluation = "battlecity" if is_battlecity(game) else "rts" if is_rts(game) else "heuristic"
    if evaluation == "battlecity":
        if not is_battlecity(game):
            raise GameError("eval=battlecity values the games/rts/battlecity_*.gdl games only")
        return BattleCityEvaluator()
    if evaluation in ("rts", "rts-cost"):
        if not is_rts(game):
            raise GameError(f"eval={evaluation} values the games/rts/rts_8x8_*.gdl games only")
        return RtsEvaluator(hp_weighted=evaluation == "rts")
    return HeuristicEvaluator()


class RtsBotPlayer(TrackedPlayer):
    """One of the paper's scripted bots (:data:`~ggp.rts.bots.BOTS`) as a player."""

    def __init__(self, bot: str, rng: np.random.Generator | None = None) -> None:
        if bot not in BOTS:
            raise GameError(f"no RTS bot {bot!r} (bots: {', '.join(BOTS)})")
        super().__init__(rng)
        self.bot = bot
        self.name = f"rtsbot:{bot}"

    def start(self, match: MatchInfo) -> None:
        kind = BOTS[self.bot][0]
        fits = is_battlecity(match.game) if kind == "battlecity" else is_rts(match.game)
        if not fits:
            games = "battlecity_*.gdl" if kind == "battlecity" else "rts_8x8_*.gdl"
            raise GameError(f"rtsbot:{self.bot} plays games/rts/{games} only")
        super().start(match)

    def choose_move(self, state: State, deadline: float = math.inf) -> Term:
        match = self.started()
        game = match.game
        legal = game.legal_moves(state, match.role)
        return bot_move(self.bot, game, state, game.role_index(match.role), legal, self.rng)

    def __repr__(self) -> str:
        return f"RtsBotPlayer({self.bot!r})"


def rts_bot_player(argument: str | None, rng: np.random.Generator) -> RtsBotPlayer:
    """The player of spec ``rtsbot:NAME``."""
    if not argument:
        raise GameError(f"rtsbot needs a bot name (rtsbot:NAME, NAME one of {', '.join(BOTS)})")
    return RtsBotPlayer(argument, rng)


class RtmmPlayer(TrackedPlayer):
    """RTMM (or RRTMM) as a player (module docstring)."""

    def __init__(self, settings: RtmmSettings, rng: np.random.Generator | None = None) -> None:
        super().__init__(rng)
        self.settings = settings
        self.name = "rrtmm" if settings.randomized else "rtmm"
        self._search: RTMM | None = None
        self.last_search: RTMMResult | None = None
        #: The lookahead (clock units past the root, :attr:`RTMMResult.lookahead`) each
        #: searched move of the match reached; 0 when no iteration finished. Moves with one
        #: legal choice are not searched and not listed.
        self.depths: list[int] = []
        self._pondering: Pondering[RTMMResult] | None = None
        self._pondered: State | None = None  # the state it searches
        #: Searched moves of the match whose search began in earlier steps (``idle``).
        self.pondered_moves = 0

    def start(self, match: MatchInfo) -> None:
        super().start(match)
        self._drop_pondering()
        self.depths = []
        self.pondered_moves = 0
        evaluator = rtmm_evaluator(self.settings.evaluation, match.game)
        self._search = RTMM(
            match.game,
            match.role,
            evaluator,
            randomized=self.settings.randomized,
            step=self.settings.step,
            rng=self.rng,
        )
        self.last_search = None

    def play(self, observation: Observation, deadline: float) -> Term:
        """The move, searched with the cyclic garbage collector paused and what survives
        frozen afterwards, as :class:`~ggp.players.classic_player.ClassicPlayer` does (a
        full collection over the search's cached states lands in a later move)."""
        with collector_paused():
            try:
                return super().play(observation, deadline)
            finally:
                gc.freeze()

    def choose_move(self, state: State, deadline: float = math.inf) -> Term:
        search = self._search
        if search is None:
            raise GameError("choose_move() before start()")
        settings = self.settings
        now = time.monotonic()
        stop_at = deadline - settings.margin_s
        if settings.max_time_s is not None:
            stop_at = min(stop_at, now + settings.max_time_s)
        elif math.isinf(stop_at) and settings.max_lookahead is None:
            stop_at = now + UNCLOCKED_TIME_S
        pondering = self._pondering
        if pondering is not None and self._pondered == state:
            result = replace(pondering.finish(stop_at), seconds=pondering.searched_s)
            self._pondering = self._pondered = None
            self.pondered_moves += 1
        else:
            self._drop_pondering()
            result = search.search(state, stop_at, settings.max_lookahead)
        self.last_search = result
        if result.nodes:
            self.depths.append(result.lookahead)
        return result.move

    def no_choice(self, state: State, deadline: float) -> None:
        """Search the state of the next decision ahead, for ``idle`` seconds (module
        docstring), when it is certain."""
        search, idle = self._search, self.settings.idle_s
        if search is None or idle <= 0:
            return
        root = self._next_decision(state)
        if root is None:
            self._drop_pondering()
            return
        if self._pondering is None or self._pondered != root:
            self._drop_pondering()
            lookahead = self.settings.max_lookahead
            self._pondering = Pondering(search, lambda until: search.search(root, until, lookahead))
            self._pondered = root
        now = time.monotonic()
        stop_at = min(now + idle, deadline - self.settings.margin_s)
        if stop_at > now:
            self._pondering.run_for(stop_at)

    def _next_decision(self, state: State) -> State | None:
        """The state after ``state`` where some role first has a choice, if nobody has one
        before it (so it is certain) and this player has one there; else None."""
        match = self.started()
        game = match.game
        for _ in range(MAX_FORCED_STEPS):
            if game.is_terminal(state):
                return None
            legal = [game.legal_moves(state, r) for r in game.roles]
            if any(len(moves) > 1 for moves in legal):
                mine = legal[game.role_index(match.role)]
                return state if len(mine) > 1 else None
            state = game.next_state(state, [moves[0] for moves in legal])
        return None

    def _drop_pondering(self) -> None:
        if self._pondering is not None:
            self._pondering.cancel()
        self._pondering = self._pondered = None

    def stop(self, observation: Observation) -> None:
        super().stop(observation)
        self._drop_pondering()
        self._search = None
        collect_frozen()

    def abort(self) -> None:
        super().abort()
        self._drop_pondering()
        self._search = None
        collect_frozen()

    def __repr__(self) -> str:
        return f"RtmmPlayer({self.settings!r})"
