"""Work that runs in worker processes (local processes or Ray tasks): self-play games,
evaluation snapshots and evaluation matches.

Each task is plain picklable data carrying everything it needs — the game file, the
settings, the network weights as numpy arrays (so every task plays with the latest
model) and its seeds — and returns plain data. A worker process keeps the games it has
loaded (grounding and compiling a game takes a moment) and one network per game,
reloading only the weights.

:class:`WorkerPool` runs tasks on ``process`` (a local process pool), ``ray`` (Ray
remote tasks, ``pip install ray``; a local Ray instance is started unless one is
running) or ``inline`` (in the calling process, for tests), always returning
:class:`concurrent.futures.Future` objects. Local workers ignore SIGINT: a Ctrl-C (or a
``kill -INT`` of the command) interrupts the calling process, which then stops its workers
at once, with the tasks they were running (a log keeps every task that had finished).
"""

from __future__ import annotations

import logging
import multiprocessing
import signal
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import numpy.typing as npt
import torch

from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.terms import Const
from ggp.nn.features import GameEncoding
from ggp.nn.model import NetShape, PolicyValueNet
from ggp.nn.net_evaluator import NetEvaluator
from ggp.training.config import Backend, TrainConfig
from ggp.training.replay import Positions
from ggp.training.selfplay import play_selfplay_games, selfplay_precision

__all__ = [
    "Weights",
    "SelfPlayTask",
    "SelfPlayOutput",
    "SnapshotTask",
    "SnapshotOutput",
    "MatchTask",
    "MatchOutput",
    "run_selfplay",
    "run_snapshot",
    "run_match_task",
    "WorkerPool",
    "weights_of",
    "game_seed",
    "searched_depths",
]

logger = logging.getLogger(__name__)

#: A network's state_dict as numpy arrays (cheap to pickle).
Weights = dict[str, npt.NDArray[Any]]

T = TypeVar("T")


def weights_of(net: torch.nn.Module) -> Weights:
    """The network's weights as numpy arrays (copies)."""
    return {k: v.detach().cpu().numpy().copy() for k, v in net.state_dict().items()}


def game_seed(seed: int, kind: int, index: int) -> np.random.SeedSequence:
    """The seed of game ``index`` of task kind ``kind`` (0 self-play, 1 snapshot, 2 match)."""
    return np.random.SeedSequence([seed, kind, index])


# --------------------------------------------------------------------------- worker state


class _WorkerState:
    """What one worker process keeps between tasks."""

    def __init__(self) -> None:
        self.games: dict[str, Game] = {}
        self.nets: dict[tuple[str, NetShape], NetEvaluator] = {}

    def game(self, path: str) -> Game:
        game = self.games.get(path)
        if game is None:
            game = self.games[path] = Game.from_file(path)
        return game

    def evaluator(
        self, path: str, shape: NetShape, weights: Weights, precision: str = "float32"
    ) -> NetEvaluator:
        key = (path, shape)
        evaluator = self.nets.get(key)
        if evaluator is None:
            game = self.game(path)
            evaluator = NetEvaluator(PolicyValueNet(shape), GameEncoding(game))
            self.nets[key] = evaluator
        evaluator.net.load_state_dict({k: torch.from_numpy(v) for k, v in weights.items()})
        evaluator.net.eval()
        evaluator.clear_cache()
        evaluator.precision = precision
        return evaluator


_STATE: _WorkerState | None = None


def _worker_state() -> _WorkerState:
    global _STATE
    if _STATE is None:
        torch.set_num_threads(1)
        _STATE = _WorkerState()
    return _STATE


# --------------------------------------------------------------------------- self-play


@dataclass(frozen=True)
class SelfPlayTask:
    """Play ``len(indices)`` self-play games with the given weights.

    Attributes:
        game_path: The game file.
        config: The training settings.
        shape: The network's shape.
        weights: The network's weights.
        version: Optimiser steps behind these weights.
        indices: Game numbers (each seeds its own game).
    """

    game_path: str
    config: TrainConfig
    shape: NetShape
    weights: Weights
    version: int
    indices: tuple[int, ...]


@dataclass(frozen=True)
class SelfPlayOutput:
    """Positions from a :class:`SelfPlayTask`.

    Attributes:
        positions: All positions of the task's games.
        games: Games played.
        steps: Joint moves played, in all.
        decisions: Searches run, in all.
        goals: ``[games][R]`` the final goals.
        seconds: Time spent.
        version: The weights' version.
    """

    positions: Positions
    games: int
    steps: int
    decisions: int
    goals: tuple[tuple[int, ...], ...]
    seconds: float
    version: int


def run_selfplay(task: SelfPlayTask) -> SelfPlayOutput:
    """Run a :class:`SelfPlayTask` (in a worker)."""
    started = time.monotonic()
    state = _worker_state()
    game = state.game(task.game_path)
    config = task.config
    evaluator = state.evaluator(
        task.game_path, task.shape, task.weights, selfplay_precision(config)
    )
    parts: list[Positions] = []
    goals: list[tuple[int, ...]] = []
    steps = decisions = 0
    rngs = [np.random.default_rng(game_seed(config.seed, 0, index)) for index in task.indices]
    for result in play_selfplay_games(
        game, evaluator, config, rngs, parallel=config.parallel_games
    ):
        parts.append(result.positions)
        goals.append(result.goals)
        steps += result.steps
        decisions += result.decisions
    return SelfPlayOutput(
        positions=Positions.concatenate(parts),
        games=len(task.indices),
        steps=steps,
        decisions=decisions,
        goals=tuple(goals),
        seconds=time.monotonic() - started,
        version=task.version,
    )


# --------------------------------------------------------------------------- snapshots


@dataclass(frozen=True)
class SnapshotTask:
    """Play the network player against the random player, ``games`` games per role.

    Attributes:
        game_path: The game file.
        shape: The network's shape.
        weights: The network's weights.
        version: Optimiser steps behind these weights.
        games: Games per role.
        time_s: Search time per move.
        seed: Seeds the games.
        rollout_weight: The network player's weight of a random playout in a leaf value.
    """

    game_path: str
    shape: NetShape
    weights: Weights
    version: int
    games: int
    time_s: float
    seed: int
    rollout_weight: float = 0.5


@dataclass(frozen=True)
class SnapshotOutput:
    """Scores of a :class:`SnapshotTask`.

    Attributes:
        roles: ``[P]`` the roles played.
        scores: ``[P]`` score per role vs random, 0..100 (win 1, draw 0.5).
        version: The weights' version.
        seconds: Time spent.
    """

    roles: tuple[str, ...]
    scores: tuple[float, ...]
    version: int
    seconds: float


def match_score(goals: tuple[int, ...], game: Game, role: Const) -> float:
    """1 for a win (the role's goal above every other player's), 0.5 for a draw, else 0."""
    mine = goals[game.role_index(role)]
    others = [goals[game.role_index(r)] for r in game.player_roles if r != role]
    if not others:
        return mine / 100.0
    best = max(others)
    return 1.0 if mine > best else 0.5 if mine == best else 0.0


def run_snapshot(task: SnapshotTask) -> SnapshotOutput:
    """Run a :class:`SnapshotTask` (in a worker)."""
    from ggp.match import run_match
    from ggp.players.base import Player
    from ggp.players.cfr_player import CFRSettings
    from ggp.players.net_player import NetCFRPlayer, NetSettings
    from ggp.players.random_player import RandomPlayer

    started = time.monotonic()
    state = _worker_state()
    game = state.game(task.game_path)
    evaluator = state.evaluator(task.game_path, task.shape, task.weights)
    settings = CFRSettings(min_time_s=task.time_s / 2, max_time_s=task.time_s)
    scores: list[float] = []
    for r, role in enumerate(game.player_roles):
        total = 0.0
        for i in range(task.games):
            seeds = game_seed(task.seed, 1, r * 1_000_000 + i).spawn(3)
            players: dict[Const, Player] = {
                other: RandomPlayer(np.random.default_rng(seeds[1])) for other in game.player_roles
            }
            players[role] = NetCFRPlayer(
                settings=settings,
                rng=np.random.default_rng(seeds[0]),
                net_settings=NetSettings(rollout_weight=task.rollout_weight),
                evaluator=evaluator,
            )
            record = run_match(game, players, np.random.default_rng(seeds[2]), play_clock_s=60.0)
            total += match_score(record.goals, game, role)
        scores.append(100.0 * total / max(task.games, 1))
    return SnapshotOutput(
        roles=tuple(r.name for r in game.player_roles),
        scores=tuple(scores),
        version=task.version,
        seconds=time.monotonic() - started,
    )


# --------------------------------------------------------------------------- matches


@dataclass(frozen=True)
class MatchTask:
    """One evaluation match: ``player`` as ``role``, ``opponent`` in every other role.

    Attributes:
        game_path: The game file.
        player: The player spec (``cfr+nn:PATH``, ``random``, ...).
        opponent: The opponents' spec.
        role: The player's role.
        seed: Seeds the match.
        play_clock_s: Seconds per move (a later reply is replaced by a random move).
    """

    game_path: str
    player: str
    opponent: str
    role: str
    seed: int
    play_clock_s: float


@dataclass(frozen=True)
class MatchOutput:
    """The outcome of a :class:`MatchTask`.

    Attributes:
        score: 1 win, 0.5 draw, 0 loss, for the player.
        goal: The player's goal.
        replaced: Moves of the player the referee replaced (late or illegal).
        moves: Moves the player made.
        max_move_s: The player's longest time for one move.
        seconds: Time the match took.
        depths: ``[searched moves]`` the depth each search of the player reached, for
            the classic-search players (:attr:`ClassicPlayer.depths
            <ggp.players.classic_player.ClassicPlayer.depths>`); empty for others.
        opponent_replaced: The opponents' moves the referee replaced, all their roles
            together (None in logs written before 2026-12-06, which did not keep it:
            whether a table's late moves are one side's or the clock's).
        opponent_max_move_s: The opponents' longest time for one move (None as above).
        opponent_depths: ``[searched moves]`` the depth each search of the opponents
            reached, all their roles together, as ``depths`` (empty for players that do
            not count them; None in logs written before 2026-12-07, which did not keep it:
            whether the player out-searched its opponent).
    """

    score: float
    goal: int
    replaced: int
    moves: int
    max_move_s: float
    seconds: float
    depths: tuple[int, ...] = ()
    opponent_replaced: int | None = None
    opponent_max_move_s: float | None = None
    opponent_depths: tuple[int, ...] | None = None


def run_match_task(task: MatchTask) -> MatchOutput:
    """Run a :class:`MatchTask` (in a worker)."""
    from ggp.match import run_match
    from ggp.players.base import Player
    from ggp.players.registry import make_player

    started = time.monotonic()
    game = _worker_state().game(task.game_path)
    role = game.role(task.role)
    seeds = np.random.SeedSequence([task.seed, 2]).spawn(len(game.player_roles) + 1)
    players: dict[Const, Player] = {}
    for r, seed in zip(game.player_roles, seeds[1:], strict=True):
        spec = task.player if r == role else task.opponent
        players[r] = make_player(spec, np.random.default_rng(seed), game)
    record = run_match(
        game, players, np.random.default_rng(seeds[0]), play_clock_s=task.play_clock_s
    )
    replaced = sum(1 for rep in record.replacements if rep.role == role.name)
    index = game.role_index(role)
    times = [step[index] for step in record.move_seconds]
    others = [game.role_index(r) for r in game.player_roles if r != role]
    player = players[role]
    return MatchOutput(
        score=match_score(record.goals, game, role),
        goal=record.goals[index],
        replaced=replaced,
        moves=len(times),
        max_move_s=max(times, default=0.0),
        seconds=time.monotonic() - started,
        depths=searched_depths(player),
        opponent_replaced=len(record.replacements) - replaced,  # chance is never replaced
        opponent_max_move_s=max(
            (step[i] for step in record.move_seconds for i in others), default=0.0
        ),
        opponent_depths=tuple(
            d for r in game.player_roles if r != role for d in searched_depths(players[r])
        ),
    )


def searched_depths(player: Any) -> tuple[int, ...]:
    """The depth each searched move of ``player``'s last match reached, for the search
    players that count them (classic searches and cfr+nn's PUCT in steps, IDAPOS in
    rounds, RTMM in clock units of lookahead); else empty."""
    from ggp.players.classic_player import ClassicPlayer
    from ggp.players.idapos_player import IdaposPlayer
    from ggp.players.net_player import NetCFRPlayer
    from ggp.players.rts_players import RtmmPlayer

    if isinstance(player, ClassicPlayer | IdaposPlayer | NetCFRPlayer | RtmmPlayer):
        return tuple(player.depths)
    return ()


# --------------------------------------------------------------------------- pools


def _init_worker() -> None:
    torch.set_num_threads(1)
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the calling process stops us
    logging.basicConfig(level=logging.WARNING)


def _terminate(processes: list[multiprocessing.process.BaseProcess], timeout: float) -> None:
    """Terminate ``processes`` and wait (up to ``timeout`` seconds) until none is among
    :func:`multiprocessing.active_children`.

    A join alone does not ensure that: the executor's own thread, seeing its workers die,
    joins them too, and when it reaps a process first this thread's join finds no child
    (ECHILD) and returns with the process still listed until that thread records the exit
    code. Polling ``is_alive`` waits for the record and drops the process from the list.
    """
    for process in processes:
        process.terminate()
    deadline = time.monotonic() + timeout
    for process in processes:
        process.join(max(0.0, deadline - time.monotonic()))
        while process.is_alive() and time.monotonic() < deadline:
            time.sleep(0.01)


class WorkerPool:
    """Runs tasks on a backend; see the module docstring.

    Args:
        backend: ``process``, ``ray`` or ``inline``.
        workers: Parallel workers.

    Raises:
        GameError: ``ray`` was asked for and Ray is not installed.
    """

    def __init__(self, backend: Backend, workers: int) -> None:
        self.backend = backend
        self.workers = workers
        self._executor: ProcessPoolExecutor | None = None
        self._ray: Any = None
        self._remote: dict[Callable[..., Any], Any] = {}
        if backend == "process":
            self._executor = ProcessPoolExecutor(
                max_workers=workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=_init_worker,
            )
        elif backend == "ray":
            try:
                import ray
            except ImportError as e:
                raise GameError(
                    "--backend ray needs Ray: pip install 'ray>=2.9' (or pip install 'ggp[ray]')"
                ) from e
            if not ray.is_initialized():
                ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
            self._ray = ray
        elif backend != "inline":
            raise GameError(f"unknown backend {backend!r}: use process, ray or inline")

    def submit(self, function: Callable[[Any], T], task: Any) -> Future[T]:
        """Run ``function(task)`` on a worker."""
        if self._executor is not None:
            return self._executor.submit(function, task)
        if self._ray is not None:
            remote = self._remote.get(function)
            if remote is None:
                remote = self._remote[function] = self._ray.remote(num_cpus=1)(function)
            future: Future[T] = remote.remote(task).future()
            return future
        done: Future[T] = Future()
        try:
            done.set_result(function(task))
        except BaseException as e:
            done.set_exception(e)
        return done

    def close(self, terminate: bool = False) -> None:
        """Stop the workers: tasks not started are dropped; running ones finish, or with
        ``terminate`` end at once (local processes; the pool's exit on an exception, as
        a Ctrl-C, does this)."""
        if self._executor is not None:
            # 3.14 has ProcessPoolExecutor.terminate_workers(); before it, the processes.
            processes = list(getattr(self._executor, "_processes", {}).values())
            self._executor.shutdown(wait=False, cancel_futures=True)
            if terminate:
                _terminate(processes, timeout=5.0)
            self._executor = None
        if self._ray is not None:
            self._ray = None

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, kind: type[BaseException] | None, *exc: object) -> None:
        self.close(terminate=kind is not None)


def game_name(path: str | Path) -> str:
    """The game's name: its file name without the extension."""
    return Path(path).stem
