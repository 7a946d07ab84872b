"""Sampling full game histories consistent with what one role has observed.

A history is consistent with a role's :class:`~ggp.search.history.ObservationHistory` when,
at every step, the joint move is legal, the role's own move is the one it played, and
``sees`` gives the role exactly the percepts it received.

:class:`BacktrackingSampler` is the published training method (Partridge & Thielscher
2022, https://arxiv.org/abs/2207.07195): a depth-first search over joint moves in random
order, remembering (state, step) pairs proven to lead nowhere.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

from ggp.errors import GameError
from ggp.game import Game
from ggp.reasoning.state_machine import JointMove, State
from ggp.search.history import ObservationHistory

__all__ = ["SampledHistory", "BacktrackingSampler", "consistent_joint_moves"]


@dataclass(frozen=True)
class SampledHistory:
    """One full history consistent with an observation history.

    Attributes:
        states: ``[steps + 1]`` the states from the initial one to the current one.
        joint_moves: ``[steps]`` the joint move played at each step.
    """

    states: tuple[State, ...]
    joint_moves: tuple[JointMove, ...]

    @property
    def state(self) -> State:
        """The current state (the last one)."""
        return self.states[-1]


def consistent_joint_moves(
    game: Game, state: State, history: ObservationHistory, step: int
) -> list[JointMove]:
    """Every joint move at ``step`` from ``state`` that agrees with ``history``.

    The role's own move is fixed; the others range over their legal moves; a joint move is
    kept when it gives the role the percepts it received at that step.
    """
    me = game.role_index(history.role)
    own = history.moves[step]
    choices: list[tuple[object, ...]] = []
    for index, role in enumerate(game.roles):
        legal = game.legal_moves(state, role)
        if index == me:
            if own not in legal:
                return []
            choices.append((own,))
        else:
            choices.append(legal)
    seen = history.percepts[step]
    result: list[JointMove] = []
    for joint in itertools.product(*choices):
        moves: JointMove = joint  # type: ignore[assignment]
        if game.percepts(state, moves, history.role) == seen:
            result.append(moves)
    return result


class BacktrackingSampler:
    """Random depth-first search for a consistent history, with a cache of dead ends.

    Args:
        game: The rules.
        max_nodes: Give up (GameError) after expanding this many states in one call.
    """

    def __init__(self, game: Game, max_nodes: int = 1_000_000) -> None:
        self.game = game
        self.max_nodes = max_nodes
        # (state, the observations still to explain) known to lead to no consistent history
        self._dead: set[tuple[State, object]] = set()

    def sample(self, history: ObservationHistory, rng: np.random.Generator) -> SampledHistory:
        """One history consistent with ``history``, found by randomised backtracking.

        Raises:
            GameError: No consistent history exists (the observations contradict the rules),
                or none was found within ``max_nodes`` expansions.
        """
        game = self.game
        steps = len(history)
        states: list[State] = [game.initial_state()]
        joints: list[JointMove] = []
        # Each frame: the candidate joint moves still to try at that step.
        frames: list[list[JointMove]] = []
        expanded = 0
        while True:
            depth = len(joints)
            if depth == steps:
                return SampledHistory(tuple(states), tuple(joints))
            if len(frames) == depth:  # first visit of this node
                state = states[-1]
                expanded += 1
                if expanded > self.max_nodes:
                    raise GameError(
                        f"no history consistent with {steps} observations of "
                        f"{history.role} found within {self.max_nodes} states"
                    )
                key = (state, history.suffix_key(depth))
                if key in self._dead or game.is_terminal(state):
                    candidates: list[JointMove] = []
                else:
                    candidates = consistent_joint_moves(game, state, history, depth)
                    order = rng.permutation(len(candidates))
                    candidates = [candidates[i] for i in order]
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
                raise GameError(
                    f"the observations of {history.role} are inconsistent with the rules: "
                    "no legal history produces them"
                )
            joints.pop()
            states.pop()
