"""Command-line options that several ``ggp`` commands share, defined once."""

from __future__ import annotations

import argparse
from typing import get_args

from ggp.game import ReasonerName

__all__ = ["REASONERS", "add_reasoner_option"]

#: The reasoner names a command accepts (those of :data:`ggp.game.ReasonerName`).
REASONERS: tuple[str, ...] = get_args(ReasonerName)


def add_reasoner_option(parser: argparse.ArgumentParser, purpose: str = "") -> None:
    """``--reasoner {auto,propnet,topdown,prover}`` (default auto), ``purpose`` worked
    into the help: e.g. ``"for the playouts"``."""
    what = f"reasoner {purpose}".rstrip()
    parser.add_argument(
        "--reasoner",
        choices=REASONERS,
        default="auto",
        help=f"{what} (default auto: propnet, topdown if too large to ground)",
    )
