"""ggp: a general game player for GDL-II.

The public API: :class:`Game` (the rules of any GDL / GDL-II game, ready to play), the
error taxonomy, and term parsing/printing.
"""

from ggp.errors import (
    GameError,
    GDLError,
    GDLSemanticError,
    GDLSyntaxError,
    GGPError,
    GroundingError,
    ProtocolError,
)
from ggp.game import CacheInfo, Game
from ggp.gdl.parser import format_term, parse_file, parse_term, parse_text
from ggp.gdl.terms import Const, Func, Term, Var
from ggp.reasoning.ground import GroundingLimits
from ggp.reasoning.state_machine import State

__version__ = "0.1.0"

__all__ = [
    "CacheInfo",
    "Const",
    "Func",
    "GDLError",
    "GDLSemanticError",
    "GDLSyntaxError",
    "GGPError",
    "Game",
    "GameError",
    "GroundingError",
    "GroundingLimits",
    "ProtocolError",
    "State",
    "Term",
    "Var",
    "__version__",
    "format_term",
    "parse_file",
    "parse_term",
    "parse_text",
]
