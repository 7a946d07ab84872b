"""What a game is like, at a glance: the figures behind ``ggp info`` (and ``ggp check``).

:func:`sample_playouts` plays seeded uniformly random games and records their length, the
branching factor of each role and whether two roles ever chose at once;
:func:`game_info` adds the roles, chance, hidden information and the size of the
propositional network. Both return frozen dataclasses whose repr evaluates back to them.

Example:
    >>> import numpy as np
    >>> from ggp.game import Game, PropnetSize
    >>> game = Game.from_text('''
    ...     (role a) (role b) (init (phase 1))
    ...     (<= (legal ?r heads) (role ?r) (true (phase 1)))
    ...     (<= (legal ?r tails) (role ?r) (true (phase 1)))
    ...     (<= (next (played ?r ?m)) (does ?r ?m)) (<= (next (phase 2)) (true (phase 1)))
    ...     (<= (sees ?r (chose ?m)) (does ?r ?m))
    ...     (<= terminal (true (phase 2))) (goal a 50) (goal b 50)''')
    >>> info = game_info(game, 10, np.random.default_rng(0))
    >>> info.roles, info.has_chance, info.has_hidden_information, info.simultaneous
    (('a', 'b'), False, True, True)
    >>> info.playouts.mean_length, info.playouts.mean_branching
    (1.0, (2.0, 2.0))
    >>> info.propnet is not None and info.propnet.base > 0
    True
    >>> eval(repr(info)) == info
    True
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ggp.game import Game, PropnetSize
from ggp.gdl.validate import summarize

__all__ = ["PlayoutStats", "PropnetSize", "GameInfo", "sample_playouts", "game_info"]

#: Steps after which a random playout is cut off (and counted as unfinished).
DEFAULT_MAX_STEPS = 1000


@dataclass(frozen=True)
class PlayoutStats:
    """What seeded uniformly random playouts showed about a game.

    Every role, ``random`` included, picks uniformly among its legal moves.

    Attributes:
        playouts: Number of playouts.
        simultaneous: Some state gave two or more roles other than ``random`` a choice
            (two or more legal moves) at once.
        mean_length: Mean number of joint moves per playout.
        max_length: The longest playout, in joint moves.
        unfinished: Playouts cut off (at ``max_steps``, or when the time ran out) before
            reaching a terminal state.
        mean_branching: ``[roles]`` for each role in game order, the mean number of its
            legal moves over all non-terminal states the playouts visited (0.0 when
            they visited none).
    """

    playouts: int
    simultaneous: bool
    mean_length: float
    max_length: int
    unfinished: int
    mean_branching: tuple[float, ...]


@dataclass(frozen=True)
class GameInfo:
    """A game's summary, as ``ggp info`` prints it.

    Attributes:
        path: The description's file name.
        roles: ``[roles]`` role names in game order, ``random`` included.
        has_chance: Whether ``random`` is a role.
        has_hidden_information: Whether the description has ``sees`` rules (GDL-II
            percepts). A game with neither chance nor ``sees`` is classic GDL: every
            role sees every move.
        reasoner: ``"propnet"``, or ``"topdown"`` / ``"prover"`` (when the game is too
            large to ground, or asked for).
        propnet: The net's size; None without a propnet.
        playouts: Figures from seeded random playouts.
    """

    path: str
    roles: tuple[str, ...]
    has_chance: bool
    has_hidden_information: bool
    reasoner: str
    propnet: PropnetSize | None
    playouts: PlayoutStats

    @property
    def simultaneous(self) -> bool:
        """Whether the playouts saw two or more roles choose at once."""
        return self.playouts.simultaneous


def sample_playouts(
    game: Game,
    playouts: int,
    rng: np.random.Generator,
    max_steps: int = DEFAULT_MAX_STEPS,
    seconds: float | None = None,
) -> PlayoutStats:
    """Play ``playouts`` uniformly random games and record what they show.

    Args:
        game: The rules.
        playouts: Number of games, at least 1.
        rng: Source of every random choice.
        max_steps: Cut a playout off after this many joint moves.
        seconds: Time for them all (None: no limit): when it runs out, the playout under
            way is cut off and no other starts (``playouts`` of the result says how many
            there were; at least one, however short).

    Returns:
        Lengths, branching factors per role and simultaneity.

    Raises:
        ValueError: ``playouts`` is less than 1.
        GameError: A role has no legal move in a non-terminal state.
    """
    if playouts < 1:
        raise ValueError(f"playouts must be at least 1, not {playouts}")
    roles = game.roles
    legal_sums = np.zeros(len(roles), dtype=np.int64)  # [roles]
    states_seen = 0
    simultaneous = False
    unfinished = 0
    lengths: list[int] = []
    deadline = None if seconds is None else time.monotonic() + seconds
    for _ in range(playouts):
        if lengths and deadline is not None and time.monotonic() > deadline:
            break
        state = game.initial_state()
        steps = 0
        while not game.is_terminal(state):
            if steps >= max_steps or (deadline is not None and time.monotonic() > deadline):
                unfinished += 1
                break
            legal = [game.legal_moves(state, role) for role in roles]
            legal_sums += [len(moves) for moves in legal]
            states_seen += 1
            choosers = sum(
                1
                for role, moves in zip(roles, legal, strict=True)
                if len(moves) > 1 and role != game.random_role
            )
            simultaneous = simultaneous or choosers >= 2
            joint = tuple(moves[int(rng.integers(len(moves)))] for moves in legal)
            state = game.next_state(state, joint)
            steps += 1
        lengths.append(steps)
    branching = tuple(
        float(total) / states_seen if states_seen else 0.0 for total in legal_sums.tolist()
    )
    return PlayoutStats(
        playouts=len(lengths),
        simultaneous=simultaneous,
        mean_length=float(np.mean(lengths)),
        max_length=max(lengths),
        unfinished=unfinished,
        mean_branching=branching,
    )


def propnet_size(game: Game) -> PropnetSize | None:
    """The size of ``game``'s propositional network, or None without one."""
    return game.propnet_size


def game_info(
    game: Game,
    playouts: int,
    rng: np.random.Generator,
    max_steps: int = DEFAULT_MAX_STEPS,
    seconds: float | None = None,
) -> GameInfo:
    """Summarise ``game``: roles, chance, hidden information, propnet size, playouts.

    Args:
        game: The rules.
        playouts: Number of seeded random playouts, at least 1.
        rng: Source of the playouts' random choices.
        max_steps: Cut a playout off after this many joint moves.
        seconds: Time for the playouts (see :func:`sample_playouts`).

    Raises:
        ValueError: ``playouts`` is less than 1.
        GameError: A role has no legal move in a non-terminal state.
    """
    summary = summarize(game.description)
    return GameInfo(
        path=game.description.path,
        roles=tuple(role.name for role in game.roles),
        has_chance=game.random_role is not None,
        has_hidden_information=summary.has_sees,
        reasoner=game.reasoner,
        propnet=propnet_size(game),
        playouts=sample_playouts(game, playouts, rng, max_steps, seconds),
    )
