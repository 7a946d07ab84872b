"""Tournaments (``ggp tournament``): a field of players, one per seat of a game with any
number of roles, ranked by mean placement, as the IDAPOS paper's Table 1 ranks its snakes.

A *field* is one player spec per player role (the same spec may fill several seats: the
paper seats two of each of four variants on its 8-snake board). Game ``i`` draws its own
seed and, from it, the seating: which spec plays which role (a uniform permutation), so
that no spec keeps a role that the rules favour. Each seat's *placement* (1 = best) comes
from the goals as the paper ranks: 1 + the seats with a higher goal + half of the others
with the same goal (:func:`~ggp.training.tune.placements`; a duel's winner places 1, a draw
1.5 each).

Per spec the table gives its placements' mean, standard deviation and the mean's standard
error, the share of its seats placed first outright, the depth its searches reached per
move (search players), and the referee's replacements (late or illegal moves) with the
longest move. The best spec is compared with the runner-up by
Welch's t over their placements, with the normal approximation's two-sided p (the paper:
t-test, alpha = 0.01); seats of one game are not independent, so this is a guide, not an
exact test.

Games run in parallel worker processes, and with ``log`` each finished game is appended
to a JSON-lines file and found there again, so a long tournament can be stopped and
resumed, on one machine or several (a game's seed depends on the field, the seed and its
index only).

Example:
    >>> welch([1.0, 2.0, 1.0, 2.0], [2.0, 3.0, 2.0, 3.0])
    (-2.449489742783178, 0.014305878435429655)
"""

from __future__ import annotations

import hashlib
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import numpy as np

from ggp.errors import GameError
from ggp.gdl.terms import Const
from ggp.training.config import Backend
from ggp.training.evaluate import (
    Left,
    depth_spread,
    game_id,
    left_row,
    play_logged,
    read_log,
    stopped,
)
from ggp.training.workers import WorkerPool, _worker_state, searched_depths

__all__ = [
    "TournamentTask",
    "TournamentGame",
    "Standing",
    "TournamentTable",
    "tournament",
    "tournament_left",
    "tournament_tasks",
    "format_tournament",
    "read_tournament_log",
    "run_tournament_game",
    "seating",
    "welch",
]

#: What identifies a game in a log: game id, field (sorted specs), seed, index, clock.
GameKey = tuple[str, tuple[str, ...], int, int, float]


@dataclass(frozen=True)
class TournamentTask:
    """One game of a tournament.

    Attributes:
        game_path: The game file.
        field: The tournament's specs, sorted (what the log keys on).
        seats: ``[player roles]`` the spec playing each player role, in game order.
        seed: The tournament's seed.
        index: The game's number in the tournament.
        game_seed: Seeds the game (the referee's chance and the players' streams).
        play_clock_s: Seconds per move (a later reply is replaced by a random move).
    """

    game_path: str
    field: tuple[str, ...]
    seats: tuple[str, ...]
    seed: int
    index: int
    game_seed: int
    play_clock_s: float


@dataclass(frozen=True)
class TournamentGame:
    """The outcome of a :class:`TournamentTask`, seat by seat (``[player roles]``).

    Attributes:
        goals: ``[player roles]`` the final goals.
        placements: ``[player roles]`` 1 = best (module docstring).
        replaced: ``[player roles]`` moves the referee replaced (late or illegal).
        max_move_s: ``[player roles]`` each seat's longest move.
        steps: Steps the game took.
        seconds: Time the game took.
        depths: ``[player roles][searched moves]`` the depth each search reached, for
            the search players that count them (:func:`~ggp.training.workers.searched_depths`;
            empty for others).
    """

    goals: tuple[int, ...]
    placements: tuple[float, ...]
    replaced: tuple[int, ...]
    max_move_s: tuple[float, ...]
    steps: int
    seconds: float
    depths: tuple[tuple[int, ...], ...] = ()


@dataclass(frozen=True)
class Standing:
    """One spec's line of the table.

    Attributes:
        spec: The player spec.
        seats: Placements counted (seats over all games).
        mean: Mean placement (1 = best).
        sd: Standard deviation of the placements.
        se: Standard error of the mean.
        first: Share of the seats placed first outright (placement 1), 0..1.
        replaced: Moves the referee replaced.
        max_move_s: The longest move.
        depth: ``(lowest, median, deepest)`` depth its searches reached per move (None
            for players that do not count it).
    """

    spec: str
    seats: int
    mean: float
    sd: float
    se: float
    first: float
    replaced: int
    max_move_s: float
    depth: tuple[float, float, float] | None = None


@dataclass(frozen=True)
class TournamentTable:
    """A tournament's result.

    Attributes:
        game: The game file.
        field: ``[player roles]`` the specs, sorted.
        games: Games played (and found in the log).
        play_clock_s: Seconds per move.
        standings: One per distinct spec, best (lowest mean placement) first.
        best_vs_next: Welch's t and the two-sided p of the best spec's placements against
            the runner-up's (None with fewer than two specs).
        mean_steps: Mean steps a game.
        seconds: Wall time of the command.
    """

    game: str
    field: tuple[str, ...]
    games: int
    play_clock_s: float
    standings: tuple[Standing, ...]
    best_vs_next: tuple[float, float] | None
    mean_steps: float
    seconds: float


def welch(a: Sequence[float], b: Sequence[float]) -> tuple[float, float]:
    """Welch's t of mean ``a`` less mean ``b`` and its two-sided p by the normal
    approximation (large samples); (0, 1) when either sample has no spread to measure."""
    if len(a) < 2 or len(b) < 2:
        return (0.0, 1.0)
    spread = statistics.variance(a) / len(a) + statistics.variance(b) / len(b)
    if spread == 0:
        return (0.0, 1.0)
    t = (statistics.mean(a) - statistics.mean(b)) / math.sqrt(spread)
    return (t, math.erfc(abs(t) / math.sqrt(2)))


def _game_seed(seed: int, field: Sequence[str], index: int) -> int:
    text = f"{seed}/{'|'.join(field)}/{index}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:6], "big")


def seating(field: Sequence[str], seed: int, index: int) -> tuple[tuple[str, ...], int]:
    """Game ``index``'s seats (``field`` permuted by its seed) and its seed.

    Example:
        >>> seating(["a", "b", "c"], 0, 0)[0]
        ('b', 'a', 'c')
    """
    ordered = sorted(field)
    game_seed = _game_seed(seed, ordered, index)
    order = np.random.default_rng(game_seed).permutation(len(ordered))
    return tuple(ordered[int(i)] for i in order), game_seed


def run_tournament_game(task: TournamentTask) -> TournamentGame:
    """Play a :class:`TournamentTask` (in a worker)."""
    from ggp.match import run_match
    from ggp.players.base import Player
    from ggp.players.registry import make_player
    from ggp.training.tune import placements

    started = time.monotonic()
    game = _worker_state().game(task.game_path)
    roles = game.player_roles
    streams = np.random.SeedSequence([task.game_seed, 3]).spawn(len(roles) + 1)
    players: dict[Const, Player] = {
        role: make_player(spec, np.random.default_rng(stream), game)
        for role, spec, stream in zip(roles, task.seats, streams[1:], strict=True)
    }
    record = run_match(
        game, players, np.random.default_rng(streams[0]), play_clock_s=task.play_clock_s
    )
    goals = tuple(record.goals[game.role_index(r)] for r in roles)
    columns = [game.role_index(r) for r in roles]
    return TournamentGame(
        goals=goals,
        placements=placements(goals),
        replaced=tuple(sum(1 for rep in record.replacements if rep.role == r.name) for r in roles),
        max_move_s=tuple(
            max((step[c] for step in record.move_seconds), default=0.0) for c in columns
        ),
        steps=len(record.joint_moves),
        seconds=time.monotonic() - started,
        depths=tuple(searched_depths(players[r]) for r in roles),
    )


def _key(task: TournamentTask, game: str | None = None) -> GameKey:
    return (
        game if game is not None else game_id(task.game_path),
        task.field,
        task.seed,
        task.index,
        task.play_clock_s,
    )


def _tupled(value: Any) -> Any:
    """JSON lists as tuples, nested ones too (the records' fields are tuples), anything
    else as it is."""
    return tuple(_tupled(v) for v in value) if isinstance(value, list) else value


def read_tournament_log(
    path: Path, *, repair: bool = True
) -> dict[GameKey, tuple[TournamentTask, TournamentGame]]:
    """The games of a :func:`tournament` log (:func:`~ggp.training.evaluate.read_log`,
    ``repair`` as there).

    Raises:
        GameError: A malformed line, quoted with its number.
    """

    def parse(record: dict[str, Any]) -> tuple[GameKey, tuple[TournamentTask, TournamentGame]]:
        task = TournamentTask(**{f.name: _tupled(record[f.name]) for f in fields(TournamentTask)})
        outcome = TournamentGame(
            **{
                f.name: _tupled(record[f.name])
                for f in fields(TournamentGame)
                if f.name in record  # fields with a default may be absent
            }
        )
        return _key(task, str(record["game"])), (task, outcome)

    return dict(read_log(path, "game", parse, repair=repair))


def tournament_tasks(
    game_path: Path, field: Sequence[str], games: int, seed: int, play_clock_s: float
) -> list[TournamentTask]:
    """The games of :func:`tournament`, each seated by :func:`seating`."""
    ordered = tuple(sorted(field))
    tasks = []
    for index in range(games):
        seats, game_seed = seating(ordered, seed, index)
        tasks.append(
            TournamentTask(str(game_path), ordered, seats, seed, index, game_seed, play_clock_s)
        )
    return tasks


def tournament_left(
    game_path: Path,
    field: Sequence[str],
    games: int,
    *,
    seed: int = 0,
    play_clock_s: float = 1.0,
    log: Path | None = None,
) -> tuple[Left, ...]:
    """What :func:`tournament` with these arguments would still play: one row, the
    field's; the log is only read (a run may be appending to it).

    Raises:
        GameError: ``log`` has a malformed line.
    """
    done = read_tournament_log(log, repair=False) if log is not None else {}
    tasks = tournament_tasks(game_path, field, games, seed, play_clock_s)
    found = [done[key][1].seconds for task in tasks if (key := _key(task)) in done]
    return (left_row("the field's games", games, found),)


def tournament(
    game_path: Path,
    field: Sequence[str],
    games: int,
    *,
    seed: int = 0,
    workers: int = 1,
    backend: Backend = "process",
    play_clock_s: float = 1.0,
    on_game: Callable[[], None] | None = None,
    log: Path | None = None,
    stop_at: float | None = None,
    clock: Callable[[], float] = time.time,
) -> TournamentTable:
    """Play ``games`` games of ``field`` (in parallel) and rank the specs.

    Args:
        game_path: The game file.
        field: One spec per player role of the game (repeats allowed; order is irrelevant).
        games: Games to play.
        seed: Seeds every game (seating included).
        workers: Parallel worker processes.
        backend: ``process``, ``ray`` or ``inline``.
        play_clock_s: Seconds per move; later replies are replaced by random moves.
        on_game: Called after each game (progress), also for each found in ``log``.
        log: A JSON-lines file each game is appended to as it ends; the games already
            there (same game, field, seed, index and clock) are not played again.
        stop_at: Start no game once ``clock()`` (seconds since the epoch) reaches it;
            those running then are played out and logged
            (:func:`~ggp.training.evaluate.play_logged`).
        clock: The wall clock ``stop_at`` is read on.

    Raises:
        GameError: ``field`` does not have one spec per player role, ``log`` has a
            malformed line, or ``stop_at`` is given without a ``log``.
        OutOfTime: Games were left unplayed at ``stop_at``
            (:func:`~ggp.training.evaluate.stopped`).
    """
    from ggp.game import Game

    started = time.monotonic()
    roles = Game.from_file(game_path).player_roles
    if len(field) != len(roles):
        raise GameError(
            f"{game_path} has {len(roles)} player roles, the field {len(field)} players: "
            f"{', '.join(field)}"
        )
    if stop_at is not None and log is None:
        raise GameError("a stop time needs a log (--log), to keep the games played")
    ordered = tuple(sorted(field))
    done = read_tournament_log(log) if log is not None else {}
    played: list[tuple[TournamentTask, TournamentGame]] = []

    def collect(task: TournamentTask, outcome: TournamentGame) -> None:
        played.append((task, outcome))
        if on_game is not None:
            on_game()

    tasks = []
    for task in tournament_tasks(game_path, field, games, seed, play_clock_s):
        found = done.get(_key(task))
        if found is None:
            tasks.append(task)
        else:
            collect(*found)
    with WorkerPool(backend, workers) as pool:
        unplayed = play_logged(
            pool, run_tournament_game, tasks, log=log, on_done=collect, stop_at=stop_at, clock=clock
        )
    if unplayed:
        raise stopped(stop_at, len(tasks) - unplayed, unplayed)
    return _table(game_path, ordered, played, play_clock_s, time.monotonic() - started)


def _table(
    game_path: Path,
    field: tuple[str, ...],
    played: Sequence[tuple[TournamentTask, TournamentGame]],
    play_clock_s: float,
    seconds: float,
) -> TournamentTable:
    by_spec: dict[str, list[float]] = {spec: [] for spec in field}
    replaced = dict.fromkeys(field, 0)
    longest = dict.fromkeys(field, 0.0)
    depths: dict[str, list[int]] = {spec: [] for spec in field}
    for task, outcome in played:
        for i, spec in enumerate(task.seats):
            by_spec[spec].append(outcome.placements[i])
            replaced[spec] += outcome.replaced[i]
            longest[spec] = max(longest[spec], outcome.max_move_s[i])
            if outcome.depths:
                depths[spec].extend(outcome.depths[i])
    standings = []
    for spec, values in by_spec.items():
        n = len(values)
        sd = statistics.stdev(values) if n > 1 else 0.0
        standings.append(
            Standing(
                spec=spec,
                seats=n,
                mean=statistics.mean(values) if values else math.nan,
                sd=sd,
                se=sd / math.sqrt(n) if n else math.nan,
                first=sum(v == 1.0 for v in values) / n if n else 0.0,
                replaced=replaced[spec],
                max_move_s=longest[spec],
                depth=depth_spread(depths[spec]),
            )
        )
    standings.sort(key=lambda s: (s.mean, s.spec))
    best_vs_next = (
        welch(by_spec[standings[0].spec], by_spec[standings[1].spec])
        if len(standings) > 1
        else None
    )
    return TournamentTable(
        game=str(game_path),
        field=field,
        games=len(played),
        play_clock_s=play_clock_s,
        standings=tuple(standings),
        best_vs_next=best_vs_next,
        mean_steps=statistics.mean(o.steps for _, o in played) if played else 0.0,
        seconds=seconds,
    )


def format_tournament(table: TournamentTable) -> str:
    """The table in Markdown: one line per spec, best first."""
    lines = [
        f"{Path(table.game).name}: {table.games} games, {table.play_clock_s:g} s per move, "
        f"{table.mean_steps:.0f} steps a game on average; placement 1 = best",
        "",
        "| player | seats | mean placement (sd) | se | first | depth median (lowest-deepest) "
        "| replaced | longest move s |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for s in table.standings:
        depth = "" if s.depth is None else f"{s.depth[1]:g} ({s.depth[0]:g}-{s.depth[2]:g})"
        lines.append(
            f"| `{s.spec}` | {s.seats} | {s.mean:.2f} ({s.sd:.2f}) | {s.se:.3f} | "
            f"{100 * s.first:.1f}% | {depth} | {s.replaced} | {s.max_move_s:.2f} |"
        )
    if table.best_vs_next is not None:
        t, p = table.best_vs_next
        lines.append("")
        lines.append(
            f"best against the runner-up: Welch t = {t:.2f}, two-sided p = {p:.2g} "
            "(normal approximation)"
        )
    return "\n".join(lines)
