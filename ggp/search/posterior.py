"""The exact posterior over histories, and the particle filter it falls back to.

:class:`PosteriorSampler` draws histories with their true posterior probability given
chance and a model of the other roles' policies (:mod:`ggp.search.policy_models`):
``P(h | observations) ∝ Π_steps Π_{roles ≠ observer} π_role(a_role | s)`` over the
histories consistent with the observations (the observer's own policy factors are the
same for every such history and cancel). It runs the exact forward filter over distinct
states (with back-pointers, so that full histories are drawn exactly by backward
sampling) and falls back to a particle filter when a step has too many distinct states.

Example:
    >>> from pathlib import Path
    >>> import numpy as np
    >>> import ggp
    >>> from ggp.game import Game
    >>> from ggp.gdl.terms import Const
    >>> game = Game.from_file(Path(ggp.__file__).parents[1] / "games" / "montyhall.gdl")
    >>> seen = ObservationHistory(Const("candidate")).extend(
    ...     game.term("(choose 1)"), frozenset()
    ... ).extend(Const("noop"), frozenset({game.term("(open_door 3)")}))
    >>> belief = PosteriorSampler(game).belief(seen, np.random.default_rng(0))
    >>> sorted(
    ...     (str(f), round(float(p), 4))
    ...     for s, p in zip(belief.states, belief.probabilities)
    ...     for f in game.state_facts(s) if f.name == "car"
    ... )
    [('(car 1)', 0.3333), ('(car 2)', 0.6667)]
"""

from __future__ import annotations

import bisect
import itertools
import logging
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ggp.errors import NoConsistentHistoryError
from ggp.game import Game
from ggp.reasoning.state_machine import JointMove, State
from ggp.search import clock
from ggp.search.consistency import SampledHistory, consistent_joint_moves, format_step
from ggp.search.history import ObservationHistory
from ggp.search.independent_samplers import BacktrackingSampler, check_count
from ggp.search.policy_models import (
    DEFAULT_POLICY_CACHE_SIZE,
    MoveProbabilities,
    PolicyModel,
    UniformPolicy,
    draw_index,
)

__all__ = ["Belief", "PosteriorSampler"]

logger = logging.getLogger(__name__)

FloatArray = npt.NDArray[np.float64]

#: Deadlines one step of the exact filter may be stopped at: the next call goes on with
#: particles (a step that needs more calls than this would leave the player behind).
EXACT_STOPS = 2

#: The fewest particles a deadline thins the particle filter to.
MIN_PARTICLES = 100


@dataclass(frozen=True)
class Belief:
    """The posterior over the current state given a role's observations.

    Attributes:
        states: ``[K]`` the distinct states the game may be in.
        probabilities: ``[K]`` float64, their posterior probabilities (sum 1).
        exact: True when computed by exact enumeration, False for a particle estimate.
    """

    states: tuple[State, ...]
    probabilities: FloatArray
    exact: bool


@dataclass
class _Layer:
    """The exact filter after some steps: distinct states with back-pointers.

    ``incoming[k]`` holds node ``k``'s predecessors in the previous layer: ``[E]`` parent
    indices, ``[E]`` joint moves and ``[E]`` the running sum of their masses (parent
    weight times the joint move's probability), as lists: a layer has up to
    ``max_states`` nodes, and numpy's per-call cost would dominate at a few edges each.
    """

    states: list[State]  # [K]
    weights: FloatArray  # [K] sums to 1
    incoming: list[tuple[list[int], list[JointMove], list[float]]]  # [K]
    cumulative: FloatArray  # [K] running sum of weights


@dataclass
class _PartialLayer:
    """A layer of the exact filter built up to a deadline: the successors of the
    previous layer's states before ``next_parent`` (the fields of :meth:`_forward`)."""

    step: int
    next_parent: int
    stops: int  # deadlines it has been stopped at
    index: dict[State, int]
    states: list[State]
    parents: list[list[int]]
    joints: list[list[JointMove]]
    masses: list[list[float]]


@dataclass
class _Particles:
    """Weighted histories standing in for the filter from step ``start`` on."""

    start: int
    histories: list[SampledHistory]  # [P] (those of weight 0 may be shorter)
    weights: FloatArray  # [P] sums to 1
    steps: int  # the steps of the observation history the particles explain


def _common_prefix(a: ObservationHistory, b: ObservationHistory) -> int:
    steps = 0
    for step in range(min(len(a), len(b))):
        if a.moves[step] != b.moves[step] or a.percepts[step] != b.percepts[step]:
            break
        steps += 1
    return steps


class PosteriorSampler:
    """Unbiased sampling: histories drawn with their posterior probability.

    ``P(h | observations) ∝ Π_steps Π_{roles ≠ observer} π_role(a_role | s_step)`` over
    the histories ``h`` consistent with the observations, where chance is uniform and
    ``π`` is ``policy`` for the other players (see the module docstring for what a model
    keyed by the true state can and cannot express).

    Method: the exact forward filter. Layer ``t`` holds the distinct states reachable
    in ``t`` steps by consistent histories, each with its posterior mass given the first
    ``t`` observations, and for each state its predecessors with the mass each one
    contributes. Histories reaching the same state are merged, which is exact because
    the model depends on the state alone. A full history is then drawn exactly by
    backward sampling: a final state by its mass, then a predecessor by its contribution,
    step by step back to the initial state (forward filtering, backward sampling). When a
    layer would exceed ``max_states`` distinct states, the filter draws ``num_particles``
    exact histories from the last layer and continues as a particle filter with the
    optimal proposal (each particle's next joint move is drawn among the consistent ones
    in proportion to its probability, and the particle is weighted by their total;
    systematic resampling when the effective sample size falls below half). Samples are
    then drawn from the weighted particles, and :attr:`Belief.exact` is False. If every
    particle dies (none explains the next observation), new ones are drawn by
    backtracking, which finds consistent histories whenever they exist.

    The filter for the last history is kept: a history that extends it is filtered one
    step further, not from the start. A call given a ``deadline`` raises
    :class:`~ggp.search.clock.OutOfTime` when it passes, keeping every step filtered so
    far and the part of the step under way, so the next call goes on from there. A step
    of the exact filter stopped at two deadlines is left to the particle filter at the
    next call, with a quarter of ``num_particles`` (a player would otherwise fall further
    behind at each move, and the clock is tight), and a particle step stopped at a
    deadline halves the particles (down to 100) before the next call.

    Args:
        game: The rules.
        policy: The model of the other roles (uniform if None).
        max_states: The most distinct states a layer of the exact filter may hold.
        num_particles: Particles of the fallback filter.
        policy_cache_size: Policy-model answers kept, keyed by (state, role); 0: none.
    """

    def __init__(
        self,
        game: Game,
        policy: PolicyModel | None = None,
        *,
        max_states: int = 20_000,
        num_particles: int = 2_000,
        policy_cache_size: int = DEFAULT_POLICY_CACHE_SIZE,
    ) -> None:
        if max_states < 1 or num_particles < 1:
            raise ValueError("max_states and num_particles must be at least 1")
        self.game = game
        self.policy: PolicyModel = policy if policy is not None else UniformPolicy()
        self.max_states = max_states
        self.num_particles = num_particles
        self._probabilities = MoveProbabilities(game, self.policy, policy_cache_size)
        self._history: ObservationHistory | None = None
        self._layers: list[_Layer] = []
        self._particles: _Particles | None = None
        self._partial: _PartialLayer | None = None  # see _forward
        self._backtracking: BacktrackingSampler | None = None  # see _redraw

    def __repr__(self) -> str:
        return (
            f"PosteriorSampler({self.game!r}, {self.policy!r}, max_states={self.max_states}, "
            f"num_particles={self.num_particles})"
        )

    # ------------------------------------------------------------------ public

    def belief(
        self,
        history: ObservationHistory,
        rng: np.random.Generator,
        *,
        deadline: float | None = None,
    ) -> Belief:
        """The posterior over the current state.

        Args:
            history: The observations.
            rng: Used only by the particle fallback.
            deadline: A ``time.monotonic()`` value: stop with
                :class:`~ggp.search.clock.OutOfTime` after it.

        Raises:
            NoConsistentHistoryError: No history with positive probability under the model explains
                the observations.
            OutOfTime: ``deadline`` passed before the filter reached the last step.
        """
        self._update(history, rng, deadline)
        if self._particles is None:
            layer = self._layers[-1]
            return Belief(tuple(layer.states), layer.weights.copy(), True)
        totals: dict[State, float] = {}
        particles = self._particles
        for sampled, weight in zip(particles.histories, particles.weights, strict=True):
            if weight > 0:
                totals[sampled.state] = totals.get(sampled.state, 0.0) + float(weight)
        probabilities = np.array(list(totals.values()), dtype=np.float64)
        return Belief(tuple(totals), probabilities / probabilities.sum(), False)

    def sample(
        self,
        history: ObservationHistory,
        rng: np.random.Generator,
        *,
        deadline: float | None = None,
    ) -> SampledHistory:
        """One history drawn from the posterior.

        Raises:
            NoConsistentHistoryError: No history with positive probability under the model explains
                the observations.
            OutOfTime: ``deadline`` passed before the filter reached the last step.
        """
        self._update(history, rng, deadline)
        return self._draw(rng)

    def sample_many(
        self,
        history: ObservationHistory,
        n: int,
        rng: np.random.Generator,
        *,
        deadline: float | None = None,
    ) -> list[tuple[SampledHistory, float]]:
        """``n`` independent draws from the posterior, each of weight ``1/n``."""
        check_count(n)
        self._update(history, rng, deadline)
        return [(self._draw(rng), 1.0 / n) for _ in range(n)]

    # ------------------------------------------------------------------ filtering

    def _initial_layer(self) -> _Layer:
        one = np.ones(1, dtype=np.float64)
        return _Layer([self.game.initial_state()], one, [], one.copy())

    def _update(
        self, history: ObservationHistory, rng: np.random.Generator, deadline: float | None
    ) -> None:
        me = self.game.role_index(history.role)
        cached = self._history
        if cached is None or cached.role != history.role or not self._layers:
            self._layers = [self._initial_layer()]
            self._particles = None
            self._partial = None
            done = 0
        else:
            # The filter covers the first ``done`` steps of ``cached``: the exact layers,
            # then the particles if the filter fell back to them.
            common = _common_prefix(cached, history)
            particles = self._particles
            if particles is not None and common >= particles.steps:
                done = particles.steps
            else:
                self._particles = None
                done = min(common, len(self._layers) - 1)
                del self._layers[done + 1 :]
            # A layer left half-built at a deadline goes on if it is for the same step.
            partial = self._partial
            if partial is not None and (partial.step != done or common <= done):
                self._partial = None
        # From here on the layers and particles are the filter of a prefix of ``history``
        # (one step longer after each step, so an OutOfTime keeps the steps done).
        self._history = history
        for step in range(done, len(history)):
            if self._particles is None:
                partial = self._partial
                count = self.num_particles
                if partial is not None and partial.step == step and partial.stops >= EXACT_STOPS:
                    reason = f"step {step + 1} was stopped at {partial.stops} deadlines"
                    count = max(MIN_PARTICLES, count // 4)  # the clock is tight here
                else:
                    layer = self._forward(self._layers[-1], history, step, me, deadline)
                    self._partial = None
                    if layer is not None:
                        self._layers.append(layer)
                        continue
                    reason = f"more than {self.max_states} states at step {step + 1}"
                self._partial = None
                logger.info(
                    "exact filter of %s's observations: %s; continuing with %d particles",
                    history.role,
                    reason,
                    count,
                )
                self._particles = self._to_particles(rng, count)
            try:
                self._propagate(self._particles, history, step, me, rng, deadline)
            except clock.OutOfTime:
                self._particles = self._thinned(self._particles, rng)
                raise

    def _thinned(self, particles: _Particles, rng: np.random.Generator) -> _Particles:
        """Half as many particles (down to :data:`MIN_PARTICLES`), drawn by weight, so
        that the step a deadline stopped costs less at the next call."""
        count = max(MIN_PARTICLES, len(particles.histories) // 2)
        if count >= len(particles.histories):
            return particles
        positions = (rng.random() + np.arange(count)) / count
        cumulative = np.cumsum(particles.weights)
        chosen = np.minimum(np.searchsorted(cumulative, positions), len(cumulative) - 1)
        histories = [particles.histories[i] for i in chosen]
        weights = np.full(count, 1.0 / count, dtype=np.float64)
        return _Particles(particles.start, histories, weights, particles.steps)

    def _forward(
        self,
        layer: _Layer,
        history: ObservationHistory,
        step: int,
        me: int,
        deadline: float | None,
    ) -> _Layer | None:
        """The next layer, or None if it would hold more than ``max_states`` states.

        At ``deadline`` the layer built so far is kept in ``self._partial`` (OutOfTime),
        and the next call for the same step goes on from there.
        """
        game = self.game
        partial = self._partial
        if partial is None or partial.step != step:
            partial = self._partial = _PartialLayer(step, 0, 0, {}, [], [], [], [])
        index, states = partial.index, partial.states
        parents, joints, masses = partial.parents, partial.joints, partial.masses
        todo = layer.states[partial.next_parent :]
        self._probabilities.prepare([s for s in todo if not game.is_terminal(s)], deadline)
        for k in range(partial.next_parent, len(layer.states)):
            state = layer.states[k]
            if k % clock.CHECK_EVERY == 0:
                partial.next_parent = k
                if clock.passed(deadline):
                    partial.stops += 1
                    raise clock.OutOfTime(f"the exact filter stopped at step {step + 1}")
            if game.is_terminal(state):
                continue
            candidates = consistent_joint_moves(game, state, history, step)
            if not candidates:
                continue
            probs = self._probabilities.joint(state, candidates, me)
            weight = float(layer.weights[k])
            for joint, p in zip(candidates, probs.tolist(), strict=True):
                if p <= 0.0:
                    continue
                child = game.next_state(state, joint)
                j = index.get(child)
                if j is None:
                    if len(states) >= self.max_states:
                        return None
                    j = index[child] = len(states)
                    states.append(child)
                    parents.append([])
                    joints.append([])
                    masses.append([])
                parents[j].append(k)
                joints[j].append(joint)
                masses[j].append(weight * p)
        if not states:
            raise self._no_history(history, step)
        running = [list(itertools.accumulate(m)) for m in masses]
        totals = np.array([r[-1] for r in running], dtype=np.float64)
        weights = totals / totals.sum()
        incoming = list(zip(parents, joints, running, strict=True))
        return _Layer(states, weights, incoming, np.cumsum(weights))

    def _no_history(self, history: ObservationHistory, step: int) -> NoConsistentHistoryError:
        return NoConsistentHistoryError(
            f"no history with positive probability explains the observations of "
            f"{history.role} up to {format_step(history, step)}: the observations "
            "contradict the rules, or the policy model gives them probability 0"
        )

    def _backward(self, node: int, rng: np.random.Generator) -> SampledHistory:
        """A history ending at ``node`` of the last layer, drawn by backward sampling."""
        layers = self._layers
        states = [layers[-1].states[node]]
        joints: list[JointMove] = []
        for t in range(len(layers) - 1, 0, -1):
            parents, moves, running = layers[t].incoming[node]
            edge = min(bisect.bisect_right(running, rng.random() * running[-1]), len(running) - 1)
            joints.append(moves[edge])
            node = parents[edge]
            states.append(layers[t - 1].states[node])
        return SampledHistory(tuple(reversed(states)), tuple(reversed(joints)))

    def _to_particles(self, rng: np.random.Generator, count: int) -> _Particles:
        last = self._layers[-1]
        histories = [self._backward(draw_index(last.cumulative, rng), rng) for _ in range(count)]
        weights = np.full(count, 1.0 / count, dtype=np.float64)
        return _Particles(len(self._layers) - 1, histories, weights, len(self._layers) - 1)

    def _propagate(
        self,
        particles: _Particles,
        history: ObservationHistory,
        step: int,
        me: int,
        rng: np.random.Generator,
        deadline: float | None,
    ) -> None:
        """Move every particle one step on (all or none: ``particles`` is replaced at the
        end, so an :class:`~ggp.search.clock.OutOfTime` leaves it as it was)."""
        game = self.game
        options: dict[State, tuple[list[JointMove], FloatArray]] = {}
        histories: list[SampledHistory] = []
        weights = particles.weights.copy()
        alive = dict.fromkeys(
            h.state for h, w in zip(particles.histories, weights, strict=True) if w > 0
        )
        self._probabilities.prepare([s for s in alive if not game.is_terminal(s)], deadline)
        for p, sampled in enumerate(particles.histories):
            state = sampled.state
            found = options.get(state)
            if found is None:
                if len(options) % clock.CHECK_EVERY == 0:
                    clock.check(deadline, f"the particle filter stopped at step {step + 1}")
                if game.is_terminal(state):
                    candidates: list[JointMove] = []
                else:
                    candidates = consistent_joint_moves(game, state, history, step)
                probs = self._probabilities.joint(state, candidates, me)
                found = options[state] = (candidates, np.cumsum(probs))
            candidates, cumulative = found
            total = float(cumulative[-1]) if len(cumulative) else 0.0
            if total <= 0.0 or weights[p] <= 0.0:
                weights[p] = 0.0
                histories.append(sampled)
                continue
            joint = candidates[draw_index(cumulative, rng)]
            weights[p] *= total
            histories.append(
                SampledHistory(
                    (*sampled.states, game.next_state(state, joint)),
                    (*sampled.joint_moves, joint),
                )
            )
        total_weight = float(weights.sum())
        if total_weight <= 0.0:
            histories, weights = self._redraw(history.prefix(step + 1), rng, deadline)
            total_weight = 1.0
        weights /= total_weight
        ess = 1.0 / float(np.sum(weights**2))
        if ess < len(weights) / 2:
            positions = (rng.random() + np.arange(len(weights))) / len(weights)
            chosen = np.minimum(np.searchsorted(np.cumsum(weights), positions), len(weights) - 1)
            histories = [histories[i] for i in chosen]
            weights = np.full(len(weights), 1.0 / len(weights), dtype=np.float64)
        particles.histories = histories
        particles.weights = weights
        particles.steps = step + 1

    def _redraw(
        self, history: ObservationHistory, rng: np.random.Generator, deadline: float | None
    ) -> tuple[list[SampledHistory], FloatArray]:
        """New particles when every particle has died: histories drawn by backtracking,
        which finds one whenever one exists (consistent, though not weighted by the
        posterior; the filter reweights them from the next step on).

        Raises:
            NoConsistentHistoryError: No history explains ``history`` (it contradicts the rules).
        """
        logger.info(
            "every particle died at step %d of %s's observations: redrawing %d by backtracking",
            len(history),
            history.role,
            self.num_particles,
        )
        if self._backtracking is None:
            self._backtracking = BacktrackingSampler(self.game)
        try:
            drawn = self._backtracking.sample_many(
                history, self.num_particles, rng, deadline=deadline
            )
        except NoConsistentHistoryError as e:
            raise self._no_history(history, len(history) - 1) from e
        weights = np.full(len(drawn), 1.0 / len(drawn), dtype=np.float64)
        return [h for h, _ in drawn], weights

    def _draw(self, rng: np.random.Generator) -> SampledHistory:
        particles = self._particles
        if particles is not None:
            return particles.histories[draw_index(np.cumsum(particles.weights), rng)]
        return self._backward(draw_index(self._layers[-1].cumulative, rng), rng)
