"""The classic searches' native inner loops (``_native.c`` beside this module).

Built at first use by :mod:`ggp.native`, like the propnet kernel; each function has a
pure-Python twin in the search that uses it, with the same answers (the same doubles),
which runs where the extension cannot be built or ``GGP_NATIVE=0``:

- ``puct(counts, totals, priors, first, scale) -> int``: PUCT's pick over every move of
  one role at one node (:meth:`MCTS._puct <ggp.search.classic.mcts.MCTS._puct>`), a
  tenth of self-play's time in Python on breakthrough.
"""

from __future__ import annotations

import logging
from pathlib import Path
from types import ModuleType

from ggp.native import load_extension

__all__ = ["MODULE_NAME", "SOURCE", "load_native"]

SOURCE = Path(__file__).with_name("_native.c")
MODULE_NAME = "ggp_search_native"


def load_native() -> ModuleType | None:
    """The native search loops, compiled on first use; None where they cannot be."""
    return load_extension(SOURCE, MODULE_NAME, "native search loops")


def main() -> None:
    """Build the loops now and say where they are (``make setup`` calls it)."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    module = load_native()
    where = module.__file__ if module is not None else "not available (pure Python used)"
    print(f"native search loops: {where}")
