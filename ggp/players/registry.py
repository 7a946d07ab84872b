"""The players a command line can name (``ggp play --vs NAME``).

Each :class:`PlayerSpec` has a name, a one-line summary and a factory taking the player's
source of randomness. Stronger players join by adding a spec to :data:`PLAYER_SPECS`.

Example:
    >>> import numpy as np
    >>> player_names()
    ('random', 'cfr')
    >>> make_player("random", np.random.default_rng(0)).name
    'random'
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ggp.errors import GameError
from ggp.players.base import Player
from ggp.players.cfr_player import CFRPlayer
from ggp.players.random_player import RandomPlayer

__all__ = ["PlayerSpec", "PLAYER_SPECS", "player_names", "player_spec", "make_player"]


@dataclass(frozen=True)
class PlayerSpec:
    """How to make one kind of player.

    Attributes:
        name: The name a user types (``--vs random``).
        summary: One line for help texts.
        factory: Builds a fresh player from its source of randomness.
    """

    name: str
    summary: str
    factory: Callable[[np.random.Generator], Player]


#: Every player a command line can name, in the order help texts list them.
PLAYER_SPECS: tuple[PlayerSpec, ...] = (
    PlayerSpec("random", "uniformly random legal moves", RandomPlayer),
    PlayerSpec(
        "cfr",
        "depth-limited CFR from sampled histories, about 1 s per move",
        lambda rng: CFRPlayer(rng=rng),
    ),
)


def player_names() -> tuple[str, ...]:
    """The names of :data:`PLAYER_SPECS`, in order."""
    return tuple(spec.name for spec in PLAYER_SPECS)


def player_spec(name: str) -> PlayerSpec:
    """The spec called ``name``.

    Raises:
        GameError: No player has that name.
    """
    for spec in PLAYER_SPECS:
        if spec.name == name:
            return spec
    raise GameError(f"no player called {name!r} (players: {', '.join(player_names())})")


def make_player(name: str, rng: np.random.Generator) -> Player:
    """A fresh player of the kind ``name``, drawing its randomness from ``rng``.

    Raises:
        GameError: No player has that name.
    """
    return player_spec(name).factory(rng)
