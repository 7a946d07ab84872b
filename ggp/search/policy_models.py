"""Policy models: how the samplers weigh the other roles' moves.

A :class:`PolicyModel` is called as ``model(game, state, role_index, legal_moves)`` with
the *true* state and returns one non-negative weight per legal move (normalised by the
samplers). In GDL-II a role's information is its observation history, a function of the
full history; the model is keyed by the state instead, which can express any policy that
depends on what the state records (in Meier: the role's dice and the last claim; a role
never knows more than the state), but not one that depends on past percepts the state has
forgotten. Because the model sees only the state, histories that reach the same state at
the same step have the same future, which is what lets the exact filter
(:mod:`ggp.search.posterior`) merge them; a model must therefore be a pure function of its
arguments. The chance role ``random`` is always uniform over its legal moves and the
model is never asked about it, nor about a role with a single legal move.

:class:`MoveProbabilities` is the samplers' view of a model: its answers checked,
normalised and cached, chance uniform. :class:`PublishedBias` turns a policy function into
the bias of the published backtracking sampler.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt
from cachetools import LRUCache

from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.reasoning.state_machine import JointMove, State
from ggp.search import clock

__all__ = [
    "PolicyModel",
    "PreparedPolicyModel",
    "UniformPolicy",
    "PublishedBias",
    "MoveProbabilities",
    "DEFAULT_POLICY_CACHE_SIZE",
    "draw_index",
]

FloatArray = npt.NDArray[np.float64]

#: Entries of the per-sampler cache of policy-model answers.
DEFAULT_POLICY_CACHE_SIZE = 100_000

#: States per batch handed to a :class:`PreparedPolicyModel`.
PREPARE_BATCH = 1024


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


class PublishedBias:
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


class MoveProbabilities:
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
        knows), in batches of :data:`PREPARE_BATCH` with a look at the clock before each."""
        if not isinstance(self.model, PreparedPolicyModel):
            return
        for start in range(0, len(states), PREPARE_BATCH):
            clock.check(deadline, "the policy model's batch was not started")
            self.model.prepare(self.game, states[start : start + PREPARE_BATCH])

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


def draw_index(cumulative: FloatArray, rng: np.random.Generator) -> int:
    """An index drawn with the probabilities whose running sum is ``cumulative``."""
    index = int(np.searchsorted(cumulative, rng.random() * cumulative[-1], side="right"))
    return min(index, len(cumulative) - 1)
