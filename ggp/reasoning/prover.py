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

import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Callable, Collection, Hashable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from cachetools import LRUCache

from ggp.collector import collector_paused
from ggp.errors import GameError, GDLSemanticError, OutOfTime
from ggp.gdl.graph import strongly_connected_components
from ggp.gdl.parser import parse_file
from ggp.gdl.terms import Const, Description, Span, Term, Var, game_constants
from ggp.reasoning.clauses import NEG, POS, BodyLiteral, Clause, RuleError, clauses_of, variables_of
from ggp.reasoning.fact_tables import Fact, RelKey, Table, Watch
from ggp.reasoning.join_compiler import JoinCompiler, JoinPlan
from ggp.reasoning.relax import (
    Budget,
    BudgetExceeded,
    Relaxation,
    relax_component,
    relaxed_name,
    relaxed_seeds,
)
from ggp.reasoning.state_machine import State

__all__ = ["ProverStateMachine"]

logger = logging.getLogger(__name__)

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

#: Bindings of one join step read between two looks at the deadline (a few ms of work).
_WATCH_CHUNK = 1024
#: How many components' budgets all the relaxations may spend (see relaxations).
_RELAXATION_COMPONENTS = 10
#: Facts in one model past which the prover pauses the garbage collector (see _ensure).
_LARGE_MODEL = 100_000


# --------------------------------------------------------------------------------------
# The dependency graph


@dataclass(slots=True)
class _Component:
    """A strongly connected component of the dependency graph, with its rules."""

    keys: tuple[RelKey, ...]
    plans: list[JoinPlan]
    recursive: bool
    layer: int = _STATIC


def _components(graph: dict[RelKey, set[RelKey]]) -> list[list[RelKey]]:
    """Strongly connected components of ``graph`` (edges from a relation to those it
    depends on), dependencies first, in a deterministic order."""
    edges = {node: sorted(successors) for node, successors in graph.items()}
    return strongly_connected_components(sorted(graph), edges)


def compile_components(
    components: Sequence[Sequence[RelKey]],
    by_key: Mapping[RelKey, Sequence[Clause]],
    layer: Mapping[RelKey, int],
    seeds: dict[RelKey, list[Fact]],
    compiler: JoinCompiler,
    filename: str,
) -> tuple[list[_Component], str]:
    """Each component's rules compiled into join functions (its ground facts go to
    ``seeds`` instead); the components and the generated source."""
    parts: list[_Component] = []
    plans: list[JoinPlan] = []
    for component in components:
        part = _Component(tuple(component), [], recursive=False, layer=_STATIC)
        part.layer = max(layer.get(key, _STATIC) for key in component)
        members = set(component)
        for key in component:
            for clause in by_key.get(key, ()):
                if not clause.literals and not variables_of(clause.head_args):
                    seeds.setdefault(key, []).append(clause.head_args)
                    continue
                name = f"rule{len(plans)}"
                keys, positive = compiler.compile(clause, name)
                plan = JoinPlan(clause, keys, positive, name)
                plans.append(plan)
                part.plans.append(plan)
                if any(k in members for k in keys):
                    part.recursive = True
        part.recursive = part.recursive or len(component) > 1
        parts.append(part)
    source = "\n".join(compiler.lines)
    namespace = dict(compiler.names)
    exec(compile(source, filename, "exec"), namespace)
    for plan in plans:
        function = namespace[plan.function_name]
        assert callable(function)
        plan.function = function
    return parts, source


def evaluate_component(
    part: _Component,
    tables: dict[RelKey, Table],
    seeds: Mapping[RelKey, Sequence[Fact]],
    check: Callable[[], None],
    watch: Watch,
) -> None:
    """Evaluate ``part`` bottom-up into ``tables`` (which hold what it depends on):
    each rule once, or semi-naively to the fixpoint where it is recursive. ``check``
    runs before each rule's join (the deadline); ``watch`` reads long passes."""
    if not part.recursive:  # one relation: each rule once
        facts = list(seeds.get(part.keys[0], ()))
        for plan in part.plans:
            assert plan.function is not None
            check()
            facts.extend(plan.function([tables[k] for k in plan.keys]))
        tables[part.keys[0]] = Table(watch(facts))
        return
    for key in part.keys:
        tables[key] = Table(seeds.get(key, ()))
    # Semi-naive: round 0 with the full tables, then each round joins at least one
    # fact new in the previous round (at a recursive position) with the full tables.
    members = set(part.keys)
    delta: dict[RelKey, list[Fact]] = {key: list(tables[key].rows) for key in part.keys}
    first = True
    while first or any(delta.values()):
        derived: dict[RelKey, list[Fact]] = {key: [] for key in part.keys}
        delta_tables = {key: Table(facts) for key, facts in delta.items()}
        for plan in part.plans:
            assert plan.function is not None
            check()
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
        delta = {key: tables[key].add(watch(facts)) for key, facts in derived.items()}


# --------------------------------------------------------------------------------------
# Models: the tables of one state (and joint move)


class _Model:
    """Tables of the relations evaluated so far for one state (or state and move).

    ``facts`` counts the facts of the tables it evaluated itself (not those it shares
    with the model it was made from): what keeping it in a cache costs.
    """

    __slots__ = ("tables", "done", "legal", "facts")

    def __init__(self, tables: dict[RelKey, Table], done: set[int]) -> None:
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
        self._local = threading.local()  # the deadline of this thread's queries
        self._large_models = False  # whether a model has had over _LARGE_MODEL facts
        self._description = description
        self._roles = self._read_roles(description)
        self._role_set = frozenset(self._roles)
        self._constants = tuple(sorted(game_constants(description), key=str))
        clauses: list[Clause] = []
        for rule in description.rules:
            try:
                clauses.extend(clauses_of(rule))
            except RuleError as e:
                raise self._error(e.message, e.span) from None
        for clause in clauses:
            if clause.key in (_TRUE, _DOES):
                raise self._error(
                    f"a rule cannot define {clause.key[0]!r}: {clause.rule}", clause.rule.span
                )
        clauses = self._split_move_relations(clauses)
        self._compile(clauses)
        # The static layer, once: every static component some query needs.
        static = _Model({_UNIVERSE: Table((c,) for c in self._constants)}, set())
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

    def _layers(self, clauses: list[Clause]) -> tuple[list[list[RelKey]], dict[RelKey, int]]:
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

    def _split_move_relations(self, clauses: list[Clause]) -> list[Clause]:
        """Move the rules of a move relation that do not depend on ``does`` to a
        state-layer relation ``R (state part)``, joined back by ``R(x..) :- part(x..)``."""
        _, layer = self._layers(clauses)
        result: list[Clause] = []
        bridged: set[RelKey] = set()
        for clause in clauses:
            key = clause.key
            if layer[key] == _MOVE and all(
                layer[lit.key] < _MOVE for lit in clause.literals if lit.key is not None
            ):
                part = (f"{key[0]} (state part)", key[1])
                result.append(Clause(part, clause.head_args, clause.literals, clause.rule))
                if key not in bridged:
                    bridged.add(key)
                    args = tuple(Var(f"?x{i}") for i in range(key[1]))
                    result.append(Clause(key, args, (BodyLiteral(POS, part, args),), clause.rule))
            else:
                result.append(clause)
        return result

    def _compile(self, clauses: list[Clause]) -> None:
        components, layer = self._layers(clauses)
        where = {key: i for i, component in enumerate(components) for key in component}
        by_key: dict[RelKey, list[Clause]] = {}
        for clause in clauses:
            by_key.setdefault(clause.key, []).append(clause)
        # Checks: stratified negation, and what each GDL relation may depend on.
        for clause in clauses:
            for lit in clause.literals:
                if lit.kind == NEG and lit.key and where[lit.key] == where[clause.key]:
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
        self._seeds: dict[RelKey, list[Fact]] = {}
        parts, self._source = compile_components(
            components,
            by_key,
            layer,
            self._seeds,
            JoinCompiler(self._constants, self._watch),
            f"<prover rules of {self._description.path}>",
        )
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

    # ---- relaxations ------------------------------------------------------------------

    def relaxations(self, keys: Iterable[RelKey], *, max_bindings: int) -> dict[RelKey, Relaxation]:
        """The static relaxations (:mod:`ggp.reasoning.relax`) of the relations ``keys``
        and of the state-dependent relations they read, each component evaluated
        within ``max_bindings`` join bindings and all of them within
        :data:`_RELAXATION_COMPONENTS` times that; those found."""
        layer = {key: self._parts[i].layer for key, i in self._where.items()}

        def derived(key: RelKey) -> bool:
            return key not in (_TRUE, _DOES) and layer.get(key) != _STATIC

        def is_static(key: RelKey) -> bool:
            return key not in (_TRUE, _DOES) and layer.get(key, _STATIC) == _STATIC

        by_key: dict[RelKey, list[Clause]] = {}
        for part in self._parts:
            for plan in part.plans:
                by_key.setdefault(plan.clause.key, []).append(plan.clause)
        needed: set[RelKey] = set()
        stack = [key for key in keys if derived(key)]
        while stack:
            key = stack.pop()
            if key not in needed:
                needed.add(key)
                stack.extend(
                    lit.key
                    for clause in by_key.get(key, ())
                    for lit in clause.literals
                    if lit.kind == POS and lit.key is not None and derived(lit.key)
                )
        self._ensure(
            self._static,
            self._needed(
                lit.key
                for key in needed
                for clause in by_key.get(key, ())
                for lit in clause.literals
                if lit.key is not None and is_static(lit.key)
            ),
        )
        tables = dict(self._static.tables)
        found: dict[RelKey, Relaxation] = {}

        def kept(key: RelKey) -> tuple[int, ...] | None:
            relaxation = found.get(key)
            return None if relaxation is None else relaxation.positions

        def size(key: RelKey) -> int:
            table = tables.get(key)
            return 1 if table is None else len(table.rows)

        total_bindings = max_bindings * _RELAXATION_COMPONENTS
        for part in self._parts:
            if not needed.intersection(part.keys):
                continue
            if total_bindings <= 0:
                break
            positions, rules = relax_component(part.keys, by_key, is_static, kept, size)
            seeds = {
                relaxed_name(key, p): relaxed_seeds(p, self._seeds.get(key, ()))
                for key, p in positions.items()
            }
            budget = Budget(min(max_bindings, total_bindings))
            try:
                (evaluated,), _ = compile_components(
                    [list(rules)],
                    rules,
                    {},
                    seeds,
                    JoinCompiler(self._constants, budget),
                    f"<relaxations of {self._description.path}>",
                )
                evaluate_component(evaluated, tables, seeds, lambda: None, budget)
            except BudgetExceeded:
                continue
            finally:
                total_bindings -= budget.used
            for key, p in positions.items():
                found[key] = Relaxation(p, tables[relaxed_name(key, p)])
        return found

    # ---- evaluation ------------------------------------------------------------------

    def _ensure(self, model: _Model, components: Iterable[int]) -> bool:
        """Evaluate the ``components`` (dependencies first) not yet in ``model``;
        whether there were any (``model.facts`` then counts their facts too).

        Once a model has grown past :data:`_LARGE_MODEL` facts, the cyclic garbage
        collector is paused while the prover evaluates: facts are tuples of interned
        terms and make no cycles, and the full collections a million new tuples set off
        tripled the time of a chess step (11 s paused, 36 s not). Small games skip the
        pause, which costs more than their evaluation saves."""
        todo = [i for i in components if i not in model.done]
        if not todo:
            return False
        with collector_paused() if self._large_models else contextlib.nullcontext():
            for i in todo:
                part = self._parts[i]
                self._evaluate(part, model.tables)
                model.done.add(i)
                model.facts += sum(len(model.tables[key].rows) for key in part.keys)
        self._large_models = self._large_models or model.facts > _LARGE_MODEL
        return True

    def _ensure_state(self, state: State, model: _Model, components: Iterable[int]) -> None:
        """:meth:`_ensure` on a state's model, its cache entry resized if it grew."""
        if self._ensure(model, components):
            self._states.store(state, model)

    @contextlib.contextmanager
    def until(self, deadline: float | None) -> Iterator[None]:
        """Within the block, queries from this thread stop with OutOfTime once
        ``deadline`` (a ``time.monotonic()`` value; None: none) has passed, the clock
        read between two rules' joins and every :data:`_WATCH_CHUNK` bindings inside
        one. What was evaluated whole is kept; the rest is evaluated afresh by the next
        query."""
        local = self._local
        outer = getattr(local, "deadline", None)
        local.deadline = deadline if outer is None or deadline is None else min(outer, deadline)
        try:
            yield
        finally:
            local.deadline = outer

    def _check_deadline(self) -> None:
        deadline = getattr(self._local, "deadline", None)
        if deadline is not None and time.monotonic() > deadline:
            raise OutOfTime("the prover's query stopped at the deadline")

    def _watch(self, bindings: Collection[Fact]) -> Iterable[Fact]:
        """A :data:`~ggp.reasoning.fact_tables.Watch`: the bindings of a join step, or
        facts being tabled or indexed, as they are when they are few or no deadline is
        set, else read in chunks with the deadline checked before each (one join of
        chess makes a million bindings and runs for seconds)."""
        if len(bindings) < _WATCH_CHUNK or getattr(self._local, "deadline", None) is None:
            return bindings
        return self._watched(bindings)

    def _watched(self, bindings: Collection[Fact]) -> Iterator[Fact]:
        rest = iter(bindings)
        while chunk := list(itertools.islice(rest, _WATCH_CHUNK)):
            self._check_deadline()
            yield from chunk

    def _evaluate(self, part: _Component, tables: dict[RelKey, Table]) -> None:
        evaluate_component(part, tables, self._seeds, self._check_deadline, self._watch)

    def _state_model(self, state: State) -> _Model:
        last = self._last
        if last is not None and last[0] is state:
            return last[1]
        model = self._states.fetch(state)
        if model is None:
            tables = dict(self._static.tables)
            tables[_TRUE] = Table((fact,) for fact in self._facts(state))
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
            tables[_DOES] = Table(zip(self._roles, moves, strict=True))
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
