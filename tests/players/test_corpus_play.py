"""The CFR player on the public GDL-II games it has never seen (../shared/gdl/gdl2).

Each game is played twice, CFR players (short searches) in every role. They must never
fail: no search error (Blind Breakthrough's rules hide whether a pawn may step forward,
which split a player's root information set before ``choosable_moves``), no exception,
no reply the referee had to replace for an error.
"""

from __future__ import annotations

import logging

import numpy as np
import pytest

from ggp.game import Game
from ggp.gdl.terms import Const
from ggp.match import run_match
from ggp.players.base import Player
from ggp.players.cfr_player import CFRPlayer, CFRSettings

from conftest import SHARED, requires_shared

#: The GDL-II games of the corpus that games/ has no counterpart of.
UNSEEN = ["blind_breakthrough_5x5", "kriegTTT_4x4", "mastermind_small", "guessSix"]

QUICK = CFRSettings(min_time_s=0.01, max_time_s=0.05, margin_s=0.0, samples=30)


@requires_shared
@pytest.mark.parametrize("name", UNSEEN)
def test_cfr_players_play_an_unseen_game(name: str, caplog: pytest.LogCaptureFixture) -> None:
    game = Game.from_file(SHARED / "gdl" / "gdl2" / f"{name}.kif")
    for seed in range(2):
        players: dict[Const, Player] = {
            role: CFRPlayer(QUICK, rng=np.random.default_rng(10 * seed + i))
            for i, role in enumerate(game.player_roles)
        }
        with caplog.at_level(logging.WARNING, logger="ggp.players.cfr_player"):
            record = run_match(game, players, np.random.default_rng(seed), play_clock_s=10.0)
        assert not [r for r in record.replacements if "error" in r.reason]
        assert "search failed" not in caplog.text
        assert len(record.goals) == len(game.roles)
