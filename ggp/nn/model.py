"""The policy-value network: a shared trunk, a value head, one policy head per role.

Input: the grounded state, one feature per base proposition (``[B, F]``). The trunk is
an MLP with residual blocks and layer normalisation. The value head gives every role's
expected goal divided by 100 (a sigmoid, ``[B, R]`` in 0..1); each policy head gives
logits over all the moves of one role (``[B, M_p]``), and :func:`masked_log_softmax`
turns them into log-probabilities over the legal moves only.

The size follows the game (:meth:`NetShape.for_encoding`): the width is the smallest
power of two at least twice the number of inputs and outputs, between 64 and 512.

Example:
    >>> import torch
    >>> shape = NetShape(inputs=5, hidden=8, blocks=1, roles=2, policy_sizes=(3, 4))
    >>> net = PolicyValueNet(shape, torch.Generator().manual_seed(0))
    >>> out = net(torch.zeros(2, 5))
    >>> tuple(out.values.shape), [tuple(p.shape) for p in out.policy_logits]
    ((2, 2), [(2, 3), (2, 4)])
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn

from ggp.nn.features import GameEncoding

__all__ = ["NetShape", "NetOutput", "PolicyValueNet", "masked_log_softmax", "masked_softmax"]

#: The logit given to illegal moves (finite, so that an all-illegal row stays finite).
MASKED_LOGIT = -1e9


@dataclass(frozen=True)
class NetShape:
    """The size of a :class:`PolicyValueNet`.

    Attributes:
        inputs: F, features per state (base propositions).
        hidden: Width of the trunk.
        blocks: Residual blocks in the trunk.
        roles: R, value outputs (every role).
        policy_sizes: ``[P]`` moves of each role with a policy head.
    """

    inputs: int
    hidden: int
    blocks: int
    roles: int
    policy_sizes: tuple[int, ...]

    @classmethod
    def for_encoding(
        cls, encoding: GameEncoding, hidden: int | None = None, blocks: int = 2
    ) -> NetShape:
        """The shape for a game: ``hidden`` None sizes the trunk from the game."""
        if hidden is None:
            wanted = 2 * (encoding.num_inputs + encoding.num_roles + sum(encoding.policy_sizes))
            hidden = min(512, max(64, 1 << max(wanted - 1, 1).bit_length()))
        return cls(
            inputs=encoding.num_inputs,
            hidden=hidden,
            blocks=blocks,
            roles=encoding.num_roles,
            policy_sizes=encoding.policy_sizes,
        )

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict (lists for tuples)."""
        data = asdict(self)
        data["policy_sizes"] = list(self.policy_sizes)
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> NetShape:
        """The inverse of :meth:`to_dict`."""
        return cls(
            inputs=int(data["inputs"]),
            hidden=int(data["hidden"]),
            blocks=int(data["blocks"]),
            roles=int(data["roles"]),
            policy_sizes=tuple(int(x) for x in data["policy_sizes"]),
        )


@dataclass(frozen=True)
class NetOutput:
    """What the network predicts for a batch.

    Attributes:
        values: ``[B, R]`` each role's expected goal / 100, in 0..1.
        value_logits: ``[B, R]`` the values before the sigmoid.
        policy_logits: ``[P]`` tensors ``[B, M_p]``: unmasked move logits per policy role.
    """

    values: torch.Tensor
    value_logits: torch.Tensor
    policy_logits: tuple[torch.Tensor, ...]


class _Block(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.norm = nn.LayerNorm(width)
        self.linear1 = nn.Linear(width, width)
        self.linear2 = nn.Linear(width, width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.linear1(self.norm(x)))
        out: torch.Tensor = x + self.linear2(h)
        return out


class PolicyValueNet(nn.Module):
    """See the module docstring.

    Args:
        shape: The size.
        generator: Draws the initial weights (no global randomness).
    """

    def __init__(self, shape: NetShape, generator: torch.Generator | None = None) -> None:
        super().__init__()
        self.shape = shape
        self.stem = nn.Linear(shape.inputs, shape.hidden)
        self.blocks = nn.ModuleList(_Block(shape.hidden) for _ in range(shape.blocks))
        self.norm = nn.LayerNorm(shape.hidden)
        self.value_head = nn.Linear(shape.hidden, shape.roles)
        self.policy_heads = nn.ModuleList(nn.Linear(shape.hidden, m) for m in shape.policy_sizes)
        self.reset_parameters(generator if generator is not None else torch.Generator())

    def reset_parameters(self, generator: torch.Generator) -> None:
        """Draw fresh weights from ``generator``; heads start small (near-uniform policy,
        values near 50)."""
        with torch.no_grad():
            for module in self.modules():
                if isinstance(module, nn.Linear):
                    bound = 1.0 / module.in_features**0.5
                    module.weight.uniform_(-bound, bound, generator=generator)
                    module.bias.zero_()
            for block in self.blocks:
                assert isinstance(block, _Block)
                block.linear2.weight.mul_(0.1)
            for head in (self.value_head, *self.policy_heads):
                assert isinstance(head, nn.Linear)
                head.weight.mul_(0.1)

    def forward(self, x: torch.Tensor) -> NetOutput:
        """Predict for ``x`` ``[B, F]``."""
        h = self.stem(x)
        for block in self.blocks:
            h = block(h)
        h = torch.relu(self.norm(h))
        value_logits = self.value_head(h)
        return NetOutput(
            values=torch.sigmoid(value_logits),
            value_logits=value_logits,
            policy_logits=tuple(head(h) for head in self.policy_heads),
        )


def masked_log_softmax(logits: torch.Tensor, legal_mask: torch.Tensor) -> torch.Tensor:
    """``[B, M]`` log-probabilities over the legal moves (``legal_mask`` 1 = legal).

    Illegal moves get a log-probability near ``-1e9`` (their probability is 0). A row
    with no legal move gives finite values (uniform); callers ignore such rows.

    Example:
        >>> import torch
        >>> p = masked_log_softmax(torch.zeros(1, 3), torch.tensor([[True, False, True]])).exp()
        >>> [round(float(x), 3) for x in p[0]]
        [0.5, 0.0, 0.5]
    """
    masked = logits.masked_fill(~legal_mask, MASKED_LOGIT)
    result: torch.Tensor = torch.log_softmax(masked, dim=-1)
    return result


def masked_softmax(logits: torch.Tensor, legal_mask: torch.Tensor) -> torch.Tensor:
    """``[B, M]`` probabilities over the legal moves (``legal_mask`` 1 = legal), 0 for
    illegal moves and in a row without a legal move (the inference-time
    :func:`masked_log_softmax`, in one pass).

    Example:
        >>> import torch
        >>> p = masked_softmax(torch.zeros(2, 3), torch.tensor([[True, False, True], [False] * 3]))
        >>> [[round(float(x), 3) for x in row] for row in p]
        [[0.5, 0.0, 0.5], [0.0, 0.0, 0.0]]
    """
    probs = torch.softmax(logits.masked_fill(~legal_mask, MASKED_LOGIT), dim=-1)
    result: torch.Tensor = probs.masked_fill_(~legal_mask.any(dim=-1, keepdim=True), 0.0)
    return result
