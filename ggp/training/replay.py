"""Training positions and the replay buffer.

A position is one true state of a self-play game with its targets: for every role with
a choice, the CFR policy it played from; for every role, the value target (the game's
outcome, optionally mixed with CFR's value of the true state). Columns of the policy
arrays are the policy heads' moves laid end to end (head ``p`` at
``offsets[p]:offsets[p+1]``).

Example:
    >>> import numpy as np
    >>> buffer = ReplayBuffer(capacity=3, num_inputs=2, policy_sizes=(2,), roles=1)
    >>> buffer.add(Positions.empty(2, (2,), 1))
    >>> len(buffer)
    0
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ggp.nn.checkpoint import atomic_write_bytes

__all__ = ["Positions", "ReplayBuffer"]


@dataclass(frozen=True)
class Positions:
    """A batch of N training positions.

    Attributes:
        features: ``[N, F]`` uint8, the state's base propositions (0/1).
        legal: ``[N, M]`` bool, the legal moves of every policy head (M = sum of sizes).
        policy: ``[N, M]`` float32, the policy targets (rows sum to 1 per head that has a
            target, 0 elsewhere).
        has_policy: ``[N, P]`` bool, which heads have a target.
        value: ``[N, R]`` float32, each role's value target (goal / 100).
    """

    features: npt.NDArray[np.uint8]
    legal: npt.NDArray[np.bool_]
    policy: npt.NDArray[np.float32]
    has_policy: npt.NDArray[np.bool_]
    value: npt.NDArray[np.float32]

    def __len__(self) -> int:
        return len(self.features)

    @classmethod
    def empty(cls, num_inputs: int, policy_sizes: tuple[int, ...], roles: int) -> Positions:
        """No positions, with the right shapes."""
        m = sum(policy_sizes)
        return cls(
            np.zeros((0, num_inputs), np.uint8),
            np.zeros((0, m), bool),
            np.zeros((0, m), np.float32),
            np.zeros((0, len(policy_sizes)), bool),
            np.zeros((0, roles), np.float32),
        )

    @classmethod
    def concatenate(cls, parts: list[Positions]) -> Positions:
        """The positions of ``parts`` in order (at least one part)."""
        return cls(
            np.concatenate([p.features for p in parts]),
            np.concatenate([p.legal for p in parts]),
            np.concatenate([p.policy for p in parts]),
            np.concatenate([p.has_policy for p in parts]),
            np.concatenate([p.value for p in parts]),
        )


class ReplayBuffer:
    """A ring buffer of positions; uniform mini-batches.

    Args:
        capacity: Positions kept (the oldest are overwritten).
        num_inputs: F.
        policy_sizes: ``[P]`` moves per policy head.
        roles: R.
    """

    def __init__(
        self, capacity: int, num_inputs: int, policy_sizes: tuple[int, ...], roles: int
    ) -> None:
        self.capacity = capacity
        self.policy_sizes = policy_sizes
        m = sum(policy_sizes)
        self._data = Positions(
            np.zeros((capacity, num_inputs), np.uint8),
            np.zeros((capacity, m), bool),
            np.zeros((capacity, m), np.float32),
            np.zeros((capacity, len(policy_sizes)), bool),
            np.zeros((capacity, roles), np.float32),
        )
        self._size = 0
        self._next = 0
        self.added = 0  # positions ever added

    def __len__(self) -> int:
        return self._size

    def add(self, positions: Positions) -> None:
        """Append ``positions`` (overwriting the oldest when full)."""
        n = len(positions)
        if n == 0:
            return
        if n > self.capacity:
            positions = Positions(*(getattr(positions, f)[-self.capacity :] for f in _FIELDS))
            n = self.capacity
        rows = (self._next + np.arange(n)) % self.capacity
        for name in _FIELDS:
            getattr(self._data, name)[rows] = getattr(positions, name)
        self._next = int((self._next + n) % self.capacity)
        self._size = min(self._size + n, self.capacity)
        self.added += n

    def sample(self, batch_size: int, rng: np.random.Generator) -> Positions:
        """``batch_size`` positions drawn uniformly with replacement.

        Raises:
            ValueError: The buffer is empty.
        """
        if self._size == 0:
            raise ValueError("the replay buffer is empty")
        rows = rng.integers(self._size, size=batch_size)
        return Positions(*(getattr(self._data, name)[rows] for name in _FIELDS))

    def contents(self) -> Positions:
        """Every stored position, oldest first (copies)."""
        if self._size < self.capacity:
            rows = np.arange(self._size)
        else:
            rows = (self._next + np.arange(self.capacity)) % self.capacity
        return Positions(*(getattr(self._data, name)[rows] for name in _FIELDS))

    def save(self, path: Path) -> None:
        """Write the contents to ``path`` (compressed ``.npz``), atomically."""
        import io

        data = self.contents()
        buffer = io.BytesIO()
        np.savez_compressed(
            buffer, added=np.array(self.added), **{name: getattr(data, name) for name in _FIELDS}
        )
        atomic_write_bytes(path, buffer.getvalue())

    def load(self, path: Path) -> None:
        """Add the positions saved at ``path`` (nothing if the file is absent)."""
        if not path.is_file():
            return
        with np.load(path) as data:
            positions = Positions(*(data[name] for name in _FIELDS))
            added = int(data["added"])
        self.add(positions)
        self.added = added


_FIELDS = ("features", "legal", "policy", "has_policy", "value")
