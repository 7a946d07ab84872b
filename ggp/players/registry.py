"""The players a command line can name (``ggp play --vs NAME``, ``ggp eval --player SPEC``).

A player is named by a *spec*: a name, optionally followed by ``:`` and an argument, as
in ``cfr+nn:checkpoints/meier/best.pt``. Each :class:`PlayerSpec` has a name, a one-line
summary and a factory taking a :class:`PlayerRequest` (the player's source of
randomness, the game when the caller knows it, and the argument). Stronger players join
by adding a spec to :data:`PLAYER_SPECS`.

Players that depend on the game (the handcrafted ones, the network player) learn it at
``start()`` at the latest; given the game up front, their factories check at once that
they can play it, so that a bad spec fails before any match starts.

Example:
    >>> import numpy as np
    >>> player_names()  # doctest: +NORMALIZE_WHITESPACE
    ('random', 'cfr', 'handcrafted', 'cfr+nn', 'best-response', 'snake', 'idapos', 'rtmm',
     'rrtmm', 'rtsbot', 'alphabeta', 'pvs', 'mtdf', 'paranoid', 'maxn', 'mcts')
    >>> make_player("random", np.random.default_rng(0)).name
    'random'
    >>> parse_spec("cfr+nn:checkpoints/meier/best.pt")
    ('cfr+nn', 'checkpoints/meier/best.pt')
    >>> player = make_player("cfr+nn:checkpoints/meier/best.pt,mix=0.2", np.random.default_rng(0))
    >>> player.checkpoint, player.net_settings.uniform_mix
    (PosixPath('checkpoints/meier/best.pt'), 0.2)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path

import numpy as np

from ggp.errors import GameError
from ggp.game import Game
from ggp.players.base import Player
from ggp.players.cfr_player import CFRPlayer
from ggp.players.classic_player import ALGORITHMS as CLASSIC_ALGORITHMS
from ggp.players.classic_player import OPTIONS as CLASSIC_OPTIONS
from ggp.players.classic_player import ClassicPlayer
from ggp.players.classic_player import parse_options as parse_classic_options
from ggp.players.handcrafted import HandcraftedPlayer, handcrafted_kind, handcrafted_player
from ggp.players.idapos_player import IdaposPlayer, parse_idapos_options
from ggp.players.random_player import RandomPlayer
from ggp.players.rts_players import RtmmPlayer, parse_rtmm_options, rts_bot_player
from ggp.players.snake_player import snake_player

__all__ = [
    "PlayerRequest",
    "PlayerSpec",
    "PLAYER_SPECS",
    "player_names",
    "player_spec",
    "parse_spec",
    "make_player",
]


@dataclass(frozen=True)
class PlayerRequest:
    """What a factory gets to build one player.

    Attributes:
        rng: The player's source of randomness.
        game: The game it will play, when the caller knows it (None: learn it at start).
        argument: The text after ``NAME:`` in the spec (None if there was none).
    """

    rng: np.random.Generator
    game: Game | None = None
    argument: str | None = None


@dataclass(frozen=True)
class PlayerSpec:
    """How to make one kind of player.

    Attributes:
        name: The name a user types (``--vs random``).
        summary: One line for help texts.
        factory: Builds a fresh player from a :class:`PlayerRequest`.
        takes_argument: Whether ``NAME:ARGUMENT`` is accepted.
    """

    name: str
    summary: str
    factory: Callable[[PlayerRequest], Player]
    takes_argument: bool = False


def _handcrafted(request: PlayerRequest) -> Player:
    if request.game is not None:
        return handcrafted_player(request.game, request.rng)
    return HandcraftedPlayer(request.rng)


#: Options of ``cfr+nn:...`` (``NAME=VALUE``): what each one sets.
NET_OPTIONS = {
    "mix": "weight of uniform play in the model of the other roles, 0..1 (NetSettings.uniform_mix)",
    "model": "weight of that model in the search, 0..1 (CFRSettings.model_weight)",
    "search": "auto (mcts where the game's moves are public, as self-play), cfr or mcts "
    "(NetSettings.search)",
    "rollout": "search mcts: weight of random playouts in a leaf's value, 0..1 "
    "(NetSettings.rollout_weight)",
    "time": "seconds a move's search takes at most, > 0 (CFRSettings.max_time_s; default "
    "0.7, and never past the play clock less 0.15 s)",
}


def _cfr_nn(request: PlayerRequest) -> Player:
    """``cfr+nn[:PATH][,mix=M][,model=W][,search=S][,rollout=L][,time=T]`` (the path may
    also come last or not at all)."""
    from dataclasses import replace

    from ggp.players.net_player import PLAY_SETTINGS, SEARCHES, NetCFRPlayer, NetSettings, Search

    checkpoint: Path | None = None
    options: dict[str, float] = {}
    search: Search | None = None
    for item in (request.argument or "").split(","):
        key, equals, value = item.partition("=")
        if not equals:
            if item:
                checkpoint = Path(item)
            continue
        if key not in NET_OPTIONS:
            raise GameError(
                f"cfr+nn has no option {key!r} (options: {', '.join(sorted(NET_OPTIONS))})"
            )
        if key == "search":
            if value not in SEARCHES:
                raise GameError(
                    f"cfr+nn option search must be {', '.join(SEARCHES)}, not {value!r}"
                )
            search = value
            continue
        what = "a number of seconds > 0" if key == "time" else "a number in 0..1"
        problem = GameError(f"cfr+nn option {key} must be {what}, not {value!r}")
        try:
            number = float(value)
        except ValueError:
            raise problem from None
        if not (0.0 < number < math.inf if key == "time" else 0.0 <= number <= 1.0):
            raise problem
        options[key] = number
    defaults = NetSettings()
    most = options.get("time", PLAY_SETTINGS.max_time_s)
    player = NetCFRPlayer(
        checkpoint,
        settings=replace(
            PLAY_SETTINGS,
            model_weight=options.get("model", PLAY_SETTINGS.model_weight),
            max_time_s=most,
            min_time_s=min(PLAY_SETTINGS.min_time_s, most),
        ),
        rng=request.rng,
        net_settings=replace(
            defaults,
            uniform_mix=options.get("mix", defaults.uniform_mix),
            rollout_weight=options.get("rollout", defaults.rollout_weight),
            search=search if search is not None else defaults.search,
        ),
    )
    if request.game is not None:
        player.load(request.game)
    return player


def _best_response(request: PlayerRequest) -> Player:
    """``best-response[:random|handcrafted]``: the exact best response to that opponent,
    where one is implemented (Meier: both; Blind Tic-Tac-Toe: random)."""
    from ggp.players import blindtictactoe_values, meier_values

    opponent = request.argument or "random"
    if opponent not in ("random", "handcrafted"):
        raise GameError(f"best-response answers random or handcrafted, not {opponent!r}")
    if request.game is None:
        raise GameError("best-response is made for one game: give the game before the match")
    kind = handcrafted_kind(request.game)
    if kind == "meier":
        return meier_values.BestResponsePlayer(
            "random" if opponent == "random" else "handcrafted", request.rng
        )
    if (
        kind == "blindtictactoe"
        and opponent == "random"
        and blindtictactoe_values.models(request.game)
    ):
        return blindtictactoe_values.BestResponsePlayer()
    raise GameError(
        f"no exact best response to the {opponent} player in {request.game.description.path} "
        "(there are: Meier, to random and handcrafted; Blind Tic-Tac-Toe with a fair "
        "tiebreak, to random)"
    )


def _classic(request: PlayerRequest, name: str) -> Player:
    """``alphabeta``, ``pvs``, ``mtdf``, ``paranoid``, ``maxn``, ``mcts`` with options
    ``:KEY=VALUE,...`` (:data:`ggp.players.classic_player.OPTIONS`)."""
    player = ClassicPlayer(parse_classic_options(name, request.argument), request.rng)
    if request.game is not None:
        player.load(request.game)  # a checkpoint that does not fit fails here
    return player


#: Every player a command line can name, in the order help texts list them.
PLAYER_SPECS: tuple[PlayerSpec, ...] = (
    PlayerSpec("random", "uniformly random legal moves", lambda r: RandomPlayer(r.rng)),
    PlayerSpec(
        "cfr",
        "depth-limited CFR from sampled histories, random-playout leaves, about 1 s per move",
        lambda r: CFRPlayer(rng=r.rng),
    ),
    PlayerSpec(
        "handcrafted",
        "the published handcrafted player (Meier and Blind Tic-Tac-Toe only)",
        _handcrafted,
    ),
    PlayerSpec(
        "cfr+nn",
        "a trained network's search, PUCT where the moves are public, else CFR-D "
        "(cfr+nn:PATH; default checkpoints/GAME/latest.pt; options ,mix=M,model=W,"
        "search=S,rollout=L), about 1 s per move",
        _cfr_nn,
        takes_argument=True,
    ),
    PlayerSpec(
        "best-response",
        "the exact best response to an opponent (best-response:random or :handcrafted; "
        "Meier, and Blind Tic-Tac-Toe vs random): the ceiling of a table's column",
        _best_response,
        takes_argument=True,
    ),
    PlayerSpec(
        "snake",
        "a simple Battlesnake snake of the IDAPOS paper (snake:greedy, :aggressive, "
        ":tailchaser, :reflex; games/battlesnake/ only)",
        lambda r: snake_player(r.argument, r.rng),
        takes_argument=True,
    ),
    PlayerSpec(
        "idapos",
        "IDAPOS, the Battlesnake search: iterative deepening over the snakes within reach, "
        "the rest frozen (options mask=freeze|reflex|remove|lead, depth=N, margin=S; "
        "games/battlesnake/ only)",
        lambda r: IdaposPlayer(parse_idapos_options(r.argument), r.rng),
        takes_argument=True,
    ),
    PlayerSpec(
        "rtmm",
        "RTMM, real-time minimax with a time cutoff, iterative deepening in time (options "
        "eval=battlecity|rts|rts-cost|heuristic, step=N, time=S, margin=S, lookahead=N, idle=S)",
        lambda r: RtmmPlayer(parse_rtmm_options("rtmm", r.argument), r.rng),
        takes_argument=True,
    ),
    PlayerSpec(
        "rrtmm",
        "RRTMM: RTMM with a coin deciding who picks first at simultaneous nodes (options as rtmm)",
        lambda r: RtmmPlayer(parse_rtmm_options("rrtmm", r.argument), r.rng),
        takes_argument=True,
    ),
    PlayerSpec(
        "rtsbot",
        "a scripted bot of the RTMM paper (rtsbot:random, :follower for BattleCity; "
        ":stochastic, :rush for the 8x8 RTS; games/rts/ only)",
        lambda r: rts_bot_player(r.argument, r.rng),
        takes_argument=True,
    ),
    # Classic game-tree search (ggp.search.classic), perfect-information games.
    *(
        PlayerSpec(
            name,
            f"{summary} (options {','.join(f'{k}=' for k in CLASSIC_OPTIONS)})",
            partial(_classic, name=name),
            takes_argument=True,
        )
        for name, summary in CLASSIC_ALGORITHMS.items()
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


def parse_spec(text: str) -> tuple[str, str | None]:
    """``"NAME"`` or ``"NAME:ARGUMENT"`` as (name, argument or None).

    Raises:
        GameError: No player has that name, or it takes no argument and got one.
    """
    name, colon, argument = text.partition(":")
    spec = player_spec(name)
    if colon and not spec.takes_argument:
        raise GameError(f"the player {name!r} takes no argument (got {text!r})")
    return name, (argument if colon and argument else None)


def make_player(text: str, rng: np.random.Generator, game: Game | None = None) -> Player:
    """A fresh player of the kind ``text`` names, drawing its randomness from ``rng``.

    Args:
        text: A spec: ``NAME`` or ``NAME:ARGUMENT``.
        rng: The player's source of randomness.
        game: The game it will play, if known (lets the factory fail early).

    Raises:
        GameError: No player has that name, or the player cannot play ``game``.
    """
    name, argument = parse_spec(text)
    return player_spec(name).factory(PlayerRequest(rng, game, argument))


def split_specs(text: str) -> list[str]:
    """Comma-separated specs, as ``ggp eval --vs`` takes them.

    A spec's own options keep their commas: an item that does not start with a player's
    name continues the spec before it.

    Example:
        >>> split_specs("random,cfr+nn:run/best.pt,mix=0.2,handcrafted")
        ['random', 'cfr+nn:run/best.pt,mix=0.2', 'handcrafted']

    Raises:
        GameError: The first item names no player, or a spec is malformed.
    """
    specs: list[str] = []
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        if item.partition(":")[0] in player_names() or not specs:
            specs.append(item)
        else:
            specs[-1] += "," + item
    for spec in specs:
        parse_spec(spec)
    return specs
