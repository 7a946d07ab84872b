"""Checkpoints: a network's weights with what it was trained for, written atomically.

A checkpoint file (``latest.pt``, ``best.pt``) is a ``torch.save`` of plain data (loaded
back with ``weights_only=True``): the model's ``state_dict``, optionally the optimiser's,
and :class:`CheckpointMetadata` — the game's digest and encoding signature, the network
shape, training counters, wall time and the training settings. A JSON copy of the
metadata sits beside it (``latest.json``) for people and diffs.

Files are written to a temporary name in the same folder, flushed to disk and renamed
over the old one (``os.replace``), so a crash leaves the old or the new file, never half
of one.

:func:`load_network` refuses a checkpoint made for another game (another digest or
another encoding), naming both games (:class:`CheckpointMismatchError`).
"""

from __future__ import annotations

import json
import os
import pickle
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import torch

from ggp.errors import GameError
from ggp.game import Game
from ggp.nn.features import EncodingSignature, GameEncoding
from ggp.nn.model import NetShape, PolicyValueNet

__all__ = [
    "CheckpointMismatchError",
    "CheckpointMetadata",
    "Checkpoint",
    "save_checkpoint",
    "load_checkpoint",
    "load_network",
    "default_checkpoint",
    "atomic_write_bytes",
    "atomic_write_text",
]

FORMAT_VERSION = 1


class CheckpointMismatchError(GameError):
    """A checkpoint trained for other rules (or another encoding) than the game's."""


@dataclass(frozen=True)
class CheckpointMetadata:
    """What a checkpoint was trained for and how far.

    Attributes:
        game: The game file's name as given to training.
        signature: The encoding the network was sized for (with the game's digest).
        shape: The network's size.
        steps: Optimiser updates so far.
        games: Self-play games so far.
        positions: Training positions generated so far.
        elapsed_s: Training wall time so far (summed over resumed runs).
        created: When the file was written (ISO 8601, UTC).
        settings: The training settings (the ``TrainConfig`` as a dict).
        score: The last evaluation snapshot's score vs random (0..100; None if none yet).
    """

    game: str
    signature: EncodingSignature
    shape: NetShape
    steps: int = 0
    games: int = 0
    positions: int = 0
    elapsed_s: float = 0.0
    created: str = ""
    settings: dict[str, Any] = field(default_factory=dict)
    score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        data = asdict(self)
        data["signature"] = {
            k: list(v) if isinstance(v, tuple) else v for k, v in asdict(self.signature).items()
        }
        data["shape"] = self.shape.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CheckpointMetadata:
        """The inverse of :meth:`to_dict`."""
        sig = data["signature"]
        return cls(
            game=str(data["game"]),
            signature=EncodingSignature(
                game_digest=str(sig["game_digest"]),
                roles=tuple(sig["roles"]),
                policy_roles=tuple(sig["policy_roles"]),
                num_inputs=int(sig["num_inputs"]),
                policy_sizes=tuple(int(x) for x in sig["policy_sizes"]),
            ),
            shape=NetShape.from_dict(data["shape"]),
            steps=int(data.get("steps", 0)),
            games=int(data.get("games", 0)),
            positions=int(data.get("positions", 0)),
            elapsed_s=float(data.get("elapsed_s", 0.0)),
            created=str(data.get("created", "")),
            settings=dict(data.get("settings", {})),
            score=None if data.get("score") is None else float(data["score"]),
        )


@dataclass(frozen=True)
class Checkpoint:
    """A loaded checkpoint.

    Attributes:
        metadata: See :class:`CheckpointMetadata`.
        model: The network's ``state_dict``.
        optimizer: The optimiser's ``state_dict`` (None in a weights-only file).
        extra: Other saved state (e.g. the trainer's random generator state).
    """

    metadata: CheckpointMetadata
    model: dict[str, torch.Tensor]
    optimizer: dict[str, Any] | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically (temporary file, fsync, rename)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    atomic_write_bytes(path, text.encode())


def save_checkpoint(path: Path, checkpoint: Checkpoint) -> None:
    """Write ``checkpoint`` to ``path`` and its metadata to ``path.with_suffix('.json')``,
    each atomically."""
    import io

    buffer = io.BytesIO()
    torch.save(
        {
            "format": FORMAT_VERSION,
            "metadata": checkpoint.metadata.to_dict(),
            "model": checkpoint.model,
            "optimizer": checkpoint.optimizer,
            "extra": checkpoint.extra,
        },
        buffer,
    )
    atomic_write_bytes(path, buffer.getvalue())
    atomic_write_text(
        path.with_suffix(".json"), json.dumps(checkpoint.metadata.to_dict(), indent=2) + "\n"
    )


def load_checkpoint(path: Path) -> Checkpoint:
    """Read a checkpoint file.

    Raises:
        GameError: The file is missing or is not a ggp checkpoint.
    """
    if not path.is_file():
        raise GameError(f"no checkpoint at {path}")
    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
        if not isinstance(data, dict) or data.get("format") != FORMAT_VERSION:
            raise ValueError("unknown format")
        metadata = CheckpointMetadata.from_dict(data["metadata"])
    except (ValueError, KeyError, TypeError, RuntimeError, EOFError, pickle.UnpicklingError) as e:
        raise GameError(f"{path} is not a ggp checkpoint ({e})") from e
    return Checkpoint(metadata, data["model"], data.get("optimizer"), data.get("extra") or {})


def check_game(metadata: CheckpointMetadata, encoding: GameEncoding, path: Path) -> None:
    """Refuse a checkpoint trained for another game.

    Raises:
        CheckpointMismatchError: The game's rules or encoding differ from the checkpoint's.
    """
    here = encoding.signature
    there = metadata.signature
    if here != there:
        what = "rules" if here.game_digest != there.game_digest else "encoding"
        raise CheckpointMismatchError(
            f"{path} was trained for {metadata.game}, not for "
            f"{encoding.game.description.path} (the {what} differ): train a network for "
            f"this game with `ggp train {encoding.game.description.path}`"
        )


def load_network(path: Path, game: Game) -> tuple[PolicyValueNet, GameEncoding, Checkpoint]:
    """The network of a checkpoint, checked against ``game``.

    Raises:
        GameError: No checkpoint there, or not a ggp checkpoint.
        CheckpointMismatchError: It was trained for another game.
    """
    checkpoint = load_checkpoint(path)
    encoding = GameEncoding(game)
    check_game(checkpoint.metadata, encoding, path)
    net = PolicyValueNet(checkpoint.metadata.shape)
    net.load_state_dict(checkpoint.model)
    net.eval()
    return net, encoding, checkpoint


def default_checkpoint(game: Game, which: str = "latest") -> Path:
    """``checkpoints/<game>/<which>.pt``: under the working directory if that folder
    exists there, else beside the installed package (the shipped checkpoints).

    The default is the end of the run, ``latest.pt``: on Blind Tic-Tac-Toe it beat
    ``best.pt`` (chosen by short, noisy snapshots) in every cell of the evaluation
    (``training/RESULTS.md``), whose tables are all of ``latest.pt``."""
    stem = Path(game.description.path).stem
    local = Path("checkpoints") / stem / f"{which}.pt"
    if local.exists():
        return local
    shipped = Path(__file__).resolve().parents[2] / "checkpoints" / stem / f"{which}.pt"
    return shipped if shipped.exists() else local
