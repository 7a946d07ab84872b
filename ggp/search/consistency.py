"""Whether a full history explains what one role has observed.

A history is consistent with a role's :class:`~ggp.search.history.ObservationHistory` when,
at every step, the state is not terminal, the joint move is legal, the role's own move is
the one it played, and ``sees`` gives the role exactly the percepts it received
(:func:`check_consistent` tests exactly this). Every history sampler builds its histories
from :func:`consistent_joint_moves`.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from ggp.errors import GameError
from ggp.game import Game
from ggp.reasoning.state_machine import JointMove, State
from ggp.search.history import ObservationHistory

__all__ = ["SampledHistory", "consistent_joint_moves", "check_consistent", "format_step"]


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
    kept when it gives the role the percepts it received at that step. (Whether ``state``
    is terminal is the caller's business.)
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


def format_step(history: ObservationHistory, step: int) -> str:
    """``step`` of ``history`` for messages: what the role played and saw there."""
    seen = " ".join(sorted(map(str, history.percepts[step])))
    return f"step {step + 1} ({history.role} played {history.moves[step]}, saw {{{seen}}})"


def check_consistent(game: Game, history: ObservationHistory, sampled: SampledHistory) -> None:
    """Check that ``sampled`` explains ``history``, replaying it move by move.

    Raises:
        GameError: Naming the first step where ``sampled`` has the wrong length, starts
            elsewhere than the initial state, reaches a terminal state too early, plays an
            illegal move or another move for the role, gives the role other percepts, or
            lists a state that is not the successor of the previous one.
    """
    steps = len(history)
    if len(sampled.joint_moves) != steps or len(sampled.states) != steps + 1:
        raise GameError(
            f"the sampled history has {len(sampled.joint_moves)} joint moves and "
            f"{len(sampled.states)} states; {steps} observations need {steps} and {steps + 1}"
        )
    if sampled.states[0] != game.initial_state():
        raise GameError("the sampled history does not start in the initial state")
    me = game.role_index(history.role)
    for step, (state, joint) in enumerate(zip(sampled.states, sampled.joint_moves, strict=False)):
        where = format_step(history, step)
        if game.is_terminal(state):
            raise GameError(f"{where}: the sampled history is already in a terminal state")
        if len(joint) != len(game.roles):
            raise GameError(f"{where}: the joint move {joint} has the wrong number of moves")
        for role, move in zip(game.roles, joint, strict=True):
            if move not in game.legal_moves(state, role):
                raise GameError(f"{where}: {move} is not a legal move of {role}")
        if joint[me] != history.moves[step]:
            raise GameError(f"{where}: the sampled history plays {joint[me]} for {history.role}")
        percepts = game.percepts(state, joint, history.role)
        if percepts != history.percepts[step]:
            got = " ".join(sorted(map(str, percepts)))
            raise GameError(f"{where}: the sampled history gives {history.role} {{{got}}}")
        if game.next_state(state, joint) != sampled.states[step + 1]:
            raise GameError(f"{where}: the next state is not the successor of the joint move")
