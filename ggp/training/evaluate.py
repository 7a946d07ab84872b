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

import math
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from dataclasses import dataclass
from pathlib import Path

from ggp.game import Game
from ggp.training.config import Backend
from ggp.training.workers import MatchOutput, MatchTask, WorkerPool, run_match_task

__all__ = ["Cell", "EvalTable", "wilson_interval", "evaluate", "format_table"]


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
        on_match: Called after each match (progress).
    """
    import time

    started = time.monotonic()
    tasks: list[tuple[str, str, Future[MatchOutput]]] = []
    with WorkerPool(backend, workers) as pool:
        for r, role in enumerate(roles):
            for o, opponent in enumerate(opponents):
                for i in range(games):
                    task = MatchTask(
                        game_path=str(game_path),
                        player=player,
                        opponent=opponent,
                        role=role,
                        seed=seed * 1_000_003 + (r * 1000 + o) * 100_000 + i,
                        play_clock_s=play_clock_s,
                    )
                    tasks.append((role, opponent, pool.submit(run_match_task, task)))
        results: dict[tuple[str, str], list[MatchOutput]] = {}
        for role, opponent, future in tasks:
            results.setdefault((role, opponent), []).append(future.result())
            if on_match is not None:
                on_match()
    cells = []
    for role in roles:
        for opponent in opponents:
            outs = results[(role, opponent)]
            mean = sum(o.score for o in outs) / len(outs)
            low, high = wilson_interval(mean, len(outs))
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
    return "\n".join(lines)


def default_roles(game: Game) -> tuple[str, ...]:
    """Every role but ``random``."""
    return tuple(r.name for r in game.player_roles)
