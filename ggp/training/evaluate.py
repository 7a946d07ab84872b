"""Evaluation tables (``ggp eval``): a player against opponents, role by role.

Each cell is ``games`` matches of the player in one role against one opponent kind in
every other role, played in parallel worker processes, and scored as in the published
paper: out of 100, a win (the player's goal above every other player's) counts 1 and a
draw 0.5. The interval is the 95% Wilson score interval of the mean score.

Example:
    >>> [round(x, 4) for x in wilson_interval(0.97, 100)]
    [0.9155, 0.9897]
"""

from __future__ import annotations

import hashlib
import json
import math
import statistics
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from contextlib import nullcontext
from dataclasses import asdict, dataclass, fields
from datetime import UTC, datetime
from functools import lru_cache, partial
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ggp.errors import GameError, OutOfTime
from ggp.game import Game
from ggp.training.config import Backend
from ggp.training.workers import MatchOutput, MatchTask, WorkerPool, run_match_task

__all__ = [
    "Cell",
    "EvalTable",
    "Left",
    "depth_spread",
    "wilson_interval",
    "evaluate",
    "evaluate_left",
    "format_left",
    "format_table",
    "game_id",
    "left_row",
    "match_key",
    "match_seed",
    "match_tasks",
    "play_logged",
    "read_match_log",
    "read_log",
    "stopped",
    "log_record",
    "speed_probe",
]


T = TypeVar("T")


class _GameTask(Protocol):
    @property
    def game_path(self) -> str: ...


TaskT = TypeVar("TaskT", bound=_GameTask)


def wilson_interval(mean: float, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``mean`` observed over ``n`` trials."""
    if n <= 0:
        return (0.0, 1.0)
    denominator = 1 + z * z / n
    centre = (mean + z * z / (2 * n)) / denominator
    half = z * math.sqrt(mean * (1 - mean) / n + z * z / (4 * n * n)) / denominator
    return (max(0.0, centre - half), min(1.0, centre + half))


@dataclass(frozen=True)
class Cell:
    """One cell of the table: the player as ``role`` against ``opponent``.

    Attributes:
        role: The player's role.
        opponent: The opponents' spec.
        games: Matches played.
        score: Mean score, 0..100.
        low: Lower end of the 95% interval, 0..100.
        high: Upper end of the 95% interval, 0..100.
        mean_goal: The player's mean goal.
        replaced: The player's moves the referee replaced (late or illegal).
        max_move_s: The player's longest time for one move.
        wins: Matches scored 1 (won).
        draws: Matches scored strictly between 0 and 1.
        losses: Matches scored 0.
        depth: ``(lowest, median, deepest)`` depth the player's searches reached per
            move over the cell's matches (classic-search players; None for others).
        opponent_replaced: The opponents' moves the referee replaced, in the matches
            that logged it (:attr:`MatchOutput.opponent_replaced`); None if none did.
        opponent_depth: As ``depth``, the opponents' searches, in the matches that logged
            them (:attr:`MatchOutput.opponent_depths`); None if none did or they do not
            count depths.
    """

    role: str
    opponent: str
    games: int
    score: float
    low: float
    high: float
    mean_goal: float
    replaced: int
    max_move_s: float
    wins: int = 0
    draws: int = 0
    losses: int = 0
    depth: tuple[int, float, int] | None = None
    opponent_replaced: int | None = None
    opponent_depth: tuple[int, float, int] | None = None


@dataclass(frozen=True)
class EvalTable:
    """A full table.

    Attributes:
        game: The game file.
        player: The player's spec.
        opponents: ``[O]`` the opponents' specs (columns).
        roles: ``[P]`` the roles played (rows).
        cells: ``[P * O]`` row by row.
        seconds: Wall time.
    """

    game: str
    player: str
    opponents: tuple[str, ...]
    roles: tuple[str, ...]
    cells: tuple[Cell, ...]
    seconds: float

    def cell(self, role: str, opponent: str) -> Cell:
        """The cell of ``role`` against ``opponent``."""
        for cell in self.cells:
            if cell.role == role and cell.opponent == opponent:
                return cell
        raise KeyError((role, opponent))


MatchKey = tuple[str, str, str, str, int, float]


@lru_cache(maxsize=64)
def game_id(game_path: str) -> str:
    """The game of a match log: the file's name and a digest of its text, so that logs
    written from another folder or machine are found again.

    Raises:
        GameError: The file cannot be read.
    """
    path = Path(game_path)
    try:
        digest = hashlib.sha256(path.read_bytes()).hexdigest()[:12]
    except OSError as e:
        raise GameError(f"{game_path}: cannot read the game ({e.strerror})") from e
    return f"{path.name}:{digest}"


def match_key(task: MatchTask, game: str | None = None) -> MatchKey:
    """What identifies a match in a log: game (``game``, else :func:`game_id` of the
    task's file), player, opponents, role, seed, clock."""
    return (
        game if game is not None else game_id(task.game_path),
        task.player,
        task.opponent,
        task.role,
        task.seed,
        task.play_clock_s,
    )


@lru_cache(maxsize=1)
def host_description() -> str:
    """The processor and core count, written beside each logged match (tables merged
    from several machines say which played what). Read once a process: the machine
    does not change under it."""
    import os
    import platform

    model = platform.processor() or platform.uname()[4]
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{model}, {os.cpu_count()} cores"


def match_seed(seed: int, role: str, opponent: str, index: int) -> int:
    """The seed of match ``index`` of the cell of ``role`` against ``opponent``: the
    same whatever else the table holds, so that a cell can be played in parts, by
    different commands (``--vs random`` now, ``--vs random,mcts`` later) and machines,
    into one log."""
    text = f"{seed}/{role}/{opponent}/{index}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:6], "big")


def read_log(
    path: Path, what: str, parse: Callable[[dict[str, Any]], T], *, repair: bool = True
) -> list[T]:
    """``parse`` of each record of a JSON-lines log of finished games (none if the file
    does not exist), and the file readied for appending: a last line without its newline,
    cut off by a kill, is dropped (that game is played again). With ``repair=False`` the
    file is only read (a run may be appending to it): such a line is skipped.

    Raises:
        GameError: A malformed line (``parse`` raised ValueError, KeyError or TypeError),
            quoted with its number, as "not a ``what`` record".
    """
    if not path.exists():
        return []
    data = path.read_bytes()
    if data and not data.endswith(b"\n"):
        data = data[: data.rfind(b"\n") + 1]  # appending after it would spoil a record
        if repair:
            path.write_bytes(data)
    found = []
    for number, line in enumerate(data.decode("utf-8").split("\n"), start=1):
        if not line.strip():
            continue
        try:
            found.append(parse(json.loads(line)))
        except (ValueError, KeyError, TypeError) as e:
            raise GameError(f"{path}:{number}: not a {what} record ({e}): {line[:120]!r}") from e
    return found


def speed_probe(iterations: int = 200_000) -> float:
    """How fast this process runs plain Python now: millions of iterations a second of a
    fixed loop, timed by the wall clock (a few hundredths of a second).
    :func:`play_logged` measures it in the worker before a game (at most every 30 s) and
    logs it beside the game as ``speed``, since the clocked searches of a table merged
    over days search as fast as the machine ran then and the machine's name does not say
    that: the same "AMD EPYC, 2 cores" ran plain Python 2.3 times slower on 2026-12-01
    than on 2026-11-27.

    Example:
        >>> speed_probe(1000) > 0
        True
    """
    start = time.perf_counter()
    total = 0
    for i in range(iterations):
        total += i ^ 7
    return round(iterations / max(time.perf_counter() - start, 1e-9) / 1e6, 2)


_PROBE_EVERY_S = 30.0
_last_probe: list[float] = []  # this process's last probe: [monotonic time, speed]


def _probed(function: Callable[[Any], T], task: Any) -> tuple[float, T]:
    """``function(task)`` with the worker's :func:`speed_probe`, measured just before it
    where the last one is older than ``_PROBE_EVERY_S`` (games of milliseconds do not pay
    for one each)."""
    now = time.monotonic()
    if not _last_probe or now - _last_probe[0] >= _PROBE_EVERY_S:
        _last_probe[:] = [now, speed_probe()]
    return _last_probe[1], function(task)


def log_record(game_path: str, *parts: Any, speed: float | None = None) -> str:
    """One log line: the game's :func:`game_id`, the fields of each dataclass of
    ``parts``, the machine (:func:`host_description`), its ``speed``
    (:func:`speed_probe`, where given) and when the game ended (now, UTC to the second: a
    table played in runs over days says when each part was played), as JSON with its
    newline."""
    record: dict[str, Any] = {"game": game_id(game_path)}
    for part in parts:
        record.update(asdict(part))
    record["machine"] = host_description()
    if speed is not None:
        record["speed"] = speed
    ended = datetime.now(UTC).replace(microsecond=0)
    record["finished"] = ended.isoformat().replace("+00:00", "Z")
    return json.dumps(record) + "\n"


def play_logged(
    pool: WorkerPool,
    function: Callable[[TaskT], T],
    tasks: Sequence[TaskT],
    *,
    log: Path | None,
    on_done: Callable[[TaskT, T], None],
    stop_at: float | None = None,
    clock: Callable[[], float] = time.time,
) -> int:
    """Run ``function`` on each of ``tasks`` in ``pool``, at most ``pool.workers`` at a
    time and in their order, appending each game to ``log`` (:func:`log_record`) and
    passing it to ``on_done`` as it ends; each game's record carries the worker's
    :func:`speed_probe` from before it (at most 30 s old). Once ``clock()`` (seconds
    since the epoch) reaches ``stop_at``, no task is started: those running finish and
    are logged. Returns how many tasks were not started.
    """
    waiting = iter(tasks)
    pending: dict[Future[tuple[float, T]], TaskT] = {}
    probed = partial(_probed, function)  # one callable: the Ray backend keeps one remote each
    started = 0

    def start() -> None:
        nonlocal started
        while len(pending) < max(1, pool.workers):
            if stop_at is not None and clock() >= stop_at:
                return
            task = next(waiting, None)
            if task is None:
                return
            pending[pool.submit(probed, task)] = task
            started += 1

    with open(log, "a", encoding="utf-8") if log is not None else nullcontext() as out:
        start()
        while pending:
            done, _ = wait(pending, return_when=FIRST_COMPLETED)
            for future in [f for f in pending if f in done]:  # in the order they started
                task = pending.pop(future)
                speed, output = future.result()
                if out is not None:
                    out.write(log_record(task.game_path, task, output, speed=speed))
                    out.flush()
                on_done(task, output)
            start()
    return len(tasks) - started


def stopped(stop_at: float | None, played: int, left: int) -> OutOfTime:
    """The :class:`~ggp.errors.OutOfTime` of a table stopped at ``stop_at`` after playing
    ``played`` games in this run, with ``left`` not started.

    Example:
        >>> print(stopped(0.0, 3, 7))  # doctest: +ELLIPSIS +NORMALIZE_WHITESPACE
        stopped at 19...: 3 game(s) played in this run and logged, 7 not started; run
        the command again to go on
    """
    when = datetime.fromtimestamp(stop_at or 0.0).isoformat(" ", "seconds")
    return OutOfTime(
        f"stopped at {when}: {played} game(s) played in this run and logged, {left} not "
        "started; run the command again to go on"
    )


def read_match_log(path: Path, *, repair: bool = True) -> dict[MatchKey, MatchOutput]:
    """The matches of an :func:`evaluate` log, by :func:`match_key` (:func:`read_log`,
    ``repair`` as there).

    Raises:
        GameError: A malformed line, quoted with its number.
    """
    task_fields = [f.name for f in fields(MatchTask)]
    output_fields = [f.name for f in fields(MatchOutput)]

    def parse(record: dict[str, Any]) -> tuple[MatchKey, MatchOutput]:
        task = MatchTask(**{name: record[name] for name in task_fields})
        values = {name: record[name] for name in output_fields if name in record}
        values["depths"] = tuple(values.get("depths", ()))
        if values.get("opponent_depths") is not None:
            values["opponent_depths"] = tuple(values["opponent_depths"])
        return match_key(task, str(record["game"])), MatchOutput(**values)  # file elsewhere?

    return dict(read_log(path, "match", parse, repair=repair))


def match_tasks(
    game_path: Path,
    player: str,
    opponents: Sequence[str],
    roles: Sequence[str],
    games: int,
    seed: int,
    play_clock_s: float,
) -> list[MatchTask]:
    """The matches of :func:`evaluate`'s table, cell by cell (row by row), ``games`` a
    cell, each with its :func:`match_seed`."""
    return [
        MatchTask(
            game_path=str(game_path),
            player=player,
            opponent=opponent,
            role=role,
            seed=match_seed(seed, role, opponent, i),
            play_clock_s=play_clock_s,
        )
        for role in roles
        for opponent in opponents
        for i in range(games)
    ]


@dataclass(frozen=True)
class Left:
    """What a resumable table (``ggp eval`` or ``ggp tournament`` with ``--log``) has
    still to play in one of its cells (``--dry-run``).

    Attributes:
        cell: Which games (``blue vs rtmm:time=0.1``; a tournament: ``the field's games``).
        logged: The cell's games the log holds.
        asked: The cell's games the command asks for.
        seconds: Mean wall time of the cell's logged games (None: none logged).
        like: The length of games like the cell's (None: none logged), which times a
            cell with none of its own better than the mean of the player's other cells
            (a search against a search may play to the tick cap where against a bot it
            ends early): the mean of the player's games against the same opponent in
            the other seats, else the median over the other players in the same seat
            against that opponent of each one's mean (so that a few players who lose
            quickly do not set it).
    """

    cell: str
    logged: int
    asked: int
    seconds: float | None
    like: float | None = None


def left_row(cell: str, asked: int, found: Sequence[float], like: float | None = None) -> Left:
    """The :class:`Left` of a cell of ``asked`` games of which the log holds games of
    ``found`` seconds each, games like them (:attr:`Left.like`) lasting ``like``."""
    return Left(cell, len(found), asked, statistics.mean(found) if found else None, like)


def like_seconds(
    lengths: Mapping[tuple[str, str, str], Sequence[float]], player: str, seat: str, opponent: str
) -> float | None:
    """How long games like a cell of ``player`` in ``seat`` against ``opponent`` last
    (:attr:`Left.like`), from the logged games' ``lengths`` by (player, seat, opponent).

    Example:
        >>> lengths = {("ab", "blue", "rtmm"): [300.0, 304.0], ("bot", "red", "rtmm"): [20.0],
        ...            ("nn", "red", "rtmm"): [290.0], ("mcts", "red", "rtmm"): [310.0]}
        >>> like_seconds(lengths, "ab", "red", "rtmm")  # its own games in the other seat
        302.0
        >>> like_seconds(lengths, "x", "red", "rtmm")  # the median of the others in the seat
        290.0
        >>> like_seconds(lengths, "x", "red", "rush") is None
        True
    """
    mirror = [
        seconds
        for (other, role, against), found in lengths.items()
        if other == player and role != seat and against == opponent
        for seconds in found
    ]
    if mirror:
        return statistics.mean(mirror)
    others = [
        statistics.mean(found)
        for (other, role, against), found in lengths.items()
        if other != player and role == seat and against == opponent and found
    ]
    return statistics.median(others) if others else None


def evaluate_left(
    game_path: Path,
    player: str,
    opponents: Sequence[str],
    roles: Sequence[str],
    games: int,
    *,
    seed: int = 0,
    play_clock_s: float = 1.0,
    log: Path | None = None,
) -> tuple[Left, ...]:
    """What :func:`evaluate` with these arguments would still play, cell by cell; the
    log is only read (a run may be appending to it).

    Raises:
        GameError: ``log`` has a malformed line.
    """
    done = read_match_log(log, repair=False) if log is not None else {}
    found: dict[tuple[str, str], list[float]] = {
        (role, opponent): [] for role in roles for opponent in opponents
    }
    for task in match_tasks(game_path, player, opponents, roles, games, seed, play_clock_s):
        output = done.get(match_key(task))
        if output is not None:
            found[(task.role, task.opponent)].append(output.seconds)
    lengths: dict[tuple[str, str, str], list[float]] = {}  # (player, seat, opponent)
    game = game_id(game_path)
    for (played, other, opponent, role, _, clock), output in done.items():
        if played == game and clock == play_clock_s:
            lengths.setdefault((other, role, opponent), []).append(output.seconds)
    return tuple(
        left_row(
            f"{role} vs {opponent}", games, seconds, like_seconds(lengths, player, role, opponent)
        )
        for (role, opponent), seconds in found.items()
    )


def format_left(rows: Sequence[Left]) -> str:
    """:func:`evaluate_left`'s (or a tournament's) rows as a Markdown table, with the
    games left and the core-hours they take at one game a worker: each cell at its
    logged games' mean length; a cell with none (in brackets) at that of the games like
    it (:attr:`Left.like`), else at the mean of all the rows' logged games.

    Example:
        >>> print(format_left([Left("blue vs b", 3, 10, 360.0), Left("red vs b", 0, 10, None),
        ...                    Left("red vs c", 0, 10, None, 720.0)]))
        | cell | in the log | left | s a game | core-hours left |
        | --- | --- | --- | --- | --- |
        | blue vs b | 3 of 10 | 7 | 360 | 0.7 |
        | red vs b | 0 of 10 | 10 | (360) | 1.0 |
        | red vs c | 0 of 10 | 10 | (720) | 2.0 |
        left: 27 of 30 games, about 3.7 core-hours (at one game a worker; in brackets,
        where a cell has none logged: its player's games against its opponent in the
        other seat, else the median of other players' in its seat, else every game)
    """
    logged = sum(r.logged for r in rows)
    overall = (
        sum(r.logged * r.seconds for r in rows if r.seconds is not None) / logged
        if logged
        else None
    )
    lines = [
        "| cell | in the log | left | s a game | core-hours left |",
        "| --- | --- | --- | --- | --- |",
    ]
    hours = 0.0
    unknown = 0
    borrowed = False
    for r in rows:
        left = r.asked - r.logged
        own = r.seconds is not None
        seconds = r.seconds if own else r.like if r.like is not None else overall
        if seconds is None:
            shown, cost = "", ""
            unknown += left
        else:
            shown = f"{seconds:.0f}" if own else f"({seconds:.0f})"
            borrowed = borrowed or (not own and left > 0)
            hours += left * seconds / 3600
            cost = f"{left * seconds / 3600:.1f}"
        lines.append(f"| {r.cell} | {r.logged} of {r.asked} | {left} | {shown} | {cost} |")
    total_left = sum(r.asked - r.logged for r in rows)
    total = f"left: {total_left} of {sum(r.asked for r in rows)} games"
    if unknown:
        total += ", no game logged to time them"
    else:
        total += f", about {hours:.1f} core-hours (at one game a worker"
        if borrowed:
            total += (
                "; in brackets,\nwhere a cell has none logged: its player's games against"
                " its opponent in the\nother seat, else the median of other players' in its"
                " seat, else every game"
            )
        total += ")"
    lines.append(total)
    return "\n".join(lines)


def evaluate(
    game_path: Path,
    player: str,
    opponents: Sequence[str],
    roles: Sequence[str],
    games: int,
    *,
    seed: int = 0,
    workers: int = 1,
    backend: Backend = "process",
    play_clock_s: float = 1.0,
    on_match: Callable[[], None] | None = None,
    log: Path | None = None,
    stop_at: float | None = None,
    clock: Callable[[], float] = time.time,
) -> EvalTable:
    """Play every cell's matches (in parallel) and collect the table.

    Args:
        game_path: The game file.
        player: The evaluated player's spec.
        opponents: One column per opponent spec.
        roles: One row per role of the evaluated player.
        games: Matches per cell.
        seed: Seeds every match (match ``i`` of a cell gets its own stream).
        workers: Parallel worker processes.
        backend: ``process``, ``ray`` or ``inline``.
        play_clock_s: Seconds per move; later replies are replaced by random moves.
        on_match: Called after each match (progress), also for each found in ``log``.
        log: A JSON-lines file: each match is appended as it ends, and the matches
            already there (same game, players, role, seed and clock) are not played
            again, so that a long table can be stopped and resumed.
        stop_at: Start no match once ``clock()`` (seconds since the epoch) reaches it;
            those running then are played out and logged (:func:`play_logged`).
        clock: The wall clock ``stop_at`` is read on.

    Raises:
        GameError: ``log`` has a malformed line (a cut-off last line is dropped), or
            ``stop_at`` is given without a ``log``.
        OutOfTime: Matches were left unplayed at ``stop_at`` (:func:`stopped`).
    """
    if stop_at is not None and log is None:
        raise GameError("a stop time needs a log (--log), to keep the games played")
    started = time.monotonic()
    done = read_match_log(log) if log is not None else {}
    results: dict[tuple[str, str], list[MatchOutput]] = {
        (role, opponent): [] for role in roles for opponent in opponents
    }

    def collect(task: MatchTask, output: MatchOutput) -> None:
        results[(task.role, task.opponent)].append(output)
        if on_match is not None:
            on_match()

    tasks = []
    for task in match_tasks(game_path, player, opponents, roles, games, seed, play_clock_s):
        found = done.get(match_key(task))
        if found is None:
            tasks.append(task)
        else:
            collect(task, found)
    with WorkerPool(backend, workers) as pool:
        unplayed = play_logged(
            pool, run_match_task, tasks, log=log, on_done=collect, stop_at=stop_at, clock=clock
        )
    if unplayed:
        raise stopped(stop_at, len(tasks) - unplayed, unplayed)
    cells = []
    for role in roles:
        for opponent in opponents:
            outs = results[(role, opponent)]
            mean = sum(o.score for o in outs) / len(outs)
            low, high = wilson_interval(mean, len(outs))
            depths = [d for o in outs for d in o.depths]
            theirs = [o.opponent_replaced for o in outs if o.opponent_replaced is not None]
            their_depths = [d for o in outs for d in o.opponent_depths or ()]
            cells.append(
                Cell(
                    role=role,
                    opponent=opponent,
                    games=len(outs),
                    score=100 * mean,
                    low=100 * low,
                    high=100 * high,
                    mean_goal=sum(o.goal for o in outs) / len(outs),
                    replaced=sum(o.replaced for o in outs),
                    max_move_s=max(o.max_move_s for o in outs),
                    wins=sum(o.score == 1 for o in outs),
                    draws=sum(0 < o.score < 1 for o in outs),
                    losses=sum(o.score == 0 for o in outs),
                    depth=depth_spread(depths),
                    opponent_replaced=sum(theirs) if theirs else None,
                    opponent_depth=depth_spread(their_depths),
                )
            )
    return EvalTable(
        game=str(game_path),
        player=player,
        opponents=tuple(opponents),
        roles=tuple(roles),
        cells=tuple(cells),
        seconds=time.monotonic() - started,
    )


def depth_spread(depths: Sequence[int]) -> tuple[int, float, int] | None:
    """``(lowest, median, deepest)`` of ``depths``; None if empty.

    Example:
        >>> depth_spread([5, 3, 4, 9]), depth_spread([])
        ((3, 4.5, 9), None)
    """
    return (min(depths), statistics.median(depths), max(depths)) if depths else None


def format_table(table: EvalTable, wdl: bool = False) -> str:
    """The table in Markdown, as the published paper's: score out of 100 with the 95%
    interval, one row per role, one column per opponent; with ``wdl``, each cell's
    wins-draws-losses as well (the RTMM paper's W-T-L)."""
    name = Path(table.game).stem
    lines = [
        "| game, agent | " + " | ".join(f"vs {o}" for o in table.opponents) + " |",
        "| --- |" + " --- |" * len(table.opponents),
    ]
    for role in table.roles:
        row = [f"{name}, {table.player} as {role}"]
        for opponent in table.opponents:
            c = table.cell(role, opponent)
            text = f"{c.score:.1f} [{c.low:.1f}, {c.high:.1f}]"
            row.append(f"{c.wins}-{c.draws}-{c.losses}: {text}" if wdl else text)
        lines.append("| " + " | ".join(row) + " |")
    sections: list[tuple[str, Callable[[Cell], tuple[int, float, int] | None]]] = [
        (table.player, lambda c: c.depth),
        ("the opponent", lambda c: c.opponent_depth),
    ]
    for whose, depth_of in sections:
        if all(depth_of(c) is None for c in table.cells):
            continue
        lines += [
            "",
            f"depth {whose} reached per searched move: median (lowest-deepest)",
            "| game, agent | " + " | ".join(f"vs {o}" for o in table.opponents) + " |",
            "| --- |" + " --- |" * len(table.opponents),
        ]
        for role in table.roles:
            row = [f"{name}, {table.player} as {role}"]
            for opponent in table.opponents:
                d = depth_of(table.cell(role, opponent))
                row.append("-" if d is None else f"{d[1]:g} ({d[0]}-{d[2]})")
            lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


def default_roles(game: Game) -> tuple[str, ...]:
    """Every role but ``random``."""
    return tuple(r.name for r in game.player_roles)
