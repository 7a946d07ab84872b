"""What the network sees and predicts for a game, derived from its propositional network.

:class:`GameEncoding` fixes, for one game, the network's input (one feature per base
proposition: 1.0 when it is true in the state — the full grounded state, as in the
published system) and its outputs (every role's expected goal; for each role but
``random``, one policy logit per move the role can ever make, in the order of
``Game.all_moves(role)``). Nothing here is specific to a game.

Example:
    >>> from pathlib import Path
    >>> import ggp
    >>> from ggp.game import Game
    >>> game = Game.from_file(Path(ggp.__file__).parents[1] / "games" / "montyhall.gdl")
    >>> encoding = GameEncoding(game)
    >>> encoding.num_inputs, encoding.policy_sizes
    (13, (5,))
    >>> encoding.encode([game.initial_state()]).shape
    (1, 13)
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.terms import Const, Term
from ggp.reasoning.state_machine import State

__all__ = ["GameEncoding", "game_digest", "EncodingSignature"]


def game_digest(game: Game) -> str:
    """A SHA-256 hex digest of the game's rules (comments and layout do not count)."""
    text = "\n".join(str(rule) for rule in game.description.rules)
    return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True)
class EncodingSignature:
    """What a trained network was sized for: saved with checkpoints, checked on load.

    Attributes:
        game_digest: :func:`game_digest` of the game.
        roles: ``[R]`` role names.
        policy_roles: ``[P]`` the roles with a policy head (all but ``random``).
        num_inputs: F, the number of base propositions.
        policy_sizes: ``[P]`` the number of moves of each policy role.
    """

    game_digest: str
    roles: tuple[str, ...]
    policy_roles: tuple[str, ...]
    num_inputs: int
    policy_sizes: tuple[int, ...]


class GameEncoding:
    """The network's view of one game (see the module docstring).

    Args:
        game: A game played by the propnet reasoner.

    Raises:
        GameError: The game runs on the reference prover (no grounded base propositions
            to size a network from).
    """

    def __init__(self, game: Game) -> None:
        base = game.base_propositions
        if base is None:
            raise GameError(
                f"{game.description.path} runs on the reference prover: the network needs "
                "the propnet's grounded base propositions"
            )
        self.game = game
        self.base: tuple[Term, ...] = base
        self.roles: tuple[Const, ...] = game.roles
        #: Indices (into ``roles``) of the roles with a policy head.
        self.policy_roles: tuple[int, ...] = tuple(game.role_index(r) for r in game.player_roles)
        self.moves: tuple[tuple[Term, ...], ...] = tuple(
            game.all_moves(self.roles[r]) or () for r in self.policy_roles
        )
        self._move_index = tuple({m: i for i, m in enumerate(ms)} for ms in self.moves)
        self._head_of_role = {r: h for h, r in enumerate(self.policy_roles)}
        self.signature = EncodingSignature(
            game_digest=game_digest(game),
            roles=tuple(r.name for r in self.roles),
            policy_roles=tuple(self.roles[r].name for r in self.policy_roles),
            num_inputs=len(self.base),
            policy_sizes=tuple(len(m) for m in self.moves),
        )

    @property
    def num_inputs(self) -> int:
        """F: one input per base proposition."""
        return len(self.base)

    @property
    def num_roles(self) -> int:
        """R: value outputs, one per role (``random`` included)."""
        return len(self.roles)

    @property
    def policy_sizes(self) -> tuple[int, ...]:
        """``[P]`` moves per policy head."""
        return self.signature.policy_sizes

    def head_of(self, role: int) -> int | None:
        """The policy head of role index ``role`` (None for ``random``)."""
        return self._head_of_role.get(role)

    def move_indices(self, head: int, moves: Sequence[Term]) -> npt.NDArray[np.int64]:
        """``[len(moves)]`` the columns of ``moves`` in policy head ``head``."""
        index = self._move_index[head]
        return np.array([index[m] for m in moves], dtype=np.int64)

    def encode(self, states: Sequence[State]) -> npt.NDArray[np.float32]:
        """``[B, F]`` float32: 1.0 where a base proposition is true."""
        return self.game.state_bits(states).astype(np.float32)

    def encode_bits(self, states: Sequence[State]) -> npt.NDArray[np.uint8]:
        """``[B, F]`` uint8 0/1 (compact, for replay buffers)."""
        return self.game.state_bits(states).view(np.uint8)

    def legal_masks(self, states: Sequence[State]) -> list[npt.NDArray[np.bool_]]:
        """Per policy head, ``[B, M_p]`` bool: 1 = legal (all 0 in a terminal state)."""
        game = self.game
        bits = game.legal_bits(states)
        terminal = [b for b, state in enumerate(states) if game.is_terminal(state)]
        masks = [np.array(bits[role], dtype=bool) for role in self.policy_roles]
        for mask in masks:
            mask[terminal] = False
        return masks
