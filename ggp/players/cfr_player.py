"""A player that searches with depth-limited CFR from what its role has observed.

Where the whole game is small (its tree from the initial state has at most
:attr:`CFRSettings.whole_game_nodes` nodes and is built in half a move's budget: Kuhn and
Leduc poker, Monty Hall), the player solves the whole game with CFR+ and plays from the
average strategy at its own information set, keeping the tree and the solver for its
later moves (each move adds iterations). Every role's information sets are the true
ones and every earlier move's probability is part of the solve, so the policies of all
its moves come from one strategy profile that converges to an equilibrium.

Otherwise, each move: draw full histories consistent with the player's observations,
root a game tree at them (weighted), deepen it one step at a time while the time budget
allows, running CFR+ on each tree, and play from the policy of the player's own
information set at the root — which is keyed by its observation history, so the player
never acts on hidden information it does not have. This re-solving is not safe: the
roots are only histories the *player* cannot rule out, weighted by a model of the
others (uniform, or a network's), so inside the tree the others' information sets are
finer than theirs (in Kuhn poker the opponent "knows" the player's card there), and
nothing ties the policy to the player's earlier moves. Measured with ``ggp exploit``
(training/RESULTS.md): Kuhn 1/6 chip re-solved, ~0 solved whole.

It is anytime: if no tree is solved in time, it plays uniformly among the moves legal at
every sampled root; if not even the roots are sampled in time, or no history of the
rules explains the observations (:class:`~ggp.errors.NoConsistentHistoryError`), it
falls back to a random move legal in its history tracker's history of the latest
observations (:class:`~ggp.players.history_tracker.HistoryTracker`, never an older,
shorter one). Those two are the only failures it falls back from: any other error (a
bug, misuse of the engine) propagates to whoever asked for the move.

The distribution a move is drawn from is also available without playing:
:meth:`CFRPlayer.policy` searches as :meth:`CFRPlayer.play` does, for a fresh player after
given observations (``ggp exploit`` asks it at every information set).

Python's cyclic garbage collector: what survives a move (the transition cache, the
sampler's belief, often half a million objects) is frozen out of its scans
(``gc.freeze``) after each move, because a full collection over it takes 0.1-0.4 s and
lands in the middle of a later move (Kriegspiel TTT: 1.0 s of collections over six
matches, the longest 0.14 s; frozen, 0.07 s and 6 ms). Acyclic garbage is still freed
at once; cycles among frozen objects are collected when a match ends (``stop``,
``abort``) once the frozen heap has doubled. This is process-wide, as the collector is.
"""

from __future__ import annotations

import gc
import logging
import time
import weakref
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ggp.collector import collect_frozen
from ggp.errors import GameError, NoConsistentHistoryError, TreeSizeError
from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.players.base import MatchInfo, MovePolicy, Observation
from ggp.players.history_tracker import HistoryTracker
from ggp.search.cfr import Algorithm, CFRSolver, FloatArray
from ggp.search.clock import OutOfTime
from ggp.search.consistency import SampledHistory
from ggp.search.evaluator import Evaluator, RolloutEvaluator
from ggp.search.posterior import PosteriorSampler
from ggp.search.sampler import HistorySampler, live_roots
from ggp.search.tree import GameTree, ObservationIndex, build_tree, choosable_moves

__all__ = ["CFRPlayer", "CFRSettings", "SearchResult", "MIN_SAMPLES"]

logger = logging.getLogger(__name__)

#: The fewest histories a player roots its tree at when it has to root it at fewer.
MIN_SAMPLES = 8

#: Games whose whole tree was found larger than some player's ``whole_game_nodes`` (the
#: largest such limit, per game), so that no player with that limit or a lower one builds
#: it again to find out.
_TOO_LARGE: weakref.WeakKeyDictionary[Game, int] = weakref.WeakKeyDictionary()


@dataclass(frozen=True)
class CFRSettings:
    """How a :class:`CFRPlayer` searches.

    Attributes:
        min_time_s: Search at least this long per move (unless the game tree is solved to
            the end sooner).
        max_time_s: Search at most this long per move (the deadline may cut it shorter).
        margin_s: Reply this long before the deadline.
        samples: Histories drawn per move to root the tree at (at most: where not even a
            depth-1 tree from them is searched in time, the player halves the number for
            its next moves, down to :data:`MIN_SAMPLES`, and doubles it back once a
            deeper tree is searched).
        max_depth: Deepest search, in steps below the current state.
        max_nodes: Largest tree built.
        iterations_per_check: CFR iterations between clock checks.
        policy: Play from the ``"average"`` CFR policy, or from the policy of a
            uniformly chosen iteration (``"random-iteration"``, as ReBeL does).
        algorithm: ``"cfr+"`` or ``"dcfr"``.
        model_weight: Probability with which the other roles play the player's model of
            them in the search (a restricted Nash response, :meth:`CFRSolver.restrict`):
            0 solves for an equilibrium; more exploits the model, here uniformly random
            play (:class:`~ggp.players.net_player.NetCFRPlayer`: its network's).
        whole_game_nodes: Solve the whole game from its initial state instead when its
            tree has at most this many nodes (0: never; see the module docstring).
    """

    min_time_s: float = 0.2
    max_time_s: float = 0.8
    margin_s: float = 0.15
    samples: int = 100
    max_depth: int = 30
    max_nodes: int = 200_000
    iterations_per_check: int = 20
    policy: Literal["average", "random-iteration"] = "average"
    algorithm: Algorithm = "cfr+"
    model_weight: float = 0.0
    whole_game_nodes: int = 50_000


@dataclass(frozen=True)
class _Decision:
    """A move's distribution, and how :meth:`CFRPlayer.play` draws from it: ``none`` (the
    one legal move), ``uniform`` (a fallback: ``rng.integers``) or ``weighted`` (the
    search's policy: ``rng.choice``), so that seeded matches replay as they always did."""

    policy: MovePolicy
    draw: Literal["none", "uniform", "weighted"]


@dataclass(frozen=True)
class SearchResult:
    """What one move's search found.

    Attributes:
        moves: ``[M]`` the player's moves (those legal in every sampled history).
        policy: ``[M]`` probabilities of playing each.
        depth: Depth of the deepest tree solved (0: none, the policy is uniform).
        iterations: CFR iterations on that tree.
        nodes: Nodes of that tree.
        complete: Whether that tree reached the end of the game everywhere.
        seconds: Time spent.
    """

    moves: tuple[Term, ...]
    policy: tuple[float, ...]
    depth: int
    iterations: int
    nodes: int
    complete: bool
    seconds: float


@dataclass
class _WholeGame:
    """The whole game solved from its initial state, kept across moves and matches.

    Attributes:
        game: The rules.
        tree: Its full tree (None: larger than the limit or not built in time).
        solver: CFR on it for ``role`` (None until the first move as that role).
        role: The role the solver's opponent model is set up for.
    """

    game: Game
    tree: GameTree | None = None
    solver: CFRSolver | None = None
    role: Term | None = None


class CFRPlayer:
    """Depth-limited CFR from sampled histories (CFR-D); see the module docstring.

    Args:
        settings: Search settings.
        evaluator: Values leaves at the depth limit (default: random playouts).
        rng: The source of randomness.
        sampler: Draws the histories the tree is rooted at (default: the exact posterior
            under uniformly random opponents, :class:`PosteriorSampler`).
    """

    name = "cfr"

    def __init__(
        self,
        settings: CFRSettings | None = None,
        evaluator: Evaluator | None = None,
        rng: np.random.Generator | None = None,
        sampler: HistorySampler | None = None,
    ) -> None:
        self._sampler = sampler
        self.settings = settings if settings is not None else CFRSettings()
        self.rng = rng if rng is not None else np.random.default_rng()
        self.evaluator = evaluator if evaluator is not None else RolloutEvaluator(8, self.rng)
        self._tracker: HistoryTracker | None = None
        self._snapshots: list[np.ndarray] = []
        self.last_search: SearchResult | None = None
        self.samples = self.settings.samples  # roots per move now (see CFRSettings.samples)
        self._whole: _WholeGame | None = None
        self._pace = (0, 0.0)  # (id of the solver last iterated, its seconds an iteration)

    def start(self, match: MatchInfo) -> None:
        if (
            self._sampler is not None
            and getattr(self._sampler, "game", match.game) is not match.game
        ):
            self._sampler = None  # a sampler for another game: make a new one
        self._tracker = HistoryTracker(match, self.rng)
        self.samples = self.settings.samples

    def stop(self, observation: Observation) -> None:
        self._tracker = None
        collect_frozen()

    def abort(self) -> None:
        self._tracker = None
        collect_frozen()

    def play(self, observation: Observation, deadline: float) -> Term:
        """The move for ``observation``, chosen before ``deadline``.

        Raises:
            OutOfTime: Not even a history of the latest observations was found in time,
                so no move is known to be legal (the referee plays one).
        """
        try:
            move = self._play(observation, deadline)
        finally:
            gc.freeze()  # see the module docstring
        if self._tracker is not None:
            self._tracker.replied(move)
        return move

    def policy(
        self, match: MatchInfo, observations: Sequence[Observation], deadline: float
    ) -> MovePolicy:
        """The distribution :meth:`play` would draw its move from after ``observations``,
        searched as :meth:`play` searches (see :class:`~ggp.players.base.PolicyPlayer`):
        the search's policy, the one legal move, or, where :meth:`play` falls back to a
        random legal move, uniform over the legal moves.

        Raises:
            OutOfTime: Not even a history of the observations was found in time.
        """
        started = time.monotonic()
        self.start(match)
        tracker = self._tracker
        assert tracker is not None
        for observation in observations:
            tracker.observe(observation)
        with tracker.game.until(deadline - self.settings.margin_s):
            return self._decide(started, deadline).policy

    def _play(self, observation: Observation, deadline: float) -> Term:
        started = time.monotonic()
        tracker = self._tracker
        if tracker is None:
            raise GameError("play() before start()")
        tracker.observe(observation)
        # A query to a slow reasoner (the prover) stops at the clock's margin too.
        with tracker.game.until(deadline - self.settings.margin_s):
            decision = self._decide(started, deadline)
        moves = decision.policy.moves
        if decision.draw == "none":
            return moves[0]
        if decision.draw == "uniform":
            return moves[int(self.rng.integers(len(moves)))]
        probabilities = np.array(decision.policy.probabilities, dtype=np.float64)
        probabilities /= probabilities.sum()
        return moves[int(self.rng.choice(len(moves), p=probabilities))]

    def _decide(self, started: float, deadline: float) -> _Decision:
        """How to move now, the observations being up to date (see :meth:`policy`)."""
        tracker = self._tracker
        assert tracker is not None
        settings = self.settings
        stop_at = min(deadline - settings.margin_s, started + settings.max_time_s)
        # Usually one cheap step; at most half the budget when the tracker has to look
        # for a consistent history afresh.
        try:
            moves = tracker.legal_moves(started + (stop_at - started) / 2)
        except OutOfTime:
            moves = ()
        if len(moves) == 1:
            return _Decision(MovePolicy(moves, (1.0,)), "none")
        if tracker.lost:  # the search cannot place the observations either (logged once)
            return self._fallback(stop_at, deadline, "the observations contradict the rules")
        try:
            result = self.search(stop_at, started + settings.min_time_s)
        except NoConsistentHistoryError as e:
            return self._fallback(stop_at, deadline, f"search failed: {e}", logging.WARNING)
        except OutOfTime as e:  # the sampler goes on from there at the next move
            return self._fallback(stop_at, deadline, f"no history sampled in time ({e})")
        self.last_search = result
        return _Decision(MovePolicy(result.moves, result.policy), "weighted")

    def _fallback(
        self, stop_at: float, deadline: float, reason: str, level: int = logging.INFO
    ) -> _Decision:
        """Uniform over the moves legal in the tracker's history of the latest
        observations, ``reason`` logged at ``level``. The tracker looks for that history
        until ``stop_at`` (the move's time budget) and then, if it has not found it,
        until the clock's margin before ``deadline``: a move of an older history could
        be illegal now.

        Raises:
            OutOfTime: The tracker found no such history by the clock's margin.
        """
        tracker = self._tracker
        assert tracker is not None
        logger.log(level, "%s; playing a random legal move", reason)
        try:
            moves = tracker.legal_moves(stop_at)
        except OutOfTime:
            last_chance = deadline - self.settings.margin_s
            if last_chance <= stop_at:
                raise
            moves = tracker.legal_moves(last_chance)
        return _Decision(MovePolicy(moves, (1.0 / len(moves),) * len(moves)), "uniform")

    def _roots(self, stop_at: float) -> list[tuple[SampledHistory, float]]:
        """Histories for the search's roots, drawn before ``stop_at`` (else OutOfTime)."""
        tracker = self._tracker
        assert tracker is not None
        if self._sampler is None:
            self._sampler = PosteriorSampler(tracker.game)
        # A role asked to move knows the game goes on: drop histories that have ended.
        roots = live_roots(
            tracker.game,
            self._sampler,
            tracker.history,
            self.samples,
            self.rng,
            deadline=stop_at,
        )
        if roots:
            return roots
        return self._sampler.sample_many(tracker.history, self.samples, self.rng, deadline=stop_at)

    def _make_solver(self, tree: GameTree, whole_game: bool = False) -> CFRSolver:
        """The solver for one tree (a subclass may warm-start it, e.g. from a network);
        ``whole_game``: the tree is the whole game's (see the module docstring)."""
        solver = CFRSolver(tree, self.settings.algorithm)
        if self.settings.model_weight > 0 and self._tracker is not None:
            me = self._tracker.game.role_index(self._tracker.history.role)
            others = [r for r in range(tree.roles) if r != me]
            solver.restrict(others, self._opponent_model(tree), self.settings.model_weight)
        return solver

    def _opponent_model(self, tree: GameTree) -> FloatArray:
        """``[A]`` the model of the other roles for :attr:`CFRSettings.model_weight`:
        uniformly random moves (a subclass may model them better)."""
        sizes = np.diff(tree.infoset_offset)
        model: FloatArray = 1.0 / sizes[tree.sa_infoset]
        return model

    def search(self, stop_at: float, min_until: float) -> SearchResult:
        """The whole game solved where it is small enough, else iterative deepening from
        sampled histories until ``stop_at``; if no tree was solved in time, a uniform
        policy over the moves legal at every root (depth 0).

        Raises:
            OutOfTime: The roots were not sampled by ``stop_at``.
            NoConsistentHistoryError: No history explains the observations.
        """
        whole = self._search_whole_game(stop_at, min_until)
        if whole is not None:
            return whole
        tracker = self._tracker
        assert tracker is not None
        settings = self.settings
        game = tracker.game
        role = tracker.history.role
        started = time.monotonic()
        roots, choosable = choosable_moves(game, self._roots(stop_at), role)
        tracker.adopt(roots[0][0])  # keeps the tracker's history consistent cheaply
        if len(choosable) == 1:  # one move is legal at every root
            return SearchResult(choosable, (1.0,), 0, 0, 0, True, time.monotonic() - started)
        observations = ObservationIndex()
        best: SearchResult | None = None
        deepest: tuple[GameTree, CFRSolver, int] | None = None  # tree, solver, root infoset
        last_build_s = 0.0
        last_nodes = 1
        for depth in range(1, settings.max_depth + 1):
            now = time.monotonic()
            if best is not None and (now >= stop_at or (best.complete and now >= min_until)):
                break
            # Skip a deeper tree that would not be built and solved in the time left.
            if best is not None and last_build_s * max(best.nodes / last_nodes, 2) > stop_at - now:
                break
            build_start = time.monotonic()
            try:
                tree = build_tree(
                    game,
                    roots,
                    depth=depth,
                    evaluator=self.evaluator,
                    max_nodes=settings.max_nodes,
                    observations=observations,
                    deadline=stop_at,
                    root_moves={role: choosable},
                )
            except (TreeSizeError, OutOfTime) as e:
                logger.info("depth %d not searched: %s", depth, e)
                if best is None and self.samples > MIN_SAMPLES:
                    self.samples = max(MIN_SAMPLES, self.samples // 2)
                    logger.info("%s roots its trees at %d histories", role, self.samples)
                break
            last_build_s = time.monotonic() - build_start
            last_nodes = max(best.nodes if best else 1, 1)
            solved = self._solve(tree, depth, stop_at, min_until, started)
            if solved is not None:
                deepest, best = solved
                if depth >= 2 and self.samples < settings.samples:
                    self.samples = min(settings.samples, 2 * self.samples)
            if bool(tree.leaf_terminal.all()):
                break
        # No deeper tree fits: spend the rest of the minimum budget on the deepest one.
        if deepest is not None and best is not None and not best.complete:
            tree, solver, infoset = deepest
            until = min(min_until, stop_at)
            while time.monotonic() < until:
                self._iterate(solver, infoset, until)
            best = self._result(tree, solver, infoset, best.depth, started)
        if best is None:  # no tree in time: any move legal at every root
            uniform = (1.0 / len(choosable),) * len(choosable)
            return SearchResult(choosable, uniform, 0, 0, 0, False, time.monotonic() - started)
        logger.info(
            "%s: depth %d, %d iterations, %d nodes, %.2f s",
            role,
            best.depth,
            best.iterations,
            best.nodes,
            best.seconds,
        )
        return best

    def _whole_game_tree(self, game: Game, build_until: float) -> GameTree | None:
        """The game's full tree from its initial state (built once, kept), or None when
        it is larger than :attr:`CFRSettings.whole_game_nodes` or not built by
        ``build_until`` (then not tried again by this player)."""
        limit = self.settings.whole_game_nodes
        whole = self._whole
        if whole is not None and whole.game is game:
            return whole.tree
        self._whole = whole = _WholeGame(game)
        if limit <= 0 or limit <= _TOO_LARGE.get(game, 0):
            return None
        try:
            whole.tree = build_tree(game, max_nodes=limit, deadline=build_until)
        except TreeSizeError:
            _TOO_LARGE[game] = max(_TOO_LARGE.get(game, 0), limit)
            logger.info("the whole game has more than %d nodes: re-solving from samples", limit)
        except OutOfTime:
            logger.info("the whole game's tree was not built in time: re-solving from samples")
        return whole.tree

    def _search_whole_game(self, stop_at: float, min_until: float) -> SearchResult | None:
        """CFR+ on the whole game's tree (see the module docstring), the solver going on
        from the player's earlier moves; None where the game is too large or the
        player's information set is not in the tree (observations off the rules)."""
        tracker = self._tracker
        assert tracker is not None
        started = time.monotonic()
        game = tracker.game
        tree = self._whole_game_tree(game, started + (stop_at - started) / 2)
        whole = self._whole
        if tree is None or whole is None:
            return None
        history = tracker.history
        obs = tree.observations.find(history.moves, history.percepts)
        if obs is None:
            return None
        r = game.role_index(history.role)
        found = [i for (role, o, _), i in tree.infoset_index.items() if role == r and o == obs]
        # Several: a role that does not know its legal moves (the histories it cannot
        # rule out differ in them). Their information sets are solved apart, each
        # knowing its moves, so none is the player's: the sampled search chooses among
        # the moves legal in every history instead.
        if len(found) != 1:
            return None
        infoset = found[0]
        if whole.solver is None or whole.role != history.role:
            whole.solver = self._make_solver(tree, whole_game=True)
            whole.role = history.role
        solver = whole.solver
        self._snapshots = []
        while True:
            self._iterate(solver, infoset, stop_at)
            now = time.monotonic()
            if now >= stop_at or (now >= min_until and solver.iterations >= 200):
                break
        depth = int(tree.node_depth.max()) - len(history)
        return self._result(tree, solver, infoset, depth, started)

    def _solve(
        self, tree: GameTree, depth: int, stop_at: float, min_until: float, started: float
    ) -> tuple[tuple[GameTree, CFRSolver, int], SearchResult] | None:
        tracker = self._tracker
        assert tracker is not None
        infoset = tree.root_infoset(tracker.history.role)
        if infoset is None:
            return None
        solver = self._make_solver(tree)
        complete = bool(tree.leaf_terminal.all())
        self._snapshots = []
        while True:
            self._iterate(solver, infoset, stop_at)
            now = time.monotonic()
            if now >= stop_at:
                break
            # A complete tree solved well enough leaves the rest of the budget unused.
            if complete and now >= min_until and solver.iterations >= 200:
                break
            # Leave time for a deeper tree once the minimum budget is half used.
            if not complete and solver.iterations >= 100 and now >= (started + min_until) / 2:
                break
        return (tree, solver, infoset), self._result(tree, solver, infoset, depth, started)

    def _iterate(self, solver: CFRSolver, infoset: int, until: float) -> None:
        """Up to :attr:`CFRSettings.iterations_per_check` iterations of ``solver``: as
        many as its pace so far fits before ``until`` (at least one; one to measure the
        pace of a new solver), so that a large tree (Leduc's whole game: 7 ms an
        iteration) does not run a batch past the clock."""
        n = self.settings.iterations_per_check
        key, pace = self._pace
        if key != id(solver):
            n = 1
        elif pace > 0:
            n = max(1, min(n, int((until - time.monotonic()) / pace)))
        started = time.monotonic()
        solver.iterate(n)
        self._pace = (id(solver), (time.monotonic() - started) / n)
        if self.settings.policy == "random-iteration":
            self._snapshots.append(solver.policy(infoset, average=False).copy())

    def _result(
        self, tree: GameTree, solver: CFRSolver, infoset: int, depth: int, started: float
    ) -> SearchResult:
        if self.settings.policy == "random-iteration" and self._snapshots:
            policy = self._snapshots[int(self.rng.integers(len(self._snapshots)))]
        else:
            policy = solver.policy(infoset)
        return SearchResult(
            moves=tree.infoset_moves[infoset],
            policy=tuple(float(p) for p in policy),
            depth=depth,
            iterations=solver.iterations,
            nodes=len(tree.node_state),
            complete=bool(tree.leaf_terminal.all()),
            seconds=time.monotonic() - started,
        )
