"""The words GDL and GDL-II reserve: one table of the keywords with their arities, and the
built-in connectives with theirs.

Every module that needs a keyword's arity reads it here (the validator checks rules
against these tables). From the GDL specification (Love et al., Stanford LG-2006-01) and
GDL-II (Thielscher, AAAI 2010: ``sees``, and ``random`` as the chance role).

Example:
    >>> KEYWORD_ARITIES["legal"], KEYWORD_ARITIES["terminal"]
    (2, 0)
    >>> BUILTIN_ARITIES["or"]
    (1, -1)
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

__all__ = ["KEYWORD_ARITIES", "BUILTIN_ARITIES", "RANDOM_ROLE"]

#: The fixed arity of each relation keyword of GDL and GDL-II.
KEYWORD_ARITIES: Mapping[str, int] = MappingProxyType(
    {
        "role": 1,
        "init": 1,
        "true": 1,
        "next": 1,
        "legal": 2,
        "does": 2,
        "goal": 2,
        "sees": 2,
        "terminal": 0,
        "base": 1,
        "input": 2,
    }
)

#: Built-in connectives: name -> (fewest, most) arguments (most -1: unbounded).
BUILTIN_ARITIES: Mapping[str, tuple[int, int]] = MappingProxyType(
    {"not": (1, 1), "distinct": (2, 2), "or": (1, -1)}
)

#: The chance role of GDL-II: uniform over its legal moves, played by the game manager.
RANDOM_ROLE = "random"
