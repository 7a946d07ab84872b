"""Sampling full game histories consistent with what one role has observed.

The parts, each in its own module:

- :mod:`ggp.search.consistency`: what "consistent" means (:func:`check_consistent`,
  :func:`consistent_joint_moves`) and :class:`SampledHistory`.
- :mod:`ggp.search.policy_models`: how the other roles are modelled
  (:class:`PolicyModel`, :class:`UniformPolicy`).
- :mod:`ggp.search.independent_samplers`: :class:`RejectionSampler`,
  :class:`BacktrackingSampler` (the published training method) and
  :class:`BiasedBacktrackingSampler` (the published bias).
- :mod:`ggp.search.posterior`: :class:`PosteriorSampler`, the exact posterior by forward
  filtering and backward sampling, falling back to a particle filter.
- :mod:`ggp.search.clock`: :class:`OutOfTime`, raised by every sampler at its deadline.

This module holds what they share: the :class:`HistorySampler` protocol (``sample`` one
history, ``sample_many`` weighted histories ready for :func:`ggp.search.tree.build_tree`),
:func:`make_sampler` and :func:`live_roots`; and it re-exports the names above. A sampler
that finds no history explaining the observations (they contradict the rules, or its
limits ran out) raises :class:`~ggp.errors.NoConsistentHistoryError`.

Example:
    >>> from pathlib import Path
    >>> import numpy as np
    >>> import ggp
    >>> from ggp.game import Game
    >>> from ggp.gdl.terms import Const
    >>> game = Game.from_file(Path(ggp.__file__).parents[1] / "games" / "montyhall.gdl")
    >>> seen = ObservationHistory(Const("candidate")).extend(
    ...     game.term("(choose 1)"), frozenset()
    ... ).extend(Const("noop"), frozenset({game.term("(open_door 3)")}))
    >>> sampler = make_sampler(game, "posterior")
    >>> drawn = sampler.sample_many(seen, 4, np.random.default_rng(0))
    >>> for history, weight in drawn:
    ...     check_consistent(game, seen, history)
    >>> [weight for _, weight in drawn]
    [0.25, 0.25, 0.25, 0.25]
"""

from __future__ import annotations

from typing import Literal, Protocol, runtime_checkable

import numpy as np

from ggp.game import Game
from ggp.search.clock import OutOfTime
from ggp.search.consistency import SampledHistory, check_consistent, consistent_joint_moves
from ggp.search.history import ObservationHistory
from ggp.search.independent_samplers import (
    BacktrackingSampler,
    BiasedBacktrackingSampler,
    RejectionSampler,
)
from ggp.search.policy_models import PolicyModel, PreparedPolicyModel, UniformPolicy
from ggp.search.posterior import Belief, PosteriorSampler

__all__ = [
    "OutOfTime",
    "live_roots",
    "SampledHistory",
    "consistent_joint_moves",
    "check_consistent",
    "PolicyModel",
    "PreparedPolicyModel",
    "UniformPolicy",
    "HistorySampler",
    "RejectionSampler",
    "BacktrackingSampler",
    "BiasedBacktrackingSampler",
    "PosteriorSampler",
    "Belief",
    "SamplerMode",
    "make_sampler",
]

#: The names :func:`make_sampler` accepts.
SamplerMode = Literal["rejection", "backtracking", "biased", "posterior"]


@runtime_checkable
class HistorySampler(Protocol):
    """Draws full histories consistent with a role's observations."""

    game: Game

    def sample(
        self,
        history: ObservationHistory,
        rng: np.random.Generator,
        *,
        deadline: float | None = None,
    ) -> SampledHistory:
        """One full history consistent with ``history``.

        Raises:
            NoConsistentHistoryError: No consistent history exists or none was found
                within the sampler's limits.
            OutOfTime: ``deadline`` (a ``time.monotonic()`` value) passed first.
        """
        ...

    def sample_many(
        self,
        history: ObservationHistory,
        n: int,
        rng: np.random.Generator,
        *,
        deadline: float | None = None,
    ) -> list[tuple[SampledHistory, float]]:
        """``n`` histories with weights summing to 1, ready for ``build_tree(roots=...)``.

        Raises:
            NoConsistentHistoryError: As :meth:`sample`.
            OutOfTime: ``deadline`` passed first.
        """
        ...


def make_sampler(
    game: Game, mode: SamplerMode, policy: PolicyModel | None = None
) -> HistorySampler:
    """The sampler of ``mode`` with its default limits.

    Args:
        game: The rules.
        mode: ``"rejection"``, ``"backtracking"``, ``"biased"`` or ``"posterior"``.
        policy: The model of the other roles (rejection, posterior; uniform if None) or
            the policy function ``f`` (biased; required).

    Raises:
        ValueError: An unknown mode, or ``"biased"`` without a policy function.
    """
    if mode == "rejection":
        return RejectionSampler(game, policy)
    if mode == "backtracking":
        return BacktrackingSampler(game)
    if mode == "biased":
        if policy is None:
            raise ValueError("the biased sampler needs a policy function")
        return BiasedBacktrackingSampler(game, policy)
    if mode == "posterior":
        return PosteriorSampler(game, policy)
    raise ValueError(
        f"unknown sampler mode {mode!r}: use rejection, backtracking, biased or posterior"
    )


def live_roots(
    game: Game,
    sampler: HistorySampler,
    history: ObservationHistory,
    samples: int,
    rng: np.random.Generator,
    attempts: int = 3,
    *,
    deadline: float | None = None,
) -> list[tuple[SampledHistory, float]]:
    """``samples`` histories consistent with ``history`` whose state is not terminal.

    A role asked to move knows that the game goes on, which the samplers do not take
    into account (in Blind Tic-Tac-Toe the opponent may have completed a line unseen):
    histories ending in a terminal state are dropped (rejection, so the rest still
    follows the posterior) and more are drawn, up to ``attempts`` rounds. Weights are
    renormalised; an empty list means that every draw had ended. ``deadline`` is passed
    to the sampler (:class:`OutOfTime` when it passes).
    """
    kept: list[SampledHistory] = []
    for _ in range(attempts):
        drawn = sampler.sample_many(history, samples, rng, deadline=deadline)
        kept.extend(h for h, _ in drawn if not game.is_terminal(h.state))
        if len(kept) >= samples:
            break
    kept = kept[:samples]
    return [(h, 1.0 / len(kept)) for h in kept]
