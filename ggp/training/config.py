"""Training settings: one frozen dataclass, from defaults, TOML files and flags.

Precedence, lowest first: the defaults below; the per-game settings ``<game>.toml``
(e.g. ``meier.toml``) when they exist, from ``training/`` in the working directory or
else from the ``training/`` folder shipped beside the package (:func:`game_settings_file`);
a ``--config FILE``; command-line flags (every field has one: ``learning_rate`` is
``--learning-rate``). ``ggp train`` prints the files it read. The settings are saved with
every checkpoint and restored by ``--resume``.

TOML files hold the fields at top level:

.. code-block:: toml

    minutes = 60
    samples = 16
    learning_rate = 0.001

Example:
    >>> config = TrainConfig().replace(minutes=1.5)
    >>> config.minutes, TrainConfig.from_dict(config.to_dict()) == config
    (1.5, True)
"""

from __future__ import annotations

import os
import tomllib
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, Literal

from ggp.errors import GGPError

__all__ = ["TrainConfig", "ConfigError", "Backend", "load_config"]

Backend = Literal["process", "ray", "inline"]


class ConfigError(GGPError):
    """A bad settings file or value."""


@dataclass(frozen=True)
class TrainConfig:
    """Every training setting (see the module docstring for where they come from).

    Attributes:
        seed: Seeds the network's initial weights, mini-batches and every self-play game.
        minutes: Wall-clock budget of the run (0: no limit, stop at ``games``).
        games: Self-play games to play (0: no limit, stop at ``minutes``).
        workers: Self-play worker processes (0: one per CPU core).
        backend: ``process`` (local worker processes), ``ray`` (Ray tasks; ``pip install
            ray``) or ``inline`` (self-play in the training process, for tests).
        games_per_task: Games per worker task; each task carries the latest weights.
        hidden: Width of the network's trunk (0: sized from the game).
        blocks: Residual blocks in the trunk.
        learning_rate: AdamW learning rate (at the start).
        final_lr_fraction: The learning rate at the end of the budget, as a fraction of
            ``learning_rate``; it follows a cosine in between (1: constant).
        weight_decay: AdamW weight decay.
        batch_size: Positions per mini-batch.
        updates_per_game: Mini-batches trained after each self-play game.
        buffer_size: Positions the replay buffer keeps (the oldest are dropped).
        min_buffer: Positions needed before training starts.
        value_weight: Weight of the value loss (binary cross-entropy on goal / 100).
        policy_weight: Weight of the policy loss (cross-entropy with the CFR policy).
        search: The self-play search: ``cfr`` (CFR-D on sampled histories, the published
            loop), ``mcts`` (PUCT guided by the network, for games where every role sees
            every move and so knows the state) or ``auto`` (``mcts`` where the game's
            moves are public, else ``cfr``).
        simulations: MCTS simulations per self-play step (``search`` mcts).
        parallel_games: Self-play games a worker plays at once with ``search`` mcts,
            their searches' leaves valued in one network call (a task then holds at least
            this many games; in a larger one a finished game's place goes to the next).
        precision: The self-play network's forward pass: ``float32``, ``bfloat16``
            (``torch.autocast``) or ``auto`` (``bfloat16`` on a CPU that computes it
            natively, AVX512-BF16 or AMX, else ``float32``).
        root_noise: Weight of Dirichlet noise in the root's priors (``search`` mcts).
        sample_steps: ``search`` mcts: the steps of a game (from its start) whose moves
            are drawn from the root's visit counts (mixed with ``explore``); later moves
            are the most visited (AlphaZero's temperature drop; alpha-zero-general's
            ``tempThreshold`` of 15), so that outcomes, the value targets, come from play
            without blunders drawn on purpose. 0: every move drawn.
        samples: Histories sampled per decision to root the CFR tree at.
        max_depth: Deepest CFR tree in self-play, in steps.
        max_nodes: Node budget of a self-play CFR tree.
        iterations: CFR+ iterations per self-play decision.
        prior_weight: Warm start of CFR from the network's policy (0: none).
        uniform_mix: Weight of the uniform policy in the sampler's model of the others.
        true_value_weight: Weight of the search's value of the true state in the value
            target, the rest the game's outcome: ``search`` cfr runs CFR-D on the true
            state for it (0 skips that search); ``search`` mcts takes the root's mean
            value (AlphaZero's "z and q" average).
        explore: Probability of a uniformly random move instead of the search policy's
            (``search`` mcts: in the first ``sample_steps`` steps only).
        checkpoint_every_s: Seconds between checkpoints (and at the end).
        eval_every_games: Self-play games between evaluation snapshots (0: only at the end).
        eval_games: Games per role in a snapshot against the random player.
        eval_time_s: Search time per move of the network player in snapshots.
        eval_rollout_weight: The snapshots' network player (PUCT) values a leaf with this
            weight on one random playout, the rest on the network (the ``rollout`` option
            of ``cfr+nn``); 0 where playouts are long (the 8x8 RTS games run 2,400 steps:
            a move then takes a batch of playouts' time, not ``eval_time_s``).
    """

    seed: int = 0
    minutes: float = 3.0
    games: int = 0
    workers: int = 0
    backend: Backend = "process"
    games_per_task: int = 2
    hidden: int = 0
    blocks: int = 2
    learning_rate: float = 1e-3
    final_lr_fraction: float = 1.0
    weight_decay: float = 1e-4
    batch_size: int = 128
    updates_per_game: int = 1
    buffer_size: int = 50_000
    min_buffer: int = 256
    value_weight: float = 1.0
    policy_weight: float = 1.0
    search: str = "auto"
    simulations: int = 200
    parallel_games: int = 8
    precision: str = "auto"
    root_noise: float = 0.25
    sample_steps: int = 15
    samples: int = 8
    max_depth: int = 4
    max_nodes: int = 6000
    iterations: int = 60
    prior_weight: float = 1.0
    uniform_mix: float = 0.1
    true_value_weight: float = 0.0
    explore: float = 0.1
    checkpoint_every_s: float = 60.0
    eval_every_games: int = 200
    eval_games: int = 20
    eval_time_s: float = 0.1
    eval_rollout_weight: float = 0.5

    def __post_init__(self) -> None:
        problems = []
        if self.minutes < 0 or self.games < 0:
            problems.append("minutes and games must be >= 0")
        if self.minutes == 0 and self.games == 0:
            problems.append("give minutes or games (or both): one of them must be > 0")
        if self.backend not in ("process", "ray", "inline"):
            problems.append(f"backend must be process, ray or inline, not {self.backend!r}")
        for name in ("games_per_task", "blocks", "batch_size", "buffer_size", "samples"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be >= 1")
        if self.search not in ("auto", "cfr", "mcts"):
            problems.append(f"search must be auto, cfr or mcts, not {self.search!r}")
        if self.precision not in ("auto", "float32", "bfloat16"):
            problems.append(f"precision must be auto, float32 or bfloat16, not {self.precision!r}")
        for name in ("max_depth", "max_nodes", "iterations", "simulations", "parallel_games"):
            if getattr(self, name) < 1:
                problems.append(f"{name} must be >= 1")
        if self.sample_steps < 0:
            problems.append("sample_steps must be >= 0")
        for name in (
            "uniform_mix",
            "true_value_weight",
            "explore",
            "final_lr_fraction",
            "root_noise",
            "eval_rollout_weight",
        ):
            if not 0.0 <= getattr(self, name) <= 1.0:
                problems.append(f"{name} must be in 0..1")
        if problems:
            raise ConfigError("bad training settings: " + "; ".join(problems))

    def replace(self, **changes: Any) -> TrainConfig:
        """A copy with some fields changed (checked)."""
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """The settings as a plain dict (saved with checkpoints)."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any], *, source: str = "settings") -> TrainConfig:
        """Settings from a dict; unknown keys and wrong types are refused.

        Raises:
            ConfigError: Naming ``source`` and the bad key.
        """
        known = {f.name: f for f in fields(cls)}
        defaults = cls()
        values: dict[str, Any] = {}
        for key, value in data.items():
            name = key.replace("-", "_")
            if name not in known:
                raise ConfigError(
                    f"{source}: unknown setting {key!r} (settings: {', '.join(sorted(known))})"
                )
            values[name] = _coerce(name, value, getattr(defaults, name), source)
        return cls(**values)

    def merged(self, data: dict[str, Any], *, source: str = "settings") -> TrainConfig:
        """These settings with the fields of ``data`` replaced (checked as in
        :meth:`from_dict`)."""
        base = self.to_dict()
        base.update(TrainConfig.from_dict({**base, **data}, source=source).to_dict())
        return TrainConfig(**base)

    def worker_count(self) -> int:
        """The number of self-play workers: ``workers``, or one per CPU core."""
        return self.workers if self.workers > 0 else max(1, os.cpu_count() or 1)


#: How an error message names the type a setting needs.
_KINDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def _coerce(name: str, value: Any, default: Any, source: str) -> Any:
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
    elif isinstance(default, int):
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    elif isinstance(default, float):
        if isinstance(value, int | float) and not isinstance(value, bool):
            return float(value)
    elif isinstance(default, str) and isinstance(value, str):
        return value
    raise ConfigError(f"{source}: setting {name!r} must be {_KINDS[type(default)]}, not {value!r}")


def load_toml(path: Path) -> dict[str, Any]:
    """The top-level table of a TOML file.

    Raises:
        ConfigError: The file cannot be read or parsed.
    """
    try:
        with path.open("rb") as handle:
            return tomllib.load(handle)
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror}") from e
    except tomllib.TOMLDecodeError as e:
        raise ConfigError(f"{path}: {e}") from e


#: The per-game settings shipped with the package (``training/`` beside ``ggp/``).
SHIPPED_SETTINGS = Path(__file__).resolve().parents[2] / "training"


def game_settings_file(game_path: Path, folder: Path | None = None) -> Path:
    """``<game>.toml``, the per-game settings of a game file: in ``folder`` if given;
    else ``training/<game>.toml`` under the working directory if it exists there, else
    the one shipped beside the package (:data:`SHIPPED_SETTINGS`; it may not exist)."""
    name = f"{game_path.stem}.toml"
    if folder is not None:
        return folder / name
    local = Path("training") / name
    return local if local.is_file() else SHIPPED_SETTINGS / name


def settings_files(game_path: Path, config_file: Path | None = None) -> tuple[Path, ...]:
    """The TOML files :func:`load_config` reads for ``game_path``, lowest precedence
    first: the per-game settings if they exist, then ``config_file``."""
    per_game = game_settings_file(game_path)
    found = (per_game,) if per_game.is_file() else ()
    return found + ((config_file,) if config_file is not None else ())


def load_config(
    game_path: Path,
    config_file: Path | None = None,
    overrides: dict[str, Any] | None = None,
    *,
    base: TrainConfig | None = None,
) -> TrainConfig:
    """The settings for training on ``game_path`` (see the module docstring).

    Args:
        game_path: The game file; its per-game settings are read if they exist
            (:func:`game_settings_file`).
        config_file: An extra TOML file.
        overrides: Values from flags.
        base: Start from these settings instead of the defaults (e.g. a checkpoint's).

    Raises:
        ConfigError: A bad file, key or value.
    """
    config = base if base is not None else TrainConfig()
    for path in settings_files(game_path, config_file):
        if base is None or path == config_file:
            config = config.merged(load_toml(path), source=str(path))
    if overrides:
        config = config.merged(overrides, source="command line")
    return config
