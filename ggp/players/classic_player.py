"""Players built on classic game-tree search: ``alphabeta``, ``pvs``, ``mtdf``,
``paranoid``, ``maxn`` and ``mcts`` in the registry.

Each move: find the current state, and, unless the role has a single legal move, search
it until the deadline less a margin — iterative deepening for the depth-first searches,
simulations for MCTS (:mod:`ggp.search.classic`) — and play the best move found. The
search is anytime: whatever the clock, a legal move is returned in time. The search
objects (transposition table, history counters, the MCTS tree) live for a match.

The current state comes from :class:`~ggp.players.state_tracker.StateTracker`: the
public joint moves replayed in a classic GDL game; in a GDL-II game with hidden
information one full history consistent with the player's observations (a single
determinisation, sound for the game's public parts only).

Spec options (``NAME:KEY=VALUE,...``, see :data:`OPTIONS`), for example
``alphabeta:depth=4``, ``pvs:eval=nn`` (the trained network of
``checkpoints/GAME/latest.pt``), ``mcts:c=0.7,eval=heuristic``,
``alphabeta:eval=snake,weights=tuned`` (the Battlesnake heuristics with the weights
``ggp tune`` found).

Example:
    >>> settings = parse_options("pvs", "depth=6,eval=goal,time=0.5")
    >>> settings.algorithm, settings.evaluation, settings.max_depth, settings.max_time_s
    ('pvs', 'goal', 6, 0.5)
"""

from __future__ import annotations

import gc
import logging
import math
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Literal, cast, get_args

import numpy as np

from ggp.battlesnake.heuristics import SnakeHeuristicEvaluator
from ggp.battlesnake.weights import DEFAULT_WEIGHTS_SPEC, SnakeWeights, snake_weights
from ggp.collector import collect_frozen, collector_paused
from ggp.errors import GameError, OutOfTime
from ggp.game import Game
from ggp.gdl.terms import Const, Term
from ggp.players.base import MatchInfo, Observation, warn_if_no_time
from ggp.players.rts_players import rtmm_evaluator
from ggp.players.state_tracker import StateTracker
from ggp.reasoning.state_machine import State
from ggp.search.classic.alphabeta import AlphaBeta
from ggp.search.classic.deepening import DEFAULT_MAX_DEPTH, iterative_deepening
from ggp.search.classic.engine import TreeSearch, Utility
from ggp.search.classic.heuristics import (
    GoalEvaluator,
    HeuristicEvaluator,
    TerminalOnlyEvaluator,
)
from ggp.search.classic.maxn import MaxN
from ggp.search.classic.mcts import MCTS, MCTSSettings
from ggp.search.classic.mtdf import MTDF
from ggp.search.classic.paranoid import Paranoid
from ggp.search.classic.pvs import PVS
from ggp.search.classic.results import SearchResult
from ggp.search.evaluator import Evaluator, MixedEvaluator, RolloutEvaluator
from ggp.search.policy_models import PolicyModel

__all__ = [
    "Algorithm",
    "Evaluation",
    "ClassicSettings",
    "ClassicPlayer",
    "ALGORITHMS",
    "OPTIONS",
    "parse_options",
    "make_evaluator",
    "with_playouts",
    "UNCLOCKED_TIME_S",
]

logger = logging.getLogger(__name__)

#: Seconds per move when there is no clock (``ggp play``: an infinite deadline) and
#: neither ``time=``, ``depth=`` nor ``simulations=`` bounds the search.
UNCLOCKED_TIME_S = 1.0

Algorithm = Literal["alphabeta", "pvs", "mtdf", "paranoid", "maxn", "mcts"]
Evaluation = Literal[
    "heuristic", "goal", "terminal", "rollout", "nn", "snake", "battlecity", "rts", "rts-cost"
]

#: The algorithms, as the registry names them, with a one-line summary each.
ALGORITHMS: dict[Algorithm, str] = {
    "alphabeta": "fail-soft negamax alpha-beta, TT, history ordering, aspiration, "
    "iterative deepening",
    "pvs": "NegaScout/PVS with TT, history ordering, aspiration, iterative deepening",
    "mtdf": "MTD(f) over alpha-beta with a bounds TT, iterative deepening",
    "paranoid": "paranoid PVS for N players (every opponent against us), iterative deepening",
    "maxn": "max^n for N players (each maximises its own goal), iterative deepening",
    "mcts": "UCT Monte Carlo tree search (per-role UCB1, solver), random playouts",
}

#: Options of the classic specs (``NAME:KEY=VALUE,...``): what each sets.
OPTIONS = {
    "depth": "deepest iteration, in steps (max_depth; default 64)",
    "time": "seconds per move at most (max_time_s; default: the whole clock, or "
    "1 s without a clock unless depth= or simulations= bounds the search)",
    "margin": "seconds kept before the deadline (margin_s; default 0.15)",
    "eval": "leaf evaluation: heuristic, goal, terminal, rollout, nn, snake (the IDAPOS "
    "Battlesnake heuristics), battlecity, rts or rts-cost (the RTMM paper's evaluations of "
    "games/rts/) (default heuristic; mcts: rollout)",
    "net": "checkpoint of the network for eval=nn (default checkpoints/GAME/latest.pt)",
    "utility": "own (the role's goal) or margin (its goal minus the best other's)",
    "c": "mcts: exploration constant on 0..1 values (UCB1's, default 0.4; with eval=nn the "
    "network is also the prior and c is PUCT's, default 1.25)",
    "simulations": "mcts: simulations per move at most",
    "playouts": "eval=rollout: random playouts per leaf (default 1)",
    "rollout": "eval=nn: the weight of random playouts in each leaf's value, the rest the "
    "network's (AlphaGo's lambda; default 0)",
    "weights": "eval=snake: the heuristic's weights, paper, tuned (found by ggp tune) or a "
    f"weights file (default {DEFAULT_WEIGHTS_SPEC})",
}


@dataclass(frozen=True)
class ClassicSettings:
    """How a :class:`ClassicPlayer` searches (see :data:`OPTIONS`).

    Attributes:
        algorithm: The search.
        evaluation: How states at the depth limit (MCTS: new leaves) are valued.
        checkpoint: The network's checkpoint for ``evaluation="nn"`` (None: the game's
            default checkpoint).
        max_depth: Deepest iteration (steps).
        max_time_s: Seconds per move at most (None: up to the deadline less the margin;
            without a clock, :data:`UNCLOCKED_TIME_S` unless ``max_depth`` or
            ``simulations`` is set).
        margin_s: Seconds kept before the deadline.
        utility: How two-sided searches score leaves for the player's role.
        exploration: MCTS's exploration constant (None: UCB1's 0.4, or PUCT's 1.25 when
            the network is the prior).
        simulations: MCTS's simulations per move at most (None: the clock decides).
        playouts: Random playouts per leaf for ``evaluation="rollout"`` (and for
            ``rollout_weight``).
        rollout_weight: With ``evaluation="nn"``, the weight of random playouts in each
            leaf's value (:class:`~ggp.search.evaluator.MixedEvaluator`); the network
            stays MCTS's prior.
        snake_weights: The Battlesnake heuristic's weights for ``evaluation="snake"``.
    """

    algorithm: Algorithm
    evaluation: Evaluation = "heuristic"
    checkpoint: Path | None = None
    max_depth: int = DEFAULT_MAX_DEPTH
    max_time_s: float | None = None
    margin_s: float = 0.15
    utility: Utility = "own"
    exploration: float | None = None
    simulations: int | None = None
    playouts: int = 1
    rollout_weight: float = 0.0
    snake_weights: SnakeWeights = field(default_factory=lambda: snake_weights(DEFAULT_WEIGHTS_SPEC))


def parse_options(algorithm: str, argument: str | None) -> ClassicSettings:
    """The settings of spec ``algorithm[:argument]``.

    Raises:
        GameError: An unknown algorithm or option, or a bad value; ``weights=`` without
            ``eval=snake``.
        SettingError: ``weights=`` names a weights file that is missing or malformed.
    """
    if algorithm not in ALGORITHMS:
        raise GameError(f"no classic search {algorithm!r} (searches: {', '.join(ALGORITHMS)})")
    settings = ClassicSettings(
        algorithm, evaluation="rollout" if algorithm == "mcts" else "heuristic"
    )
    weighted = False
    for item in (argument or "").split(","):
        if not item.strip():
            continue
        key, equals, value = (part.strip() for part in item.partition("="))
        if not equals or key not in OPTIONS:
            raise GameError(
                f"{algorithm} has no option {item!r} (options: "
                + ", ".join(f"{k}=" for k in OPTIONS)
                + ")"
            )
        settings = _with_option(settings, key, value)
        weighted = weighted or key == "weights"
    if weighted and settings.evaluation != "snake":
        raise GameError(f"{algorithm} option weights= sets the weights of eval=snake only")
    if settings.rollout_weight > 0 and settings.evaluation != "nn":
        raise GameError(f"{algorithm} option rollout= mixes playouts into eval=nn only")
    return settings


def _with_option(settings: ClassicSettings, key: str, value: str) -> ClassicSettings:
    name = settings.algorithm

    def number(kind: type[int] | type[float], low: float) -> float:
        problem = GameError(f"{name} option {key} must be a number >= {low:g}, not {value!r}")
        try:
            parsed = kind(value)
        except ValueError:
            raise problem from None
        if not parsed >= low:
            raise problem
        return parsed

    if key == "depth":
        return replace(settings, max_depth=int(number(int, 1)))
    if key == "time":
        return replace(settings, max_time_s=number(float, 0.0))
    if key == "margin":
        return replace(settings, margin_s=number(float, 0.0))
    if key == "c":
        return replace(settings, exploration=number(float, 0.0))
    if key == "simulations":
        return replace(settings, simulations=int(number(int, 1)))
    if key == "playouts":
        return replace(settings, playouts=int(number(int, 1)))
    if key == "rollout":
        weight = number(float, 0.0)
        if weight > 1.0:
            raise GameError(f"{name} option rollout must be a weight in 0..1, not {value!r}")
        return replace(settings, rollout_weight=weight)
    if key == "weights":
        return replace(settings, snake_weights=snake_weights(value))
    if key == "net":
        return replace(settings, evaluation="nn", checkpoint=Path(value))
    if key == "eval":
        if value not in get_args(Evaluation):
            raise GameError(
                f"{name} option eval must be one of {', '.join(get_args(Evaluation))}, "
                f"not {value!r}"
            )
        return replace(settings, evaluation=cast(Evaluation, value))
    if key == "utility":
        if value not in get_args(Utility):
            raise GameError(f"{name} option utility must be own or margin, not {value!r}")
        if name == "paranoid" and value != "own":
            raise GameError("paranoid search scores the role's own goal (utility=own)")
        return replace(settings, utility=cast(Utility, value))
    raise AssertionError(key)  # pragma: no cover - OPTIONS and this function agree


def make_evaluator(settings: ClassicSettings, game: Game, rng: np.random.Generator) -> Evaluator:
    """The leaf evaluator ``settings`` ask for, for ``game``.

    Raises:
        GameError: ``evaluation="nn"`` and no checkpoint fits the game; a game-specific
            evaluation (``snake``, ``battlecity``, ``rts``) for another game.
    """
    evaluation = settings.evaluation
    if evaluation == "heuristic":
        return HeuristicEvaluator()
    if evaluation == "goal":
        return GoalEvaluator()
    if evaluation == "terminal":
        return TerminalOnlyEvaluator()
    if evaluation == "rollout":
        return RolloutEvaluator(settings.playouts, rng)
    if evaluation == "snake":
        if not any(p.name == "head" for p in game.base_propositions or ()):
            raise GameError("eval=snake values the Battlesnake games of games/battlesnake/ only")
        return SnakeHeuristicEvaluator(settings.snake_weights)
    if evaluation in ("battlecity", "rts", "rts-cost"):
        return rtmm_evaluator(evaluation, game)
    # The network plugs in here, from outside the search package.
    from ggp.nn.checkpoint import default_checkpoint, load_network
    from ggp.nn.net_evaluator import NetEvaluator

    path = settings.checkpoint if settings.checkpoint is not None else default_checkpoint(game)
    net, encoding, _ = load_network(path, game)
    return with_playouts(NetEvaluator(net, encoding), settings, rng)


def with_playouts(
    network: Evaluator, settings: ClassicSettings, rng: np.random.Generator
) -> Evaluator:
    """``network`` with ``settings.rollout_weight`` of random playouts mixed into its
    values (:class:`~ggp.search.evaluator.MixedEvaluator`; itself where the weight is 0)."""
    if settings.rollout_weight <= 0:
        return network
    playouts = RolloutEvaluator(settings.playouts, rng)
    return MixedEvaluator(network, playouts, settings.rollout_weight)


def _make_search(
    settings: ClassicSettings,
    game: Game,
    role: Const,
    evaluator: Evaluator,
    rng: np.random.Generator,
) -> TreeSearch | MCTS:
    algorithm = settings.algorithm
    if algorithm == "mcts":
        # The network is the prior too (PUCT, as AlphaZero); other evaluators: UCB1. Its
        # leaf values may be mixed with playouts (with_playouts); the prior is the network.
        network = evaluator.first if isinstance(evaluator, MixedEvaluator) else evaluator
        prior = cast(PolicyModel, network) if settings.evaluation == "nn" else None
        mcts_settings = MCTSSettings(max_simulations=settings.simulations)
        c = settings.exploration
        if c is not None and prior is not None:
            mcts_settings = replace(mcts_settings, prior_exploration=c)
        elif c is not None:
            mcts_settings = replace(mcts_settings, exploration=c)
        return MCTS(game, role, evaluator, mcts_settings, rng, prior=prior)
    if algorithm == "maxn":
        return MaxN(game, role, evaluator)
    if algorithm == "paranoid":
        return Paranoid(game, role, evaluator)
    classes: dict[str, type[AlphaBeta]] = {"alphabeta": AlphaBeta, "pvs": PVS, "mtdf": MTDF}
    return classes[algorithm](game, role, evaluator, utility=settings.utility)


class ClassicPlayer:
    """A player searching with a classic algorithm (see the module docstring).

    Args:
        settings: The search and its options.
        rng: The source of randomness (MCTS, playouts, history sampling).
        evaluator: A leaf evaluator to use instead of the one ``settings`` name (a
            network made elsewhere, say), mixed with playouts as ``settings.rollout_weight``
            says (:func:`with_playouts`).
    """

    def __init__(
        self,
        settings: ClassicSettings,
        rng: np.random.Generator | None = None,
        evaluator: Evaluator | None = None,
    ) -> None:
        self.settings = settings
        self.name: str = settings.algorithm
        self.rng = rng if rng is not None else np.random.default_rng()
        self._evaluator = (
            with_playouts(evaluator, settings, self.rng) if evaluator is not None else None
        )
        self._evaluator_game: Game | None = None
        self._match: MatchInfo | None = None
        self._search: TreeSearch | MCTS | None = None
        self._tracker: StateTracker | None = None
        self.last_search: SearchResult | None = None
        #: The depth each searched move of the match reached (:attr:`SearchResult.depth`;
        #: moves with one legal choice are not searched and not listed).
        self.depths: list[int] = []

    # ----------------------------------------------------------------- set-up

    def load(self, game: Game) -> Evaluator:
        """Make (once per game) the leaf evaluator; a bad checkpoint fails here.

        Raises:
            GameError: ``eval=nn`` and no checkpoint fits ``game``.
        """
        if self._evaluator is None or (
            self._evaluator_game is not None and self._evaluator_game is not game
        ):
            self._evaluator = make_evaluator(self.settings, game, self.rng)
            self._evaluator_game = game
        return self._evaluator

    def start(self, match: MatchInfo) -> None:
        warn_if_no_time(self.name, match, self.settings.margin_s)
        evaluator = self.load(match.game)
        self._match = match
        self._search = _make_search(self.settings, match.game, match.role, evaluator, self.rng)
        self._tracker = StateTracker(match, self.rng)
        self.last_search = None
        self.depths = []

    def stop(self, observation: Observation) -> None:
        self._end()

    def abort(self) -> None:
        self._end()

    def _end(self) -> None:
        self._match = None
        self._search = None
        self._tracker = None
        collect_frozen()  # off the clock (see play)

    # ----------------------------------------------------------------- play

    def play(self, observation: Observation, deadline: float) -> Term:
        """The move for ``observation``, searched until ``deadline`` less the margin.

        What survives a move (the transposition table, the cached states, the MCTS
        tree: often a million objects) is frozen out of the cyclic garbage collector's
        scans afterwards (``gc.freeze``, as :class:`~ggp.players.cfr_player.CFRPlayer`
        does), because a full collection over it grows to 0.4 s in a connect four match
        and lands in the middle of a later move, past its deadline; and the collector
        is paused while the move is searched (scans of the move's own new objects took
        up to 0.12 s each), which leaves the few cycles a search makes (a timeout's
        traceback) for later. Cycles among frozen objects are collected when the match
        ends (``stop``, ``abort``).
        """
        with collector_paused():
            try:
                return self._play(observation, deadline)
            finally:
                gc.freeze()  # before the collector runs again: it has nothing to scan

    def _stop_at(self, deadline: float) -> float:
        """When the search of a move asked for now, due at ``deadline``, ends."""
        started = time.monotonic()
        settings = self.settings
        stop_at = deadline - settings.margin_s
        if settings.max_time_s is not None:
            stop_at = min(stop_at, started + settings.max_time_s)
        elif math.isinf(stop_at) and not self._bounded():
            stop_at = started + UNCLOCKED_TIME_S
        return stop_at

    def _play(self, observation: Observation, deadline: float) -> Term:
        match, tracker = self._match, self._tracker
        if match is None or tracker is None:
            raise GameError("play() before start()")
        settings = self.settings
        stop_at = self._stop_at(deadline)
        game = match.game
        # The search ends by its own clock at stop_at; a single query to a slow reasoner
        # (the prover) that would run past the deadline is cut there (OutOfTime).
        with game.until(deadline - settings.margin_s / 2):
            state = tracker.observe(observation, stop_at)
            legal = game.legal_moves(state, match.role)
            if len(legal) == 1:
                move = legal[0]
            elif game.is_terminal(state):
                # Every history of the observations drawn ends the game (GDL-II only).
                logger.warning("%s: no history found that goes on; a random move", match.role)
                move = legal[int(self.rng.integers(len(legal)))]
            else:
                try:
                    result = self.choose(state, stop_at)
                except OutOfTime:  # cut before the search had a root move (the prover)
                    logger.warning(
                        "%s: the reasoner's queries outlasted the clock before the search "
                        "had a move; a random legal move",
                        match.role,
                    )
                    move = legal[int(self.rng.integers(len(legal)))]
                else:
                    self.last_search = result
                    self.depths.append(result.depth)
                    move = result.move
        tracker.replied(move)
        return move

    def choose_move(self, state: State, deadline: float = math.inf) -> Term:
        """The move for ``state`` (a state handed in, as the Battlesnake API does), searched
        until ``deadline`` less the margin."""
        match = self._match
        if match is None:
            raise GameError("choose_move() before start()")
        game = match.game
        legal = game.legal_moves(state, match.role)
        if len(legal) == 1:
            return legal[0]
        stop_at = self._stop_at(deadline)
        with collector_paused():
            try:
                with game.until(deadline - self.settings.margin_s / 2):
                    result = self.choose(state, stop_at)
            finally:
                gc.freeze()
        self.last_search = result
        self.depths.append(result.depth)
        return result.move

    def _bounded(self) -> bool:
        """Whether the settings end a search without a clock: a depth or a number of
        simulations was given."""
        settings = self.settings
        if settings.algorithm == "mcts":
            return settings.simulations is not None
        return settings.max_depth != DEFAULT_MAX_DEPTH

    def choose(self, state: State, deadline: float = math.inf) -> SearchResult:
        """Search ``state`` (not terminal, the player's role to choose) until
        ``deadline``; with none, to the settings' depth or simulation limit (or until
        the game is solved), which makes the choice deterministic for the depth-first
        searches."""
        search = self._search
        if search is None:
            raise GameError("choose() before start()")
        if isinstance(search, MCTS):
            limit = self.settings.simulations
            if limit is None and math.isinf(deadline):
                raise GameError("mcts needs a deadline or a simulation limit")
            return search.search(state, deadline, limit)
        return iterative_deepening(search, state, deadline, self.settings.max_depth)

    def __repr__(self) -> str:
        return f"<ClassicPlayer {self.settings!r}>"
