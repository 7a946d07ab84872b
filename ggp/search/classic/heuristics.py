"""Generic GDL evaluations for states at the depth limit (the :class:`Evaluator` seam).

A depth-limited search values a non-terminal state at its horizon with an
:class:`~ggp.search.evaluator.Evaluator`: each role's expected goal, 0..100. Terminal
states are always valued by their goals (the search does that itself). Here are the
evaluators that need nothing but the rules; random playouts
(:class:`~ggp.search.evaluator.RolloutEvaluator`) and the trained network
(:class:`~ggp.nn.net_evaluator.NetEvaluator`, plugged in from outside) are the others.

- :class:`GoalEvaluator`: the goal relation read in the non-terminal state (many GDL
  games define goals that grow with progress, such as a piece count).
- :class:`HeuristicEvaluator`: the generic GDL heuristic of early general game players
  (Clune 2007, https://cdn.aaai.org/AAAI/2007/AAAI07-189.pdf: goal proximity and
  mobility): each role's goal advantage over the other players and its share of the
  legal moves, blended and kept inside (10, 90), so that a heuristic value never looks
  like a proven win or loss.

Mobility counts legal moves in the state itself. In a turn-taking game only the mover
has more than one (the others play ``noop``), so the term measures the mover's freedom:
leaves where the opponent is to move are better for us the fewer moves it has, and
leaves of one depth are compared with one another at the same parity.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from ggp.game import Game
from ggp.reasoning.state_machine import State
from ggp.search.evaluator import LeafEstimate

__all__ = ["GoalEvaluator", "HeuristicEvaluator", "TerminalOnlyEvaluator"]

FloatArray = npt.NDArray[np.float64]


class GoalEvaluator:
    """Values a state by the goal relation in it (GDL games may define goals everywhere).

    Example:
        >>> from ggp.game import Game
        >>> game = Game.from_file("games/tictactoe.gdl")
        >>> GoalEvaluator().evaluate(game, [game.initial_state()]).values
        array([[0., 0.]])
    """

    def evaluate(
        self, game: Game, states: Sequence[State], deadline: float | None = None
    ) -> LeafEstimate:
        values = np.array([game.goals(s) for s in states], dtype=np.float64)
        return LeafEstimate(values.reshape(len(states), len(game.roles)))

    def __repr__(self) -> str:
        return "GoalEvaluator()"


class TerminalOnlyEvaluator:
    """Values every non-terminal state at ``value`` for every role: a search with it
    learns only from the terminal states it reaches (the "terminal goals" evaluation).

    Args:
        value: The value of any non-terminal state, 0..100.
    """

    def __init__(self, value: float = 50.0) -> None:
        self.value = value

    def evaluate(
        self, game: Game, states: Sequence[State], deadline: float | None = None
    ) -> LeafEstimate:
        return LeafEstimate(np.full((len(states), len(game.roles)), self.value))

    def __repr__(self) -> str:
        return f"TerminalOnlyEvaluator({self.value!r})"


class HeuristicEvaluator:
    """The generic GDL heuristic: goal advantage and mobility (see the module docstring).

    For player role ``r`` with goal ``g_r`` and ``m_r`` legal moves, against the mean of
    the other players (``g_o``, ``m_o``)::

        goal_term     = (g_r - g_o) / 100                    in [-1, 1]
        mobility_term = (m_r - m_o) / (m_r + m_o)            in (-1, 1)
        value_r       = 50 + 40 * (goal_weight * goal_term + mobility_weight * mobility_term)

    with the weights normalised to sum 1, so values lie in [10, 90]. ``random`` gets 0.

    Args:
        goal_weight: Weight of the goal advantage.
        mobility_weight: Weight of the mobility advantage.

    Example:
        >>> from ggp.game import Game
        >>> game = Game.from_file("games/tictactoe.gdl")
        >>> HeuristicEvaluator().evaluate(game, [game.initial_state()]).values
        array([[66., 34.]])
    """

    def __init__(self, goal_weight: float = 0.5, mobility_weight: float = 0.5) -> None:
        total = goal_weight + mobility_weight
        if goal_weight < 0 or mobility_weight < 0 or total <= 0:
            raise ValueError(
                f"weights must be >= 0 and not both 0 (got {goal_weight}, {mobility_weight})"
            )
        self.goal_weight = goal_weight / total
        self.mobility_weight = mobility_weight / total

    def evaluate(
        self, game: Game, states: Sequence[State], deadline: float | None = None
    ) -> LeafEstimate:
        roles = len(game.roles)
        values = np.zeros((len(states), roles), dtype=np.float64)
        if not states:
            return LeafEstimate(values)
        players = [game.role_index(r) for r in game.player_roles]
        goals = np.array([game.goals(s) for s in states], dtype=np.float64)[:, players]
        mobility = np.array(
            [
                [len(moves) for moves in game.legal_moves_many(states, game.roles[r])]
                for r in players
            ],
            dtype=np.float64,
        ).T
        n = len(players)
        if n == 1:
            goal_term = goals / 100.0 * 2.0 - 1.0
            mobility_term = np.zeros_like(goal_term)
        else:
            other_goals = (goals.sum(axis=1, keepdims=True) - goals) / (n - 1)
            other_mobility = (mobility.sum(axis=1, keepdims=True) - mobility) / (n - 1)
            goal_term = (goals - other_goals) / 100.0
            mobility_term = (mobility - other_mobility) / np.maximum(mobility + other_mobility, 1.0)
        blended = self.goal_weight * goal_term + self.mobility_weight * mobility_term
        values[:, players] = 50.0 + 40.0 * np.clip(blended, -1.0, 1.0)
        return LeafEstimate(values)

    def __repr__(self) -> str:
        return (
            f"HeuristicEvaluator(goal_weight={self.goal_weight!r}, "
            f"mobility_weight={self.mobility_weight!r})"
        )
