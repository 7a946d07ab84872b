"""Sampling full game histories consistent with what one role has observed.

A history is consistent with a role's :class:`~ggp.search.history.ObservationHistory` when,
at every step, the state is not terminal, the joint move is legal, the role's own move is
the one it played, and ``sees`` gives the role exactly the percepts it received
(:func:`check_consistent` tests exactly this).

Four samplers share the :class:`HistorySampler` protocol (``sample`` one history,
``sample_many`` weighted histories ready for :func:`ggp.search.tree.build_tree`):

- :class:`RejectionSampler`: naive rejection. Plays the game forward from the initial
  state, the observer's moves fixed as observed, every other role drawing from a policy
  model (chance uniform), and starts over as soon as the observer's percepts differ.
  Unbiased (each accepted history has its posterior probability under the model), but
  the acceptance rate falls exponentially with the length of the history.
- :class:`BacktrackingSampler`: the published training method (Partridge & Thielscher
  2022, "Hidden Information General Game Playing with Deep Learning and Search",
  https://arxiv.org/abs/2207.07195): a depth-first search over consistent joint moves in
  random order, remembering (state, step) pairs proven to lead nowhere. Always finds a
  history when one exists, but is *biased*: it picks uniformly among the consistent
  joint moves at each step, whatever their probability, and the histories behind a dead
  end lend their share to their siblings. In Monty Hall, after the candidate chose door 1
  and saw door 3 opened, it puts the car behind door 2 half of the time (truth: 2/3).
- :class:`BiasedBacktrackingSampler`: the published bias. The same search, but joint
  moves are tried in an order drawn (without replacement) with probability proportional
  to the product over the other roles ``i`` of ``f(s, i, a) + 1/|A|``, where ``f`` is a
  policy function (a network's policy) and ``|A|`` the number of legal moves of role
  ``i``; chance stays uniform.
- :class:`PosteriorSampler`: unbiased and exact. Draws histories with their true
  posterior probability given chance and a model of the other roles' policies:
  ``P(h | observations) ∝ Π_steps Π_{roles ≠ observer} π_role(a_role | s)`` over the
  histories consistent with the observations (the observer's own policy factors are the
  same for every such history and cancel). It runs the exact forward filter over
  distinct states (with back-pointers, so that full histories are drawn exactly by
  backward sampling) and falls back to a particle filter when a step has too many
  distinct states.

Policy models. A :class:`PolicyModel` is called as ``model(game, state, role_index,
legal_moves)`` with the *true* state and returns one non-negative weight per legal move
(normalised by the samplers). In GDL-II a role's information is its observation history,
a function of the full history; the model is keyed by the state instead, which can
express any policy that depends on what the state records (in Meier: the role's dice and
the last claim; a role never knows more than the state), but not one that depends on past
percepts the state has forgotten. Because the model sees only the state, histories that
reach the same state at the same step have the same future, which is what lets the exact
filter merge them; a model must therefore be a pure function of its arguments. The chance
role ``random`` is always uniform over its legal moves and the model is never asked about
it, nor about a role with a single legal move.

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
import time
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt
from cachetools import LRUCache

from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.reasoning.state_machine import JointMove, State
from ggp.search.history import ObservationHistory

__all__ = [
    "OutOfTime",
    "live_roots",
    "SampledHistory",
    "consistent_joint_moves",
    "check_consistent",
    "PolicyModel",
    "PreparedPolicyModel",
    "UniformPolicy",
    "HistorySampler",
    "RejectionSampler",
    "BacktrackingSampler",
    "BiasedBacktrackingSampler",
    "PosteriorSampler",
    "Belief",
    "SamplerMode",
    "make_sampler",
]

logger = logging.getLogger(__name__)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]

#: The names :func:`make_sampler` accepts.
SamplerMode = Literal["rejection", "backtracking", "biased", "posterior"]

#: Entries of the per-sampler cache of policy-model answers.
DEFAULT_POLICY_CACHE_SIZE = 100_000

#: Work items (states, attempts, particles) between two looks at the clock.
_CLOCK_EVERY = 32

#: States per batch handed to a :class:`PreparedPolicyModel`.
_PREPARE_BATCH = 1024

#: Deadlines one step of the exact filter may be stopped at: the next call goes on with
#: particles (a step that needs more calls than this would leave the player behind).
_EXACT_STOPS = 2

#: The fewest particles a deadline thins the particle filter to.
_MIN_PARTICLES = 100


class OutOfTime(Exception):
    """A search step (sampling histories, building a tree) was stopped at its deadline."""


def _check_clock(deadline: float | None, what: str) -> None:
    """Raise :class:`OutOfTime` if ``deadline`` (a ``time.monotonic()`` value) has passed."""
    if deadline is not None and time.monotonic() > deadline:
        raise OutOfTime(what)


@dataclass(frozen=True)
class SampledHistory:
    """One full history consistent with an observation history.

    Attributes:
        states: ``[steps + 1]`` the states from the initial one to the current one.
        joint_moves: ``[steps]`` the joint move played at each step.
    """

    states: tuple[State, ...]
    joint_moves: tuple[JointMove, ...]

    @property
    def state(self) -> State:
        """The current state (the last one)."""
        return self.states[-1]


# --------------------------------------------------------------------------- consistency


def consistent_joint_moves(
    game: Game, state: State, history: ObservationHistory, step: int
) -> list[JointMove]:
    """Every joint move at ``step`` from ``state`` that agrees with ``history``.

    The role's own move is fixed; the others range over their legal moves; a joint move is
    kept when it gives the role the percepts it received at that step. (Whether ``state``
    is terminal is the caller's business.)
    """
    me = game.role_index(history.role)
    own = history.moves[step]
    choices: list[tuple[object, ...]] = []
    for index, role in enumerate(game.roles):
        legal = game.legal_moves(state, role)
        if index == me:
            if own not in legal:
                return []
            choices.append((own,))
        else:
            choices.append(legal)
    seen = history.percepts[step]
    result: list[JointMove] = []
    for joint in itertools.product(*choices):
        moves: JointMove = joint  # type: ignore[assignment]
        if game.percepts(state, moves, history.role) == seen:
            result.append(moves)
    return result


def _format_step(history: ObservationHistory, step: int) -> str:
    seen = " ".join(sorted(map(str, history.percepts[step])))
    return f"step {step + 1} ({history.role} played {history.moves[step]}, saw {{{seen}}})"


def check_consistent(game: Game, history: ObservationHistory, sampled: SampledHistory) -> None:
    """Check that ``sampled`` explains ``history``, replaying it move by move.

    Raises:
        GameError: Naming the first step where ``sampled`` has the wrong length, starts
            elsewhere than the initial state, reaches a terminal state too early, plays an
            illegal move or another move for the role, gives the role other percepts, or
            lists a state that is not the successor of the previous one.
    """
    steps = len(history)
    if len(sampled.joint_moves) != steps or len(sampled.states) != steps + 1:
        raise GameError(
            f"the sampled history has {len(sampled.joint_moves)} joint moves and "
            f"{len(sampled.states)} states; {steps} observations need {steps} and {steps + 1}"
        )
    if sampled.states[0] != game.initial_state():
        raise GameError("the sampled history does not start in the initial state")
    me = game.role_index(history.role)
    for step, (state, joint) in enumerate(zip(sampled.states, sampled.joint_moves, strict=False)):
        where = _format_step(history, step)
        if game.is_terminal(state):
            raise GameError(f"{where}: the sampled history is already in a terminal state")
        if len(joint) != len(game.roles):
            raise GameError(f"{where}: the joint move {joint} has the wrong number of moves")
        for role, move in zip(game.roles, joint, strict=True):
            if move not in game.legal_moves(state, role):
                raise GameError(f"{where}: {move} is not a legal move of {role}")
        if joint[me] != history.moves[step]:
            raise GameError(f"{where}: the sampled history plays {joint[me]} for {history.role}")
        percepts = game.percepts(state, joint, history.role)
        if percepts != history.percepts[step]:
            got = " ".join(sorted(map(str, percepts)))
            raise GameError(f"{where}: the sampled history gives {history.role} {{{got}}}")
        if game.next_state(state, joint) != sampled.states[step + 1]:
            raise GameError(f"{where}: the next state is not the successor of the joint move")


# --------------------------------------------------------------------------- policy models


@runtime_checkable
class PolicyModel(Protocol):
    """A model of how a role moves: weights over its legal moves in a true state.

    Called as ``model(game, state, role_index, legal_moves)``; returns ``[len(legal_moves)]``
    non-negative finite weights, one per move of ``legal_moves`` (in that order), not all
    zero. The samplers normalise them. See the module docstring for what keying a model by
    the true state means in GDL-II; a model must be a pure function of its arguments.
    """

    def __call__(
        self, game: Game, state: State, role: int, legal_moves: tuple[Term, ...], /
    ) -> FloatArray: ...


@runtime_checkable
class PreparedPolicyModel(PolicyModel, Protocol):
    """A policy model that answers faster when told the states it will be asked about
    (a network evaluates them in one batch): the samplers call ``prepare`` with each
    layer's (or the particles') distinct states before asking about them one by one."""

    def prepare(self, game: Game, states: Sequence[State], /) -> None: ...


class UniformPolicy:
    """Every legal move equally likely (the default model of the other roles).

    Example:
        >>> UniformPolicy()(None, None, 0, ("a", "b"))
        array([0.5, 0.5])
    """

    def __call__(
        self, game: Game, state: State, role: int, legal_moves: tuple[Term, ...], /
    ) -> FloatArray:
        return np.full(len(legal_moves), 1.0 / len(legal_moves), dtype=np.float64)

    def __repr__(self) -> str:
        return "UniformPolicy()"


def _weights(raw: object, game: Game, role: int, legal: tuple[Term, ...], what: str) -> FloatArray:
    """``raw`` as ``[len(legal)]`` float64 weights, checked (not normalised)."""
    weights = np.asarray(raw, dtype=np.float64)
    name = game.roles[role]
    if weights.shape != (len(legal),):
        raise GameError(
            f"the {what} gave shape {weights.shape} for {name}'s {len(legal)} legal moves; "
            "it must give one weight per legal move"
        )
    if not np.all(np.isfinite(weights)) or bool((weights < 0).any()):
        raise GameError(
            f"the {what} gave negative or non-finite weights {weights.tolist()} for {name}"
        )
    return weights


class _PublishedBias:
    """``f(s, i, a) + 1/|A|``: the published bias of a policy function ``f``."""

    def __init__(self, function: PolicyModel) -> None:
        self.function = function

    def __call__(
        self, game: Game, state: State, role: int, legal_moves: tuple[Term, ...], /
    ) -> FloatArray:
        raw = self.function(game, state, role, legal_moves)
        f = _weights(raw, game, role, legal_moves, "policy function")
        return f + 1.0 / len(legal_moves)

    def prepare(self, game: Game, states: Sequence[State], /) -> None:
        if isinstance(self.function, PreparedPolicyModel):
            self.function.prepare(game, states)


class _MoveProbabilities:
    """A policy model's normalised answers, checked and cached; chance is uniform."""

    def __init__(self, game: Game, model: PolicyModel, cache_size: int) -> None:
        self.game = game
        self.model = model
        self.chance = game.role_index(game.random_role) if game.random_role is not None else -1
        self._cache: LRUCache[tuple[State, int], FloatArray] | None = (
            LRUCache(maxsize=cache_size) if cache_size > 0 else None
        )

    def __call__(self, state: State, role: int, legal: tuple[Term, ...]) -> FloatArray:
        """``[len(legal)]`` probabilities of ``role``'s legal moves in ``state``."""
        if role == self.chance or len(legal) == 1:
            return np.full(len(legal), 1.0 / len(legal), dtype=np.float64)
        cache = self._cache
        key = (state, role)
        if cache is not None:
            found = cache.get(key)
            if found is not None:
                return found
        weights = _weights(
            self.model(self.game, state, role, legal), self.game, role, legal, "policy model"
        )
        total = float(weights.sum())
        if total <= 0:
            raise GameError(
                f"the policy model gave every legal move of {self.game.roles[role]} weight 0"
            )
        probs: FloatArray = weights / total
        if cache is not None:
            cache[key] = probs
        return probs

    def prepare(self, states: Sequence[State], deadline: float | None) -> None:
        """Tell a :class:`PreparedPolicyModel` which states come next (it skips those it
        knows), in batches of :data:`_PREPARE_BATCH` with a look at the clock before each."""
        if not isinstance(self.model, PreparedPolicyModel):
            return
        for start in range(0, len(states), _PREPARE_BATCH):
            _check_clock(deadline, "the policy model's batch was not started")
            self.model.prepare(self.game, states[start : start + _PREPARE_BATCH])

    def joint(self, state: State, joints: Sequence[JointMove], me: int) -> FloatArray:
        """``[len(joints)]`` the probability of each joint move for every role but ``me``."""
        result = np.ones(len(joints), dtype=np.float64)
        if not joints:
            return result
        for role, name in enumerate(self.game.roles):
            if role == me:
                continue
            legal = self.game.legal_moves(state, name)
            if len(legal) == 1:
                continue
            position = {move: i for i, move in enumerate(legal)}
            probs = self(state, role, legal)
            result *= probs[[position[joint[role]] for joint in joints]]
        return result


def _draw(cumulative: FloatArray, rng: np.random.Generator) -> int:
    """An index drawn with the probabilities whose running sum is ``cumulative``."""
    index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    return min(index, len(cumulative) - 1)


# --------------------------------------------------------------------------- the protocol


@runtime_checkable
class HistorySampler(Protocol):
    """Draws full histories consistent with a role's observations."""

    game: Game

    def sample(
        self,
        history: ObservationHistory,
        rng: np.random.Generator,
        *,
        deadline: float | None = None,
    ) -> SampledHistory:
        """One full history consistent with ``history``.

        Raises:
            GameError: No consistent history exists or none was found within the
                sampler's limits.
            OutOfTime: ``deadline`` (a ``time.monotonic()`` value) passed first.
        """
        ...

    def sample_many(
        self,
        history: ObservationHistory,
        n: int,
        rng: np.random.Generator,
        *,
        deadline: float | None = None,
    ) -> list[tuple[SampledHistory, float]]:
        """``n`` histories with weights summing to 1, ready for ``build_tree(roots=...)``.

        Raises:
            GameError: As :meth:`sample`.
            OutOfTime: ``deadline`` passed first.
        """
        ...


def _check_count(n: int) -> None:
    if n < 1:
        raise ValueError(f"sample_many needs n >= 1, got {n}")


class _IndependentDraws(ABC):
    """``sample_many`` as ``n`` independent calls of ``sample``, each of weight ``1/n``."""

    @abstractmethod
    def sample(
        self,
        history: ObservationHistory,
        rng: np.random.Generator,
        *,
        deadline: float | None = None,
    ) -> SampledHistory: ...

    def sample_many(
        self,
        history: ObservationHistory,
        n: int,
        rng: np.random.Generator,
        *,
        deadline: float | None = None,
    ) -> list[tuple[SampledHistory, float]]:
        """``n`` independent draws, each of weight ``1/n``."""
        _check_count(n)
        return [(self.sample(history, rng, deadline=deadline), 1.0 / n) for _ in range(n)]


# --------------------------------------------------------------------------- rejection


class RejectionSampler(_IndependentDraws):
    """Naive rejection: play forward with the policy model, restart on a wrong percept.

    The observer's moves are fixed as observed (an attempt fails where its move is
    illegal); chance is uniform; every other role draws from ``policy``. An attempt fails
    as soon as the observer's percepts differ or the game ends early. Accepted histories
    follow the exact posterior under ``policy`` (the same distribution as
    :class:`PosteriorSampler`), at a cost that grows with the inverse probability of the
    observations.

    Args:
        game: The rules.
        policy: The model of the other roles (uniform if None).
        max_attempts: Give up (GameError) after this many failed attempts in one call.
        policy_cache_size: Policy-model answers kept, keyed by (state, role); 0: none.
    """

    def __init__(
        self,
        game: Game,
        policy: PolicyModel | None = None,
        *,
        max_attempts: int = 100_000,
        policy_cache_size: int = DEFAULT_POLICY_CACHE_SIZE,
    ) -> None:
        self.game = game
        self.policy: PolicyModel = policy if policy is not None else UniformPolicy()
        self.max_attempts = max_attempts
        self._probabilities = _MoveProbabilities(game, self.policy, policy_cache_size)

    def __repr__(self) -> str:
        return f"RejectionSampler({self.game!r}, {self.policy!r}, max_attempts={self.max_attempts})"

    def _attempt(
        self, history: ObservationHistory, me: int, rng: np.random.Generator
    ) -> SampledHistory | None:
        game = self.game
        state = game.initial_state()
        states = [state]
        joints: list[JointMove] = []
        for step in range(len(history)):
            if game.is_terminal(state):
                return None
            joint: list[Term] = []
            for role, name in enumerate(game.roles):
                legal = game.legal_moves(state, name)
                if role == me:
                    if history.moves[step] not in legal:
                        return None
                    joint.append(history.moves[step])
                elif len(legal) == 1:
                    joint.append(legal[0])
                else:
                    cumulative = np.cumsum(self._probabilities(state, role, legal))
                    joint.append(legal[_draw(cumulative, rng)])
            moves = tuple(joint)
            if game.percepts(state, moves, history.role) != history.percepts[step]:
                return None
            state = game.next_state(state, moves)
            states.append(state)
            joints.append(moves)
        return SampledHistory(tuple(states), tuple(joints))

    def sample(
        self,
        history: ObservationHistory,
        rng: np.random.Generator,
        *,
        deadline: float | None = None,
    ) -> SampledHistory:
        """One history drawn from the posterior, by rejection.

        Raises:
            GameError: No attempt of ``max_attempts`` succeeded.
            OutOfTime: ``deadline`` passed first.
        """
        me = self.game.role_index(history.role)
        for attempt in range(self.max_attempts):
            if attempt % _CLOCK_EVERY == 0:
                _check_clock(deadline, f"rejection sampling stopped after {attempt} attempts")
            found = self._attempt(history, me, rng)
            if found is not None:
                if attempt >= 1000:
                    logger.debug("rejection sampling took %d attempts", attempt + 1)
                return found
        raise GameError(
            f"rejection sampling found no history consistent with the {len(history)} "
            f"observations of {history.role} in {self.max_attempts} attempts: the "
            "observations contradict the rules, or are too unlikely under the policy model "
            "for rejection (use the posterior or backtracking sampler)"
        )


# --------------------------------------------------------------------------- backtracking


class BacktrackingSampler(_IndependentDraws):
    """Random depth-first search for a consistent history, with a cache of dead ends.

    The published training method (see the module docstring); biased, since it picks
    uniformly among the consistent joint moves at each step.

    Args:
        game: The rules.
        max_nodes: Give up (GameError) after expanding this many states in one call.
    """

    def __init__(self, game: Game, max_nodes: int = 1_000_000) -> None:
        self.game = game
        self.max_nodes = max_nodes
        # (state, the observations still to explain) known to lead to no consistent history
        self._dead: set[tuple[State, object]] = set()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.game!r}, max_nodes={self.max_nodes})"

    def _order(
        self, state: State, candidates: list[JointMove], me: int, rng: np.random.Generator
    ) -> list[JointMove]:
        """``candidates`` in the reverse of the order to try them (the last one first)."""
        order = rng.permutation(len(candidates))
        return [candidates[i] for i in order]

    def sample(
        self,
        history: ObservationHistory,
        rng: np.random.Generator,
        *,
        deadline: float | None = None,
    ) -> SampledHistory:
        """One history consistent with ``history``, found by randomised backtracking.

        Raises:
            GameError: No consistent history exists (the observations contradict the rules),
                or none was found within ``max_nodes`` expansions.
            OutOfTime: ``deadline`` passed first.
        """
        game = self.game
        me = game.role_index(history.role)
        steps = len(history)
        states: list[State] = [game.initial_state()]
        joints: list[JointMove] = []
        # Each frame: the candidate joint moves still to try at that step.
        frames: list[list[JointMove]] = []
        expanded = 0
        deepest = 0
        while True:
            depth = len(joints)
            deepest = max(deepest, depth)
            if depth == steps:
                return SampledHistory(tuple(states), tuple(joints))
            if len(frames) == depth:  # first visit of this node
                state = states[-1]
                expanded += 1
                if (expanded - 1) % _CLOCK_EVERY == 0:
                    _check_clock(deadline, f"backtracking stopped after {expanded} states")
                if expanded > self.max_nodes:
                    raise GameError(
                        f"no history consistent with {steps} observations of "
                        f"{history.role} found within {self.max_nodes} states"
                    )
                key = (state, history.suffix_key(depth))
                if key in self._dead or game.is_terminal(state):
                    candidates: list[JointMove] = []
                else:
                    candidates = consistent_joint_moves(game, state, history, depth)
                    if candidates:
                        candidates = self._order(state, candidates, me, rng)
                frames.append(candidates)
            frame = frames[-1]
            if frame:
                joint = frame.pop()
                joints.append(joint)
                states.append(game.next_state(states[-1], joint))
                continue
            # Dead end: remember it and backtrack.
            frames.pop()
            self._dead.add((states[-1], history.suffix_key(depth)))
            if not joints:
                raise GameError(
                    f"the observations of {history.role} are inconsistent with the rules: "
                    f"no legal history explains {_format_step(history, deepest)}"
                )
            joints.pop()
            states.pop()


class BiasedBacktrackingSampler(BacktrackingSampler):
    """Backtracking that tries joint moves in an order biased by a policy function.

    The published bias (Partridge & Thielscher 2022, https://arxiv.org/abs/2207.07195):
    each other role ``i`` plays ``a`` with probability proportional to
    ``f(s, i, a) + 1/|A|``, where ``f`` is ``policy`` (e.g. a network's move
    probabilities) and ``|A|`` the number of ``i``'s legal moves; chance is uniform. At
    each step the consistent joint moves are tried in an order drawn without replacement
    (Gumbel top-k) with probability proportional to the product of those terms, so the
    first try follows the biased distribution restricted to consistent joint moves, and
    a dead end passes on to the next draw.

    Args:
        game: The rules.
        policy: The policy function ``f``: ``[len(legal_moves)]`` non-negative values.
        max_nodes: Give up (GameError) after expanding this many states in one call.
        policy_cache_size: Policy answers kept, keyed by (state, role); 0: none.
    """

    def __init__(
        self,
        game: Game,
        policy: PolicyModel,
        max_nodes: int = 1_000_000,
        *,
        policy_cache_size: int = DEFAULT_POLICY_CACHE_SIZE,
    ) -> None:
        super().__init__(game, max_nodes)
        self.policy = policy
        self._probabilities = _MoveProbabilities(game, _PublishedBias(policy), policy_cache_size)

    def __repr__(self) -> str:
        return (
            f"BiasedBacktrackingSampler({self.game!r}, {self.policy!r}, max_nodes={self.max_nodes})"
        )

    def _order(
        self, state: State, candidates: list[JointMove], me: int, rng: np.random.Generator
    ) -> list[JointMove]:
        weights = self._probabilities.joint(state, candidates, me)
        keys = np.log(weights) + rng.gumbel(size=len(candidates))
        return [candidates[i] for i in np.argsort(keys, kind="stable")]


# --------------------------------------------------------------------------- posterior


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
    :class:`OutOfTime` when it passes, keeping every step filtered so far and the part of
    the step under way, so the next call goes on from there. A step of the exact filter
    stopped at two deadlines is left to the particle filter at the next call, with a
    quarter of ``num_particles`` (a player would otherwise fall further behind at each
    move, and the clock is tight), and a particle step stopped at a
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
        self._probabilities = _MoveProbabilities(game, self.policy, policy_cache_size)
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
            deadline: A ``time.monotonic()`` value: stop with :class:`OutOfTime` after it.

        Raises:
            GameError: No history with positive probability under the model explains
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
            GameError: No history with positive probability under the model explains
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
        _check_count(n)
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
                if partial is not None and partial.step == step and partial.stops >= _EXACT_STOPS:
                    reason = f"step {step + 1} was stopped at {partial.stops} deadlines"
                    count = max(_MIN_PARTICLES, count // 4)  # the clock is tight here
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
            except OutOfTime:
                self._particles = self._thinned(self._particles, rng)
                raise

    def _thinned(self, particles: _Particles, rng: np.random.Generator) -> _Particles:
        """Half as many particles (down to :data:`_MIN_PARTICLES`), drawn by weight, so
        that the step a deadline stopped costs less at the next call."""
        count = max(_MIN_PARTICLES, len(particles.histories) // 2)
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
            if k % _CLOCK_EVERY == 0:
                partial.next_parent = k
                if deadline is not None and time.monotonic() > deadline:
                    partial.stops += 1
                    raise OutOfTime(f"the exact filter stopped at step {step + 1}")
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

    def _no_history(self, history: ObservationHistory, step: int) -> GameError:
        return GameError(
            f"no history with positive probability explains the observations of "
            f"{history.role} up to {_format_step(history, step)}: the observations "
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
        histories = [self._backward(_draw(last.cumulative, rng), rng) for _ in range(count)]
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
        end, so an :class:`OutOfTime` leaves it as it was)."""
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
                if len(options) % _CLOCK_EVERY == 0:
                    _check_clock(deadline, f"the particle filter stopped at step {step + 1}")
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
            joint = candidates[_draw(cumulative, rng)]
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
            GameError: No history explains ``history`` (it contradicts the rules).
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
        except GameError as e:
            raise self._no_history(history, len(history) - 1) from e
        weights = np.full(len(drawn), 1.0 / len(drawn), dtype=np.float64)
        return [h for h, _ in drawn], weights

    def _draw(self, rng: np.random.Generator) -> SampledHistory:
        particles = self._particles
        if particles is not None:
            return particles.histories[_draw(np.cumsum(particles.weights), rng)]
        return self._backward(_draw(self._layers[-1].cumulative, rng), rng)


# --------------------------------------------------------------------------- factory


def make_sampler(
    game: Game, mode: SamplerMode, policy: PolicyModel | None = None
) -> HistorySampler:
    """The sampler of ``mode`` with its default limits.

    Args:
        game: The rules.
        mode: ``"rejection"``, ``"backtracking"``, ``"biased"`` or ``"posterior"``.
        policy: The model of the other roles (rejection, posterior; uniform if None) or
            the policy function ``f`` (biased; required).

    Raises:
        ValueError: An unknown mode, or ``"biased"`` without a policy function.
    """
    if mode == "rejection":
        return RejectionSampler(game, policy)
    if mode == "backtracking":
        return BacktrackingSampler(game)
    if mode == "biased":
        if policy is None:
            raise ValueError("the biased sampler needs a policy function")
        return BiasedBacktrackingSampler(game, policy)
    if mode == "posterior":
        return PosteriorSampler(game, policy)
    raise ValueError(
        f"unknown sampler mode {mode!r}: use rejection, backtracking, biased or posterior"
    )


def live_roots(
    game: Game,
    sampler: HistorySampler,
    history: ObservationHistory,
    samples: int,
    rng: np.random.Generator,
    attempts: int = 3,
    *,
    deadline: float | None = None,
) -> list[tuple[SampledHistory, float]]:
    """``samples`` histories consistent with ``history`` whose state is not terminal.

    A role asked to move knows that the game goes on, which the samplers do not take
    into account (in Blind Tic-Tac-Toe the opponent may have completed a line unseen):
    histories ending in a terminal state are dropped (rejection, so the rest still
    follows the posterior) and more are drawn, up to ``attempts`` rounds. Weights are
    renormalised; an empty list means that every draw had ended. ``deadline`` is passed
    to the sampler (:class:`OutOfTime` when it passes).
    """
    kept: list[SampledHistory] = []
    for _ in range(attempts):
        drawn = sampler.sample_many(history, samples, rng, deadline=deadline)
        kept.extend(h for h, _ in drawn if not game.is_terminal(h.state))
        if len(kept) >= samples:
            break
    kept = kept[:samples]
    return [(h, 1.0 / len(kept)) for h in kept]
