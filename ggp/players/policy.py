"""A player's policy at an information set, whatever the player.

A :class:`~ggp.players.base.PolicyPlayer` (the random player, the CFR players) says how
it would play: :func:`policy_of` asks it. Any other player (the handcrafted and
best-response players, a person, a remote program) can only play, so its policy is
*estimated*: it is started afresh ``samples`` times, sent every observation turn by turn
(its answers at the earlier turns are ignored: the observations carry the moves its role
actually made there), and the frequencies of its answers at the last turn are the
estimate. That costs ``samples`` times as many moves as there are turns, each under the
match's play clock, and the figures computed from an estimate carry its sampling noise,
so it is the fallback only for players that cannot answer.

Example:
    >>> import math
    >>> import numpy as np
    >>> from pathlib import Path
    >>> import ggp
    >>> from ggp.game import Game
    >>> from ggp.players.base import MatchInfo, Observation
    >>> from ggp.players.random_player import RandomPlayer
    >>> game = Game.from_file(Path(ggp.__file__).parents[1] / "games" / "montyhall.gdl")
    >>> match = MatchInfo("m", game, game.role("candidate"))
    >>> answer = policy_of(RandomPlayer(np.random.default_rng(0)), match,
    ...                    [Observation(0, None, frozenset())], math.inf)
    >>> [str(m) for m in answer.policy.moves], answer.estimated
    (['(choose 1)', '(choose 2)', '(choose 3)'], False)
    >>> [round(p, 3) for p in answer.policy.probabilities]
    [0.333, 0.333, 0.333]
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from ggp.errors import GameError
from ggp.gdl.terms import Term
from ggp.players.base import MatchInfo, MovePolicy, Observation, Player, PolicyPlayer

__all__ = ["PolicyAnswer", "policy_of", "estimate_policy", "DEFAULT_SAMPLES"]

#: Plays per information set when a player's policy has to be estimated.
DEFAULT_SAMPLES = 100


@dataclass(frozen=True)
class PolicyAnswer:
    """A player's policy at one information set, and how it was obtained.

    Attributes:
        policy: The moves and their probabilities.
        estimated: Whether it was estimated from ``samples`` plays (the player is not a
            :class:`~ggp.players.base.PolicyPlayer`), not answered.
        samples: Plays it was estimated from (0 when answered).
    """

    policy: MovePolicy
    estimated: bool
    samples: int


def policy_of(
    player: Player,
    match: MatchInfo,
    observations: Sequence[Observation],
    deadline: float,
    samples: int = DEFAULT_SAMPLES,
) -> PolicyAnswer:
    """``player``'s policy as ``match.role`` after ``observations`` (turn 0 first).

    Args:
        player: Any player; a :class:`~ggp.players.base.PolicyPlayer` is asked, any other
            estimated (see the module docstring).
        match: The match (its game, the role; its play clock is each estimating play's).
        observations: ``[turns]`` what the role observed, one per turn so far.
        deadline: A ``time.monotonic()`` value for an answer (not used by an estimate,
            whose every play gets the match's play clock).
        samples: Plays for an estimate.

    Raises:
        GameError: ``observations`` is empty, or ``samples`` is not positive.
        OutOfTime: The player found no history explaining ``observations`` in time.
    """
    if not observations:
        raise GameError("a policy needs the observations of turn 0 at least")
    if isinstance(player, PolicyPlayer):
        return PolicyAnswer(player.policy(match, observations, deadline), False, 0)
    return PolicyAnswer(estimate_policy(player, match, observations, samples), True, samples)


def estimate_policy(
    player: Player, match: MatchInfo, observations: Sequence[Observation], samples: int
) -> MovePolicy:
    """The frequencies of ``player``'s moves after ``observations`` over ``samples``
    fresh plays (see the module docstring); moves are in order of first appearance.

    Raises:
        GameError: ``samples`` is not positive.
    """
    if samples <= 0:
        raise GameError(f"samples must be positive, not {samples}")
    counts: Counter[Term] = Counter()
    for _ in range(samples):
        player.start(match)
        move: Term | None = None
        for observation in observations:
            move = player.play(observation, time.monotonic() + match.play_clock_s)
        assert move is not None
        counts[move] += 1
        player.abort()
    moves = tuple(counts)
    return MovePolicy(moves, tuple(counts[m] / samples for m in moves))
