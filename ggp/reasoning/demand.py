"""Demand-driven grounding: the magic-set transformation of a game's dynamic rules.

Plain grounding computes every atom a dynamic relation could ever hold, whether or not
anything asks for it: a relation of many arguments that the rules only ever call with
some of them known (a square to test, a move to check) is computed for every value of
them. Over the corpus it cuts the 9 paths of a path-finding rule to the 3 asked for
(``tests/reasoning/test_ground.py``); on chess (the public repository's rules) it cuts
``threatened_with_capture`` from every combination of its seven arguments to those a
move and a king square make, though that is still too many rule instances to ground
within the default limits.

:func:`with_demand` rewrites the rules so that bottom-up evaluation derives only what
the game's outputs (``legal``, ``next``, ``goal``, ``terminal``, ``sees``) can ask for.
Each dynamic relation is *adorned* by which arguments are known when a rule body calls
it (``b`` bound, ``f`` free, read left to right in a greedy order: known arguments
first); an adorned rule gets a *magic* literal holding the argument values asked for,
and each call in a body adds a magic rule: those values, from the magic literal of the
calling rule and the body literals before the call. Negated calls are asked with every
argument known. Relations asked with nothing known keep their name and are computed
whole, as before; ``true`` and ``does`` are never adorned (their atoms come from
``init``, ``next`` and ``legal``, which the outputs ask for whole).

The adorned relations and the magic relations have names with a space, which KIF cannot
write. :class:`Demand` says which relation each adorned one stands for, so that ground
rule instances are written back over the game's own relations, and which relations are
magic (their literals only restrict grounding: they are no condition of the game).

Reference: Bancilhon, Maier, Sagiv and Ullman, "Magic Sets and Other Strange Ways to
Implement Logic Programs", PODS 1986; Beeri and Ramakrishnan, "On the Power of Magic",
J. Logic Programming 10, 1991.

Example:
    >>> from ggp.gdl.parser import parse_text
    >>> from ggp.reasoning.normal_form import normalise
    >>> text = '''(<= (legal r (go ?x)) (true (at ?x)) (near ?x))
    ...           (<= (near ?x) (far ?x ?y) (true (at ?y)))'''
    >>> description = parse_text(text)
    >>> rules = [n for rule in description.rules for n in normalise(description, rule)]
    >>> demand = with_demand(rules, static=frozenset(), outputs=[("legal", 2)])
    >>> for rule in demand.rules:
    ...     print(show(rule))
    (near magic b ?x) :- (true (at ?x))
    (legal r (go ?x)) :- (true (at ?x)), (near b ?x)
    (near b ?x) :- (near magic b ?x), (far ?x ?y), (true (at ?y))
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ggp.gdl.terms import Const, Func, Term, Var
from ggp.reasoning.normal_form import (
    DOES,
    TRUE,
    NormalRule,
    Relation,
    relation_of,
    variables,
)

__all__ = ["Demand", "with_demand", "show"]

_BASE = frozenset({TRUE, DOES})


@dataclass(frozen=True)
class Demand:
    """The rules with demand, and how to read their relations.

    Attributes:
        rules: The rewritten rules: static rules and the rules of ``true`` and ``does``
            unchanged, the adorned rules of the dynamic relations, and the magic rules.
        origin: Adorned relation name -> the game relation's name (same arity).
        magic: The names of the magic relations.
    """

    rules: tuple[NormalRule, ...]
    origin: dict[str, str]
    magic: frozenset[str]


def _adorned_name(name: str, adornment: str) -> str:
    return name if "b" not in adornment else f"{name} {adornment}"


def _magic_name(name: str, adornment: str) -> str:
    return f"{name} magic {adornment}"


def _make(name: str, args: Sequence[Term]) -> Term:
    return Func(name, tuple(args)) if args else Const(name)


def _vars_of(term: Term) -> list[Var]:
    found: list[Var] = []
    variables(term, found)
    return found


def _adornment(literal: Term, bound: set[Var]) -> str:
    """``b`` for each argument whose variables are all bound (a ground one too)."""
    return "".join("b" if set(_vars_of(arg)) <= bound else "f" for arg in literal.args)


def _bound_args(literal: Term, adornment: str) -> list[Term]:
    return [arg for arg, a in zip(literal.args, adornment, strict=True) if a == "b"]


def _sips(positive: Sequence[Term], bound: set[Var], idb: frozenset[Relation]) -> list[Term]:
    """The positive literals in the order that passes bindings: at each step the literal
    with all its variables bound (a test), else a static or base one with a bound
    variable, else the one with the most bound variables; ties in source order."""
    remaining = list(positive)
    known = set(bound)
    order: list[Term] = []
    while remaining:

        def score(item: tuple[int, Term]) -> tuple[int, int, int, int]:
            index, literal = item
            names = set(_vars_of(literal))
            free = len(names - known)
            derived = 1 if relation_of(literal) in idb else 0
            return (0 if free == 0 else 1, derived, -len(names & known), index)

        index, best = min(enumerate(remaining), key=score)
        remaining.pop(index)
        order.append(best)
        known.update(_vars_of(best))
    return order


def with_demand(
    rules: Iterable[NormalRule], static: frozenset[Relation], outputs: Iterable[Relation]
) -> Demand:
    """The magic-set rewriting of ``rules`` for the queries ``outputs`` (asked whole).

    Args:
        rules: Normal rules (``or`` expanded, negation as failure made explicit, unsafe
            variables given universe literals).
        static: The relations that depend on neither ``true`` nor ``does`` (left as
            they are: grounding evaluates them exactly).
        outputs: The relations asked for with no argument known.

    Returns:
        The rewritten rules and how to read them.
    """
    rules = list(rules)
    position = {id(rule): i for i, rule in enumerate(rules)}
    heads: dict[Relation, list[NormalRule]] = defaultdict(list)
    for rule in rules:
        heads[relation_of(rule.head)].append(rule)
    idb = frozenset(rel for rel in heads if rel not in static and rel not in _BASE)
    out: list[NormalRule] = [
        rule for rule in rules if relation_of(rule.head) not in idb
    ]  # static, true, does
    adorned_rules: list[tuple[int, NormalRule]] = []  # in the order of the rules they adorn
    origin: dict[str, str] = {}
    magic: set[str] = set()
    todo: list[tuple[Relation, str]] = [(rel, "f" * rel[1]) for rel in outputs if rel in idb]
    done: set[tuple[Relation, str]] = set()
    seen_magic: set[tuple[str, Term, tuple[Term, ...], tuple[tuple[Term, Term], ...]]] = set()
    while todo:
        relation, adornment = todo.pop()
        if (relation, adornment) in done:
            continue
        done.add((relation, adornment))
        name = _adorned_name(relation[0], adornment)
        origin[name] = relation[0]
        for rule in heads[relation]:
            bound = {v for arg in _bound_args(rule.head, adornment) for v in _vars_of(arg)}
            prefix: list[Term] = []
            if "b" in adornment:
                magic_name = _magic_name(relation[0], adornment)
                prefix.append(_make(magic_name, _bound_args(rule.head, adornment)))
            positive: list[Term] = []

            def ask(
                literal: Term, known: set[Var], body: list[Term], rule: NormalRule = rule
            ) -> Term:
                """The adorned call of ``literal``, with its magic rule."""
                called = relation_of(literal)
                pattern = _adornment(literal, known)
                todo.append((called, pattern))
                if "b" not in pattern:
                    return literal
                magic_name = _magic_name(called[0], pattern)
                magic.add(magic_name)
                head = _make(magic_name, _bound_args(literal, pattern))
                names = set().union(*(set(_vars_of(b)) for b in body)) if body else set()
                filters = [
                    (a, b) for a, b in rule.distinct if set(_vars_of(a)) | set(_vars_of(b)) <= names
                ]
                key = (magic_name, head, tuple(body), tuple(filters))
                if key not in seen_magic:
                    seen_magic.add(key)
                    out.append(NormalRule(head, list(body), [], filters, rule.source))
                return _make(_adorned_name(called[0], pattern), literal.args)

            known = set(bound)
            for literal in _sips(rule.positive, bound, idb):
                if relation_of(literal) in idb:
                    adorned = ask(literal, known, prefix + positive)
                else:
                    adorned = literal
                positive.append(adorned)
                known.update(_vars_of(literal))
            negative = [
                ask(literal, known, prefix + positive) if relation_of(literal) in idb else literal
                for literal in rule.negative
            ]
            head = _make(name, rule.head.args)
            adorned_rules.append(
                (
                    position[id(rule)],
                    NormalRule(head, prefix + positive, negative, list(rule.distinct), rule.source),
                )
            )
    adorned_rules.sort(key=lambda item: item[0])  # stable: by rule, then adornment
    out.extend(rule for _, rule in adorned_rules)
    for renamed in list(origin):
        if renamed == origin[renamed]:
            del origin[renamed]
    return Demand(tuple(out), origin, frozenset(magic))


def show(rule: NormalRule) -> str:
    """A normal rule as ``head :- literal, ...`` (for tests and debugging)."""
    body = [str(t) for t in rule.positive] + [f"(not {t})" for t in rule.negative]
    body += [f"(distinct {a} {b})" for a, b in rule.distinct]
    return f"{rule.head} :- " + ", ".join(body) if body else str(rule.head)
