"""The prover's reading of a rule: clauses of body literals, ``or`` and ``not`` expanded.

A GDL rule becomes one :class:`Clause` per alternative of its ``or`` literals; each body
literal is a :class:`BodyLiteral` of one kind (:data:`POS`, :data:`NEG`,
:data:`DISTINCT`, :data:`EQUAL`, :data:`ANY`), ``(not (not L))``, ``(not (or ...))`` and
``(not (distinct a b))`` rewritten the obvious way. A rule the prover cannot read raises
:class:`RuleError` with its span, which the prover turns into a
:class:`~ggp.errors.GDLSemanticError`.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable
from dataclasses import dataclass

from ggp.gdl.terms import Func, Rule, Span, Term, Var
from ggp.reasoning.fact_tables import RelKey

__all__ = [
    "ANY",
    "DISTINCT",
    "EQUAL",
    "NEG",
    "POS",
    "RESERVED",
    "BodyLiteral",
    "Clause",
    "RuleError",
    "clauses_of",
    "ordered_variables",
    "variables_of",
]

RESERVED = frozenset({"not", "or", "distinct"})


POS, NEG, DISTINCT, EQUAL, ANY = range(5)


@dataclass(frozen=True, slots=True)
class BodyLiteral:
    """A basic body literal.

    ``kind`` is ``POS`` / ``NEG`` (``key`` and its ``args``), ``DISTINCT`` /
    ``EQUAL`` (``args == (a, b)``) or ``ANY`` (``args == (var,)``: the variable ranges
    over the game's constants; inserted by the planner for unsafe rules).
    """

    kind: int
    key: RelKey | None
    args: tuple[Term, ...]

    def variables(self) -> set[Var]:
        return variables_of(self.args)


@dataclass(frozen=True, slots=True)
class Clause:
    """A rule with no ``or``: ``key(head_args) :- literals`` (a fact when empty)."""

    key: RelKey
    head_args: tuple[Term, ...]
    literals: tuple[BodyLiteral, ...]
    rule: Rule


def split_atom(term: Term) -> tuple[RelKey, tuple[Term, ...]]:
    return (term.name, len(term.args)), term.args


def variables_of(terms: Iterable[Term]) -> set[Var]:
    """The variables of ``terms`` (an explicit stack: no recursion)."""
    found: set[Var] = set()
    stack = list(terms)
    while stack:
        term = stack.pop()
        if isinstance(term, Var):
            found.add(term)
        elif not term.is_ground:
            stack.extend(term.args)
    return found


def ordered_variables(terms: Iterable[Term]) -> list[Var]:
    """The variables of ``terms`` in order of first occurrence, left to right."""
    found: dict[Var, None] = {}
    stack = list(reversed(list(terms)))
    while stack:
        term = stack.pop()
        if isinstance(term, Var):
            found.setdefault(term)
        elif not term.is_ground:
            stack.extend(reversed(term.args))
    return list(found)


class RuleError(Exception):
    """A rule the prover cannot read; turned into GDLSemanticError with its position."""

    def __init__(self, message: str, span: Span) -> None:
        super().__init__(message)
        self.message = message
        self.span = span


def alternatives(literal: Term, span: Span) -> list[list[BodyLiteral]]:
    """``literal`` as a disjunction (outer list) of conjunctions of basic literals."""
    name, arity = literal.name, len(literal.args)
    if isinstance(literal, Func) and name == "or":
        return [conj for arg in literal.args for conj in alternatives(arg, span)]
    if name == "not":
        if arity != 1:
            raise RuleError(f"'not' takes one literal, not {arity}: {literal}", span)
        return negated(literal.args[0], span)
    if name == "distinct":
        if arity != 2:
            raise RuleError(f"'distinct' takes two terms, not {arity}: {literal}", span)
        return [[BodyLiteral(DISTINCT, None, literal.args)]]
    if isinstance(literal, Var):  # the parser refuses these; kept for safety
        raise RuleError(f"a body literal cannot be the variable {literal}", span)
    key, args = split_atom(literal)
    return [[BodyLiteral(POS, key, args)]]


def negated(literal: Term, span: Span) -> list[list[BodyLiteral]]:
    """The alternatives of ``(not literal)``."""
    name, arity = literal.name, len(literal.args)
    if isinstance(literal, Func) and name == "or":
        # not (a or b) = (not a) and (not b): every combination of their alternatives
        parts = [negated(arg, span) for arg in literal.args]
        return [[lit for conj in combo for lit in conj] for combo in itertools.product(*parts)]
    if name == "not":
        if arity != 1:
            raise RuleError(f"'not' takes one literal, not {arity}: {literal}", span)
        return alternatives(literal.args[0], span)
    if name == "distinct":
        if arity != 2:
            raise RuleError(f"'distinct' takes two terms, not {arity}: {literal}", span)
        return [[BodyLiteral(EQUAL, None, literal.args)]]
    if isinstance(literal, Var):
        raise RuleError(f"a negated literal cannot be the variable {literal}", span)
    key, args = split_atom(literal)
    return [[BodyLiteral(NEG, key, args)]]


def clauses_of(rule: Rule) -> list[Clause]:
    """The ``or``-free clauses equivalent to ``rule``."""
    head = rule.head
    if isinstance(head, Var) or head.name in RESERVED:
        raise RuleError(f"a rule cannot define {head}", rule.span)
    key, head_args = split_atom(head)
    parts = [alternatives(literal, rule.literal_span(i)) for i, literal in enumerate(rule.body)]
    return [
        Clause(key, head_args, tuple(lit for conj in combo for lit in conj), rule)
        for combo in itertools.product(*parts)
    ]
