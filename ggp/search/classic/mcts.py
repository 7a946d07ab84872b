"""UCT Monte Carlo tree search, the general game playing baseline.

Kocsis & Szepesvári, *Bandit based Monte-Carlo planning*, ECML 2006,
https://doi.org/10.1007/11871842_29 (UCT); as general game players use it (Finnsson &
Björnsson, *Simulation-based approach to general game playing*, AAAI 2008,
https://cdn.aaai.org/AAAI/2008/AAAI08-041.pdf, CadiaPlayer): every role keeps its own
statistics at a node and picks its own move by UCB1 on its own goal, so simultaneous
moves, N players and turn-taking need no special case (decoupled UCT: in a turn-taking
state only the mover has a choice); ``random`` picks uniformly. Each simulation selects
down the tree, adds the first unseen state, values it through the
:class:`~ggp.search.evaluator.Evaluator` seam (default: one random playout,
:class:`~ggp.search.evaluator.RolloutEvaluator`; or a heuristic, or the network) and
backs the value vector up.

Details:

- Nodes are keyed by state (a transposition table, so the tree is a graph); statistics
  live on a node's moves ("UCT1" of Childs, Brodeur & Kocsis, *Transpositions and move
  groups in Monte Carlo tree search*, CIG 2008), and the tree is kept from move to move.
  A tree past :attr:`MCTSSettings.max_nodes` is dropped before the next move and freed
  a slice after each batch (:mod:`~ggp.search.classic.dropped`: freeing it at once took
  up to 0.74 s of a 0.1 s move).
- Leaves are valued in batches of :attr:`MCTSSettings.batch_size`: the simulations of a
  batch count their visits when they select (a virtual loss that spreads them over the
  tree) and add their values after the batch is valued, in one evaluator call. The call
  gets the search's deadline (random playouts stop there: one of RTS-Full's runs ~2,000
  steps), and a batch valued after it is not backed up, so a move is never late; where
  not even one batch fits the time, the move is the most visited by selection alone (two
  such moves in a row log a warning, once).
- MCTS-Solver (Winands, Björnsson & Saito, *Monte-Carlo tree search solver*, CG 2008,
  https://doi.org/10.1007/978-3-540-87608-3_3), generalised to goal vectors: a node
  where at most one player has a choice is *proven* once every child is (the mover's
  best child, ties pessimistic for the root role as in max^n; the mean over chance), or
  at once when the mover has a proven child with the highest goal. Selection skips a
  mover's moves whose value is proven while others are not, and the search stops once
  the root is proven. Nodes where several players choose at once are never proven.
- The move played: the root role's most visited move, among those not proven or seen
  worse than its best proven move; at a proven root, the proven best move.
- With a ``prior`` (a :class:`~ggp.search.policy_models.PolicyModel`, e.g. the trained
  network), selection is PUCT instead of UCB1 (Silver et al., *A general reinforcement
  learning algorithm that masters chess, shogi, and Go through self-play*, Science 2018,
  https://doi.org/10.1126/science.aar6404): each chooser maximises
  ``Q + c * P * sqrt(N) / (1 + n)``, ``P`` its prior for the move, ``Q`` the move's mean
  value (the node's mean for a move not tried yet), ``c`` :attr:`MCTSSettings.prior_exploration`.
  :attr:`MCTSSettings.root_noise` mixes Dirichlet noise into the root's priors (self-play
  exploration); :meth:`MCTS.root_visits` gives the visit counts (the policy targets).
- The descent, PUCT and the backup without the solver run in C where the native loops
  build (:mod:`ggp.search.classic.native`): the same walk over the same node objects,
  the same doubles and picks as the Python methods here, which are their twins.
"""

from __future__ import annotations

import logging
import math
import time
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ggp.errors import GameError, OutOfTime
from ggp.game import Game
from ggp.gdl.terms import Const, Term
from ggp.reasoning.state_machine import State
from ggp.search.classic.dropped import Dropped
from ggp.search.classic.native import load_native
from ggp.search.classic.results import SearchResult
from ggp.search.classic.sequential import SequentialGame, StepInfo
from ggp.search.evaluator import Evaluator, RolloutEvaluator, terminal_values
from ggp.search.policy_models import PolicyModel

__all__ = ["MCTS", "MCTSSettings", "PendingLeaves"]

logger = logging.getLogger(__name__)

#: The highest goal value in GDL.
MAX_GOAL = 100.0

#: A selection that goes this many steps deep values the state it reached (a guard
#: against games whose rules let play go on for ever).
MAX_PATH = 1_000

Vector = tuple[float, ...]


@dataclass(frozen=True)
class MCTSSettings:
    """How :class:`MCTS` searches.

    Attributes:
        exploration: The UCB1 constant ``c`` on values scaled to 0..1
            (``mean + c * sqrt(ln N / n)``; CadiaPlayer's 40 on 0..100 is 0.4).
        batch_size: Simulations whose leaves are valued in one evaluator call.
        max_simulations: Stop after this many simulations (None: only the clock, a
            proven root or ``max_nodes`` stop it).
        solver: Prove values where at most one player chooses (module docstring).
        max_nodes: Tree nodes kept; a larger tree is dropped before the next move.
        prior_exploration: PUCT's ``c`` (used with a prior; module docstring).
        root_noise: With a prior, the weight of Dirichlet noise in the root's priors
            (0: none; AlphaZero's 0.25).
        noise_alpha: The Dirichlet noise's concentration (AlphaZero's 0.3 for chess).
    """

    exploration: float = 0.4
    batch_size: int = 8
    max_simulations: int | None = None
    solver: bool = True
    max_nodes: int = 300_000
    prior_exploration: float = 1.25
    root_noise: float = 0.0
    noise_alpha: float = 0.3

    def __post_init__(self) -> None:
        if not 0.0 <= self.root_noise <= 1.0:
            raise ValueError(f"root_noise must be in 0..1, not {self.root_noise}")
        if self.noise_alpha <= 0 or self.prior_exploration < 0 or self.batch_size < 1:
            raise ValueError(
                "noise_alpha must be > 0, prior_exploration >= 0 and batch_size >= 1, not "
                f"{self.noise_alpha}, {self.prior_exploration}, {self.batch_size}"
            )


class _Node:
    """A state in the tree: per-role move statistics, children by joint position."""

    __slots__ = (
        "info",
        "visits",
        "value_sum",
        "counts",
        "totals",
        "priors",
        "children",
        "proven",
    )

    def __init__(self, info: StepInfo, roles: int) -> None:
        self.info = info
        self.visits = 0
        self.value_sum = [0.0] * roles
        self.counts: dict[int, list[int]] | None = None  # role -> visits per move
        self.totals: dict[int, list[float]] | None = None  # role -> value sum per move
        self.priors: dict[int, list[float]] | None = None  # role -> prior per move (PUCT)
        self.children: dict[int, _Node] = {}
        self.proven: Vector | None = _goals_vector(info) if info.terminal else None


def _unlink(node: _Node) -> None:
    """Cut a dropped node from its children (:class:`~ggp.search.classic.dropped.Dropped`)."""
    node.children.clear()


def _goals_vector(info: StepInfo) -> Vector:
    assert info.goals is not None
    return tuple(float(g) for g in info.goals)


_Path = list[tuple[_Node, tuple[int, ...], int]]


@dataclass(frozen=True)
class PendingLeaves:
    """Simulations selected by :meth:`MCTS.select_leaves`, waiting for their values.

    Attributes:
        states: ``[L]`` the distinct unproven leaves to value, in the order the values
            must come.
        paths: ``[size]`` each simulation's path and leaf (the search's own records).
        deepest: The longest path, in steps.
    """

    states: tuple[State, ...]
    paths: tuple[tuple[_Path, _Node], ...]
    deepest: int


class MCTS:
    """UCT with decoupled per-role statistics (see the module docstring).

    Args:
        game: The rules.
        role: The searching role.
        evaluator: Values new leaves (default: one random playout each).
        settings: Search settings.
        rng: The source of randomness (UCB ties among unvisited moves, chance moves,
            the default playouts, root noise).
        prior: Move probabilities for PUCT selection (module docstring); None: UCB1.

    Example:
        >>> import numpy as np
        >>> from ggp.game import Game
        >>> game = Game.from_file("games/tictactoe.gdl")
        >>> search = MCTS(game, "xplayer", rng=np.random.default_rng(0))
        >>> result = search.search(game.initial_state(), max_simulations=50_000)
        >>> result.value, result.solved
        (50.0, True)
    """

    name = "mcts"

    def __init__(
        self,
        game: Game,
        role: Const | str,
        evaluator: Evaluator | None = None,
        settings: MCTSSettings | None = None,
        rng: np.random.Generator | None = None,
        prior: PolicyModel | None = None,
    ) -> None:
        self.game = game
        self.prior = prior
        self.view = SequentialGame(game, role)
        self.role = self.view.role
        self.me = self.view.me
        self.rng = rng if rng is not None else np.random.default_rng()
        self.settings = settings if settings is not None else MCTSSettings()
        self.evaluator: Evaluator = (
            evaluator if evaluator is not None else RolloutEvaluator(1, self.rng)
        )
        self._nodes: dict[State, _Node] = {}
        # Trees dropped at max_nodes, freed a slice after each batch (back_up).
        self._dropped: Dropped[State, _Node] = Dropped(unlink=_unlink)
        self._noisy: tuple[_Node, dict[int, list[float]]] | None = None  # root, its priors
        self._root: _Node | None = None  # the root of begin()
        # The native loops (ggp/search/classic/_native.c; None: the Python twins here).
        native = load_native()
        self._native_puct = native.puct if native is not None else None
        self._native_select = native.select if native is not None else None
        self._native_backup = (
            native.backup if native is not None and not self.settings.solver else None
        )
        # Every pick is PUCT over all moves (what _pick does with a prior, no solver and
        # no chance): the native select picks without calling _pick.
        self._fast_picks = (
            prior is not None and not self.settings.solver and self.view.random_index < 0
        )
        self.simulations = 0
        self.steps = 0  # tree nodes traversed, in all
        self.evaluations = 0
        # Moves in a row with no simulation in their time (the first move's may be a
        # warm-up: the reasoner's and the network's first calls); two are logged, once.
        self._blind_moves = 0
        self._warned_blind = False

    # ----------------------------------------------------------------- search

    def search(
        self,
        state: State,
        deadline: float = math.inf,
        max_simulations: int | None = None,
    ) -> SearchResult:
        """Simulate from ``state`` until ``deadline``, ``max_simulations`` (or the
        settings' limit), or a proven root, and choose the root role's move.

        Raises:
            GameError: ``state`` is terminal.
        """
        started = time.monotonic()
        root = self._begin(state)
        limit = max_simulations if max_simulations is not None else self.settings.max_simulations
        simulations = 0
        steps_before = self.steps
        deepest = 0
        while root.proven is None and (limit is None or simulations < limit):
            if time.monotonic() >= deadline:
                break
            batch = self.settings.batch_size
            if limit is not None:
                batch = min(batch, limit - simulations)
            try:
                deepest = max(deepest, self._batch(root, batch, deadline))
            except OutOfTime:  # a playout or a slow reasoner's query cut at the deadline
                break  # (the batch's visits counted on the way down stay: a slight bias)
            simulations += batch
        self.simulations += simulations
        move, value = self._choose(root)
        seconds = time.monotonic() - started
        self._blind_moves = self._blind_moves + 1 if simulations == 0 and root.proven is None else 0
        if self._blind_moves >= 2 and not self._warned_blind:
            self._warned_blind = True
            logger.warning(
                "mcts %s: two moves in a row with no simulation finished (%.2f s the last), "
                "chosen without values (the evaluator %r takes longer than a move's time: "
                "value leaves with a faster evaluator, e.g. a heuristic eval= or rollout=0, "
                "or give more time); said once",
                self.role,
                seconds,
                self.evaluator,
            )
        logger.info(
            "mcts %s: %d simulations, depth %d, value %.2f%s, move %s, %.2f s",
            self.role,
            simulations,
            deepest,
            value,
            " (solved)" if root.proven is not None else "",
            move,
            seconds,
        )
        return SearchResult(
            move=move,
            value=value,
            depth=deepest,
            solved=root.proven is not None,
            nodes=self.steps - steps_before,
            seconds=seconds,
            simulations=simulations,
        )

    def new_move(self) -> None:
        """Nothing to age: the tree is kept (it drops itself when too large)."""

    # ------------------------------------------------- one batch at a time, from outside

    def begin(self, state: State) -> None:
        """Start a search from ``state`` that a driver runs batch by batch
        (:meth:`select_leaves`, then :meth:`back_up` with the leaves' values), so that
        the leaves of several searches can share one evaluator call (self-play's
        concurrent games). :meth:`search` is the same loop with its own evaluator calls.

        Raises:
            GameError: ``state`` is terminal.
        """
        self._root = self._begin(state)

    def select_leaves(self, size: int) -> PendingLeaves:
        """Select ``size`` simulations from the root of :meth:`begin` (their visits
        count at once: the virtual loss); returns the states to value."""
        root = self._root
        if root is None:
            raise GameError("select_leaves needs begin first")
        pending = self._select_many(root, size)
        self.simulations += size
        return pending

    def back_up(self, pending: PendingLeaves, values: npt.ArrayLike) -> None:
        """Back up ``pending`` with ``values`` ``[len(pending.states), R]`` (0..100, the
        evaluator's scale)."""
        by_state: dict[State, Vector] = {}
        if pending.states:
            estimate = np.asarray(values, dtype=np.float64)
            if estimate.shape != (len(pending.states), len(self.game.roles)):
                raise ValueError(
                    f"values of shape {estimate.shape} for {len(pending.states)} leaves "
                    f"of {len(self.game.roles)} roles"
                )
            self.evaluations += len(pending.states)
            by_state = {
                s: tuple(row.tolist()) for s, row in zip(pending.states, estimate, strict=True)
            }
        for path, leaf in pending.paths:
            value = leaf.proven if leaf.proven is not None else by_state[leaf.info.state]
            self._backup(path, leaf, value)
        if self._dropped:
            self._dropped.free()

    @property
    def root_proven(self) -> bool:
        """Whether the root of :meth:`begin` is proven (no simulation can change it)."""
        return self._root is not None and self._root.proven is not None

    def root_value(self, state: State) -> tuple[float, ...]:
        """Each role's mean value (0..100) over the simulations through ``state``, after
        :meth:`search` from it (the proven value where it is proven).

        Raises:
            GameError: ``state`` has not been searched.
        """
        node = self._nodes.get(state)
        if node is None or node.visits == 0:
            raise GameError("root_value needs a state that was searched")
        if node.proven is not None:
            return node.proven
        return tuple(total / node.visits for total in node.value_sum)

    def root_visits(self, state: State) -> dict[int, tuple[tuple[Term, ...], tuple[int, ...]]]:
        """For each role with a choice in ``state`` (chance aside): its legal moves and
        the visits each got, after :meth:`search` from ``state``.

        Raises:
            GameError: ``state`` has not been searched.
        """
        node = self._nodes.get(state)
        if node is None or node.counts is None or node.info.expansion is None:
            raise GameError("root_visits needs a state that was searched")
        legal = node.info.expansion.legal
        return {r: (legal[r], tuple(counts)) for r, counts in node.counts.items()}

    # ----------------------------------------------------------------- tree

    def _node(self, state: State) -> _Node:
        node = self._nodes.get(state)
        if node is None:
            node = _Node(self.view.info(state), len(self.game.roles))
            if node.info.goals is not None:  # the evaluator's scale (TerminalEvaluator)
                node.proven = terminal_values(self.evaluator, self.game, state, node.info.goals)
            self._nodes[state] = node
        return node

    def _expand(self, node: _Node) -> None:
        if node.counts is not None or node.info.terminal:
            return
        expansion = self.view.expand(node.info)
        choosers = [r for r in node.info.order if r != self.view.random_index]
        node.counts = {r: [0] * len(expansion.legal[r]) for r in choosers}
        node.totals = {r: [0.0] * len(expansion.legal[r]) for r in choosers}
        if self.prior is not None:
            node.priors = {}
            for r in choosers:
                weights = np.asarray(
                    self.prior(self.game, node.info.state, r, expansion.legal[r]), dtype=float
                )
                total = float(weights.sum())
                node.priors[r] = (
                    (weights / total).tolist() if total > 0 else [1.0 / len(weights)] * len(weights)
                )

    def _root_noise(self, root: _Node) -> tuple[_Node, dict[int, list[float]]] | None:
        """The root's priors with Dirichlet noise mixed in (None without noise)."""
        eps = self.settings.root_noise
        if eps <= 0 or root.priors is None:
            return None
        alpha = self.settings.noise_alpha
        noisy = {}
        for r, priors in root.priors.items():
            noise = self.rng.dirichlet([alpha] * len(priors))
            noisy[r] = [(1 - eps) * p + eps * float(n) for p, n in zip(priors, noise, strict=True)]
        return root, noisy

    def _begin(self, state: State) -> _Node:
        """The root for a search from ``state``: expanded, its noise drawn."""
        if len(self._nodes) > self.settings.max_nodes:
            self._dropped.drop(self._nodes)
            self._nodes = {}
        root = self._node(state)
        if root.info.terminal:
            raise GameError("cannot search a terminal state")
        self._expand(root)
        self._noisy = self._root_noise(root)
        return root

    def _batch(self, root: _Node, size: int, deadline: float) -> int:
        """Run ``size`` simulations; returns the deepest selection (steps).

        Raises:
            OutOfTime: The leaves' values came after ``deadline``: they may be partial
                (random playouts stop there), and are not backed up.
        """
        pending = self._select_many(root, size)
        values: npt.ArrayLike = ()
        if pending.states:
            cut = None if math.isinf(deadline) else deadline
            values = self.evaluator.evaluate(self.game, pending.states, cut).values
            if cut is not None and time.monotonic() >= cut:
                raise OutOfTime("the leaves were valued past the deadline")
        self.back_up(pending, values)
        return pending.deepest

    def _select_many(self, root: _Node, size: int) -> PendingLeaves:
        select = self._select
        if self._native_select is not None:
            select = self._select_native
        paths = tuple(select(root) for _ in range(size))
        todo = tuple(dict.fromkeys(leaf.info.state for _, leaf in paths if leaf.proven is None))
        return PendingLeaves(todo, paths, max((len(path) for path, _ in paths), default=0))

    def _select_native(self, root: _Node) -> tuple[_Path, _Node]:
        """:meth:`_select` in C (``_native.c``'s ``select``: the same walk)."""
        assert self._native_select is not None
        path, leaf, steps = self._native_select(
            self, root, self._noisy, self._fast_picks, self.settings.prior_exploration, MAX_PATH
        )
        self.steps += steps
        return path, leaf

    def _select(self, root: _Node) -> tuple[_Path, _Node]:
        """Walk down from ``root`` counting visits; returns the path (node, per-role
        move indices of the choosers, joint position) and the node to value."""
        path: _Path = []
        node = root
        while True:
            self.steps += 1
            if node.proven is not None:
                break
            if node.counts is None:
                if node.visits > 0 or node is root:
                    self._expand(node)
                else:
                    break
            if len(path) >= MAX_PATH:
                break
            picks, position = self._pick(node)
            node.visits += 1
            counts = node.counts
            assert counts is not None
            for r, i in zip(counts, picks, strict=True):
                counts[r][i] += 1
            path.append((node, picks, position))
            child = node.children.get(position)
            node = child if child is not None else self._child(node, position)
        node.visits += 1
        return path, node

    def _child(self, node: _Node, position: int) -> _Node:
        """The child of ``node`` at joint ``position``, made and linked (first visit)."""
        expansion = node.info.expansion
        assert expansion is not None
        child = self._node(expansion.states[position])
        node.children[position] = child
        return child

    def _pick(self, node: _Node) -> tuple[tuple[int, ...], int]:
        """Each chooser's move by UCB1 (``random``: uniform); returns the choosers'
        move indices (in the order of ``node.counts``) and the joint position."""
        info = node.info
        counts, totals = node.counts, node.totals
        assert counts is not None and totals is not None and info.expansion is not None
        strides = info.strides
        legal = info.expansion.legal
        log_visits = math.log(max(node.visits, 1))
        c = self.settings.exploration
        single = len(counts) == 1 and self.settings.solver
        priors = node.priors
        if priors is not None and self._noisy is not None and self._noisy[0] is node:
            priors = self._noisy[1]
        position = 0
        picks: list[int] = []
        for r, role_counts in counts.items():
            role_totals = totals[r]
            allowed = range(len(role_counts))
            if single:
                open_moves = [i for i in allowed if self._move_value(node, r, i) is None]
                if open_moves:
                    allowed = open_moves  # type: ignore[assignment]
            if priors is not None:
                choice = self._puct(node, r, allowed, priors[r])
            elif unvisited := [i for i in allowed if role_counts[i] == 0]:
                choice = unvisited[int(self.rng.integers(len(unvisited)))]
            else:
                choice = max(
                    allowed,
                    key=lambda i: (
                        role_totals[i] / (MAX_GOAL * role_counts[i])
                        + c * math.sqrt(log_visits / role_counts[i])
                    ),
                )
            picks.append(choice)
            position += choice * strides[r]
        chance = self.view.random_index
        if chance >= 0 and chance in info.order:
            position += int(self.rng.integers(len(legal[chance]))) * strides[chance]
        return tuple(picks), position

    def _puct(self, node: _Node, r: int, allowed: range | list[int], priors: list[float]) -> int:
        """Role ``r``'s move at ``node`` by PUCT (module docstring)."""
        counts = node.counts
        totals = node.totals
        assert counts is not None and totals is not None
        role_counts, role_totals = counts[r], totals[r]
        tried = sum(role_counts)
        first = node.value_sum[r] / (MAX_GOAL * node.visits) if node.visits else 0.5
        scale = self.settings.prior_exploration * math.sqrt(max(tried, 1))
        if len(allowed) == len(role_counts):  # every move (self-play's every pick)
            if self._native_puct is not None:  # the loop below, in C (same doubles)
                return int(self._native_puct(role_counts, role_totals, priors, first, scale))
            best, best_score = -1, -math.inf
            for i, (n, total, prior) in enumerate(
                zip(role_counts, role_totals, priors, strict=True)
            ):
                score = (total / (MAX_GOAL * n) if n else first) + scale * prior / (1 + n)
                if score > best_score:
                    best, best_score = i, score
            return best
        best, best_score = -1, -math.inf
        for i in allowed:
            n = role_counts[i]
            q = role_totals[i] / (MAX_GOAL * n) if n else first
            score = q + scale * priors[i] / (1 + n)
            if score > best_score:
                best, best_score = i, score
        return best

    def _backup(self, path: _Path, leaf: _Node, value: Vector) -> None:
        if self._native_backup is not None:  # no solver: the loops below, in C
            self._native_backup(path, leaf, value)
            return
        for r, v in enumerate(value):
            leaf.value_sum[r] += v
        for node, picks, _ in reversed(path):
            totals = node.totals
            assert totals is not None
            for r, i in zip(totals, picks, strict=True):
                totals[r][i] += value[r]
            for r, v in enumerate(value):
                node.value_sum[r] += v
            if self.settings.solver and node.proven is None:
                self._prove(node)

    # ----------------------------------------------------------------- solver

    def _move_value(self, node: _Node, mover: int, index: int) -> Vector | None:
        """The proven value of ``mover`` playing its ``index``-th move (mean over
        chance), None while a child is unproven or unseen."""
        info = node.info
        expansion = info.expansion
        assert expansion is not None
        base = index * info.strides[mover] if mover >= 0 else 0
        chance = self.view.random_index
        if chance >= 0 and chance in info.order:
            step = info.strides[chance]
            positions = [base + j * step for j in range(len(expansion.legal[chance]))]
        else:
            positions = [base]
        total = [0.0] * len(self.game.roles)
        for position in positions:
            child = node.children.get(position)
            if child is None or child.proven is None:
                return None
            for r, v in enumerate(child.proven):
                total[r] += v
        return tuple(t / len(positions) for t in total)

    def _prove(self, node: _Node) -> None:
        counts = node.counts
        if counts is None or len(counts) > 1:
            return
        mover = next(iter(counts), -1)
        me = self.me
        best: Vector | None = None
        unknown = False
        for i in range(len(counts[mover]) if mover >= 0 else 1):
            vector = self._move_value(node, mover, i)
            if vector is None:
                unknown = True
                continue
            if mover < 0:
                best = vector
                continue
            if vector[mover] >= MAX_GOAL and (mover == me or vector[me] <= 0.0):
                node.proven = vector
                return
            if (
                best is None
                or vector[mover] > best[mover]
                or (vector[mover] == best[mover] and vector[me] < best[me])
            ):
                best = vector
        if not unknown and best is not None:
            node.proven = best

    # ----------------------------------------------------------------- the move

    def _choose(self, root: _Node) -> tuple[Term, float]:
        expansion = root.info.expansion
        assert expansion is not None and root.counts is not None and root.totals is not None
        me = self.me
        legal = expansion.legal[me]
        if me not in root.counts:
            value = root.value_sum[me] / root.visits if root.visits else 0.0
            if root.proven is not None:
                value = root.proven[me]
            return legal[0], value
        counts, totals = root.counts[me], root.totals[me]
        single = len(root.counts) == 1 and self.settings.solver
        known = {
            i: v
            for i in range(len(legal))
            if single and (v := self._move_value(root, me, i)) is not None
        }
        best_known = max((v[me] for v in known.values()), default=-math.inf)
        candidates = [
            i
            for i in range(len(legal))
            if root.proven is None
            and i not in known
            and counts[i] > 0
            and totals[i] / counts[i] >= best_known
        ]
        if not candidates:
            candidates = [i for i, v in known.items() if v[me] == best_known] or list(
                range(len(legal))
            )
        choice = max(candidates, key=lambda i: (counts[i], totals[i] / max(counts[i], 1)))
        if root.proven is not None:
            value = root.proven[me]
        elif root.visits:
            value = sum(totals) / root.visits
        else:
            value = 0.0
        return legal[choice], value
