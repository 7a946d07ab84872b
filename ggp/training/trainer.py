"""The self-play training loop (``ggp train``).

Worker processes play self-play games (:mod:`ggp.training.selfplay`) with the latest
weights each task carries; the training process adds their positions to a replay buffer
and trains ``updates_per_game`` mini-batches per game (AdamW; value: binary
cross-entropy against goal / 100; policy: cross-entropy against the CFR policy over the
legal moves). Every ``eval_every_games`` games a worker plays an evaluation snapshot
against the random player; the best snapshot's weights are ``best.pt``.

Everything goes to the run folder (default ``checkpoints/<game>/``):

- ``latest.pt`` / ``best.pt`` with ``.json`` metadata beside them (written atomically,
  every ``checkpoint_every_s`` seconds and at the end); ``latest.pt`` also holds the
  optimiser and the mini-batch generator, ``replay.npz`` the replay buffer, so that
  ``--resume`` continues where the last checkpoint left off,
- ``log-<time>.jsonl``: one JSON record per event (progress, snapshot, checkpoint) for
  each run or resumed run,
- ``curves.png``: the learning curves (losses, score vs random), redrawn at every
  checkpoint.

A resumed run continues until its totals (time summed over the resumed runs, games)
reach the budget; flags given with ``--resume`` replace the saved settings.
"""

from __future__ import annotations

import json
import logging
import math
import time
from collections.abc import Sequence
from concurrent.futures import FIRST_COMPLETED, Future, wait
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from ggp.errors import GGPError
from ggp.game import Game
from ggp.nn.checkpoint import (
    Checkpoint,
    CheckpointMetadata,
    check_game,
    load_checkpoint,
    save_checkpoint,
)
from ggp.nn.features import GameEncoding
from ggp.nn.model import NetShape, PolicyValueNet, masked_log_softmax
from ggp.training.config import TrainConfig
from ggp.training.replay import Positions, ReplayBuffer
from ggp.training.selfplay import selfplay_search
from ggp.training.workers import (
    SelfPlayOutput,
    SelfPlayTask,
    SnapshotOutput,
    SnapshotTask,
    Weights,
    WorkerPool,
    run_selfplay,
    run_snapshot,
    weights_of,
)

__all__ = [
    "TrainingError",
    "Losses",
    "TrainSummary",
    "Trainer",
    "train_step",
    "policy_losses",
    "run_dir",
    "lr_factor",
]

logger = logging.getLogger(__name__)


class TrainingError(GGPError):
    """Training cannot start (e.g. the run folder holds another run)."""


@dataclass(frozen=True)
class Losses:
    """One mini-batch's losses.

    Attributes:
        total: The optimised loss.
        value: Binary cross-entropy of the values (goal / 100).
        value_mse: Mean squared error of the values (goal / 100), for the logs.
        policy: Cross-entropy of the policies (over heads with a target).
        policy_kl: ``policy`` less the targets' own entropy: how far the network is
            from its targets (0: it matches them). Search targets can be close to
            uniform (a simultaneous-move PUCT spreads its visits), so the cross-entropy
            can stay near ``ln(moves)`` while the network has learnt all there is.
    """

    total: float
    value: float
    value_mse: float
    policy: float
    policy_kl: float


def policy_losses(
    logits: Sequence[torch.Tensor],
    legal: torch.Tensor,
    policy: torch.Tensor,
    has: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The policy cross-entropy and the targets' entropy, each a mean over the
    (position, head) pairs with a target.

    Args:
        logits: One ``[B, M_h]`` tensor per head.
        legal: ``[B, sum M_h]`` legal-move masks, the heads side by side.
        policy: ``[B, sum M_h]`` targets (rows of heads without a target are ignored).
        has: ``[B, H]`` which heads have a target.

    Example:
        >>> uniform = torch.zeros(1, 4)
        >>> legal = torch.ones(1, 4, dtype=torch.bool)
        >>> one_hot = torch.tensor([[1.0, 0.0, 0.0, 0.0]])
        >>> has = torch.ones(1, 1, dtype=torch.bool)
        >>> ce, entropy = policy_losses([uniform], legal, one_hot, has)
        >>> round(float(ce), 4), float(entropy)  # ln 4, 0
        (1.3863, 0.0)
        >>> ce, entropy = policy_losses([uniform], legal, torch.full((1, 4), 0.25), has)
        >>> round(float(ce - entropy), 6)  # the network is its target
        0.0
    """
    cross_entropy = torch.zeros(())
    entropy = torch.zeros(())
    start = 0
    for head, head_logits in enumerate(logits):
        end = start + head_logits.shape[1]
        rows = has[:, head]
        if bool(rows.any()):
            target = policy[rows, start:end]
            logp = masked_log_softmax(head_logits[rows], legal[rows, start:end])
            cross_entropy = cross_entropy - (target * logp).sum()
            entropy = entropy - torch.special.xlogy(target, target).sum()
        start = end
    count = has.sum().clamp(min=1)
    return cross_entropy / count, entropy / count


@dataclass(frozen=True)
class TrainSummary:
    """What a run did.

    Attributes:
        folder: The run folder.
        steps: Optimiser steps in total.
        games: Self-play games in total.
        positions: Positions generated in total.
        elapsed_s: Training time in total (summed over resumed runs).
        best_score: Best snapshot score vs random (None without snapshots).
        last_scores: The last snapshot's score per role.
    """

    folder: Path
    steps: int
    games: int
    positions: int
    elapsed_s: float
    best_score: float | None
    last_scores: tuple[tuple[str, float], ...]


def run_dir(game_path: Path) -> Path:
    """The default run folder of a game: ``checkpoints/<game>``."""
    return Path("checkpoints") / game_path.stem


def train_step(
    net: PolicyValueNet,
    optimizer: torch.optim.Optimizer,
    batch: Positions,
    config: TrainConfig,
) -> Losses:
    """One optimiser step on ``batch``."""
    net.train()
    x = torch.from_numpy(batch.features.astype(np.float32))
    target = torch.from_numpy(batch.value)
    out = net(x)
    value_loss = nn.functional.binary_cross_entropy_with_logits(out.value_logits, target)
    value_mse = nn.functional.mse_loss(out.values.detach(), target)
    policy_loss, target_entropy = policy_losses(
        out.policy_logits,
        torch.from_numpy(batch.legal),
        torch.from_numpy(batch.policy),
        torch.from_numpy(batch.has_policy),
    )
    loss = config.value_weight * value_loss + config.policy_weight * policy_loss
    optimizer.zero_grad(set_to_none=True)
    loss.backward()  # type: ignore[no-untyped-call]
    nn.utils.clip_grad_norm_(net.parameters(), 5.0)
    optimizer.step()
    return Losses(
        float(loss.detach()),
        float(value_loss.detach()),
        float(value_mse),
        float(policy_loss.detach()),
        float(policy_loss.detach() - target_entropy),
    )


def lr_factor(config: TrainConfig, progress: float) -> float:
    """The learning rate's multiplier when ``progress`` (0..1) of the budget is spent: a
    cosine from 1 down to ``config.final_lr_fraction``.

    >>> config = TrainConfig(final_lr_fraction=0.1)
    >>> [round(lr_factor(config, p), 3) for p in (0.0, 0.5, 1.0)]
    [1.0, 0.55, 0.1]
    """
    low = config.final_lr_fraction
    return low + (1.0 - low) * 0.5 * (1.0 + math.cos(math.pi * min(max(progress, 0.0), 1.0)))


class _RunningMean:
    def __init__(self, decay: float = 0.98) -> None:
        self.decay = decay
        self.value: float | None = None

    def add(self, x: float) -> None:
        self.value = x if self.value is None else self.decay * self.value + (1 - self.decay) * x


class Trainer:
    """One training run (see the module docstring).

    Args:
        game_path: The game file.
        config: The settings (for ``resume``: flags to apply over the saved ones are
            given as ``overrides`` instead).
        folder: The run folder (default ``checkpoints/<game>``).
        resume: Continue the run in ``folder`` from its ``latest.pt``.
        fresh: Start over even if ``folder`` holds a run (its files are replaced).
        overrides: With ``resume``: settings that replace the saved ones.
        progress: Show a tqdm progress bar (on stderr).

    Raises:
        TrainingError: ``folder`` holds a run and neither ``resume`` nor ``fresh`` was
            given, or ``resume`` without a run there.
        GameError: The saved run is for another game.
    """

    def __init__(
        self,
        game_path: Path,
        config: TrainConfig,
        folder: Path | None = None,
        *,
        resume: bool = False,
        fresh: bool = False,
        overrides: dict[str, Any] | None = None,
        progress: bool = False,
    ) -> None:
        self.game_path = game_path
        self.folder = folder if folder is not None else run_dir(game_path)
        self.progress = progress
        self.game = Game.from_file(game_path)
        self.encoding = GameEncoding(self.game)
        latest = self.folder / "latest.pt"
        checkpoint: Checkpoint | None = None
        if resume:
            if not latest.is_file():
                raise TrainingError(f"--resume: no run to continue in {self.folder}")
            checkpoint = load_checkpoint(latest)
            check_game(checkpoint.metadata, self.encoding, latest)
            config = TrainConfig.from_dict(checkpoint.metadata.settings, source=str(latest))
            if overrides:
                config = config.merged(overrides, source="command line")
        elif latest.is_file() and not fresh:
            meta = load_checkpoint(latest).metadata
            raise TrainingError(
                f"{self.folder} already holds a run ({meta.steps:,} steps, {meta.games:,} games "
                f"of {meta.game}): --resume continues it, --fresh starts over and replaces it, "
                "--out DIR trains elsewhere"
            )
        elif fresh and self.folder.is_dir():
            for old in self.folder.glob("*"):
                if old.is_file() and (old.suffix in (".pt", ".json", ".jsonl", ".npz", ".png")):
                    old.unlink()
        self.config = config
        self.shape = (
            checkpoint.metadata.shape
            if checkpoint is not None
            else NetShape.for_encoding(
                self.encoding, hidden=config.hidden or None, blocks=config.blocks
            )
        )
        generator = torch.Generator().manual_seed(config.seed)
        self.net = PolicyValueNet(self.shape, generator)
        self.optimizer = torch.optim.AdamW(
            self.net.parameters(), lr=config.learning_rate, weight_decay=config.weight_decay
        )
        self.rng = np.random.default_rng(np.random.SeedSequence([config.seed, 3]))
        self.buffer = ReplayBuffer(
            config.buffer_size,
            self.encoding.num_inputs,
            self.encoding.policy_sizes,
            self.encoding.num_roles,
        )
        self.steps = 0
        self.games = 0
        self.positions = 0
        self.elapsed_before_s = 0.0
        self.best_score: float | None = None
        self.resumed_from: int | None = None
        if checkpoint is not None:
            self._restore(checkpoint)
        self.folder.mkdir(parents=True, exist_ok=True)
        stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
        self.log_path = self.folder / f"log-{stamp}.jsonl"
        self._log_handle = self.log_path.open("a", encoding="utf-8")
        self._started = time.monotonic()
        self._weights_cache: tuple[int, Weights] | None = None
        self._snapshot_weights: dict[int, Weights] = {}
        self.last_scores: tuple[tuple[str, float], ...] = ()

    # ------------------------------------------------------------------ state

    def _restore(self, checkpoint: Checkpoint) -> None:
        meta = checkpoint.metadata
        self.net.load_state_dict(checkpoint.model)
        if checkpoint.optimizer is not None:
            self.optimizer.load_state_dict(checkpoint.optimizer)
            for group in self.optimizer.param_groups:
                group["lr"] = self.config.learning_rate
                group["weight_decay"] = self.config.weight_decay
        self.steps, self.games, self.positions = meta.steps, meta.games, meta.positions
        self.elapsed_before_s = meta.elapsed_s
        self.resumed_from = meta.steps
        rng_state = checkpoint.extra.get("rng")
        if isinstance(rng_state, str):
            self.rng.bit_generator.state = json.loads(rng_state)
        best = self.folder / "best.pt"
        if best.is_file():
            self.best_score = load_checkpoint(best).metadata.score
        self.buffer.load(self.folder / "replay.npz")

    def elapsed_s(self) -> float:
        """Training time in total, this run included."""
        return self.elapsed_before_s + time.monotonic() - self._started

    def _metadata(self, score: float | None) -> CheckpointMetadata:
        return CheckpointMetadata(
            game=str(self.game_path),
            signature=self.encoding.signature,
            shape=self.shape,
            steps=self.steps,
            games=self.games,
            positions=self.positions,
            elapsed_s=round(self.elapsed_s(), 3),
            created=datetime.now(UTC).isoformat(timespec="seconds"),
            settings=self.config.to_dict(),
            score=score,
        )

    def save(self) -> None:
        """Write ``latest.pt`` (with the optimiser and the replay buffer) and the plot."""
        score = float(np.mean([s for _, s in self.last_scores])) if self.last_scores else None
        checkpoint = Checkpoint(
            self._metadata(score),
            {k: v.detach().clone() for k, v in self.net.state_dict().items()},
            self.optimizer.state_dict(),
            {"rng": json.dumps(self.rng.bit_generator.state)},
        )
        self.buffer.save(self.folder / "replay.npz")
        save_checkpoint(self.folder / "latest.pt", checkpoint)
        if not (self.folder / "best.pt").is_file():
            self._save_best(self._current_weights(), score)
        self.log("checkpoint", path=str(self.folder / "latest.pt"))
        self._plot()

    def _save_best(self, weights: Weights, score: float | None) -> None:
        model = {k: torch.from_numpy(v.copy()) for k, v in weights.items()}
        save_checkpoint(self.folder / "best.pt", Checkpoint(self._metadata(score), model))

    def _plot(self) -> None:
        try:
            from ggp.training.plot import plot_curves

            plot_curves(sorted(self.folder.glob("log-*.jsonl")), self.folder / "curves.png")
        except ImportError:
            logger.info("matplotlib is not installed: no curves.png")

    def log(self, event: str, **fields: Any) -> None:
        """Append one JSON record to the run's log."""
        record = {
            "event": event,
            "time": round(self.elapsed_s(), 3),
            "steps": self.steps,
            "games": self.games,
            "positions": self.positions,
            **fields,
        }
        self._log_handle.write(json.dumps(record) + "\n")
        self._log_handle.flush()

    def _current_weights(self) -> Weights:
        if self._weights_cache is None or self._weights_cache[0] != self.steps:
            self._weights_cache = (self.steps, weights_of(self.net))
        return self._weights_cache[1]

    # ------------------------------------------------------------------ the loop

    def _progress(self) -> float:
        """How much of the budget (time or games, whichever is further) is spent, 0..1."""
        config = self.config
        done = [self.games / config.games] if config.games else []
        if config.minutes:
            done.append(self.elapsed_s() / (60.0 * config.minutes))
        return min(max(done, default=0.0), 1.0)

    def _budget_left(self) -> bool:
        return self._progress() < 1.0

    def _selfplay_task(self, next_index: int) -> SelfPlayTask:
        count = self.config.games_per_task
        if selfplay_search(self.game, self.config) == "mcts":
            count = max(count, self.config.parallel_games)  # played at once
        if self.config.games:
            count = max(1, min(count, self.config.games - next_index))
        return SelfPlayTask(
            game_path=str(self.game_path),
            config=self.config,
            shape=self.shape,
            weights=self._current_weights(),
            version=self.steps,
            indices=tuple(range(next_index, next_index + count)),
        )

    def _snapshot_task(self) -> SnapshotTask:
        weights = self._current_weights()
        self._snapshot_weights[self.steps] = weights
        return SnapshotTask(
            game_path=str(self.game_path),
            shape=self.shape,
            weights=weights,
            version=self.steps,
            games=self.config.eval_games,
            time_s=self.config.eval_time_s,
            seed=self.config.seed + 7919 * (self.games + 1),
            rollout_weight=self.config.eval_rollout_weight,
        )

    def _train(self, games: int, losses: dict[str, _RunningMean]) -> None:
        config = self.config
        if len(self.buffer) < min(config.min_buffer, config.buffer_size):
            return
        lr = config.learning_rate * lr_factor(config, self._progress())
        for group in self.optimizer.param_groups:
            group["lr"] = lr
        for _ in range(games * config.updates_per_game):
            batch = self.buffer.sample(config.batch_size, self.rng)
            result = train_step(self.net, self.optimizer, batch, config)
            self.steps += 1
            losses["value"].add(result.value_mse)
            losses["policy"].add(result.policy)
            losses["policy_kl"].add(result.policy_kl)

    def _on_snapshot(self, output: SnapshotOutput) -> None:
        score = float(np.mean(output.scores))
        self.last_scores = tuple(zip(output.roles, output.scores, strict=True))
        weights = self._snapshot_weights.pop(output.version, None)
        improved = self.best_score is None or score >= self.best_score
        if improved and weights is not None:
            self.best_score = score
            self._save_best(weights, score)
        self.log(
            "snapshot",
            version=output.version,
            scores=dict(self.last_scores),
            score=score,
            best=self.best_score,
            seconds=round(output.seconds, 2),
        )

    def run(self) -> TrainSummary:
        """Train until the budget is spent; checkpoint at the end."""
        from tqdm import tqdm

        config = self.config
        workers = 1 if config.backend == "inline" else config.worker_count()
        if config.backend != "inline":
            torch.set_num_threads(1)  # the cores belong to the self-play workers
        self.log(
            "start",
            resumed_from_steps=self.resumed_from,
            settings=config.to_dict(),
            shape=self.shape.to_dict(),
            workers=workers,
            backend=config.backend,
        )
        losses = {"value": _RunningMean(), "policy": _RunningMean(), "policy_kl": _RunningMean()}
        total = config.games if config.games else None
        bar = tqdm(
            total=total,
            initial=self.games if total else 0,
            unit="game",
            disable=not self.progress,
            dynamic_ncols=True,
            mininterval=1.0,
        )
        last_checkpoint = time.monotonic()
        next_snapshot = self.games + config.eval_every_games if config.eval_every_games else None
        next_index = self.games
        window: list[tuple[float, int]] = []  # (time, positions) for positions/s
        try:
            with WorkerPool(config.backend, workers) as pool:
                pending: dict[Future[Any], str] = {}
                if self.games == 0 and config.eval_every_games and config.eval_games > 0:
                    # Where training starts from: the untrained network's score.
                    pending[pool.submit(run_snapshot, self._snapshot_task())] = "snapshot"
                while True:
                    busy = sum(1 for kind in pending.values() if kind == "selfplay")
                    while self._budget_left() and busy < 2 * workers:
                        if config.games and next_index >= config.games:
                            break
                        task = self._selfplay_task(next_index)
                        next_index += len(task.indices)
                        pending[pool.submit(run_selfplay, task)] = "selfplay"
                        busy += 1
                    if not pending:
                        break
                    done, _ = wait(list(pending), timeout=1.0, return_when=FIRST_COMPLETED)
                    for future in done:
                        kind = pending.pop(future)
                        result = future.result()
                        if kind == "snapshot":
                            assert isinstance(result, SnapshotOutput)
                            self._on_snapshot(result)
                            continue
                        assert isinstance(result, SelfPlayOutput)
                        if not self._budget_left():
                            continue  # games past the budget are dropped
                        self.buffer.add(result.positions)
                        self.games += result.games
                        self.positions += len(result.positions)
                        self._train(result.games, losses)
                        now = time.monotonic()
                        window.append((now, self.positions))
                        window = [w for w in window if now - w[0] <= 30.0] or window[-1:]
                        rate = (
                            (window[-1][1] - window[0][1]) / (window[-1][0] - window[0][0])
                            if len(window) > 1 and window[-1][0] > window[0][0]
                            else 0.0
                        )
                        self.log(
                            "progress",
                            value_mse=losses["value"].value,
                            policy_ce=losses["policy"].value,
                            policy_kl=losses["policy_kl"].value,
                            buffer=len(self.buffer),
                            lr=self.optimizer.param_groups[0]["lr"],
                            positions_per_s=round(rate, 1),
                            decisions=result.decisions,
                            version=result.version,
                        )
                        bar.update(result.games)
                        bar.set_postfix(
                            pos_s=f"{rate:.0f}",
                            v=_fmt(losses["value"].value),
                            p=_fmt(losses["policy"].value),
                            kl=_fmt(losses["policy_kl"].value),
                            buf=len(self.buffer),
                            steps=self.steps,
                            score=_fmt(self._last_score(), 1),
                            left=self._time_left(),
                            refresh=False,
                        )
                    if next_snapshot is not None and self.games >= next_snapshot:
                        next_snapshot += config.eval_every_games
                        if config.eval_games > 0 and self._budget_left():
                            pending[pool.submit(run_snapshot, self._snapshot_task())] = "snapshot"
                    if time.monotonic() - last_checkpoint >= config.checkpoint_every_s:
                        self.save()
                        last_checkpoint = time.monotonic()
                    if not self._budget_left():
                        for future, kind in list(pending.items()):
                            if kind == "selfplay" and future.cancel():
                                pending.pop(future)
                        if all(kind == "selfplay" for kind in pending.values()):
                            break
                if pending:
                    # Games still running are past the budget, so they would be dropped:
                    # stop them rather than wait (an RTS self-play task runs for minutes).
                    pool.close(terminate=True)
                if config.eval_games > 0:  # here, not behind a worker's stopped task
                    self._on_snapshot(run_snapshot(self._snapshot_task()))
            self.save()
            self.log("end")
        finally:
            bar.close()
            self._log_handle.close()
        return TrainSummary(
            folder=self.folder,
            steps=self.steps,
            games=self.games,
            positions=self.positions,
            elapsed_s=self.elapsed_s(),
            best_score=self.best_score,
            last_scores=self.last_scores,
        )

    def _last_score(self) -> float | None:
        return float(np.mean([s for _, s in self.last_scores])) if self.last_scores else None

    def _time_left(self) -> str:
        if not self.config.minutes:
            return "-"
        left = max(0.0, 60.0 * self.config.minutes - self.elapsed_s())
        return f"{int(left // 60)}:{int(left % 60):02d}"


def _fmt(value: float | None, digits: int = 3) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}f}"
