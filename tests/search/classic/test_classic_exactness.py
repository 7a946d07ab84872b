"""Every alpha-beta variant returns exactly plain minimax's root value, at every depth.

On the same tree (the same sequentialisation, leaf values and chance rounding) pruning,
null windows, aspiration, MTD(f)'s passes, the transposition table's bounds and move
ordering change which nodes are visited, never the value (REFERENCE-SEARCH.md §1.5).
Positions are reached by seeded random play on connect four and breakthrough (and, for
the simultaneous and N-player sequentialisations, their variants in ../shared).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ggp.game import Game
from ggp.reasoning.state_machine import State
from ggp.search.classic import (
    MTDF,
    PVS,
    AlphaBeta,
    Minimax,
    Paranoid,
    TreeSearch,
    iterative_deepening,
)

from conftest import SHARED, requires_shared

GDL = SHARED / "gdl" / "gdl"

#: Every variant, by name: a fresh search for (game, role).
VARIANTS: dict[str, Callable[[Game, str], TreeSearch]] = {
    "alphabeta (no TT, rules' order)": lambda g, r: AlphaBeta(
        g, r, use_tt=False, use_history=False, aspiration=None
    ),
    "alphabeta (history only)": lambda g, r: AlphaBeta(g, r, use_tt=False, aspiration=None),
    "alphabeta (TT, history)": lambda g, r: AlphaBeta(g, r, aspiration=None),
    "alphabeta (margin utility)": lambda g, r: AlphaBeta(g, r, utility="margin"),
    "pvs (no TT)": lambda g, r: PVS(g, r, use_tt=False, aspiration=None),
    "pvs (TT, history)": lambda g, r: PVS(g, r, aspiration=None),
    "mtdf": lambda g, r: MTDF(g, r),
    "paranoid": lambda g, r: Paranoid(g, r),
}


def seeded_positions(game: Game, seeds: range, plies: int) -> list[State]:
    """Non-terminal states after ``plies`` uniformly random joint moves per seed."""
    positions = []
    for seed in seeds:
        rng = np.random.default_rng(seed)
        state = game.initial_state()
        for _ in range(plies + seed % 3):
            expansion = game.expand(state)
            child = expansion.states[int(rng.integers(len(expansion.states)))]
            if game.is_terminal(child):
                break
            state = child
        positions.append(state)
    return positions


def check_exact(
    path: Path,
    seeds: range,
    plies: int,
    max_depth: int,
    variants: tuple[str, ...] = (),
    roles: int | None = None,
) -> None:
    """Every variant (or those named in ``variants``) against minimax, every depth, for
    every player role (or the first ``roles``)."""
    game = Game.from_file(path)
    chosen = {n: m for n, m in VARIANTS.items() if not variants or n in variants}
    with_margin = any(n.endswith("(margin utility)") for n in chosen)
    for state in seeded_positions(game, seeds, plies):
        for role in game.player_roles[:roles]:
            reference = Minimax(game, role)
            margin_reference = Minimax(game, role, utility="margin")
            # One search object per variant for all depths: its table and history carry
            # over from depth to depth, as in play.
            searches = {name: make(game, role.name) for name, make in chosen.items()}
            values: dict[int, float] = {}
            for depth in range(1, max_depth + 1):
                value = reference.search_depth(state, depth, None).value
                margin = (
                    margin_reference.search_depth(state, depth, None).value if with_margin else 0.0
                )
                values[depth] = value
                guess = values.get(depth - 1)
                for name, search in searches.items():
                    expected = margin if search.utility == "margin" else value
                    found = search.search_depth(state, depth, guess)
                    assert found.value == expected, (name, role, depth)
                    # A guess far off (aspiration re-searches, many MTD(f) passes).
                    off = search.search_depth(state, depth, expected + 37.0)
                    assert off.value == expected, (name, role, depth, "far guess")
            # Iterative deepening reports the same values, depth by depth.
            for make in (VARIANTS["pvs (TT, history)"], VARIANTS["mtdf"]):
                result = iterative_deepening(make(game, role.name), state, max_depth=max_depth)
                for report in result.reports:
                    if report.value is not None:
                        assert report.value == values[report.depth]


@requires_shared
def test_connect_four_variants_equal_minimax() -> None:
    check_exact(GDL / "connectFour.kif", range(3), plies=6, max_depth=4)


@requires_shared
def test_breakthrough_variants_equal_minimax() -> None:
    check_exact(GDL / "breakthrough.kif", range(2), plies=8, max_depth=3)


@requires_shared
@pytest.mark.slow
def test_deeper_variants_equal_minimax() -> None:
    fast = ("alphabeta (TT, history)", "pvs (TT, history)", "mtdf")
    check_exact(GDL / "connectFour.kif", range(3, 5), plies=12, max_depth=5, variants=fast)
    check_exact(
        GDL / "breakthrough.kif", range(2, 3), plies=20, max_depth=4, variants=fast, roles=1
    )


@requires_shared
def test_simultaneous_and_three_player_variants_equal_minimax() -> None:
    # Simultaneous moves: the root role picks first, the opponent answers (paranoid).
    check_exact(GDL / "connectFourSimultaneous.kif", range(1), plies=6, max_depth=2)
    # Three players: both opponents minimise the root role's goal.
    check_exact(GDL / "3pConnectFour.kif", range(1), plies=6, max_depth=3)
