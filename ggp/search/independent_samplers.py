"""Samplers that draw each history on its own: rejection and backtracking.

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

Their ``sample_many`` is ``n`` independent calls of ``sample``, each of weight ``1/n``.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod

import numpy as np

from ggp.errors import NoConsistentHistoryError
from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.reasoning.state_machine import JointMove, State
from ggp.search import clock
from ggp.search.consistency import SampledHistory, consistent_joint_moves, format_step
from ggp.search.history import ObservationHistory
from ggp.search.policy_models import (
    DEFAULT_POLICY_CACHE_SIZE,
    MoveProbabilities,
    PolicyModel,
    PublishedBias,
    UniformPolicy,
    draw_index,
)

__all__ = [
    "RejectionSampler",
    "BacktrackingSampler",
    "BiasedBacktrackingSampler",
    "check_count",
]

logger = logging.getLogger(__name__)


def check_count(n: int) -> None:
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
        check_count(n)
        return [(self.sample(history, rng, deadline=deadline), 1.0 / n) for _ in range(n)]


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
        max_attempts: Give up (NoConsistentHistoryError) after this many failed attempts
            in one call.
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
        self._probabilities = MoveProbabilities(game, self.policy, policy_cache_size)

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
                    joint.append(legal[draw_index(cumulative, rng)])
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
            NoConsistentHistoryError: No attempt of ``max_attempts`` succeeded.
            OutOfTime: ``deadline`` passed first.
        """
        me = self.game.role_index(history.role)
        for attempt in range(self.max_attempts):
            if attempt % clock.CHECK_EVERY == 0:
                clock.check(deadline, f"rejection sampling stopped after {attempt} attempts")
            found = self._attempt(history, me, rng)
            if found is not None:
                if attempt >= 1000:
                    logger.debug("rejection sampling took %d attempts", attempt + 1)
                return found
        raise NoConsistentHistoryError(
            f"rejection sampling found no history consistent with the {len(history)} "
            f"observations of {history.role} in {self.max_attempts} attempts: the "
            "observations contradict the rules, or are too unlikely under the policy model "
            "for rejection (use the posterior or backtracking sampler)"
        )


class BacktrackingSampler(_IndependentDraws):
    """Random depth-first search for a consistent history, with a cache of dead ends.

    The published training method (see the module docstring); biased, since it picks
    uniformly among the consistent joint moves at each step.

    Args:
        game: The rules.
        max_nodes: Give up (NoConsistentHistoryError) after expanding this many states in
            one call.
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
            NoConsistentHistoryError: No consistent history exists (the observations
                contradict the rules), or none was found within ``max_nodes`` expansions.
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
                if (expanded - 1) % clock.CHECK_EVERY == 0:
                    clock.check(deadline, f"backtracking stopped after {expanded} states")
                if expanded > self.max_nodes:
                    raise NoConsistentHistoryError(
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
                raise NoConsistentHistoryError(
                    f"the observations of {history.role} are inconsistent with the rules: "
                    f"no legal history explains {format_step(history, deepest)}"
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
        max_nodes: Give up (NoConsistentHistoryError) after expanding this many states in
            one call.
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
        self._probabilities = MoveProbabilities(game, PublishedBias(policy), policy_cache_size)

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
