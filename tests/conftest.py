"""Shared fixtures: where the public game corpus (../shared) is, and skipping without it."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ggp.game import Game
from ggp.match import run_match
from ggp.players.base import Player
from ggp.training.workers import match_score

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


def mean_score(
    game: Game,
    role: str,
    player: Callable[[int], Player],
    opponent: Callable[[int], Player],
    games: int,
    match_seed: int,
) -> float:
    """The mean match score (win 1, draw 0.5) of ``player(i)`` as ``role`` against
    ``opponent(i)`` (the other player role) over matches i = 0..games-1, the referee's
    randomness seeded ``match_seed + i``."""
    me = game.role(role)
    (other,) = (r for r in game.player_roles if r != me)
    total = 0.0
    for i in range(games):
        players = {me: player(i), other: opponent(i)}
        record = run_match(game, players, np.random.default_rng(match_seed + i))
        total += match_score(record.goals, game, me)
    return total / games
