"""Shared fixtures: where the public game corpus (../shared) is, and skipping without it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
GAMES = ROOT / "games"
SHARED = Path(os.environ.get("GGP_SHARED", ROOT.parent / "shared"))
HAVE_SHARED = (SHARED / "gdl").is_dir()

requires_shared = pytest.mark.skipif(
    not HAVE_SHARED, reason=f"the public game corpus is absent (looked in {SHARED})"
)


def corpus_files(*subdirs: str) -> list[Path]:
    """All .kif files below SHARED/<subdir> for each subdir ([] without the corpus)."""
    if not HAVE_SHARED:
        return []
    files: list[Path] = []
    for sub in subdirs:
        files.extend(sorted((SHARED / sub).rglob("*.kif")))
    return files


def corpus_ids(files: list[Path]) -> list[str]:
    return [str(f.relative_to(SHARED)) for f in files]
