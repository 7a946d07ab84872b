"""The leaf-evaluator seam: how depth-limited search values the states at its horizon.

Search takes any :class:`Evaluator`; the trained network plugs in from outside (search
never imports the network code), as open_spiel's ``mcts.Evaluator`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
import numpy.typing as npt

from ggp.game import Game
from ggp.reasoning.state_machine import State

__all__ = ["LeafEstimate", "Evaluator", "RolloutEvaluator"]


@dataclass(frozen=True)
class LeafEstimate:
    """Values of a batch of states.

    Attributes:
        values: ``[B, num_roles]`` float64: each role's expected goal (0..100).
    """

    values: npt.NDArray[np.float64]


class Evaluator(Protocol):
    """Values states that search does not expand further."""

    def evaluate(
        self, game: Game, states: Sequence[State], deadline: float | None = None
    ) -> LeafEstimate:
        """Each role's expected goal in each of ``states`` (none of them terminal).

        An evaluator that takes long (random playouts through the prover) stops at
        ``deadline`` (a ``time.monotonic()`` value), its values then partial: the caller
        checks its clock and does not use them.
        """
        ...


class RolloutEvaluator:
    """The default evaluator: the mean goals of uniformly random playouts.

    Args:
        playouts: Playouts per state.
        rng: The source of randomness.
    """

    def __init__(self, playouts: int = 16, rng: np.random.Generator | None = None) -> None:
        self.playouts = playouts
        self.rng = rng if rng is not None else np.random.default_rng(0)

    def evaluate(
        self, game: Game, states: Sequence[State], deadline: float | None = None
    ) -> LeafEstimate:
        values = game.random_playouts(states, self.playouts, self.rng, deadline=deadline)
        return LeafEstimate(values)
