"""The network behind the search seams: leaf values and move probabilities.

:class:`NetEvaluator` implements the search's
:class:`~ggp.search.evaluator.Evaluator` (``evaluate(game, states)``: each role's
expected goal 0..100) and the samplers'
:class:`~ggp.search.sampler.PolicyModel` (``model(game, state, role, legal)``: move
probabilities), from one :class:`~ggp.nn.model.PolicyValueNet`. Predictions are cached
per state (an LRU), and uncached states are predicted in one batch.

:class:`OpponentModel` mixes the network's policy with the uniform one, the model of the
other roles the samplers use during play (the published bias ``f + 1/|A|`` is the mix
0.5 up to normalisation).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch
from cachetools import LRUCache

from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.nn.features import GameEncoding
from ggp.nn.model import PolicyValueNet, masked_log_softmax
from ggp.reasoning.state_machine import State
from ggp.search.evaluator import LeafEstimate

__all__ = ["NetEvaluator", "Prediction", "OpponentModel"]

FloatArray = npt.NDArray[np.float64]

#: States whose predictions are kept.
DEFAULT_CACHE_SIZE = 200_000


@dataclass(frozen=True)
class Prediction:
    """The network's prediction for a batch of states.

    Attributes:
        values: ``[B, R]`` float64, each role's expected goal (0..100).
        policies: ``[P]`` arrays ``[B, M_p]`` float64: move probabilities of each policy
            role over all its moves (0 for illegal moves; all 0 in a terminal state).
    """

    values: FloatArray
    policies: tuple[FloatArray, ...]


class NetEvaluator:
    """Leaf values and move probabilities from a network (see the module docstring).

    Args:
        net: The network (switched to evaluation mode).
        encoding: The game's encoding, as the network was sized for.
        cache_size: Predictions kept, keyed by state; 0 keeps none.
    """

    def __init__(
        self,
        net: PolicyValueNet,
        encoding: GameEncoding,
        cache_size: int = DEFAULT_CACHE_SIZE,
    ) -> None:
        self.net = net.eval()
        self.encoding = encoding
        self.game = encoding.game
        self._cache: LRUCache[State, tuple[FloatArray, tuple[FloatArray, ...]]] | None = (
            LRUCache(maxsize=cache_size) if cache_size > 0 else None
        )
        self.evaluations = 0  # states sent through the network

    def clear_cache(self) -> None:
        """Forget cached predictions (after the weights change)."""
        if self._cache is not None:
            self._cache.clear()

    def _forward(self, states: Sequence[State]) -> Prediction:
        encoding = self.encoding
        x = torch.from_numpy(encoding.encode(states))
        masks = encoding.legal_masks(states)
        self.evaluations += len(states)
        with torch.inference_mode():
            out = self.net(x)
            values = out.values.double().numpy() * 100.0
            policies = tuple(
                masked_log_softmax(logits, torch.from_numpy(mask)).exp().double().numpy() * mask
                for logits, mask in zip(out.policy_logits, masks, strict=True)
            )
        return Prediction(values, policies)

    def predict(self, states: Sequence[State]) -> Prediction:
        """Values and policies for ``states``; only uncached ones go through the net."""
        cache = self._cache
        if cache is None:
            return self._forward(states)
        found: list[tuple[FloatArray, tuple[FloatArray, ...]] | None] = [
            cache.get(s) for s in states
        ]
        missing = [i for i, entry in enumerate(found) if entry is None]
        if missing:
            todo = list(dict.fromkeys(states[i] for i in missing))
            fresh = self._forward(todo)
            computed = {
                state: (fresh.values[j], tuple(p[j] for p in fresh.policies))
                for j, state in enumerate(todo)
            }
            for state, entry in computed.items():
                cache[state] = entry
            for i in missing:
                found[i] = computed[states[i]]
        rows = [entry for entry in found if entry is not None]
        heads = len(self.encoding.policy_sizes)
        values = np.stack([r[0] for r in rows]) if rows else np.zeros((0, self.encoding.num_roles))
        policies = tuple(
            np.stack([r[1][h] for r in rows])
            if rows
            else np.zeros((0, self.encoding.policy_sizes[h]))
            for h in range(heads)
        )
        return Prediction(values, policies)

    def evaluate(
        self, game: Game, states: Sequence[State], deadline: float | None = None
    ) -> LeafEstimate:
        """The :class:`~ggp.search.evaluator.Evaluator` seam: ``values [B, R]`` 0..100
        (one forward pass: ``deadline`` is not needed)."""
        if not states:
            return LeafEstimate(np.zeros((0, self.encoding.num_roles), dtype=np.float64))
        return LeafEstimate(self.predict(states).values)

    def move_probabilities(
        self, states: Sequence[State], role: int, legal_moves: tuple[Term, ...]
    ) -> FloatArray:
        """``[B, len(legal_moves)]`` the policy of role index ``role`` over
        ``legal_moves`` in each state (renormalised; uniform for ``random``)."""
        head = self.encoding.head_of(role)
        if head is None or not states:
            return np.full((len(states), len(legal_moves)), 1.0 / len(legal_moves))
        columns = self.encoding.move_indices(head, legal_moves)
        probs = self.predict(states).policies[head][:, columns]
        totals = probs.sum(axis=1, keepdims=True)
        uniform = np.full_like(probs, 1.0 / len(legal_moves))
        result: FloatArray = np.where(totals > 0, probs / np.where(totals > 0, totals, 1), uniform)
        return result

    def __call__(
        self, game: Game, state: State, role: int, legal_moves: tuple[Term, ...], /
    ) -> FloatArray:
        """The :class:`~ggp.search.sampler.PolicyModel` seam: ``[len(legal_moves)]``."""
        head = self.encoding.head_of(role)
        entry = self._cache.get(state) if self._cache is not None else None
        if head is None or entry is None:
            row: FloatArray = self.move_probabilities([state], role, legal_moves)[0]
            return row
        probs = entry[1][head][self.encoding.move_indices(head, legal_moves)]
        total = float(probs.sum())
        if total > 0:
            cached: FloatArray = probs / total
            return cached
        return np.full(len(legal_moves), 1.0 / len(legal_moves))

    def prepare(self, game: Game, states: Sequence[State], /) -> None:
        """The :class:`~ggp.search.sampler.PreparedPolicyModel` seam: predict ``states``
        in one batch into the cache, so that the calls about them that follow are cheap."""
        if self._cache is not None:
            self.predict(states)

    def __repr__(self) -> str:
        return f"<NetEvaluator {self.encoding.game.description.path} {self.net.shape}>"


class OpponentModel:
    """``(1 - uniform_mix) * network + uniform_mix * uniform``: a model of the other roles.

    Args:
        evaluator: The network.
        uniform_mix: Weight of the uniform policy, 0..1.
    """

    def __init__(self, evaluator: NetEvaluator, uniform_mix: float = 0.5) -> None:
        if not 0.0 <= uniform_mix <= 1.0:
            raise ValueError(f"uniform_mix must be in 0..1, not {uniform_mix}")
        self.evaluator = evaluator
        self.uniform_mix = uniform_mix

    def __call__(
        self, game: Game, state: State, role: int, legal_moves: tuple[Term, ...], /
    ) -> FloatArray:
        net = self.evaluator(game, state, role, legal_moves)
        mixed: FloatArray = (1.0 - self.uniform_mix) * net + self.uniform_mix / len(legal_moves)
        return mixed

    def prepare(self, game: Game, states: Sequence[State], /) -> None:
        """See :meth:`NetEvaluator.prepare`."""
        if self.uniform_mix < 1.0:
            self.evaluator.prepare(game, states)

    def __repr__(self) -> str:
        return f"OpponentModel({self.evaluator!r}, uniform_mix={self.uniform_mix})"
