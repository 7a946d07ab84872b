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

import copy
import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt
import torch

from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.nn.features import GameEncoding
from ggp.nn.model import PolicyValueNet, masked_softmax
from ggp.reasoning.state_machine import State
from ggp.search.evaluator import LeafEstimate

__all__ = ["NetEvaluator", "Prediction", "OpponentModel", "PRECISIONS", "bfloat16_is_fast"]

FloatArray = npt.NDArray[np.float64]

#: States whose predictions are kept.
DEFAULT_CACHE_SIZE = 200_000

#: The forward pass's precisions (:class:`NetEvaluator`).
PRECISIONS = ("float32", "bfloat16")


def bfloat16_is_fast() -> bool:
    """Whether this CPU computes bfloat16 natively (AVX512-BF16 or AMX): where it does
    not, ``torch.autocast`` emulates it, slower than float32."""
    cpu = torch.cpu
    checks = ("_is_avx512_bf16_supported", "_is_amx_tile_supported")
    return any(bool(getattr(cpu, name, lambda: False)()) for name in checks)


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


_Entry = tuple[FloatArray, tuple[FloatArray, ...]]


class _RecentPredictions:
    """The predictions of the states seen last: two generations of dicts, the newer
    replacing the older when it holds half of ``maxsize`` (a read of an older entry
    copies it into the newer). Nearly an LRU cache of ``maxsize / 2`` to ``maxsize``
    entries at a plain dict's cost: ``cachetools.LRUCache``'s bookkeeping was 8% of a
    breakthrough self-play step, a third of the search tree's own time."""

    def __init__(self, maxsize: int) -> None:
        self.half = max(maxsize // 2, 1)
        self._new: dict[State, _Entry] = {}
        self._old: dict[State, _Entry] = {}

    def get(self, state: State) -> _Entry | None:
        entry = self._new.get(state)
        if entry is None:
            entry = self._old.get(state)
            if entry is not None:
                self[state] = entry
        return entry

    def __setitem__(self, state: State, entry: _Entry) -> None:
        if len(self._new) >= self.half:
            self._old, self._new = self._new, {}
        self._new[state] = entry

    def __len__(self) -> int:
        return len(self._new) + len(self._old)

    def clear(self) -> None:
        self._new.clear()
        self._old.clear()


class NetEvaluator:
    """Leaf values and move probabilities from a network (see the module docstring).

    Args:
        net: The network (switched to evaluation mode).
        encoding: The game's encoding, as the network was sized for.
        cache_size: Predictions kept, keyed by state, the most recently used (half to
            all of this many); 0 keeps none.
        precision: ``float32``, or ``bfloat16`` to run the forward pass on a bfloat16
            copy of the network (values to about 3 significant digits; on a CPU with
            AVX512-BF16 or AMX about twice as fast a state in batches of 64 or more, and
            slower than ``float32`` without: :func:`bfloat16_is_fast`).
    """

    def __init__(
        self,
        net: PolicyValueNet,
        encoding: GameEncoding,
        cache_size: int = DEFAULT_CACHE_SIZE,
        precision: str = "float32",
    ) -> None:
        if precision not in PRECISIONS:
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
        self.precision = precision
        self.net = net.eval()
        self._bfloat16_net: PolicyValueNet | None = None
        self.encoding = encoding
        self.game = encoding.game
        self._cache = _RecentPredictions(cache_size) if cache_size > 0 else None
        self.evaluations = 0  # states sent through the network

    def clear_cache(self) -> None:
        """Forget cached predictions and the bfloat16 copy of the network (call it after
        the weights change)."""
        if self._cache is not None:
            self._cache.clear()
        self._bfloat16_net = None

    def _inference_net(self) -> PolicyValueNet:
        """The network in :attr:`precision`: for ``bfloat16`` a copy with bfloat16
        weights (faster than ``torch.autocast``, which casts the weights every call)."""
        if self.precision != "bfloat16":
            return self.net
        if self._bfloat16_net is None:
            self._bfloat16_net = copy.deepcopy(self.net).to(torch.bfloat16).eval()
        return self._bfloat16_net

    def _forward(self, states: Sequence[State]) -> Prediction:
        encoding = self.encoding
        net = self._inference_net()
        x = torch.from_numpy(encoding.encode(states)).to(net.stem.weight.dtype)
        masks = encoding.legal_masks(states)
        self.evaluations += len(states)
        with torch.inference_mode():
            out = net(x)
            values = out.values.double().numpy() * 100.0
            policies = tuple(
                masked_softmax(logits.float(), torch.from_numpy(mask)).double().numpy()
                for logits, mask in zip(out.policy_logits, masks, strict=True)
            )
        return Prediction(values, policies)

    def predict(self, states: Sequence[State]) -> Prediction:
        """Values and policies for ``states``; only uncached ones go through the net."""
        cache = self._cache
        if cache is None:
            return self._forward(states)
        found: list[_Entry | None] = [cache.get(s) for s in states]
        missing = [i for i, entry in enumerate(found) if entry is None]
        if missing:
            todo = list(dict.fromkeys(states[i] for i in missing))
            fresh = self._forward(todo)
            heads = zip(*fresh.policies, strict=True) if fresh.policies else itertools.repeat(())
            computed = dict(zip(todo, zip(fresh.values, heads, strict=False), strict=True))
            for state, entry in computed.items():
                cache[state] = entry
            if len(todo) == len(states):  # all new and distinct: as computed
                return fresh
            for i in missing:
                found[i] = computed[states[i]]
        rows = [entry for entry in found if entry is not None]
        values = np.stack([r[0] for r in rows]) if rows else np.zeros((0, self.encoding.num_roles))
        policies = tuple(
            np.stack([r[1][h] for r in rows]) if rows else np.zeros((0, size))
            for h, size in enumerate(self.encoding.policy_sizes)
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
