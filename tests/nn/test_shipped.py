"""The shipped networks (``checkpoints/GAME/``): each loads for the game it was trained on,
is the one ``cfr+nn`` finds by default, and plays a legal move with it."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from ggp.game import Game
from ggp.nn.checkpoint import default_checkpoint, load_checkpoint
from ggp.players.base import MatchInfo, Observation
from ggp.players.cfr_player import CFRSettings
from ggp.players.net_player import NetCFRPlayer

from conftest import ROOT, SHARED

SHIPPED = sorted((ROOT / "checkpoints").glob("*/latest.pt"))


def game_file(checkpoint: Path) -> Path:
    """The game a checkpoint names, its ``../shared/`` corpus read from SHARED."""
    named = load_checkpoint(checkpoint).metadata.game
    prefix = "../shared/"
    return SHARED / named[len(prefix) :] if named.startswith(prefix) else ROOT / named


def test_the_four_networks_ship() -> None:
    names = {path.parent.name for path in SHIPPED}
    assert {"meier", "blindtictactoe", "connectFour", "breakthrough"} <= names


@pytest.mark.parametrize("checkpoint", SHIPPED, ids=[p.parent.name for p in SHIPPED])
def test_a_shipped_network_loads_for_its_game_and_plays(checkpoint: Path) -> None:
    path = game_file(checkpoint)
    if not path.is_file():
        pytest.skip(f"its game {path} is absent (the public corpus is not there)")
    game = Game.from_file(path)
    assert default_checkpoint(game).resolve() == checkpoint.resolve()
    player = NetCFRPlayer(settings=CFRSettings(max_time_s=0.05), rng=np.random.default_rng(0))
    assert player.load(game) is not None, player.search_only
    role = game.player_roles[0]
    player.start(MatchInfo("shipped", game, role))
    move = player.play(Observation(0, None, frozenset()), time.monotonic() + 1.0)
    player.stop(Observation(1, move, frozenset()))
    assert move in game.legal_moves(game.initial_state(), role)
