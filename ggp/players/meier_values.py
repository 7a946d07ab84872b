"""Exact values of Meier against fixed opponents: the ceilings of the evaluation tables.

Against a fixed opponent (the uniformly random player, or the handcrafted one of
:class:`~ggp.players.handcrafted.MeierPlayer`), the best a player can do is a best
response to that opponent's strategy. In Meier it is computed exactly by a recursion
over the last two claims: whether the opponent's claim is true depends only on the claim
before it and on the opponent's fresh roll, and a claim ends the game (``you_bluff``) or
starts a new round whose value depends only on that claim.

:class:`BestResponse` gives the best response's moves (the claim to make, whether to call)
and :class:`BestResponsePlayer` plays them: simulated through the engine, it scores the
values below (``tests/players/test_meier_values.py``), so they are reached, not only
bounds.

Ranks as in :data:`~ggp.players.handcrafted.MEIER_RANKS`: 0 (31) to 20 (21, "Meier"); a
roll of rank 14..19 (a double) has probability 1/36, every other rank 2/36. Values are in
goal points (0..100), which is also the evaluation's score (a win counts 1).

Example (REFERENCE.md: random vs random, player 1 wins 0.348423; the vs-random ceiling is
98.04 / 95.24; the random player scored 21 / 35 against the handcrafted one):
    >>> round(random_values("random").first / 100, 6)
    0.348423
    >>> v = best_response_values("random")
    >>> round(v.first, 2), round(v.second, 1)
    (98.04, 95.3)
    >>> v = random_values("handcrafted")
    >>> round(v.first), round(v.second)
    (22, 35)
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import Literal

import numpy as np

from ggp.gdl.terms import Term
from ggp.players.handcrafted import MEIER_RANKS, MeierPlayer

__all__ = [
    "Opponent",
    "MeierValues",
    "BestResponse",
    "BestResponsePlayer",
    "best_response_values",
    "random_values",
]

Opponent = Literal["random", "handcrafted"]

_N = len(MEIER_RANKS)  # 21 claims
_TOP = _N - 1  # 21, "Meier": the next player may only call it
#: Probability of rolling each rank.
_ROLL = tuple((1 if high == low else 2) / 36 for high, low in MEIER_RANKS)


@dataclass(frozen=True)
class MeierValues:
    """A player's expected score (0..100) as player 1 (``first``) and player 2."""

    first: float
    second: float


def best_response_values(opponent: Opponent) -> MeierValues:
    """The best score any player can expect against ``opponent``, as p1 and as p2."""
    return _Values(opponent, best=True).values()


def random_values(opponent: Opponent) -> MeierValues:
    """The uniformly random player's expected score against ``opponent``."""
    return _Values(opponent, best=False).values()


class _Values:
    """The recursion, for a player who best-responds (``best``) or plays at random."""

    def __init__(self, opponent: Opponent, best: bool) -> None:
        self.opponent = opponent
        self.best = best
        # Cached per instance: they depend on both.
        self.facing = cache(self._facing)
        self.after_roll = cache(self._after_roll)

    def values(self) -> MeierValues:
        return MeierValues(first=self.after_roll(-1), second=self.facing(-1))

    # ------------------------------------------------------------ the opponent

    def _call_probability(self, claim: int) -> float:
        """The opponent calls ``you_bluff`` on ``claim`` with this probability."""
        if claim == _TOP:
            return 1.0  # nothing beats it: the only legal move
        return 0.5 if self.opponent == "random" else (claim + 1) / _N

    def _claims(self, last: int, roll: int) -> list[float]:
        """``[21]`` the opponent's claim distribution after claim ``last`` (-1: none)."""
        out = [0.0] * _N
        higher = range(last + 1, _N)
        if self.opponent == "random" or roll <= last:
            for rank in higher:
                out[rank] = 1.0 / len(higher)
            return out
        # Handcrafted: the truth with probability (rank + 1) / 21, else a random higher
        # claim, tested the same way.
        mass = [0.0] * _N
        mass[roll] = 1.0
        for rank in range(roll, _N):
            if mass[rank] == 0.0:
                continue
            stay = (rank + 1) / _N
            out[rank] += mass[rank] * stay
            above = range(rank + 1, _N)
            for h in above:
                mass[h] += mass[rank] * (1.0 - stay) / len(above)
        return out

    # ------------------------------------------------------------ the player

    def odds(self, last: int) -> tuple[list[float], list[float]]:
        """``[21], [21]``: after claim ``last`` (-1: none), the probability that the
        opponent rolls and claims each rank, and that it claims it and it is the truth."""
        claimed = [0.0] * _N
        true = [0.0] * _N
        for roll, p in enumerate(_ROLL):
            for rank, q in enumerate(self._claims(last, roll)):
                claimed[rank] += p * q
                if rank == roll:
                    true[rank] += p * q
        return claimed, true

    def _facing(self, last: int) -> float:
        """The player's value when the opponent, after claim ``last``, rolls and claims."""
        claimed, true = self.odds(last)
        value = 0.0
        for rank in range(last + 1, _N):
            call = 100.0 * (claimed[rank] - true[rank])  # the call wins on a bluff
            if rank == _TOP:
                value += call
                continue
            roll_on = claimed[rank] * self.after_roll(rank)
            value += max(call, roll_on) if self.best else 0.5 * (call + roll_on)
        return value

    def _after_roll(self, last: int) -> float:
        """The player's value when it rolls and must claim above ``last`` (-1: the first
        roll of the game)."""
        value = 0.0
        for roll, p in enumerate(_ROLL):
            options = [self.claiming_value(rank, rank == roll) for rank in range(last + 1, _N)]
            value += p * (max(options) if self.best else sum(options) / len(options))
        return value

    def claiming_value(self, claim: int, true: bool) -> float:
        """The player's value after claiming ``claim`` (the truth or not)."""
        call = self._call_probability(claim)
        win_if_called = 100.0 if true else 0.0
        if claim == _TOP:
            return win_if_called
        return call * win_if_called + (1.0 - call) * self.facing(claim)


class BestResponse:
    """The best response to a fixed Meier opponent, move by move: the claim to make, and
    whether to call ``you_bluff``. Its expected score is :func:`best_response_values`.

    Args:
        opponent: The opponent it answers.
    """

    def __init__(self, opponent: Opponent) -> None:
        self._values = _Values(opponent, best=True)

    def claim(self, last: int, roll: int) -> int:
        """The rank to claim with a roll of rank ``roll``, above claim ``last`` (-1: none)."""
        if not -1 <= last < _TOP:
            raise ValueError(f"no claim beats rank {last}")
        return max(
            range(last + 1, _N),
            key=lambda rank: self._values.claiming_value(rank, rank == roll),
        )

    def calls(self, last: int, claim: int) -> bool:
        """Whether to call ``you_bluff`` on ``claim``, made after the player's claim
        ``last`` (-1: none)."""
        if claim == _TOP:
            return True
        claimed, true = self._values.odds(last)
        if claimed[claim] == 0.0:
            raise ValueError(f"the opponent never claims rank {claim} after rank {last}")
        return 100.0 * (claimed[claim] - true[claim]) > claimed[claim] * self._values.after_roll(
            claim
        )


class BestResponsePlayer(MeierPlayer):
    """Plays :class:`BestResponse` to ``opponent``, as p1 or p2: the most any player can
    score against that opponent (:func:`best_response_values`).

    Args:
        opponent: The opponent it answers.
        rng: For the moves the best response does not decide (none in Meier's rules).
    """

    name = "meier-best-response"

    def __init__(self, opponent: Opponent, rng: np.random.Generator | None = None) -> None:
        super().__init__(rng)
        self.response = BestResponse(opponent)

    def _claim(self, claims: dict[int, Term], moves: tuple[Term, ...]) -> Term:
        if self.dice is None:
            return super()._claim(claims, moves)
        last = self.claims[-1] if self.claims else -1
        return claims[self.response.claim(last, MEIER_RANKS.index(self.dice))]

    def _calls(self) -> bool:
        before = self.claims[-2] if len(self.claims) > 1 else -1
        return self.response.calls(before, self.claims[-1])
