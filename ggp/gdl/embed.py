"""Classic GDL games as GDL-II games: every role sees every move.

A GDL description has no ``sees`` rules, yet in GDL every player is told the whole joint
move after each step, so it knows the true state. Read as GDL-II, the same description
would tell nobody anything. :func:`with_public_moves` makes GDL's rule explicit with the
percept rule of the usual embedding of GDL into GDL-II (cf. Thielscher, "A General Game
Description Language for Incomplete Information Games", AAAI 2010)::

    (<= (sees ?r (did ?p ?m)) (role ?r) (does ?p ?m))

(the rule a GDL-II game manager applies to a GDL game, see ../shared/protocol), so
that players that learn only from percepts (GDL-II players) keep track of the state.
Roles, moves, state updates, goals and termination are unchanged.

Example:
    >>> from ggp.gdl.parser import parse_text
    >>> description = with_public_moves(parse_text("(role a) (legal a noop)"))
    >>> print(description.rules[-1])
    (<= (sees ?r (did ?p ?m)) (role ?r) (does ?p ?m))
"""

from __future__ import annotations

from dataclasses import replace

from ggp.gdl.terms import Description, Func, Rule, Var

__all__ = ["PUBLIC_MOVES_RULE", "with_public_moves"]

_R, _P, _M = Var("?r"), Var("?p"), Var("?m")

#: ``(<= (sees ?r (did ?p ?m)) (role ?r) (does ?p ?m))``: every role sees every move.
PUBLIC_MOVES_RULE = Rule(
    Func("sees", (_R, Func("did", (_P, _M)))),
    (Func("role", (_R,)), Func("does", (_P, _M))),
)


def with_public_moves(description: Description) -> Description:
    """``description`` plus :data:`PUBLIC_MOVES_RULE`.

    Meant for descriptions without ``sees`` rules (classic GDL); in a GDL-II game the
    added rule would reveal every move, hidden ones included.

    Args:
        description: A parsed game description.

    Returns:
        A new description with the same path and source and one more rule, last.
    """
    return replace(description, rules=(*description.rules, PUBLIC_MOVES_RULE))
