"""A local referee: runs one match between players, playing ``random`` itself.

Each player is told only what its role may know (its applied move and its percepts, as a
GDL-II game manager tells it). A reply that is late, illegal or an exception is replaced
by a uniformly random legal move, and the replacement is recorded (an exception is also
logged with its traceback).
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Any, NamedTuple, TypeVar

import numpy as np

from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.terms import Const, Term
from ggp.players.base import MatchInfo, Observation, Player
from ggp.reasoning.state_machine import JointMove

__all__ = ["MatchRecord", "Replacement", "run_match"]

logger = logging.getLogger(__name__)

T = TypeVar("T")


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

    def to_json_dict(self) -> dict[str, Any]:
        """The record as JSON-ready lists and numbers (:func:`json.dumps` takes it)."""
        return dataclasses.asdict(self)

    @classmethod
    def from_json_dict(cls, data: Mapping[str, Any]) -> MatchRecord:
        """The inverse of :meth:`to_json_dict`."""
        return cls(
            match_id=str(data["match_id"]),
            roles=tuple(data["roles"]),
            joint_moves=tuple(tuple(j) for j in data["joint_moves"]),
            percepts=tuple(tuple(tuple(p) for p in step) for step in data["percepts"]),
            goals=tuple(int(g) for g in data["goals"]),
            replacements=tuple(Replacement(**r) for r in data["replacements"]),
            move_seconds=tuple(tuple(float(t) for t in s) for s in data["move_seconds"]),
        )


def _runs_remotely(player: Player) -> bool:
    """Whether ``player`` computes elsewhere (a remote player over HTTP).

    The referee asks such players in threads, all at once, as a game manager does; players
    in this process are asked one after another so that they do not share the CPU.
    """
    return bool(getattr(player, "runs_remotely", False))


class _Answer(NamedTuple):
    move: Term | None
    error: str
    seconds: float


def _ask(player: Player, observation: Observation, play_clock_s: float) -> _Answer:
    started = time.monotonic()
    try:
        move = player.play(observation, started + play_clock_s)
    except Exception as e:  # a player's failure must not end the match, nor go unnoticed
        logger.error(
            "player %s failed at step %d: %r", player.name, observation.turn, e, exc_info=e
        )
        return _Answer(None, f"error: {e}", time.monotonic() - started)
    return _Answer(move, "", time.monotonic() - started)


def _ask_role(
    observations: Mapping[Const, Observation], play_clock_s: float, role: Const, player: Player
) -> _Answer:
    return _ask(player, observations[role], play_clock_s)


def _each(
    players: Mapping[Const, Player],
    pool: ThreadPoolExecutor | None,
    call: Callable[[Const, Player], T],
) -> dict[Const, T]:
    """``call`` for every player: the remote ones at once in ``pool``, then the others."""
    futures = {
        role: pool.submit(call, role, player)
        for role, player in players.items()
        if pool is not None and _runs_remotely(player)
    }
    results = {role: call(role, player) for role, player in players.items() if role not in futures}
    results.update({role: future.result() for role, future in futures.items()})
    return results


def run_match(
    game: Game,
    players: Mapping[Const, Player],
    rng: np.random.Generator,
    *,
    match_id: str = "match",
    start_clock_s: float = 10.0,
    play_clock_s: float = 1.0,
    max_steps: int = 10_000,
    grace_s: float = 0.0,
) -> MatchRecord:
    """Play one match to the end.

    Players in this process are asked one after another; remote players (those with a
    true ``runs_remotely`` attribute, such as
    :class:`~ggp.protocol.game_manager.RemotePlayer`) are asked all at once in threads,
    as a game manager does.

    Args:
        game: The rules.
        players: A player for every role but ``random``.
        rng: Randomness of the ``random`` role and of replacement moves.
        match_id: Name of the match, passed to the players.
        start_clock_s: Set-up time offered to each player.
        play_clock_s: Time per move; a later reply is replaced.
        max_steps: Stop (GameError) if the game has not ended after this many steps.
        grace_s: A reply counts as late only after ``play_clock_s + grace_s`` (game
            managers allow 1 s for the network).

    Raises:
        GameError: A role has no player, or the game does not end within ``max_steps``.
    """
    for role in game.player_roles:
        if role not in players:
            raise GameError(f"no player for role {role}")
    remote = sum(_runs_remotely(p) for p in players.values())
    pool = ThreadPoolExecutor(remote, thread_name_prefix="ggp-referee") if remote else None
    try:
        return _play(
            game, players, rng, pool, match_id, start_clock_s, play_clock_s, max_steps, grace_s
        )
    finally:
        if pool is not None:
            pool.shutdown(wait=False)


def _play(
    game: Game,
    players: Mapping[Const, Player],
    rng: np.random.Generator,
    pool: ThreadPoolExecutor | None,
    match_id: str,
    start_clock_s: float,
    play_clock_s: float,
    max_steps: int,
    grace_s: float,
) -> MatchRecord:
    _each(
        players,
        pool,
        lambda role, player: player.start(
            MatchInfo(match_id, game, role, start_clock_s, play_clock_s)
        ),
    )
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
        legal_by_role = {role: game.legal_moves(state, role) for role in game.roles}
        for role, legal in legal_by_role.items():
            if not legal:
                raise GameError(f"{role} has no legal move at step {step}")
        observations = {role: Observation(step, last[role], seen[role]) for role in players}
        answers = _each(players, pool, partial(_ask_role, observations, play_clock_s))
        moves: list[Term] = []
        times: list[float] = []
        for role in game.roles:
            legal = legal_by_role[role]
            if role not in players:  # random: chance, uniform over legal moves
                moves.append(legal[int(rng.integers(len(legal)))])
                times.append(0.0)
                continue
            move, reason, took = answers[role]
            if not reason and move not in legal:
                reason = f"illegal move {move}"
            elif not reason and took > play_clock_s + grace_s:
                reason = f"late: {took:.2f} s"
            if reason or move is None:
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
    _each(
        players, pool, lambda role, player: player.stop(Observation(step, last[role], seen[role]))
    )
    return MatchRecord(
        match_id=match_id,
        roles=tuple(r.name for r in game.roles),
        joint_moves=tuple(tuple(map(str, j)) for j in joints),
        percepts=tuple(all_percepts),
        goals=game.goals(state),
        replacements=tuple(replacements),
        move_seconds=tuple(seconds),
    )
