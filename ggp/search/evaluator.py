"""The leaf-evaluator seam: how depth-limited search values the states at its horizon.

Search takes any :class:`Evaluator`; the trained network plugs in from outside (search
never imports the network code), as open_spiel's ``mcts.Evaluator`` does.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np
import numpy.typing as npt

from ggp.game import Game
from ggp.reasoning.state_machine import State

__all__ = [
    "LeafEstimate",
    "Evaluator",
    "TerminalEvaluator",
    "terminal_values",
    "RolloutEvaluator",
    "MixedEvaluator",
]


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


@runtime_checkable
class TerminalEvaluator(Evaluator, Protocol):
    """An evaluator whose scale differs from the goals', so that it also values the
    terminal states (the searches otherwise take their goals): the Battlesnake heuristic
    keeps live snakes' values above every death, as the IDAPOS paper's own-death penalty
    does, where the rules' goals make a draw by mutual kill worth an even position."""

    def terminal_values(self, game: Game, states: Sequence[State]) -> LeafEstimate:
        """Each role's value in each of ``states`` (all terminal)."""
        ...


def terminal_values(
    evaluator: Evaluator, game: Game, state: State, goals: Sequence[int]
) -> tuple[float, ...]:
    """The value of terminal ``state`` for a search with ``evaluator``: its goals, or what
    a :class:`TerminalEvaluator` makes of it."""
    if isinstance(evaluator, TerminalEvaluator):
        row = evaluator.terminal_values(game, [state]).values[0]
        return tuple(float(v) for v in row)
    return tuple(float(g) for g in goals)


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

    def __repr__(self) -> str:
        return f"RolloutEvaluator({self.playouts!r})"


class MixedEvaluator:
    """A weighted mean of two evaluators' values: ``(1 - weight) * first + weight *
    second``, as AlphaGo mixed its value network with a fast rollout (Silver et al.,
    *Mastering the game of Go with deep neural networks and tree search*, Nature 2016,
    https://doi.org/10.1038/nature16961, the mixing parameter lambda, 0.5 there).

    Args:
        first: One evaluator (e.g. the network).
        second: The other (e.g. :class:`RolloutEvaluator`).
        weight: The weight of ``second``, in 0..1.

    Example:
        >>> from ggp.game import Game
        >>> game = Game.from_file("games/tictactoe.gdl")
        >>> mixed = MixedEvaluator(RolloutEvaluator(1), RolloutEvaluator(1), 0.25)
        >>> mixed.evaluate(game, [game.initial_state()]).values.shape
        (1, 2)
    """

    def __init__(self, first: Evaluator, second: Evaluator, weight: float) -> None:
        if not 0.0 <= weight <= 1.0:
            raise ValueError(f"weight must be in 0..1, not {weight}")
        self.first = first
        self.second = second
        self.weight = weight

    def evaluate(
        self, game: Game, states: Sequence[State], deadline: float | None = None
    ) -> LeafEstimate:
        first = self.first.evaluate(game, states, deadline).values
        second = self.second.evaluate(game, states, deadline).values
        return LeafEstimate((1.0 - self.weight) * first + self.weight * second)

    def __repr__(self) -> str:
        return f"MixedEvaluator({self.first!r}, {self.second!r}, {self.weight!r})"
