"""GDL rules in the normal form the grounder joins: no ``or``, no nested ``not``, safe.

A :class:`NormalRule` is a head, positive and negated body atoms, and ``distinct`` pairs.
:func:`normalise` expands ``(or ...)`` into one rule per disjunct and rewrites
``(not (not L))``, ``(not (or ...))`` and ``(not (distinct a b))``; :func:`existential`
gives a negated literal's own variables an auxiliary relation (negation as failure);
:func:`make_safe` lets every variable no positive literal binds range over the game's
constants, as a top-down prover reads it. Also here: relations (name and arity) and
the relations GDL gives a meaning.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from ggp.errors import GDLSemanticError
from ggp.gdl.terms import Const, Description, Func, Rule, Term, Var

__all__ = [
    "Relation",
    "relation_of",
    "TRUE",
    "DOES",
    "INIT",
    "NEXT",
    "LEGAL",
    "ROLE",
    "OUTPUT_RELATIONS",
    "UNIVERSE_NAME",
    "UNIVERSE",
    "NormalRule",
    "normalise",
    "existential",
    "make_safe",
    "variables",
    "semantic_error",
]

#: A relation: its name and arity (``("cell", 3)``; ``("terminal", 0)``).
Relation = tuple[str, int]

TRUE: Relation = ("true", 1)
DOES: Relation = ("does", 2)
INIT: Relation = ("init", 1)
NEXT: Relation = ("next", 1)
LEGAL: Relation = ("legal", 2)
ROLE: Relation = ("role", 1)

#: The relations a propositional network computes (everything else only feeds them).
OUTPUT_RELATIONS: frozenset[Relation] = frozenset(
    {ROLE, INIT, NEXT, LEGAL, ("goal", 2), ("terminal", 0), ("sees", 2)}
)

#: The synthetic static relation that enumerates the game's constants; its name cannot
#: be written in KIF (a space), so it never clashes with a relation of the game.
UNIVERSE_NAME = " universe"
UNIVERSE: Relation = (UNIVERSE_NAME, 1)


def relation_of(atom: Term) -> Relation:
    """The relation of an atom or literal pattern: ``(name, arity)``."""
    return (atom.name, len(atom.args))


@dataclass(slots=True)
class NormalRule:
    """A rule without ``or``: positive and negative atoms and distinct pairs."""

    head: Term
    positive: list[Term]
    negative: list[Term]
    distinct: list[tuple[Term, Term]]
    source: Rule | None  # None for the synthetic rules


def unify(a: Term, b: Term, binding: dict[Var, Term]) -> bool:
    """Extend ``binding`` to a most general unifier of ``a`` and ``b`` (no occurs check)."""
    stack = [(a, b)]
    while stack:
        x, y = stack.pop()
        while isinstance(x, Var) and x in binding:
            x = binding[x]
        while isinstance(y, Var) and y in binding:
            y = binding[y]
        if x is y:
            continue
        if isinstance(x, Var):
            binding[x] = y
        elif isinstance(y, Var):
            binding[y] = x
        elif isinstance(x, Func) and isinstance(y, Func):
            if x.name != y.name or len(x.args) != len(y.args):
                return False
            stack.extend(zip(x.args, y.args, strict=True))
        else:
            return False
    return True


def resolve(term: Term, binding: dict[Var, Term]) -> Term:
    """``term`` under ``binding``, following chains of variables."""
    if term.is_ground:
        return term
    if isinstance(term, Var):
        value = binding.get(term)
        return term if value is None else resolve(value, binding)
    return Func(term.name, tuple(resolve(a, binding) for a in term.args))


def semantic_error(description: Description, rule: Rule, message: str) -> GDLSemanticError:
    return GDLSemanticError(
        message, description.path, rule.span.line, rule.span.column, description.source or None
    )


def expand_literal(literal: Term, negated: bool) -> list[list[tuple[str, Term]]]:
    """The disjunctive normal form of one body literal.

    Returns a list of alternatives, each a list of ``(kind, term)`` with kind ``"pos"``,
    ``"neg"``, ``"distinct"`` (term ``(distinct a b)``) or ``"equal"`` (same shape).
    """
    name, arity = literal.name, len(literal.args)
    if isinstance(literal, Func) and name == "not" and arity == 1:
        return expand_literal(literal.args[0], not negated)
    if isinstance(literal, Func) and name == "or":
        parts = [expand_literal(arg, negated) for arg in literal.args]
        if not negated:  # one alternative per disjunct
            return [alt for part in parts for alt in part]
        # not (or A B) = (and (not A) (not B)): the product of the alternatives.
        result: list[list[tuple[str, Term]]] = [[]]
        for part in parts:
            result = [left + right for left in result for right in part]
        return result
    if isinstance(literal, Func) and name == "and":
        parts = [expand_literal(arg, negated) for arg in literal.args]
        if negated:
            return [alt for part in parts for alt in part]
        result = [[]]
        for part in parts:
            result = [left + right for left in result for right in part]
        return result
    if isinstance(literal, Func) and name == "distinct" and arity == 2:
        return [[("equal" if negated else "distinct", literal)]]
    return [[("neg" if negated else "pos", literal)]]


def normalise(description: Description, rule: Rule) -> list[NormalRule]:
    """Expand ``or`` and rewrite ``not``; one normal rule per alternative."""
    alternatives: list[list[tuple[str, Term]]] = [[]]
    for literal in rule.body:
        if isinstance(literal, Func) and literal.name == "distinct" and len(literal.args) != 2:
            raise semantic_error(description, rule, f"distinct needs 2 arguments: {literal}")
        options = expand_literal(literal, False)
        alternatives = [left + right for left in alternatives for right in options]
    result: list[NormalRule] = []
    for alternative in alternatives:
        binding: dict[Var, Term] = {}
        consistent = True
        for kind, term in alternative:
            if kind == "equal" and not unify(term.args[0], term.args[1], binding):
                consistent = False
                break
        if not consistent:
            continue
        normal = NormalRule(resolve(rule.head, binding), [], [], [], rule)
        for kind, term in alternative:
            resolved = resolve(term, binding)
            if kind == "pos":
                normal.positive.append(resolved)
            elif kind == "neg":
                normal.negative.append(resolved)
            elif kind == "distinct":
                normal.distinct.append((resolved.args[0], resolved.args[1]))
        result.append(normal)
    return result


def variables(term: Term, out: list[Var]) -> None:
    if isinstance(term, Var):
        if term not in out:
            out.append(term)
    elif not term.is_ground:
        for arg in term.args:
            variables(arg, out)


def existential(rule: NormalRule, counter: Iterator[int]) -> list[NormalRule]:
    """Rewrite each ``(not L)`` with variables of its own as ``(not (aux S))``.

    A variable that occurs only inside one ``not`` (not in the head, a positive
    literal or a ``distinct``) is existential inside it, as in negation as failure:
    ``(not (true (cell ?x ?y b)))`` holds when no cell is blank. The auxiliary
    relation ``aux`` (a name KIF cannot write) holds for the values ``S`` of the
    literal's other variables for which some binding of its own ones makes ``L``
    true. Returns the auxiliary rules.
    """
    others: list[Var] = []
    variables(rule.head, others)
    for literal in rule.positive:
        variables(literal, others)
    for a, b in rule.distinct:
        variables(a, others)
        variables(b, others)
    shared_set = set(others)
    aux_rules: list[NormalRule] = []
    for i, literal in enumerate(rule.negative):
        names: list[Var] = []
        variables(literal, names)
        shared = [v for v in names if v in shared_set]
        if len(shared) == len(names):
            continue
        name = f" exists {next(counter)}"
        head: Term = Func(name, tuple(shared)) if shared else Const(name)
        aux_rules.append(NormalRule(head, [literal], [], [], rule.source))
        rule.negative[i] = head
    return aux_rules


def make_safe(rule: NormalRule) -> None:
    """Give every variable no positive literal binds a universe literal."""
    bound: list[Var] = []
    for literal in rule.positive:
        variables(literal, bound)
    loose: list[Var] = []
    variables(rule.head, loose)
    for literal in rule.negative:
        variables(literal, loose)
    for a, b in rule.distinct:
        variables(a, loose)
        variables(b, loose)
    for var in loose:
        if var not in bound:
            rule.positive.append(Func(UNIVERSE_NAME, (var,)))
            bound.append(var)
