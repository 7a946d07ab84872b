"""No package imports one above it (issue 18): the layers, lowest first, are the order of
the README's Layout section. A module may import its own package and any below it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: ``ggp`` packages and top-level modules, lowest layer first.
LAYERS = (
    ("errors", "collector", "native"),
    ("gdl",),
    ("reasoning",),
    ("game",),
    ("info", "bench", "options"),
    ("search", "battlesnake", "rts"),
    ("nn",),
    ("players",),
    ("match",),
    ("protocol",),
    ("training",),
    ("cli", "__main__", "__init__"),
)
LEVEL = {name: level for level, names in enumerate(LAYERS) for name in names}


def imported_parts(path: Path) -> set[str]:
    """The first component after ``ggp.`` of every ``ggp`` module ``path`` imports."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        names: list[str] = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
            if node.module == "ggp":  # from ggp import errors
                names = [f"ggp.{alias.name}" for alias in node.names]
        found.update(name.split(".")[1] for name in names if name.startswith("ggp."))
    return found


MODULES = sorted((ROOT / "ggp").rglob("*.py"))


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(ROOT)) for p in MODULES])
def test_no_module_imports_a_layer_above_its_own(path: Path) -> None:
    parts = path.relative_to(ROOT / "ggp").with_suffix("").parts
    own = LEVEL[parts[0]]
    above = sorted(p for p in imported_parts(path) if p in LEVEL and LEVEL[p] > own)
    assert above == [], f"{path.relative_to(ROOT)} imports ggp.{above[0]}, a layer above it"


#: Where a reasoner may be touched: the reasoners themselves and the Game facade.
REASONER_SIDE = ("reasoning", "game")


@pytest.mark.parametrize("path", MODULES, ids=[str(p.relative_to(ROOT)) for p in MODULES])
def test_nothing_above_game_reaches_past_it(path: Path) -> None:
    parts = path.relative_to(ROOT / "ggp").with_suffix("").parts
    if parts[0] in REASONER_SIDE:
        return
    tree = ast.parse(path.read_text(encoding="utf-8"))
    reached = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr == "machine"
    ]
    machine_classes = [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        and node.module in ("ggp.reasoning.propnet_machine", "ggp.reasoning.prover")
    ]
    where = path.relative_to(ROOT)
    assert reached == [], f"{where}:{reached[0]} uses game.machine; ask Game instead"
    assert machine_classes == [], f"{where}:{machine_classes[0]} imports a reasoner class"
