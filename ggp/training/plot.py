"""The learning curves of a run, drawn as a PNG with matplotlib (Agg backend).

Two panels: the running losses (value MSE on goal / 100, policy cross-entropy, and its
part the network could still learn: the KL divergence to the targets) against
optimiser steps, and the snapshot scores against the random player (per role and their
mean) against self-play games. Records come from the run's ``log-*.jsonl`` files, read
in order, so a resumed run draws one continuous curve.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

__all__ = ["read_log", "plot_curves"]


def read_log(paths: Iterable[Path]) -> list[dict[str, Any]]:
    """The records of JSON-lines logs, in order (a torn last line is skipped)."""
    records: list[dict[str, Any]] = []
    for path in paths:
        with path.open(encoding="utf-8") as handle:
            for line in handle:
                try:
                    records.append(json.loads(line))
                except json.JSONDecodeError:
                    continue
    return records


def plot_curves(logs: Iterable[Path], target: Path) -> None:
    """Draw the curves of ``logs`` into ``target`` (a PNG), atomically.

    Raises:
        ImportError: matplotlib is not installed.
    """
    import io

    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    from ggp.nn.checkpoint import atomic_write_bytes

    records = read_log(logs)
    progress = [r for r in records if r.get("event") == "progress" and r.get("value_mse")]
    snapshots = [r for r in records if r.get("event") == "snapshot"]
    figure = Figure(figsize=(10, 4), dpi=100)
    left, right = figure.subplots(1, 2)
    if progress:
        steps = [r["steps"] for r in progress]
        left.plot(steps, [r["value_mse"] for r in progress], label="value MSE (goal / 100)")
        left.plot(steps, [r["policy_ce"] for r in progress], label="policy cross-entropy")
        kl = [(n, r["policy_kl"]) for n, r in zip(steps, progress, strict=True) if "policy_kl" in r]
        if kl:  # logs before 2026-11-27 do not have it
            left.plot(*zip(*kl, strict=True), label="policy KL to the targets")
        left.set_yscale("log")
        left.legend(loc="upper right", fontsize="small")
    left.set_xlabel("optimiser steps")
    left.set_title("training losses (running means)")
    left.grid(True, alpha=0.3)
    if snapshots:
        games = [r["games"] for r in snapshots]
        roles = sorted({role for r in snapshots for role in r.get("scores", {})})
        for role in roles:
            right.plot(
                games, [r["scores"].get(role) for r in snapshots], marker=".", label=f"as {role}"
            )
        right.plot(games, [r["score"] for r in snapshots], color="black", label="mean")
        right.legend(loc="lower right", fontsize="small")
    right.set_ylim(0, 100)
    right.set_xlabel("self-play games")
    right.set_title("score vs random (win 1, draw 0.5), x100")
    right.grid(True, alpha=0.3)
    figure.tight_layout()
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    atomic_write_bytes(target, buffer.getvalue())
