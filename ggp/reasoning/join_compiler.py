"""Planning a clause's joins and compiling them into Python functions, for the prover.

:func:`join_order` orders a clause's body literals (``does`` first, a literal whose
variables are all bound as soon as it can run, ``not`` and ``distinct`` once the positive
literals have bound their variables); :class:`JoinCompiler` turns the ordered clause into
the text of a small Python function, a chain of comprehensions over tuples of variable
bindings, one per literal, and compiles it (:class:`JoinPlan`).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass

from ggp.gdl.terms import Const, Func, Term, Var
from ggp.reasoning.clauses import (
    ANY,
    DISTINCT,
    EQUAL,
    NEG,
    POS,
    BodyLiteral,
    Clause,
    ordered_variables,
    variables_of,
)
from ggp.reasoning.fact_tables import Fact, RelKey, Table, Watch

__all__ = ["JoinCompiler", "JoinPlan", "join_order"]

_DOES: RelKey = ("does", 2)


def join_order(
    clause: Clause,
    bound: Iterable[Var] = (),
    expensive: Callable[[RelKey], bool] | None = None,
) -> list[BodyLiteral]:
    """Order the body: each literal as soon as it can run, ``bound`` bound at the start
    (the head's variables that a top-down call binds; none bottom-up).

    ``expensive`` (top-down) names the relations whose literals are calls to evaluate
    rather than lookups: a test or a ``not`` of such a relation keeps its place in the
    source order (it runs once the positive literals written before it have run), as
    Prolog runs it, rather than as soon as its variables are bound.

    Positive literals keep their source order, except that a test (a literal whose
    variables are all bound) runs as soon as it can, and ``does`` literals come first:
    the ``does`` relation holds one fact per role, so they never multiply the bindings
    by more than the number of roles.

    A ``not`` waits for its variables that occur in the head or in a literal other than
    a ``not`` (the others are existential inside each ``not``); a ``distinct`` waits for
    all its variables; an equality waits until one side is bound, then binds the other.
    Variables that nothing binds get an ``ANY`` literal (range over the constants) just
    before they are needed.
    """
    literals = clause.literals
    # Variables that must be bound before a `not`: those of the head or of a literal
    # other than a `not`. The others are existential inside each `not` they occur in.
    others = variables_of(clause.head_args)
    for lit in literals:
        if lit.kind != NEG:
            others |= lit.variables()
    elsewhere = {i: lit.variables() & others for i, lit in enumerate(literals)}

    def needs(i: int, lit: BodyLiteral, bound: set[Var]) -> set[Var]:
        """Variables ``lit`` still needs bound before it can run ({} when ready)."""
        if lit.kind == NEG:
            return elsewhere[i] - bound
        if lit.kind == EQUAL:
            left, right = variables_of(lit.args[:1]) - bound, variables_of(lit.args[1:]) - bound
            return set() if not left or not right else left
        return lit.variables() - bound

    def called(lit: BodyLiteral) -> bool:
        return expensive is not None and lit.key is not None and expensive(lit.key)

    def waits(i: int, lit: BodyLiteral) -> bool:
        """Whether a call waits for a positive literal written before it that has not
        run yet and shares a variable with it (a filter on what the call is asked)."""
        variables = lit.variables()
        return any(j < i and not variables.isdisjoint(other.variables()) for j, other in positives)

    positives = [(i, lit) for i, lit in enumerate(literals) if lit.kind == POS]
    pending = [(i, lit) for i, lit in enumerate(literals) if lit.kind != POS]
    known: set[Var] = set(bound)
    steps: list[BodyLiteral] = []

    def place(lit: BodyLiteral) -> None:
        steps.append(lit)
        if lit.kind in (POS, EQUAL):
            known.update(lit.variables())

    while True:
        # Filters first (not, distinct, equality, tests), cheap ones before calls.
        filters = [(i, lit) for i, lit in pending if not needs(i, lit, known)]
        tests = [(i, lit) for i, lit in positives if not lit.variables() - known]
        ready = next((x for x in filters if not called(x[1])), None)
        if ready is not None:
            pending.remove(ready)
            place(ready[1])
            continue
        cheap = [x for x in tests if not called(x[1])]
        test = min(cheap, key=lambda x: (x[1].key != _DOES, x[0])) if cheap else None
        if test is not None:
            positives.remove(test)
            place(test[1])
            continue
        call = next((x for x in filters + tests if not waits(*x)), None)
        if call is not None:
            (pending if call[1].kind != POS else positives).remove(call)
            place(call[1])
            continue
        if positives:
            best = min(
                range(len(positives)),
                key=lambda j: (
                    bool(positives[j][1].variables() - known) or called(positives[j][1]),
                    positives[j][1].key != _DOES,
                    positives[j][0],
                ),
            )
            place(positives.pop(best)[1])
            continue
        if not pending:
            break
        i, lit = pending[0]
        for var in ordered_variables(lit.args):
            if var in needs(i, lit, known):
                steps.append(BodyLiteral(ANY, None, (var,)))
                known.add(var)
    for var in ordered_variables(clause.head_args):
        if var not in known:
            steps.append(BodyLiteral(ANY, None, (var,)))
            known.add(var)
    return steps


_RuleFunction = Callable[[Sequence[Table]], Iterable[Fact]]


@dataclass(slots=True)
class JoinPlan:
    """A compiled clause: call ``function`` with the table of each of ``keys``."""

    clause: Clause
    keys: tuple[RelKey, ...]
    positive: tuple[bool, ...]
    function_name: str
    function: _RuleFunction | None = None


class JoinCompiler:
    """Generates the Python source of the rule functions, and the names it refers to."""

    def __init__(
        self,
        universe: tuple[Const, ...],
        watch: Watch,
    ) -> None:
        """``watch`` wraps the long passes of the generated functions (``W(B)``: the
        bindings a step reads; ``index(spec, W)``: the facts a new index files): it may
        hand them back as they are, or through a generator that stops the join part-way
        (the prover's deadline)."""
        self.names: dict[str, object] = {"F": Func, "E": (), "U": universe, "W": watch}
        self._refs: dict[tuple[str, Hashable], str] = {}
        self.lines: list[str] = []

    def ref(self, value: Hashable, prefix: str = "c") -> str:
        """A global name bound to ``value`` in the generated module."""
        key = (prefix, value)
        name = self._refs.get(key)
        if name is None:
            name = f"{prefix}{len(self._refs)}"
            self._refs[key] = name
            self.names[name] = value
        return name

    def build(self, term: Term, names: dict[Var, str]) -> str:
        """An expression for ``term``, all of whose variables are in ``names``."""
        if term.is_ground:
            return self.ref(term)
        if isinstance(term, Var):
            return names[term]
        args = "".join(self.build(arg, names) + ", " for arg in term.args)
        return f"F({term.name!r}, ({args}))"

    def match(
        self,
        pattern: Term,
        subject: str,
        bound: dict[Var, str],
        binds: dict[Var, str],
        conditions: list[str],
        *,
        check_functor: bool = True,
    ) -> None:
        """Conditions for the ground value ``subject`` to match ``pattern``.

        Variables in ``bound`` must equal their value; a variable met the first time is
        recorded in ``binds`` with the expression of its value; a later occurrence must
        equal the first one.
        """
        if pattern.is_ground:
            conditions.append(f"{subject} is {self.ref(pattern)}")
        elif isinstance(pattern, Var):
            known = bound.get(pattern) or binds.get(pattern)
            if known is None:
                binds[pattern] = subject
            else:
                conditions.append(f"{subject} is {known}")
        elif variables_of((pattern,)) <= bound.keys():
            conditions.append(f"{subject} is {self.build(pattern, bound)}")
        else:
            if check_functor:
                conditions.append(
                    f"len({subject}.args) == {len(pattern.args)} "
                    f"and {subject}.name == {pattern.name!r}"
                )
            for j, arg in enumerate(pattern.args):
                self.match(arg, f"{subject}.args[{j}]", bound, binds, conditions)

    def index_lookup(
        self,
        args: tuple[Term, ...],
        bound: dict[Var, str],
        build: Callable[[Term, dict[Var, str]], str] | None = None,
    ) -> tuple[tuple[tuple[int, bool], ...], str | None, list[str], dict[Var, str]]:
        """How to look up the facts of a relation literal by what is known of it.

        Returns:
            The index spec (the positions known by value, and those of a compound
            known by its function name and arity), the expression of the index key for
            one binding (None when every fact is a candidate), the conditions on a
            candidate ``f`` and the new variables it binds. ``build`` makes a ground
            argument's expression (default :meth:`build`).
        """
        build = build or self.build
        spec: list[tuple[int, bool]] = []
        key: list[str] = []
        for position, arg in enumerate(args):
            if arg.is_ground or variables_of((arg,)) <= bound.keys():
                spec.append((position, False))
                key.append(build(arg, bound))
            elif isinstance(arg, Func):
                spec.append((position, True))
                key.append(self.ref((arg.name, len(arg.args)), "k"))
        conditions: list[str] = []
        binds: dict[Var, str] = {}
        indexed = dict(spec)
        for position, arg in enumerate(args):
            if indexed.get(position) is False:
                continue
            self.match(
                arg,
                f"f[{position}]",
                bound,
                binds,
                conditions,
                check_functor=position not in indexed,
            )
        if not spec:
            return (), None, conditions, binds
        key_expr = key[0] if len(key) == 1 else "(" + "".join(k + ", " for k in key) + ")"
        return tuple(spec), key_expr, conditions, binds

    def lookup(
        self, args: tuple[Term, ...], bound: dict[Var, str], table: str
    ) -> tuple[str, str | None, list[str], dict[Var, str]]:
        """How to fetch the candidate facts of a relation literal, and check them.

        Returns:
            The expression that fetches the index (or all the rows), the expression of
            the index key for one binding (None when every row is a candidate), the
            conditions on a candidate ``f`` and the new variables it binds.
        """
        spec, key_expr, conditions, binds = self.index_lookup(args, bound)
        if key_expr is None:
            return f"{table}.rows", None, conditions, binds
        spec_name = self.ref(spec, "s")
        return f"{table}.index({spec_name}, W)", key_expr, conditions, binds

    def compile(
        self, clause: Clause, function_name: str
    ) -> tuple[tuple[RelKey, ...], tuple[bool, ...]]:
        """Append the source of ``clause``'s function.

        Returns:
            The relation of each table the function takes, and whether its literal is
            positive.
        """
        steps = join_order(clause)
        # live[k]: the variables used by the steps after step k, or by the head.
        live: list[set[Var]] = [set() for _ in steps]
        needed = variables_of(clause.head_args)
        for k in range(len(steps) - 1, -1, -1):
            live[k] = set(needed)
            needed |= steps[k].variables()
        slots: dict[Var, int] = {}
        row: list[Var] = []
        keys: list[RelKey] = []
        positive: list[bool] = []
        lines = [f"def {function_name}(T):", "    B = [()]"]
        for k, step in enumerate(steps):
            names = {var: f"v{slots[var]}" for var in row}
            target = "(" + "".join(f"{name}, " for name in names.values()) + ")"
            conditions: list[str] = []
            binds: dict[Var, str] = {}
            source = ""
            if step.kind in (POS, NEG):
                assert step.key is not None
                table = f"T[{len(keys)}]"
                keys.append(step.key)
                positive.append(step.kind == POS)
                fetch, key, conditions, binds = self.lookup(step.args, names, table)
                lines.append(f"    X = {fetch}")
                candidates = "X" if key is None else f"X.get({key}, E)"
                if step.kind == POS:
                    source = f" for f in {candidates}"
                else:
                    if conditions:
                        test = f"any(True for f in {candidates} if {' and '.join(conditions)})"
                    elif key is None:
                        test = "X"
                    else:
                        test = f"{key} in X"
                    conditions = [f"not {test}"]
                    binds = {}
            elif step.kind == DISTINCT:
                left, right = (self.build(arg, names) for arg in step.args)
                conditions = [f"{left} is not {right}"]
            elif step.kind == EQUAL:
                known, pattern = step.args
                if not variables_of((known,)) <= names.keys():
                    known, pattern = pattern, known
                source = f" for s in ({self.build(known, names)},)"
                self.match(pattern, "s", names, binds, conditions)
            else:  # ANY
                (var,) = step.args
                assert isinstance(var, Var)
                source = " for u in U"
                binds = {var: "u"}
            for var in binds:
                slots.setdefault(var, len(slots))
            values = {var: names[var] for var in row} | binds
            new_row = sorted((var for var in values if var in live[k]), key=slots.__getitem__)
            shrinks = len(new_row) < len(values)
            out = "(" + "".join(values[var] + ", " for var in new_row) + ")"
            condition = " if " + " and ".join(conditions) if conditions else ""
            open_, close = ("{", "}") if shrinks else ("[", "]")
            bindings = "B" if k == 0 else "W(B)"  # the first step reads the one empty binding
            lines.append(
                f"    B = {open_}{out} for {target} in {bindings}{source}{condition}{close}"
            )
            lines.append("    if not B:")
            lines.append("        return E")
            row = new_row
        names = {var: f"v{slots[var]}" for var in row}
        target = "(" + "".join(f"{name}, " for name in names.values()) + ")"
        head = "(" + "".join(self.build(arg, names) + ", " for arg in clause.head_args) + ")"
        lines.append(f"    return [{head} for {target} in W(B)]")
        self.lines.extend(lines)
        self.lines.append("")
        return tuple(keys), tuple(positive)
