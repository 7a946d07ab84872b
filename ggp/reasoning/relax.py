"""Static relaxations: for a state-dependent relation, a static superset of its answers.

The *relaxation* ``R*`` of a relation ``R`` that depends on ``true`` or ``does`` is what
its rules derive when every literal that depends on the state is assumed to hold: each
rule with its ``true`` and ``does`` literals, its negations and the literals of
relations without a relaxation left out, and the literals of relations with one read as
their relaxations. Leaving out a condition only adds answers, so in every state and
joint move the answers of ``R`` are among those of ``R*``, which depends on the static
relations alone and is evaluated bottom-up once, when the game is loaded.

A relaxation may keep only some of the argument positions (a projection): those that
its rules still bind once the state is left out, and of those, where they would
multiply its facts by more than :data:`WEAK_PRODUCT` without a tie to the others, those
that only one-place relations bind. The rules of chess pass the square to ignore along
as ``(coordinate ?ignorex) (coordinate ?ignorey)``: 64 times the facts for no
information, so ``(clear_diagonal_ne_ig ?u ?v ?x ?y ?ignorex ?ignorey)`` is relaxed to
its first four positions, the 140 pairs of squares on a north-east diagonal.

The top-down prover asks a call's relaxation before it evaluates the call: a call whose
ground values at the kept positions no fact of ``R*`` has fails at once. In chess a
bishop and a king that share no diagonal then cost one set lookup instead of four walks
along the diagonals through the state.

Example:
    >>> from ggp.gdl.parser import parse_text
    >>> from ggp.reasoning.prover import ProverStateMachine
    >>> machine = ProverStateMachine(parse_text('''
    ...     (role you) (init (at 1)) (succ 1 2) (succ 2 3)
    ...     (<= (path ?x ?y ?flag) (succ ?x ?y) (true (flag ?flag)))
    ...     (<= (path ?x ?z ?flag) (path ?x ?y ?flag) (succ ?y ?z) (not (true (wall ?y))))
    ...     (<= (legal you (go ?y)) (true (at ?x)) (path ?x ?y ?f))
    ...     (<= (next (at ?y)) (does you (go ?y)))
    ...     (<= terminal (true (at 3)))
    ... '''))
    >>> relaxed = machine.relaxations([("path", 3)], max_bindings=1000)[("path", 3)]
    >>> relaxed.positions      # the flag comes only from the state
    (0, 1)
    >>> sorted(str(x) + str(y) for x, y in relaxed.table.rows)
    ['12', '13', '23']
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass

from ggp.gdl.terms import Term, Var
from ggp.reasoning.clauses import DISTINCT, POS, BodyLiteral, Clause, variables_of
from ggp.reasoning.fact_tables import Fact, RelKey, Table

__all__ = [
    "RELAXED",
    "Budget",
    "BudgetExceeded",
    "Relaxation",
    "projection",
    "relax_component",
    "relaxed_name",
    "relaxed_seeds",
]

#: The suffix of a relaxation's relation name (a space: no KIF relation can clash).
RELAXED = " (relaxed)"
#: How many times a clause's facts its one-place-bound variables may multiply before
#: their positions are dropped (chess's two ignored coordinates: 64).
WEAK_PRODUCT = 32


@dataclass(frozen=True, slots=True)
class Relaxation:
    """A relation's relaxation: the argument positions it keeps, in order, and its
    facts (their values at those positions)."""

    positions: tuple[int, ...]
    table: Table


def relaxed_name(key: RelKey, positions: Sequence[int]) -> RelKey:
    """The relation holding ``key``'s relaxation to ``positions``."""
    return (key[0] + RELAXED, len(positions))


class BudgetExceeded(Exception):
    """A relaxation's evaluation passed its budget of join bindings."""


class Budget:
    """A :data:`~ggp.reasoning.fact_tables.Watch` that counts the bindings and facts
    the joins pass and raises :class:`BudgetExceeded` past ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.used = 0

    def __call__(self, bindings: Collection[Fact]) -> Iterable[Fact]:
        self.used += len(bindings)
        if self.used > self.limit:
            raise BudgetExceeded
        return bindings


#: Positions kept by the relations whose relaxations are known (None: none).
Kept = Callable[[RelKey], tuple[int, ...] | None]


def _body(clause: Clause, is_static: Callable[[RelKey], bool], kept: Kept) -> list[BodyLiteral]:
    """The positive literals a relaxed clause keeps: static ones as they are, those of
    relations with a relaxation as the relaxation (their kept positions only)."""
    body: list[BodyLiteral] = []
    for lit in clause.literals:
        if lit.kind != POS or lit.key is None:
            continue
        if is_static(lit.key):
            body.append(lit)
            continue
        positions = kept(lit.key)
        if positions is not None:
            args = tuple(lit.args[p] for p in positions)
            body.append(BodyLiteral(POS, relaxed_name(lit.key, positions), args))
    return body


def _weak(
    head: Sequence[Term], body: Sequence[BodyLiteral], size: Callable[[RelKey], int]
) -> set[Var]:
    """The variables to drop from a relaxed clause: those that only one-place
    literals of ``body`` bind and that occur once in the ``head`` (a variable at two
    head positions ties them together), when together they would multiply its facts by
    more than :data:`WEAK_PRODUCT` (their literals' ``size``, the smallest for each)."""
    strong: set[Var] = set()
    domain: dict[Var, int] = {}
    for lit in body:
        if len(lit.args) > 1:
            strong |= lit.variables()
        elif lit.args and isinstance(lit.args[0], Var) and lit.key is not None:
            var = lit.args[0]
            domain[var] = min(domain.get(var, 1 << 30), size(lit.key))
    seen: set[Var] = set()
    for arg in head:
        for var in variables_of((arg,)):
            if var in seen or not isinstance(arg, Var):
                strong.add(var)
            seen.add(var)
    weak = {v for v in domain if v not in strong}
    product = 1
    for var in weak:
        product *= domain[var]
    return weak if product > WEAK_PRODUCT else set()


def _connected(body: Sequence[BodyLiteral], head: set[Var]) -> list[BodyLiteral]:
    """``body`` without the literals that share no variable with the head or another
    literal (a ``(coordinate ?ignorex)`` whose position is dropped): each would only
    multiply the bindings by its facts."""
    kept: list[BodyLiteral] = []
    for i, lit in enumerate(body):
        variables = lit.variables()
        if (
            not variables
            or not variables.isdisjoint(head)
            or any(not variables.isdisjoint(o.variables()) for j, o in enumerate(body) if j != i)
        ):
            kept.append(lit)
    return kept


def relax_component(
    keys: Sequence[RelKey],
    clauses: Mapping[RelKey, Sequence[Clause]],
    is_static: Callable[[RelKey], bool],
    kept: Kept,
    size: Callable[[RelKey], int],
) -> tuple[dict[RelKey, tuple[int, ...]], dict[RelKey, list[Clause]]]:
    """The positions kept by the relaxations of one component's relations ``keys``
    (mutually recursive) and the rules of those relaxations (see the module
    docstring). ``kept`` gives the positions of the relations outside the
    component, ``size`` the facts of a static relation or of a relaxation (by the
    relaxed relation's name)."""
    positions = {key: tuple(range(key[1])) for key in keys}

    def known(key: RelKey) -> tuple[int, ...] | None:
        return positions.get(key) if key in positions else kept(key)

    changed = True
    while changed:  # dropping a position may leave a variable of another one unbound
        changed = False
        for key in keys:
            for clause in clauses.get(key, ()):
                body = _body(clause, is_static, known)
                bound = {v for lit in body for v in lit.variables()}
                bound -= _weak(clause.head_args, body, size)
                keep = tuple(
                    p for p in positions[key] if variables_of((clause.head_args[p],)) <= bound
                )
                if keep != positions[key]:
                    positions[key] = keep
                    changed = True
    rules: dict[RelKey, list[Clause]] = {}
    for key in keys:
        relaxed = relaxed_name(key, positions[key])
        rules[relaxed] = []
        for clause in clauses.get(key, ()):
            head = tuple(clause.head_args[p] for p in positions[key])
            body = _connected(_body(clause, is_static, known), variables_of(head))
            bound = {v for lit in body for v in lit.variables()}
            body.extend(
                lit for lit in clause.literals if lit.kind == DISTINCT and lit.variables() <= bound
            )
            rules[relaxed].append(Clause(relaxed, head, tuple(body), clause.rule))
    return positions, rules


def relaxed_seeds(positions: Sequence[int], facts: Iterable[Fact]) -> list[Fact]:
    """A relation's ground facts as facts of its relaxation to ``positions``."""
    return [tuple(fact[p] for p in positions) for fact in facts]


def projection(table: Table, paths: Sequence[tuple[int, ...]]) -> set[object] | None:
    """The facts of ``table`` read at ``paths`` (a path: a column, then the index of a
    sub-term at each level), as the key a top-down call makes of its ground values
    (the one value alone, else a tuple); facts whose terms lack a path are left out.
    None where it would reject too little to be worth a lookup: at least half of the
    combinations of the values met at each path."""
    keys: set[object] = set()
    for fact in table.rows:
        values: list[Term] = []
        for path in paths:
            term = fact[path[0]]
            for j in path[1:]:
                if j >= len(term.args):
                    break
                term = term.args[j]
            else:
                values.append(term)
                continue
            break
        else:
            keys.add(values[0] if len(paths) == 1 else tuple(values))
    if not keys:
        return keys
    combinations = 1
    for i in range(len(paths)):
        column = keys if len(paths) == 1 else {key[i] for key in keys}  # type: ignore[index]
        combinations *= len(column)
    return None if len(keys) * 2 >= combinations else keys
