"""The reference reasoner: bottom-up evaluation of the un-ground GDL rules.

:class:`ProverStateMachine` answers every question of the
:class:`~ggp.reasoning.state_machine.StateMachine` protocol straight from the rules of a
:class:`~ggp.gdl.terms.Description`, with no grounding. It is slow next to a propnet but
plainly correct, so it is the oracle that the compiled propnet is tested against, and
the fallback for games too large to ground.

The semantics are those of the GDL specification (Love, Hinrichs, Haley, Schkufza and
Genesereth, "General Game Playing: Game Description Language Specification", Stanford
LG-2006-01, 2008, http://games.stanford.edu/language/spec/gdl_spec_2008_03.pdf) with
GDL-II's ``sees`` and ``random`` (Thielscher, "A General Game Description Language for
Incomplete Information Games", AAAI 2010). How the prover reads the rules:

- ``(or L1 ... Ln)`` splits a rule into one rule per disjunct; ``(not (or ...))``,
  ``(not (not L))`` and ``(not (distinct a b))`` are rewritten the obvious way.
- Relations are grouped into strongly connected components of the dependency graph and
  evaluated bottom-up, dependencies first (stratified negation); a component that is
  recursive is evaluated semi-naively to its fixpoint. Negation through recursion is
  refused with :class:`~ggp.errors.GDLSemanticError`.
- Three layers: *static* relations (depending on neither ``true`` nor ``does``) are
  evaluated once; *state* relations (``legal``, ``goal``, ``terminal`` and what they
  need) once per state, kept in an LRU cache bounded by its facts as well as by its
  states (a chess state's model holds millions); *move* relations (``next``, ``sees``
  and what depends on ``does``) once per state and joint move. The rules of a move
  relation that do not depend on ``does`` are evaluated with the state layer, so the
  moves from one state share that work.
- Only the relations that ``init``, ``legal``, ``goal``, ``terminal``, ``next`` and
  ``sees`` need are evaluated (``base``, ``input`` and dead helpers never are).
- Body literals are joined left to right, except that ``does`` literals (one fact per
  role) come first, a literal whose variables are all bound runs as soon as it can, and
  a ``not``, ``distinct`` or ``(not (distinct ...))`` waits until the positive literals
  have bound its variables.
- Unsafe rules, in which a variable of the head, of a ``distinct`` or of a
  ``(not (distinct ...))`` is bound by no positive literal, are played as a top-down
  prover plays them: such a variable ranges over the game's constants (every
  :class:`~ggp.gdl.terms.Const` in the description, see
  :attr:`ProverStateMachine.constants`), so ``(<= (legal ?p ?p) (cell 1 1))`` makes
  each role's own name legal for it. A variable that occurs only inside ``not``
  literals is existential inside each of them, as in Prolog's negation as failure:
  ``(<= terminal (not (true (cell ?x ?y b))))`` holds when no cell is blank.

Each rule is compiled once into a small Python function (a chain of comprehensions, one
per body literal, over tuples of variable bindings); the text of all of them is kept in
:attr:`ProverStateMachine.source` for debugging. Facts are tuples of interned terms, so
comparisons are identity tests, and every relation is indexed on demand by the argument
positions that a literal knows when it is evaluated (by value, or by the function name
and arity of a compound argument).

Example:
    >>> from ggp.gdl.parser import parse_text
    >>> machine = ProverStateMachine(parse_text('''
    ...     (role you) (init (count 0)) (succ 0 1) (succ 1 2)
    ...     (<= (legal you (add ?n)) (true (count ?c)) (succ ?c ?n))
    ...     (legal you stay)
    ...     (<= (next (count ?n)) (does you (add ?n)))
    ...     (<= (next (count ?c)) (does you stay) (true (count ?c)))
    ...     (<= terminal (true (count 2)))
    ...     (<= (goal you 100) (true (count 2)))
    ... '''))
    >>> state = machine.initial_state()
    >>> machine.legal_moves(state, machine.roles[0])
    (Func('add', (Const('1'),)), Const('stay'))
    >>> state = machine.next_state(state, machine.legal_moves(state, machine.roles[0])[:1])
    >>> sorted(map(str, machine.state_facts(state)))
    ['(count 1)']
    >>> machine.is_terminal(state), machine.goals(state)
    (False, (0,))
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from cachetools import LRUCache

from ggp.errors import GameError, GDLSemanticError
from ggp.gdl.graph import strongly_connected_components
from ggp.gdl.parser import parse_file
from ggp.gdl.terms import Const, Description, Func, Rule, Span, Term, Var, game_constants
from ggp.reasoning.state_machine import State

__all__ = ["ProverStateMachine"]

logger = logging.getLogger(__name__)

#: A relation: its name and arity (``terminal`` is ``("terminal", 0)``).
RelKey = tuple[str, int]
#: A ground fact of a relation: its arguments (``()`` for a 0-ary relation).
Fact = tuple[Term, ...]
#: Which argument positions an index uses: ``(position, by_functor)`` pairs.
IndexSpec = tuple[tuple[int, bool], ...]

_TRUE: RelKey = ("true", 1)
_DOES: RelKey = ("does", 2)
_INIT: RelKey = ("init", 1)
_LEGAL: RelKey = ("legal", 2)
_GOAL: RelKey = ("goal", 2)
_TERMINAL: RelKey = ("terminal", 0)
_NEXT: RelKey = ("next", 1)
_SEES: RelKey = ("sees", 2)
#: The pseudo-relation holding every constant of the game, which unbound variables of
#: unsafe rules range over. Its name contains a space, so no KIF relation can clash.
_UNIVERSE: RelKey = ("constant ", 1)

_STATIC, _STATE, _MOVE = 0, 1, 2
_RESERVED = frozenset({"not", "or", "distinct"})


# --------------------------------------------------------------------------------------
# Fact tables


def _index_into(index: dict[Hashable, list[Fact]], spec: IndexSpec, facts: list[Fact]) -> None:
    """File each of ``facts`` under its key for ``spec`` (a scalar for one position)."""
    if len(spec) == 1:
        ((position, by_functor),) = spec
        if by_functor:
            for fact in facts:
                arg = fact[position]
                index.setdefault((arg.name, len(arg.args)), []).append(fact)
        else:
            for fact in facts:
                index.setdefault(fact[position], []).append(fact)
        return
    for fact in facts:
        key = tuple(
            (fact[p].name, len(fact[p].args)) if by_functor else fact[p] for p, by_functor in spec
        )
        index.setdefault(key, []).append(fact)


class _Table:
    """The facts of one relation, with indexes built on first use and kept up to date."""

    __slots__ = ("rows", "seen", "_indexes")

    def __init__(self, facts: Iterable[Fact] = ()) -> None:
        self.rows: list[Fact] = list(dict.fromkeys(facts))
        self.seen: set[Fact] = set(self.rows)
        self._indexes: dict[IndexSpec, dict[Hashable, list[Fact]]] = {}

    def add(self, facts: Iterable[Fact]) -> list[Fact]:
        """Add ``facts``; return those that were not there yet, in order."""
        seen = self.seen
        new = [fact for fact in dict.fromkeys(facts) if fact not in seen]
        if new:
            seen.update(new)
            self.rows.extend(new)
            for spec, index in self._indexes.items():
                _index_into(index, spec, new)
        return new

    def index(self, spec: IndexSpec) -> dict[Hashable, list[Fact]]:
        """The facts grouped by their key under ``spec`` (shared: do not modify)."""
        index = self._indexes.get(spec)
        if index is None:
            index = {}
            _index_into(index, spec, self.rows)
            self._indexes[spec] = index
        return index


# --------------------------------------------------------------------------------------
# Rules, normalised


_POS, _NEG, _DISTINCT, _EQUAL, _ANY = range(5)


@dataclass(frozen=True, slots=True)
class _Literal:
    """A basic body literal.

    ``kind`` is ``_POS`` / ``_NEG`` (``key`` and its ``args``), ``_DISTINCT`` /
    ``_EQUAL`` (``args == (a, b)``) or ``_ANY`` (``args == (var,)``: the variable ranges
    over the game's constants; inserted by the planner for unsafe rules).
    """

    kind: int
    key: RelKey | None
    args: tuple[Term, ...]

    def variables(self) -> set[Var]:
        return _vars(self.args)


@dataclass(frozen=True, slots=True)
class _Clause:
    """A rule with no ``or``: ``key(head_args) :- literals`` (a fact when empty)."""

    key: RelKey
    head_args: tuple[Term, ...]
    literals: tuple[_Literal, ...]
    rule: Rule


def _split(term: Term) -> tuple[RelKey, tuple[Term, ...]]:
    return (term.name, len(term.args)), term.args


def _vars(terms: Iterable[Term]) -> set[Var]:
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


def _ordered_vars(terms: Iterable[Term]) -> list[Var]:
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


class _RuleError(Exception):
    """A rule the prover cannot read; turned into GDLSemanticError with its position."""

    def __init__(self, message: str, span: Span) -> None:
        super().__init__(message)
        self.message = message
        self.span = span


def _alternatives(literal: Term, span: Span) -> list[list[_Literal]]:
    """``literal`` as a disjunction (outer list) of conjunctions of basic literals."""
    name, arity = literal.name, len(literal.args)
    if isinstance(literal, Func) and name == "or":
        return [conj for arg in literal.args for conj in _alternatives(arg, span)]
    if name == "not":
        if arity != 1:
            raise _RuleError(f"'not' takes one literal, not {arity}: {literal}", span)
        return _negated(literal.args[0], span)
    if name == "distinct":
        if arity != 2:
            raise _RuleError(f"'distinct' takes two terms, not {arity}: {literal}", span)
        return [[_Literal(_DISTINCT, None, literal.args)]]
    if isinstance(literal, Var):  # the parser refuses these; kept for safety
        raise _RuleError(f"a body literal cannot be the variable {literal}", span)
    key, args = _split(literal)
    return [[_Literal(_POS, key, args)]]


def _negated(literal: Term, span: Span) -> list[list[_Literal]]:
    """The alternatives of ``(not literal)``."""
    name, arity = literal.name, len(literal.args)
    if isinstance(literal, Func) and name == "or":
        # not (a or b) = (not a) and (not b): every combination of their alternatives
        parts = [_negated(arg, span) for arg in literal.args]
        return [[lit for conj in combo for lit in conj] for combo in itertools.product(*parts)]
    if name == "not":
        if arity != 1:
            raise _RuleError(f"'not' takes one literal, not {arity}: {literal}", span)
        return _alternatives(literal.args[0], span)
    if name == "distinct":
        if arity != 2:
            raise _RuleError(f"'distinct' takes two terms, not {arity}: {literal}", span)
        return [[_Literal(_EQUAL, None, literal.args)]]
    if isinstance(literal, Var):
        raise _RuleError(f"a negated literal cannot be the variable {literal}", span)
    key, args = _split(literal)
    return [[_Literal(_NEG, key, args)]]


def _clauses(rule: Rule) -> list[_Clause]:
    """The ``or``-free clauses equivalent to ``rule``."""
    head = rule.head
    if isinstance(head, Var) or head.name in _RESERVED:
        raise _RuleError(f"a rule cannot define {head}", rule.span)
    key, head_args = _split(head)
    parts = [_alternatives(literal, rule.literal_span(i)) for i, literal in enumerate(rule.body)]
    return [
        _Clause(key, head_args, tuple(lit for conj in combo for lit in conj), rule)
        for combo in itertools.product(*parts)
    ]


# --------------------------------------------------------------------------------------
# Planning and code generation


def _plan(clause: _Clause) -> list[_Literal]:
    """Order the body: each literal as soon as it can run.

    Positive literals keep their source order, except that a test (a literal whose
    variables are all bound) runs as soon as it can, and ``does`` literals come first:
    the ``does`` relation holds one fact per role, so they never multiply the bindings
    by more than the number of roles.

    A ``not`` waits for its variables that occur in the head or in a literal other than
    a ``not`` (the others are existential inside each ``not``); a ``distinct`` waits for
    all its variables; an equality waits until one side is bound, then binds the other.
    Variables that nothing binds get an ``_ANY`` literal (range over the constants) just
    before they are needed.
    """
    literals = clause.literals
    # Variables that must be bound before a `not`: those of the head or of a literal
    # other than a `not`. The others are existential inside each `not` they occur in.
    others = _vars(clause.head_args)
    for lit in literals:
        if lit.kind != _NEG:
            others |= lit.variables()
    elsewhere = {i: lit.variables() & others for i, lit in enumerate(literals)}

    def needs(i: int, lit: _Literal, bound: set[Var]) -> set[Var]:
        """Variables ``lit`` still needs bound before it can run ({} when ready)."""
        if lit.kind == _NEG:
            return elsewhere[i] - bound
        if lit.kind == _EQUAL:
            left, right = _vars(lit.args[:1]) - bound, _vars(lit.args[1:]) - bound
            return set() if not left or not right else left
        return lit.variables() - bound

    positives = [lit for lit in literals if lit.kind == _POS]
    pending = [(i, lit) for i, lit in enumerate(literals) if lit.kind != _POS]
    bound: set[Var] = set()
    steps: list[_Literal] = []
    while True:
        ready = next(((i, lit) for i, lit in pending if not needs(i, lit, bound)), None)
        if ready is not None:
            pending.remove(ready)
            steps.append(ready[1])
            if ready[1].kind == _EQUAL:
                bound |= ready[1].variables()
            continue
        if positives:
            best = min(
                range(len(positives)),
                key=lambda j: (
                    bool(positives[j].variables() - bound),
                    positives[j].key != _DOES,
                    j,
                ),
            )
            lit = positives.pop(best)
            steps.append(lit)
            bound |= lit.variables()
            continue
        if not pending:
            break
        i, lit = pending[0]
        for var in _ordered_vars(lit.args):
            if var in needs(i, lit, bound):
                steps.append(_Literal(_ANY, None, (var,)))
                bound.add(var)
    for var in _ordered_vars(clause.head_args):
        if var not in bound:
            steps.append(_Literal(_ANY, None, (var,)))
            bound.add(var)
    return steps


_RuleFunction = Callable[[Sequence[_Table]], Iterable[Fact]]


@dataclass(slots=True)
class _Plan:
    """A compiled clause: call ``function`` with the table of each of ``keys``."""

    clause: _Clause
    keys: tuple[RelKey, ...]
    positive: tuple[bool, ...]
    function_name: str
    function: _RuleFunction | None = None


class _Compiler:
    """Generates the Python source of the rule functions, and the names it refers to."""

    def __init__(self, universe: tuple[Const, ...]) -> None:
        self.names: dict[str, object] = {"F": Func, "E": (), "U": universe}
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
        elif _vars((pattern,)) <= bound.keys():
            conditions.append(f"{subject} is {self.build(pattern, bound)}")
        else:
            if check_functor:
                conditions.append(
                    f"len({subject}.args) == {len(pattern.args)} "
                    f"and {subject}.name == {pattern.name!r}"
                )
            for j, arg in enumerate(pattern.args):
                self.match(arg, f"{subject}.args[{j}]", bound, binds, conditions)

    def lookup(
        self, args: tuple[Term, ...], bound: dict[Var, str], table: str
    ) -> tuple[str, str | None, list[str], dict[Var, str]]:
        """How to fetch the candidate facts of a relation literal, and check them.

        Returns:
            The expression that fetches the index (or all the rows), the expression of
            the index key for one binding (None when every row is a candidate), the
            conditions on a candidate ``f`` and the new variables it binds.
        """
        spec: list[tuple[int, bool]] = []
        key: list[str] = []
        for position, arg in enumerate(args):
            if arg.is_ground or _vars((arg,)) <= bound.keys():
                spec.append((position, False))
                key.append(self.build(arg, bound))
            elif isinstance(arg, Func):
                spec.append((position, True))
                key.append(self.ref((arg.name, len(arg.args)), "k"))
        conditions: list[str] = []
        binds: dict[Var, str] = {}
        indexed = {position: by_functor for position, by_functor in spec}
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
            return f"{table}.rows", None, conditions, binds
        spec_name = self.ref(tuple(spec), "s")
        key_expr = key[0] if len(key) == 1 else "(" + "".join(k + ", " for k in key) + ")"
        return f"{table}.index({spec_name})", key_expr, conditions, binds

    def compile(
        self, clause: _Clause, function_name: str
    ) -> tuple[tuple[RelKey, ...], tuple[bool, ...]]:
        """Append the source of ``clause``'s function.

        Returns:
            The relation of each table the function takes, and whether its literal is
            positive.
        """
        steps = _plan(clause)
        # live[k]: the variables used by the steps after step k, or by the head.
        live: list[set[Var]] = [set() for _ in steps]
        needed = _vars(clause.head_args)
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
            if step.kind in (_POS, _NEG):
                assert step.key is not None
                table = f"T[{len(keys)}]"
                keys.append(step.key)
                positive.append(step.kind == _POS)
                fetch, key, conditions, binds = self.lookup(step.args, names, table)
                lines.append(f"    X = {fetch}")
                candidates = "X" if key is None else f"X.get({key}, E)"
                if step.kind == _POS:
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
            elif step.kind == _DISTINCT:
                left, right = (self.build(arg, names) for arg in step.args)
                conditions = [f"{left} is not {right}"]
            elif step.kind == _EQUAL:
                known, pattern = step.args
                if not _vars((known,)) <= names.keys():
                    known, pattern = pattern, known
                source = f" for s in ({self.build(known, names)},)"
                self.match(pattern, "s", names, binds, conditions)
            else:  # _ANY
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
            lines.append(f"    B = {open_}{out} for {target} in B{source}{condition}{close}")
            lines.append("    if not B:")
            lines.append("        return E")
            row = new_row
        names = {var: f"v{slots[var]}" for var in row}
        target = "(" + "".join(f"{name}, " for name in names.values()) + ")"
        head = "(" + "".join(self.build(arg, names) + ", " for arg in clause.head_args) + ")"
        lines.append(f"    return [{head} for {target} in B]")
        self.lines.extend(lines)
        self.lines.append("")
        return tuple(keys), tuple(positive)


# --------------------------------------------------------------------------------------
# The dependency graph


@dataclass(slots=True)
class _Component:
    """A strongly connected component of the dependency graph, with its rules."""

    keys: tuple[RelKey, ...]
    plans: list[_Plan]
    recursive: bool
    layer: int = _STATIC


def _components(graph: dict[RelKey, set[RelKey]]) -> list[list[RelKey]]:
    """Strongly connected components of ``graph`` (edges from a relation to those it
    depends on), dependencies first, in a deterministic order."""
    edges = {node: sorted(successors) for node, successors in graph.items()}
    return strongly_connected_components(sorted(graph), edges)


# --------------------------------------------------------------------------------------
# Models: the tables of one state (and joint move)


class _Model:
    """Tables of the relations evaluated so far for one state (or state and move).

    ``facts`` counts the facts of the tables it evaluated itself (not those it shares
    with the model it was made from): what keeping it in a cache costs.
    """

    __slots__ = ("tables", "done", "legal", "facts")

    def __init__(self, tables: dict[RelKey, _Table], done: set[int]) -> None:
        self.tables = tables
        self.done = done
        self.legal: dict[Const, tuple[Term, ...]] = {}
        self.facts = 0


class _Models:
    """A least-recently-used cache of models, bounded by models and by facts.

    Each model costs its facts plus a share, ``max_facts // max_models``, of a cache
    of ``max_facts``: at most ``max_models`` models and ``max_facts`` facts are kept,
    and a model larger than the whole cache not at all (the latest state's model is
    held apart).
    """

    def __init__(self, max_models: int, max_facts: int) -> None:
        self._share = max_facts // max_models
        self._cache: LRUCache[Hashable, _Model] = LRUCache(
            maxsize=max_facts,
            getsizeof=lambda model: model.facts + self._share,
        )

    def __len__(self) -> int:
        return len(self._cache)

    @property
    def facts(self) -> int:
        """The facts of the models kept."""
        return int(self._cache.currsize) - self._share * len(self._cache)

    def fetch(self, key: Hashable) -> _Model | None:
        return self._cache.get(key)

    def store(self, key: Hashable, model: _Model) -> None:
        """Keep ``model`` (again, when it has grown), dropping the least recent ones."""
        try:
            self._cache[key] = model
        except ValueError:  # larger than the whole cache
            self._cache.pop(key, None)


# --------------------------------------------------------------------------------------
# The state machine


def _show(value: object) -> str:
    """KIF text for a term, repr for anything else (in error messages)."""
    return str(value) if isinstance(value, Term) else repr(value)


class ProverStateMachine:
    """A :class:`~ggp.reasoning.state_machine.StateMachine` evaluating the rules directly.

    Args:
        description: The parsed game.
        cache_size: How many states keep their evaluated ``legal`` / ``goal`` /
            ``terminal`` model (and a quarter as many (state, joint move) pairs their
            ``next`` / ``sees`` model).
        cache_facts: How many evaluated facts those models may hold in all (about
            160 bytes each: the default keeps the caches under about 400 MB; a chess
            state's model has 3.7 million and is not kept).

    Raises:
        ValueError: ``cache_size`` is below 1.
        GDLSemanticError: The game has no roles, defines ``not`` / ``or`` / ``distinct``,
            ``true`` or ``does``, negates a relation through recursion, lets ``init``
            depend on ``true`` or ``does``, or ``legal`` / ``goal`` / ``terminal`` depend
            on ``does``.
    """

    def __init__(
        self, description: Description, *, cache_size: int = 256, cache_facts: int = 2_000_000
    ) -> None:
        if cache_size < 1:
            raise ValueError(f"cache_size must be at least 1, got {cache_size}")
        if cache_facts < 0:
            raise ValueError(f"cache_facts must be at least 0, got {cache_facts}")
        started = time.perf_counter()
        self._description = description
        self._roles = self._read_roles(description)
        self._role_set = frozenset(self._roles)
        self._constants = tuple(sorted(game_constants(description), key=str))
        clauses: list[_Clause] = []
        for rule in description.rules:
            try:
                clauses.extend(_clauses(rule))
            except _RuleError as e:
                raise self._error(e.message, e.span) from None
        for clause in clauses:
            if clause.key in (_TRUE, _DOES):
                raise self._error(
                    f"a rule cannot define {clause.key[0]!r}: {clause.rule}", clause.rule.span
                )
        clauses = self._split_move_relations(clauses)
        self._compile(clauses)
        # The static layer, once: every static component some query needs.
        static = _Model({_UNIVERSE: _Table((c,) for c in self._constants)}, set())
        wanted = self._needed((_INIT, _LEGAL, _GOAL, _TERMINAL, _NEXT, _SEES))
        self._ensure(static, [c for c in wanted if self._parts[c].layer == _STATIC])
        self._static = static
        self._state_targets = {
            target: [c for c in self._needed((target,)) if self._parts[c].layer == _STATE]
            for target in (_LEGAL, _GOAL, _TERMINAL)
        }
        move_needs = self._needed((_NEXT, _SEES))
        self._state_for_move = [c for c in move_needs if self._parts[c].layer == _STATE]
        self._move_parts = [c for c in move_needs if self._parts[c].layer == _MOVE]
        self._states = _Models(cache_size, cache_facts)
        self._last: tuple[State, _Model] | None = None  # the latest state model
        self._moves = _Models(max(cache_size // 4, 4), cache_facts // 4)
        init = static.tables.get(_INIT)
        self._initial = State(
            frozenset(f[0] for f in init.rows) if init is not None else frozenset(), self
        )
        logger.debug(
            "prover for %s: %d rules, %d clauses, %d components, %d constants, %.3f s",
            description.path,
            len(description.rules),
            len(clauses),
            len(self._parts),
            len(self._constants),
            time.perf_counter() - started,
        )

    @classmethod
    def from_file(cls, path: str | Path, *, cache_size: int = 256) -> ProverStateMachine:
        """Parse a game file and build its prover.

        Raises:
            GDLError: The file cannot be read or parsed, or the prover refuses its rules.
        """
        return cls(parse_file(path), cache_size=cache_size)

    # ---- construction ----------------------------------------------------------------

    def _error(self, message: str, span: Span) -> GDLSemanticError:
        d = self._description
        return GDLSemanticError(message, d.path, span.line, span.column, d.source or None)

    @staticmethod
    def _read_roles(description: Description) -> tuple[Const, ...]:
        roles: dict[Const, None] = {}
        for rule in description.rules:
            head = rule.head
            if not rule.body and head.name == "role" and len(head.args) == 1:
                role = head.args[0]
                if isinstance(role, Const):
                    roles.setdefault(role)
        if not roles:
            raise GDLSemanticError("the game has no (role ...) facts", description.path, 0, 0, None)
        return tuple(roles)

    def _layers(self, clauses: list[_Clause]) -> tuple[list[list[RelKey]], dict[RelKey, int]]:
        """Components (dependencies first) and the layer of every relation."""
        graph: dict[RelKey, set[RelKey]] = {_TRUE: set(), _DOES: set(), _UNIVERSE: set()}
        for clause in clauses:
            deps = graph.setdefault(clause.key, set())
            for lit in clause.literals:
                if lit.key is not None:
                    deps.add(lit.key)
                    graph.setdefault(lit.key, set())
        components = _components(graph)
        layer: dict[RelKey, int] = {_TRUE: _STATE, _DOES: _MOVE, _UNIVERSE: _STATIC}
        for component in components:
            level = max(
                (
                    layer.get(dep, _STATIC)
                    for key in component
                    for dep in graph[key]
                    if dep not in component
                ),
                default=_STATIC,
            )
            for key in component:
                layer[key] = max(layer.get(key, _STATIC), level)
        return components, layer

    def _split_move_relations(self, clauses: list[_Clause]) -> list[_Clause]:
        """Move the rules of a move relation that do not depend on ``does`` to a
        state-layer relation ``R (state part)``, joined back by ``R(x..) :- part(x..)``."""
        _, layer = self._layers(clauses)
        result: list[_Clause] = []
        bridged: set[RelKey] = set()
        for clause in clauses:
            key = clause.key
            if layer[key] == _MOVE and all(
                layer[lit.key] < _MOVE for lit in clause.literals if lit.key is not None
            ):
                part = (f"{key[0]} (state part)", key[1])
                result.append(_Clause(part, clause.head_args, clause.literals, clause.rule))
                if key not in bridged:
                    bridged.add(key)
                    args = tuple(Var(f"?x{i}") for i in range(key[1]))
                    result.append(_Clause(key, args, (_Literal(_POS, part, args),), clause.rule))
            else:
                result.append(clause)
        return result

    def _compile(self, clauses: list[_Clause]) -> None:
        components, layer = self._layers(clauses)
        where = {key: i for i, component in enumerate(components) for key in component}
        by_key: dict[RelKey, list[_Clause]] = {}
        for clause in clauses:
            by_key.setdefault(clause.key, []).append(clause)
        # Checks: stratified negation, and what each GDL relation may depend on.
        for clause in clauses:
            for lit in clause.literals:
                if lit.kind == _NEG and lit.key and where[lit.key] == where[clause.key]:
                    raise self._error(
                        f"unstratified negation: {clause.key[0]} depends on "
                        f"(not ({lit.key[0]} ...)) through recursion",
                        clause.rule.span,
                    )
        limits = {_INIT: _STATIC, _LEGAL: _STATE, _GOAL: _STATE, _TERMINAL: _STATE}
        for key, limit in limits.items():
            if layer.get(key, _STATIC) > limit:
                culprit = "true or does" if limit == _STATIC else "does"
                span = by_key[key][0].rule.span
                raise self._error(f"{key[0]} must not depend on {culprit}", span)
        compiler = _Compiler(self._constants)
        self._seeds: dict[RelKey, list[Fact]] = {}
        parts: list[_Component] = []
        plans: list[_Plan] = []
        for component in components:
            part = _Component(tuple(component), [], recursive=False, layer=_STATIC)
            part.layer = max(layer[key] for key in component)
            members = set(component)
            for key in component:
                for clause in by_key.get(key, ()):
                    if not clause.literals and not _vars(clause.head_args):
                        self._seeds.setdefault(key, []).append(clause.head_args)
                        continue
                    name = f"rule{len(plans)}"
                    keys, positive = compiler.compile(clause, name)
                    plan = _Plan(clause, keys, positive, name)
                    plans.append(plan)
                    part.plans.append(plan)
                    if any(k in members for k in keys):
                        part.recursive = True
            part.recursive = part.recursive or len(component) > 1
            parts.append(part)
        self._source = "\n".join(compiler.lines)
        namespace = dict(compiler.names)
        code = compile(self._source, f"<prover rules of {self._description.path}>", "exec")
        exec(code, namespace)
        for plan in plans:
            function = namespace[plan.function_name]
            assert callable(function)
            plan.function = function
        self._parts = parts
        self._where = where
        self._graph_deps = {
            i: {where[lit.key] for c in part.plans for lit in c.clause.literals if lit.key}
            for i, part in enumerate(parts)
        }
        self._inputs = {where[_TRUE], where[_DOES], where[_UNIVERSE]}

    def _needed(self, targets: Iterable[RelKey]) -> list[int]:
        """Indices of the components ``targets`` need, dependencies first."""
        seen: set[int] = set()
        stack = [self._where[t] for t in targets if t in self._where]
        while stack:
            i = stack.pop()
            if i not in seen:
                seen.add(i)
                stack.extend(self._graph_deps[i])
        return sorted(seen - self._inputs)

    # ---- evaluation ------------------------------------------------------------------

    def _ensure(self, model: _Model, components: Iterable[int]) -> bool:
        """Evaluate the ``components`` (dependencies first) not yet in ``model``;
        whether there were any (``model.facts`` then counts their facts too)."""
        grown = False
        for i in components:
            if i not in model.done:
                part = self._parts[i]
                self._evaluate(part, model.tables)
                model.done.add(i)
                model.facts += sum(len(model.tables[key].rows) for key in part.keys)
                grown = True
        return grown

    def _ensure_state(self, state: State, model: _Model, components: Iterable[int]) -> None:
        """:meth:`_ensure` on a state's model, its cache entry resized if it grew."""
        if self._ensure(model, components):
            self._states.store(state, model)

    def _evaluate(self, part: _Component, tables: dict[RelKey, _Table]) -> None:
        if not part.recursive:  # one relation: each rule once
            facts = list(self._seeds.get(part.keys[0], ()))
            for plan in part.plans:
                assert plan.function is not None
                facts.extend(plan.function([tables[k] for k in plan.keys]))
            tables[part.keys[0]] = _Table(facts)
            return
        for key in part.keys:
            tables[key] = _Table(self._seeds.get(key, ()))
        # Semi-naive: round 0 with the full tables, then each round joins at least one
        # fact new in the previous round (at a recursive position) with the full tables.
        members = set(part.keys)
        delta: dict[RelKey, list[Fact]] = {key: list(tables[key].rows) for key in part.keys}
        first = True
        while first or any(delta.values()):
            derived: dict[RelKey, list[Fact]] = {key: [] for key in part.keys}
            delta_tables = {key: _Table(facts) for key, facts in delta.items()}
            for plan in part.plans:
                assert plan.function is not None
                args = [tables[k] for k in plan.keys]
                out = derived[plan.clause.key]
                if first:
                    out.extend(plan.function(args))
                    continue
                for position, key in enumerate(plan.keys):
                    if key in members and plan.positive[position] and delta[key]:
                        shifted = list(args)
                        shifted[position] = delta_tables[key]
                        out.extend(plan.function(shifted))
            first = False
            delta = {key: tables[key].add(facts) for key, facts in derived.items()}

    def _state_model(self, state: State) -> _Model:
        last = self._last
        if last is not None and last[0] is state:
            return last[1]
        model = self._states.fetch(state)
        if model is None:
            tables = dict(self._static.tables)
            tables[_TRUE] = _Table((fact,) for fact in self._facts(state))
            model = _Model(tables, set(self._static.done))
            self._states.store(state, model)
        self._last = (state, model)
        return model

    def _move_model(self, state: State, joint: Sequence[Term]) -> _Model:
        moves = self._check_joint(state, joint)
        key = (state, moves)
        model = self._moves.fetch(key)
        if model is None:
            base = self._state_model(state)
            self._ensure_state(state, base, self._state_for_move)
            tables = dict(base.tables)
            tables[_DOES] = _Table(zip(self._roles, moves, strict=True))
            model = _Model(tables, set(base.done))
            model.facts = base.facts  # it keeps the state's tables alive too
            self._ensure(model, self._move_parts)
            self._moves.store(key, model)
        return model

    def _table(self, model: _Model, key: RelKey) -> list[Fact]:
        table = model.tables.get(key)
        return table.rows if table is not None else []

    # ---- checks ----------------------------------------------------------------------

    def _facts(self, state: State) -> frozenset[Term]:
        if not isinstance(state, State) or state.owner is not self:
            raise GameError(f"{state!r} was not made by this state machine")
        facts = state.key
        if not isinstance(facts, frozenset):
            raise GameError(f"{state!r} does not hold a frozenset of facts")
        return facts

    def _check_role(self, role: Const) -> None:
        if role not in self._role_set:
            roles = " ".join(map(str, self._roles))
            raise GameError(f"unknown role {_show(role)}: the roles are {roles}")

    def _check_joint(self, state: State, joint: Sequence[Term]) -> tuple[Term, ...]:
        moves = tuple(joint)
        if len(moves) != len(self._roles):
            raise GameError(
                f"a joint move needs {len(self._roles)} moves (one per role: "
                f"{' '.join(map(str, self._roles))}), got {len(moves)}: "
                f"{' '.join(map(_show, moves))}"
            )
        for role, move in zip(self._roles, moves, strict=True):
            if not isinstance(move, Term):
                raise GameError(f"missing move for role {role}: got {move!r}")
            if move not in self.legal_moves(state, role):
                legal = ", ".join(map(str, self.legal_moves(state, role))) or "none"
                raise GameError(f"illegal move {move} for role {role} (legal: {legal})")
        return moves

    # ---- the StateMachine protocol ---------------------------------------------------

    @property
    def roles(self) -> tuple[Const, ...]:
        """The roles in file order, ``random`` included."""
        return self._roles

    @property
    def constants(self) -> tuple[Const, ...]:
        """Every constant of the description, sorted: what unsafe variables range over."""
        return self._constants

    @property
    def description(self) -> Description:
        """The game this machine reasons about."""
        return self._description

    @property
    def source(self) -> str:
        """The generated Python source of the compiled rules (for debugging)."""
        return self._source

    def initial_state(self) -> State:
        """The state of the ``init`` facts."""
        return self._initial

    def legal_moves(self, state: State, role: Const) -> tuple[Term, ...]:
        """The legal moves of ``role`` in ``state``, sorted by their KIF text.

        Raises:
            GameError: A foreign state or an unknown role.
        """
        self._facts(state)
        self._check_role(role)
        model = self._state_model(state)
        moves = model.legal.get(role)
        if moves is None:
            self._ensure_state(state, model, self._state_targets[_LEGAL])
            found = {fact[1] for fact in self._table(model, _LEGAL) if fact[0] is role}
            moves = tuple(sorted(found, key=str))
            model.legal[role] = moves
        return moves

    def next_state(self, state: State, joint: Sequence[Term]) -> State:
        """The state after every role plays its move of ``joint`` (in ``roles`` order).

        Raises:
            GameError: A foreign state, or a joint move of the wrong length or with a
                missing or illegal move.
        """
        model = self._move_model(state, joint)
        return State(frozenset(fact[0] for fact in self._table(model, _NEXT)), self)

    def percepts(self, state: State, joint: Sequence[Term], role: Const) -> frozenset[Term]:
        """What ``role`` sees (each ``p`` of ``(sees role p)``) as ``joint`` is played.

        Raises:
            GameError: A foreign state, an unknown role, or a bad joint move.
        """
        self._check_role(role)
        model = self._move_model(state, joint)
        return frozenset(fact[1] for fact in self._table(model, _SEES) if fact[0] is role)

    def is_terminal(self, state: State) -> bool:
        """Whether ``terminal`` holds in ``state``.

        Raises:
            GameError: A foreign state.
        """
        self._facts(state)
        model = self._state_model(state)
        self._ensure_state(state, model, self._state_targets[_TERMINAL])
        return bool(self._table(model, _TERMINAL))

    def goals(self, state: State) -> tuple[int, ...]:
        """Each role's goal value in ``roles`` order: the largest if the rules give
        several, 0 if none. Values that are not integers are ignored.

        Raises:
            GameError: A foreign state.
        """
        self._facts(state)
        model = self._state_model(state)
        self._ensure_state(state, model, self._state_targets[_GOAL])
        best: dict[Term, int] = {}
        for role, value in self._table(model, _GOAL):
            if isinstance(value, Const) and value.name.isdigit():
                best[role] = max(best.get(role, 0), int(value.name))
        return tuple(best.get(role, 0) for role in self._roles)

    def state_facts(self, state: State) -> frozenset[Term]:
        """The true base propositions of ``state`` (the F of each ``(true F)``).

        Raises:
            GameError: A foreign state.
        """
        return self._facts(state)

    def state_from_facts(self, facts: Iterable[Term]) -> State:
        """The state whose true base propositions are ``facts``.

        Raises:
            GameError: A fact that is not a ground term.
        """
        frozen = frozenset(facts)
        for fact in frozen:
            if not isinstance(fact, Term) or not fact.is_ground:
                raise GameError(f"a state fact must be a ground term, got {fact!r}")
        return State(frozen, self)

    def __repr__(self) -> str:
        roles = " ".join(map(str, self._roles))
        return f"<ProverStateMachine {self._description.path!r} roles: {roles}>"
