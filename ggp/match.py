"""A local referee: runs one match between players, playing ``random`` itself.

Each player is told only what its role may know (its applied move and its percepts, as a
GDL-II game manager tells it). A reply that is late, illegal or an exception is replaced
by a uniformly random legal move, and the replacement is recorded.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.terms import Const, Term
from ggp.players.base import MatchInfo, Observation, Player
from ggp.reasoning.state_machine import JointMove

__all__ = ["MatchRecord", "Replacement", "run_match"]

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Replacement:
    """A player's reply the referee replaced."""

    step: int
    role: str
    reason: str
    move: str  # the move applied instead


@dataclass(frozen=True)
class MatchRecord:
    """The full record of a match.

    Attributes:
        match_id: The match's name.
        roles: ``[roles]`` role names in game order.
        joint_moves: ``[steps][roles]`` the moves applied, as KIF.
        percepts: ``[steps][roles]`` what each role saw after each step, as sorted KIF.
        goals: ``[roles]`` the final goal values.
        replacements: Replies the referee replaced.
        move_seconds: ``[steps][roles]`` seconds each player took (0 for ``random``).
    """

    match_id: str
    roles: tuple[str, ...]
    joint_moves: tuple[tuple[str, ...], ...]
    percepts: tuple[tuple[tuple[str, ...], ...], ...]
    goals: tuple[int, ...]
    replacements: tuple[Replacement, ...]
    move_seconds: tuple[tuple[float, ...], ...]


def run_match(
    game: Game,
    players: Mapping[Const, Player],
    rng: np.random.Generator,
    *,
    match_id: str = "match",
    start_clock_s: float = 10.0,
    play_clock_s: float = 1.0,
    max_steps: int = 10_000,
) -> MatchRecord:
    """Play one match to the end.

    Args:
        game: The rules.
        players: A player for every role but ``random``.
        rng: Randomness of the ``random`` role and of replacement moves.
        match_id: Name of the match, passed to the players.
        start_clock_s: Set-up time offered to each player.
        play_clock_s: Time per move; a later reply is replaced.
        max_steps: Stop (GameError) if the game has not ended after this many steps.

    Raises:
        GameError: A role has no player, or the game does not end within ``max_steps``.
    """
    for role in game.player_roles:
        if role not in players:
            raise GameError(f"no player for role {role}")
    for role, player in players.items():
        player.start(MatchInfo(match_id, game, role, start_clock_s, play_clock_s))
    state = game.initial_state()
    last: dict[Const, Term | None] = {role: None for role in game.roles}
    seen: dict[Const, frozenset[Term]] = {role: frozenset() for role in game.roles}
    joints: list[JointMove] = []
    all_percepts: list[tuple[tuple[str, ...], ...]] = []
    replacements: list[Replacement] = []
    seconds: list[tuple[float, ...]] = []
    step = 0
    while not game.is_terminal(state):
        if step >= max_steps:
            raise GameError(f"the game did not end within {max_steps} steps")
        moves: list[Term] = []
        times: list[float] = []
        for role in game.roles:
            legal = game.legal_moves(state, role)
            if not legal:
                raise GameError(f"{role} has no legal move at step {step}")
            if role not in players:  # random: chance, uniform over legal moves
                moves.append(legal[int(rng.integers(len(legal)))])
                times.append(0.0)
                continue
            started = time.monotonic()
            reason = ""
            try:
                move = players[role].play(
                    Observation(step, last[role], seen[role]), started + play_clock_s
                )
            except Exception as e:  # a player's failure must not end the match
                logger.exception("player for %s failed at step %d", role, step)
                move, reason = legal[0], f"error: {e}"
            took = time.monotonic() - started
            if not reason and move not in legal:
                reason = f"illegal move {move}"
            elif not reason and took > play_clock_s:
                reason = f"late: {took:.2f} s"
            if reason:
                move = legal[int(rng.integers(len(legal)))]
                replacements.append(Replacement(step, role.name, reason, str(move)))
            moves.append(move)
            times.append(took)
        joint = tuple(moves)
        for role in game.roles:
            seen[role] = game.percepts(state, joint, role)
        for role, move in zip(game.roles, joint, strict=True):
            last[role] = move
        state = game.next_state(state, joint)
        joints.append(joint)
        all_percepts.append(tuple(tuple(sorted(map(str, seen[r]))) for r in game.roles))
        seconds.append(tuple(times))
        step += 1
    for role, player in players.items():
        player.stop(Observation(step, last[role], seen[role]))
    return MatchRecord(
        match_id=match_id,
        roles=tuple(r.name for r in game.roles),
        joint_moves=tuple(tuple(map(str, j)) for j in joints),
        percepts=tuple(all_percepts),
        goals=game.goals(state),
        replacements=tuple(replacements),
        move_seconds=tuple(seconds),
    )
