"""The shipped RTS files are the generators' output, and the BattleCity mazes are fair."""

from __future__ import annotations

from pathlib import Path

import pytest

from ggp.gdl.parser import parse_text
from ggp.gdl.validate import validate
from ggp.reasoning.ground import GroundingLimits, ground
from ggp.rts.battlecity import MAPS, BattleMap, battle_map, battlecity_gdl
from ggp.rts.microrts import SCENARIOS, Scenario, rts_gdl, scenario

GAMES = Path(__file__).resolve().parents[2] / "games" / "rts"


@pytest.mark.parametrize("m", MAPS, ids=[m.name for m in MAPS])
def test_battlecity_files_are_the_generators_output(m: BattleMap) -> None:
    text = (GAMES / f"battlecity_{m.name}.gdl").read_text()
    assert text == battlecity_gdl(m), "run: python -m ggp.rts.battlecity"


@pytest.mark.parametrize("s", SCENARIOS, ids=[s.name for s in SCENARIOS])
def test_rts_files_are_the_generators_output(s: Scenario) -> None:
    text = (GAMES / f"rts_8x8_{s.name}.gdl").read_text()
    assert text == rts_gdl(s), "run: python -m ggp.rts.microrts"


@pytest.mark.parametrize("m", MAPS, ids=[m.name for m in MAPS])
def test_mazes_are_point_symmetric_with_the_sides_swapped(m: BattleMap) -> None:
    swap = str.maketrans("12BR", "21RB")
    turned = tuple(row[::-1].translate(swap) for row in reversed(m.rows))
    assert turned == m.rows


def test_bad_maps_and_names_are_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="unknown symbol 'x' at \\(2, 1\\)"):
        BattleMap("bad", (".x1B", "..2R"))
    with pytest.raises(ValueError, match="exactly one '1'"):
        BattleMap("bad", ("..B.", "..2R"))
    with pytest.raises(KeyError, match="no BattleCity map 'nowhere'"):
        battle_map("nowhere")
    with pytest.raises(KeyError, match="no RTS scenario 'nothing'"):
        scenario("nothing")


def test_scenarios_write_rules_only_for_the_unit_types_they_can_have() -> None:
    assert scenario("melee").types() == ["light"]
    assert scenario("full").types() == ["base", "barracks", "worker", "light", "heavy"]
    melee = rts_gdl(scenario("melee"))
    assert "harvest" not in melee.split(";; the start")[1] and "(makes" not in melee


@pytest.mark.parametrize("path", sorted(GAMES.glob("*.gdl")), ids=lambda p: p.stem)
def test_shipped_files_are_strict_gdl(path: Path) -> None:
    """Every variable of a negated literal occurs in a positive one (safety), so the
    meaning does not hang on how a reasoner reads an unbound variable under ``not``."""
    problems = validate(parse_text(path.read_text()), strict=True)
    assert not problems, "\n".join(map(str, problems))


def test_rts_full_grounds_small_enough_for_the_default_budget() -> None:
    """RTS-Full's production rules look its gold up through ``(affords ...)``: written into
    each order's rule, the gold amount multiplied the ground instances (214,509) and the
    game took 8-10 CPU s to ground, past the default budget. A count, not a time, so that
    the test does not depend on the machine."""
    program = ground(parse_text(rts_gdl(scenario("full"))), GroundingLimits(max_seconds=None))
    assert len(program.rules) <= 120_000
