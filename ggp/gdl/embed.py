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

Not every manager does: the Dresden GameController sends a classic game's players of a
GDL-II match empty percepts, reading the rules as written (nobody sees anything).
:func:`without_percepts` makes that reading explicit with a ``sees`` rule that never
holds (:data:`NO_PERCEPTS_RULE`), so that the description counts as GDL-II and is not
embedded again.

Example:
    >>> from ggp.gdl.parser import parse_text
    >>> description = with_public_moves(parse_text("(role a) (legal a noop)"))
    >>> print(description.rules[-1])
    (<= (sees ?r (did ?p ?m)) (role ?r) (does ?p ?m))
"""

from __future__ import annotations

from dataclasses import replace

from ggp.gdl.terms import Description, Func, Rule, Var

__all__ = ["PUBLIC_MOVES_RULE", "NO_PERCEPTS_RULE", "with_public_moves", "without_percepts"]

_R, _P, _M = Var("?r"), Var("?p"), Var("?m")

#: ``(<= (sees ?r (did ?p ?m)) (role ?r) (does ?p ?m))``: every role sees every move.
PUBLIC_MOVES_RULE = Rule(
    Func("sees", (_R, Func("did", (_P, _M)))),
    (Func("role", (_R,)), Func("does", (_P, _M))),
)


#: ``(<= (sees ?r (did ?r ?m)) (does ?r ?m) (not (does ?r ?m)))``: a percept rule that never
#: holds, marking a description as GDL-II in which nobody sees anything.
NO_PERCEPTS_RULE = Rule(
    Func("sees", (_R, Func("did", (_R, _M)))),
    (Func("does", (_R, _M)), Func("not", (Func("does", (_R, _M)),))),
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


def without_percepts(description: Description) -> Description:
    """``description`` plus :data:`NO_PERCEPTS_RULE`: a classic GDL description read as
    GDL-II as written, where no role sees anything (not even the moves).

    Example:
        >>> from ggp.gdl.parser import parse_text
        >>> print(without_percepts(parse_text("(role a) (legal a noop)")).rules[-1])
        (<= (sees ?r (did ?r ?m)) (does ?r ?m) (not (does ?r ?m)))

    Args:
        description: A parsed game description without ``sees`` rules.

    Returns:
        A new description with the same path and source and one more rule, last.
    """
    return replace(description, rules=(*description.rules, NO_PERCEPTS_RULE))
