"""Grounding: from first-order GDL rules to the relevant ground rule instances.

The grounder turns a :class:`~ggp.gdl.terms.Description` into a :class:`GroundProgram`:

1. **Normalisation.** ``(or ...)`` literals are expanded into one rule per disjunct,
   ``(not (not L))``, ``(not (or ...))`` and ``(not (distinct a b))`` are rewritten, and
   each variable that no positive literal binds (an *unsafe* variable of the head, of a
   ``not`` or of a ``distinct``) is made to range over the game's constants (every
   :class:`~ggp.gdl.terms.Const` of the description), as a top-down prover reads it.
2. **Relevance.** Only relations that the keywords ``legal``, ``goal``, ``terminal``,
   ``sees``, ``next``, ``init`` and ``role`` depend on are evaluated.
3. **Static relations** (those that depend neither on ``true`` nor on ``does``) are
   evaluated exactly, stratum by stratum, bottom-up and semi-naively; they become
   constants of the network (``(succ 1 2)``, ``(index 3)``, board geometry, ...).
4. **Domain analysis.** The dynamic relations are over-approximated by evaluating their
   rules with negated dynamic literals ignored, ``(true F)`` ranging over every ``F`` of
   ``init`` and ``next`` and ``(does R M)`` over every ``(legal R M)``, to a fixpoint.
   Every atom true in some reachable state is in this set.
5. **Instantiation.** Each dynamic rule is instantiated for every binding whose positive
   body atoms are all possible. Static literals are evaluated away (an instance with a
   false one is dropped), and a negated atom that is never possible is dropped.

The joins are hash joins over per-literal indexes, planned greedily (most bound
arguments first). Sizes are checked against :class:`GroundingLimits`: a game that would
exceed them stops with :class:`~ggp.errors.GroundingError` naming the relation that grows.

The construction follows the instantiation used to build propositional networks in
Schkufza, Love and Genesereth, "Propositional Automata and Cell Automata:
Representational Frameworks for Discrete Dynamic Systems" (AI 2008), and Cox, Schkufza,
Madsen and Genesereth, "Factoring General Games using Propositional Automata" (GIGA
2009).

Example:
    >>> from ggp.gdl.parser import parse_text
    >>> program = ground(parse_text('''
    ...     (role robot) (index 1) (index 2)
    ...     (init (cell 1 off))
    ...     (<= (legal robot (flip ?i)) (index ?i) (not (true (cell ?i on))))
    ...     (<= (next (cell ?i on)) (does robot (flip ?i)))
    ...     (<= terminal (true (cell 2 on)))
    ...     (goal robot 100)'''))
    >>> [str(f) for f in program.base]
    ['(cell 1 off)', '(cell 1 on)', '(cell 2 on)']
    >>> for rule in program.rules:
    ...     print(rule)
    (<= (legal robot (flip 1)) (not (true (cell 1 on))))
    (<= (legal robot (flip 2)) (not (true (cell 2 on))))
    (<= (next (cell 1 on)) (does robot (flip 1)))
    (<= (next (cell 2 on)) (does robot (flip 2)))
    (<= terminal (true (cell 2 on)))
    >>> Func("goal", (Const("robot"), Const("100"))) in program.static_atoms
    True
"""

from __future__ import annotations

import logging
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from ggp.errors import GDLSemanticError, GroundingError
from ggp.gdl.graph import strongly_connected_components
from ggp.gdl.terms import Const, Description, Func, Rule, Term, Var, game_constants

__all__ = [
    "GroundingLimits",
    "GroundingStats",
    "GroundRule",
    "GroundProgram",
    "Relation",
    "ground",
    "relation_of",
    "OUTPUT_RELATIONS",
]

logger = logging.getLogger(__name__)


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

# The synthetic static relation that enumerates the game's constants; its name cannot
# be written in KIF (a space), so it never clashes with a relation of the game.
_UNIVERSE_NAME = " universe"
_UNIVERSE: Relation = (_UNIVERSE_NAME, 1)


@dataclass(frozen=True, slots=True)
class GroundingLimits:
    """Size limits past which :func:`ground` gives up with a GroundingError.

    The defaults are about 50 times what the largest game of the corpus needs (the
    11x11, 4-snake battlesnake: 21k atoms, 108k rule instances, 231k derivations) and
    keep memory to about 1 GB.

    Attributes:
        max_atoms: Most ground atoms (static and possible dynamic ones together).
        max_rule_instances: Most ground instances of the dynamic rules.
        max_derivations: Most rule bindings enumerated in all (duplicates included);
            bounds the time spent on joins that derive little.
        max_term_depth: Deepest derived atom (nesting of parentheses, as the parser's
            ``MAX_DEPTH``); stops a counter such as ``(s (s ...))`` that grows forever.
    """

    max_atoms: int = 1_000_000
    max_rule_instances: int = 2_000_000
    max_derivations: int = 20_000_000
    max_term_depth: int = 100


@dataclass(frozen=True, slots=True)
class GroundingStats:
    """What grounding produced and how long it took.

    Attributes:
        static_atoms: Atoms of the static relations that are true.
        dynamic_atoms: Possible atoms of the dynamic relations (``true`` and ``does``
            included).
        rule_instances: Ground instances of the dynamic rules kept.
        derivations: Rule bindings enumerated (duplicates included).
        seconds: Wall-clock time of :func:`ground`.
    """

    static_atoms: int
    dynamic_atoms: int
    rule_instances: int
    derivations: int
    seconds: float


class GroundRule(NamedTuple):
    """A ground instance of a dynamic rule, static literals folded away.

    Attributes:
        head: The ground head atom.
        positive: Ground atoms that must hold: ``(true F)``, ``(does R M)`` or atoms of
            dynamic relations.
        negative: Ground atoms that must not hold (each possible in some state).
    """

    head: Term
    positive: tuple[Term, ...]
    negative: tuple[Term, ...]

    def __str__(self) -> str:
        body = [str(t) for t in self.positive] + [f"(not {t})" for t in self.negative]
        if not body:
            return str(self.head)
        return "(<= " + " ".join([str(self.head), *body]) + ")"


@dataclass(frozen=True)
class GroundProgram:
    """The ground form of a game, ready to become a propositional network.

    Attributes:
        roles: The roles in file order.
        base: Every fluent ``F`` that can be true (from ``init`` and ``next``), sorted by
            KIF text.
        moves: For each role (in ``roles`` order), every move ``M`` with a possible
            ``(legal R M)``, sorted by KIF text.
        static_relations: The relations that depend on neither ``true`` nor ``does``.
        static_atoms: The true atoms of the static relations (the exact model).
        possible: The possible atoms of the dynamic relations, ``(true F)`` and
            ``(does R M)`` included (an over-approximation).
        rules: The ground instances of the dynamic rules.
        constants: The game's constants, over which unsafe variables range.
        stats: Sizes and time.
        path: The description's file name, for error messages.
    """

    roles: tuple[Const, ...]
    base: tuple[Term, ...]
    moves: tuple[tuple[Term, ...], ...]
    static_relations: frozenset[Relation]
    static_atoms: frozenset[Term]
    possible: frozenset[Term]
    rules: tuple[GroundRule, ...]
    constants: frozenset[Const]
    stats: GroundingStats = field(compare=False)
    path: str = "<string>"

    def is_static(self, atom: Term) -> bool:
        """Whether ``atom`` belongs to a static relation (its value is then fixed)."""
        return relation_of(atom) in self.static_relations


def relation_of(atom: Term) -> Relation:
    """The relation of an atom or literal pattern: ``(name, arity)``."""
    return (atom.name, len(atom.args))


# ---------------------------------------------------------------------------------------
# Normalisation
# ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class _NormalRule:
    """A rule without ``or``: positive and negative atoms and distinct pairs."""

    head: Term
    positive: list[Term]
    negative: list[Term]
    distinct: list[tuple[Term, Term]]
    source: Rule | None  # None for the synthetic rules


def _unify(a: Term, b: Term, binding: dict[Var, Term]) -> bool:
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


def _resolve(term: Term, binding: dict[Var, Term]) -> Term:
    """``term`` under ``binding``, following chains of variables."""
    if term.is_ground:
        return term
    if isinstance(term, Var):
        value = binding.get(term)
        return term if value is None else _resolve(value, binding)
    return Func(term.name, tuple(_resolve(a, binding) for a in term.args))


def _error(description: Description, rule: Rule, message: str) -> GDLSemanticError:
    return GDLSemanticError(
        message, description.path, rule.span.line, rule.span.column, description.source or None
    )


def _expand_literal(literal: Term, negated: bool) -> list[list[tuple[str, Term]]]:
    """The disjunctive normal form of one body literal.

    Returns a list of alternatives, each a list of ``(kind, term)`` with kind ``"pos"``,
    ``"neg"``, ``"distinct"`` (term ``(distinct a b)``) or ``"equal"`` (same shape).
    """
    name, arity = literal.name, len(literal.args)
    if isinstance(literal, Func) and name == "not" and arity == 1:
        return _expand_literal(literal.args[0], not negated)
    if isinstance(literal, Func) and name == "or":
        parts = [_expand_literal(arg, negated) for arg in literal.args]
        if not negated:  # one alternative per disjunct
            return [alt for part in parts for alt in part]
        # not (or A B) = (and (not A) (not B)): the product of the alternatives.
        result: list[list[tuple[str, Term]]] = [[]]
        for part in parts:
            result = [left + right for left in result for right in part]
        return result
    if isinstance(literal, Func) and name == "and":
        parts = [_expand_literal(arg, negated) for arg in literal.args]
        if negated:
            return [alt for part in parts for alt in part]
        result = [[]]
        for part in parts:
            result = [left + right for left in result for right in part]
        return result
    if isinstance(literal, Func) and name == "distinct" and arity == 2:
        return [[("equal" if negated else "distinct", literal)]]
    return [[("neg" if negated else "pos", literal)]]


def _normalise(description: Description, rule: Rule) -> list[_NormalRule]:
    """Expand ``or`` and rewrite ``not``; one normal rule per alternative."""
    alternatives: list[list[tuple[str, Term]]] = [[]]
    for literal in rule.body:
        if isinstance(literal, Func) and literal.name == "distinct" and len(literal.args) != 2:
            raise _error(description, rule, f"distinct needs 2 arguments: {literal}")
        options = _expand_literal(literal, False)
        alternatives = [left + right for left in alternatives for right in options]
    result: list[_NormalRule] = []
    for alternative in alternatives:
        binding: dict[Var, Term] = {}
        consistent = True
        for kind, term in alternative:
            if kind == "equal" and not _unify(term.args[0], term.args[1], binding):
                consistent = False
                break
        if not consistent:
            continue
        normal = _NormalRule(_resolve(rule.head, binding), [], [], [], rule)
        for kind, term in alternative:
            resolved = _resolve(term, binding)
            if kind == "pos":
                normal.positive.append(resolved)
            elif kind == "neg":
                normal.negative.append(resolved)
            elif kind == "distinct":
                normal.distinct.append((resolved.args[0], resolved.args[1]))
        result.append(normal)
    return result


def _variables(term: Term, out: list[Var]) -> None:
    if isinstance(term, Var):
        if term not in out:
            out.append(term)
    elif not term.is_ground:
        for arg in term.args:
            _variables(arg, out)


# ---------------------------------------------------------------------------------------
# Relation graph: relevance, static/dynamic, strongly connected components
# ---------------------------------------------------------------------------------------


# ---------------------------------------------------------------------------------------
# Atom store, views and indexes
# ---------------------------------------------------------------------------------------

# The shape of a literal pattern: None for a leaf (a variable or a ground subterm),
# (name, child shapes) for a compound subterm that contains a variable.
_Shape = tuple[str, tuple["_Shape | None", ...]] | None


def _shape_and_leaves(pattern: Term) -> tuple[tuple[_Shape | None, ...], list[Term]]:
    """The shape of each argument of ``pattern`` and its leaves, left to right."""
    leaves: list[Term] = []

    def walk(term: Term) -> _Shape | None:
        if term.is_ground or isinstance(term, Var):
            leaves.append(term)
            return None
        return (term.name, tuple(walk(arg) for arg in term.args))

    shapes = tuple(walk(arg) for arg in pattern.args)
    return shapes, leaves


def _make_viewer(shapes: tuple[_Shape | None, ...]) -> Callable[[Term], tuple[Term, ...] | None]:
    """A function from a ground atom to the subterms at the leaves of ``shapes``.

    It returns None when the atom does not have the shape (another functor or arity).
    """
    if all(shape is None for shape in shapes):
        return lambda atom: atom.args

    def view(atom: Term) -> tuple[Term, ...] | None:
        out: list[Term] = []
        stack: list[tuple[Term, _Shape | None]] = list(
            zip(reversed(atom.args), reversed(shapes), strict=True)
        )
        while stack:
            term, shape = stack.pop()
            if shape is None:
                out.append(term)
                continue
            name, children = shape
            if term.name != name or len(term.args) != len(children):
                return None
            stack.extend(zip(reversed(term.args), reversed(children), strict=True))
        return tuple(out)

    return view


class _Views:
    """The views of one relation's atoms through one shape, kept up to date lazily."""

    __slots__ = ("consumed", "items", "viewer")

    def __init__(self, viewer: Callable[[Term], tuple[Term, ...] | None]) -> None:
        self.viewer = viewer
        self.items: list[tuple[Term, ...]] = []
        self.consumed = 0


class _Index:
    """Views of one relation through one shape, hashed on some leaf positions."""

    __slots__ = ("buckets", "consumed", "positions")

    def __init__(self, positions: tuple[int, ...]) -> None:
        self.positions = positions
        self.buckets: dict[tuple[Term, ...], list[tuple[Term, ...]]] = defaultdict(list)
        self.consumed = 0


class _Store:
    """All derived atoms by relation, with views and indexes built on demand."""

    def __init__(self, limits: GroundingLimits) -> None:
        self.limits = limits
        self.atoms: dict[Relation, list[Term]] = defaultdict(list)
        self.known: set[Term] = set()
        self._views: dict[tuple[Relation, tuple[_Shape | None, ...]], _Views] = {}
        self._indexes: dict[
            tuple[Relation, tuple[_Shape | None, ...], tuple[int, ...]], _Index
        ] = {}

    def add(self, relation: Relation, atom: Term) -> None:
        self.known.add(atom)
        self.atoms[relation].append(atom)
        if atom.depth > self.limits.max_term_depth:
            raise GroundingError(
                f"grounding derives terms nested deeper than {self.limits.max_term_depth} "
                f"levels (GroundingLimits.max_term_depth), such as {_shorten(atom)}; the "
                f"relation that grows is {relation[0]}/{relation[1]}"
            )
        if len(self.known) > self.limits.max_atoms:
            raise GroundingError(
                f"grounding exceeds {self.limits.max_atoms:,} atoms "
                f"(GroundingLimits.max_atoms); the relation that grows is "
                f"{_largest_relation(self.atoms)}"
            )

    def views(self, relation: Relation, shapes: tuple[_Shape | None, ...]) -> _Views:
        key = (relation, shapes)
        views = self._views.get(key)
        if views is None:
            views = self._views[key] = _Views(_make_viewer(shapes))
        atoms = self.atoms.get(relation, ())
        if views.consumed < len(atoms):
            viewer, items = views.viewer, views.items
            for atom in atoms[views.consumed :]:
                view = viewer(atom)
                if view is not None:
                    items.append(view)
            views.consumed = len(atoms)
        return views

    def index(
        self, relation: Relation, shapes: tuple[_Shape | None, ...], positions: tuple[int, ...]
    ) -> dict[tuple[Term, ...], list[tuple[Term, ...]]]:
        views = self.views(relation, shapes)
        key = (relation, shapes, positions)
        index = self._indexes.get(key)
        if index is None:
            index = self._indexes[key] = _Index(positions)
        if index.consumed < len(views.items):
            buckets = index.buckets
            for view in views.items[index.consumed :]:
                buckets[tuple([view[p] for p in positions])].append(view)
            index.consumed = len(views.items)
        return index.buckets


def _shorten(term: Term, limit: int = 80) -> str:
    """The KIF text of ``term``, cut to ``limit`` characters."""
    parts: list[str] = []
    size = 0
    stack: list[Term | str] = [term]
    while stack and size < limit:  # iterative: the term may be deeper than the stack
        item = stack.pop()
        if isinstance(item, str):
            text = item
        elif isinstance(item, Func):
            text = "(" + item.name
            stack.append(")")
            for arg in reversed(item.args):
                stack.append(arg)
                stack.append(" ")
        else:
            text = item.name
        parts.append(text)
        size += len(text)
    text = "".join(parts)
    return text if not stack else text[:limit] + " ..."


def _largest_relation(atoms: Mapping[Relation, Sequence[Term]]) -> str:
    """Name the relation with the most atoms (and, for keywords, the inner functor)."""
    if not atoms:
        return "(none yet)"
    relation, items = max(atoms.items(), key=lambda item: len(item[1]))
    name = f"{relation[0]}/{relation[1]}"
    if relation in (TRUE, NEXT, INIT, LEGAL, DOES, ("sees", 2)) and items:
        inner = Counter(relation_of(atom.args[-1]) for atom in items)
        (functor, arity), count = inner.most_common(1)[0]
        name += f" ({relation[0]} ({functor}/{arity} ...), {count:,} atoms)"
    else:
        name += f" ({len(items):,} atoms)"
    return name


# ---------------------------------------------------------------------------------------
# Join plans
# ---------------------------------------------------------------------------------------


@dataclass(slots=True)
class _Step:
    """One step of a join plan.

    ``kind`` is "pos" (look up a positive literal), "neg" (a static negated literal:
    filter), "distinct" (filter), "negdyn" (record a dynamic negated literal) or "delta"
    (scan the given views of a positive literal).
    """

    kind: str
    literal: Term
    relation: Relation = ("", 0)
    shapes: tuple[_Shape | None, ...] = ()
    key_positions: tuple[int, ...] = ()
    key_sources: tuple[tuple[Term | None, int], ...] = ()  # (constant, -1) | (None, slot)
    binds: tuple[tuple[int, int], ...] = ()  # (leaf position, slot)
    repeats: tuple[tuple[int, int], ...] = ()  # (leaf position, earlier leaf position)
    checks: tuple[tuple[int, Term], ...] = ()  # delta only: (leaf position, constant)
    bound_checks: tuple[tuple[int, int], ...] = ()  # delta only: (leaf position, slot)


class _Plan(NamedTuple):
    steps: tuple[_Step, ...]
    slots: dict[Var, int]


def _leaf_step(kind: str, literal: Term, bound: set[Var], slots: dict[Var, int]) -> _Step:
    """Compile a positive literal's lookup given the variables bound before it."""
    shapes, leaves = _shape_and_leaves(literal)
    key_positions: list[int] = []
    key_sources: list[tuple[Term | None, int]] = []
    binds: list[tuple[int, int]] = []
    repeats: list[tuple[int, int]] = []
    checks: list[tuple[int, Term]] = []
    bound_checks: list[tuple[int, int]] = []
    first_at: dict[Var, int] = {}
    for position, leaf in enumerate(leaves):
        if isinstance(leaf, Var):
            if leaf in bound:
                key_positions.append(position)
                key_sources.append((None, slots[leaf]))
                bound_checks.append((position, slots[leaf]))
            elif leaf in first_at:
                repeats.append((position, first_at[leaf]))
            else:
                first_at[leaf] = position
                binds.append((position, slots[leaf]))
        else:
            key_positions.append(position)
            key_sources.append((leaf, -1))
            checks.append((position, leaf))
    return _Step(
        kind,
        literal,
        relation_of(literal),
        shapes,
        tuple(key_positions),
        tuple(key_sources),
        tuple(binds),
        tuple(repeats),
        tuple(checks),
        tuple(bound_checks),
    )


def _plan(
    rule: _NormalRule,
    first: int | None,
    sizes: Callable[[Relation], int],
    static: frozenset[Relation],
    record: bool,
) -> _Plan:
    """Order a rule's literals for a join.

    Args:
        rule: The rule.
        first: Index of the positive literal scanned first over a delta, or None.
        sizes: Current number of atoms of a relation (for tie-breaking).
        static: The static relations (their negated literals are filters).
        record: Also record dynamic negated literals (the instantiation pass).
    """
    variables: list[Var] = []
    for literal in rule.positive:
        _variables(literal, variables)
    slots = {var: i for i, var in enumerate(variables)}
    bound: set[Var] = set()
    steps: list[_Step] = []
    pending_filters: list[tuple[str, Term, list[Var]]] = []
    names: list[Var]
    for literal in rule.negative:
        relation = relation_of(literal)
        names = []
        _variables(literal, names)
        if relation in static:
            pending_filters.append(("neg", literal, names))
        elif record:
            pending_filters.append(("negdyn", literal, names))
    for a, b in rule.distinct:
        names = []
        _variables(a, names)
        _variables(b, names)
        pending_filters.append(("distinct", Func("distinct", (a, b)), names))

    def flush() -> None:
        for item in list(pending_filters):
            kind, literal, names = item
            if all(v in bound for v in names):
                steps.append(_Step(kind, literal))
                pending_filters.remove(item)

    remaining = list(range(len(rule.positive)))
    flush()
    if first is not None:
        literal = rule.positive[first]
        steps.append(_leaf_step("delta", literal, bound, slots))
        remaining.remove(first)
        names = []
        _variables(literal, names)
        bound.update(names)
        flush()
    while remaining:

        def score(i: int) -> tuple[int, int, int, int]:
            literal = rule.positive[i]
            names: list[Var] = []
            _variables(literal, names)
            free = sum(1 for v in names if v not in bound)
            shared = len(names) - free
            universe = 1 if literal.name == _UNIVERSE_NAME else 0
            return (universe, 0 if free == 0 else 1, -shared, sizes(relation_of(literal)))

        best = min(remaining, key=score)
        remaining.remove(best)
        literal = rule.positive[best]
        steps.append(_leaf_step("pos", literal, bound, slots))
        names = []
        _variables(literal, names)
        bound.update(names)
        flush()
    if pending_filters:  # cannot happen: unsafe variables were given universe literals
        raise AssertionError(f"unbound variables in {pending_filters}")
    return _Plan(tuple(steps), slots)


def _instantiator(term: Term, slots: Mapping[Var, int]) -> Callable[[list[Term]], Term]:
    """A function from a binding (list of terms by slot) to ``term`` instantiated."""
    if term.is_ground:
        return lambda env: term
    if isinstance(term, Var):
        slot = slots[term]
        return lambda env: env[slot]
    name = term.name
    parts = [_instantiator(arg, slots) for arg in term.args]
    if len(parts) == 1:
        (p0,) = parts
        return lambda env: Func(name, (p0(env),))
    if len(parts) == 2:
        p0, p1 = parts
        return lambda env: Func(name, (p0(env), p1(env)))
    if len(parts) == 3:
        p0, p1, p2 = parts
        return lambda env: Func(name, (p0(env), p1(env), p2(env)))
    return lambda env: Func(name, tuple([p(env) for p in parts]))


# ---------------------------------------------------------------------------------------
# The grounder
# ---------------------------------------------------------------------------------------


class _Grounder:
    def __init__(self, description: Description, limits: GroundingLimits) -> None:
        self.description = description
        self.limits = limits
        self.store = _Store(limits)
        self.derivations = 0
        self.aux_count = 0
        self.constants = game_constants(description)

    # -- preparation ------------------------------------------------------------------

    def prepare(self) -> None:
        rules: list[_NormalRule] = []
        for source in self.description.rules:
            for normal in _normalise(self.description, source):
                rules.extend(self._existential(normal))
                self._make_safe(normal)
                rules.append(normal)
        # (true F) ranges over init and next; (does R M) over legal.
        f, r, m = Var("?f"), Var("?r"), Var("?m")
        rules.append(_NormalRule(Func("true", (f,)), [Func("init", (f,))], [], [], None))
        rules.append(_NormalRule(Func("true", (f,)), [Func("next", (f,))], [], [], None))
        rules.append(_NormalRule(Func("does", (r, m)), [Func("legal", (r, m))], [], [], None))
        self.rules = rules

        depends: dict[Relation, set[Relation]] = defaultdict(set)
        heads: dict[Relation, list[_NormalRule]] = defaultdict(list)
        for rule in rules:
            head = relation_of(rule.head)
            heads[head].append(rule)
            for literal in rule.positive:
                depends[head].add(relation_of(literal))
            for literal in rule.negative:
                depends[head].add(relation_of(literal))
        self.heads = heads

        # Relevant relations: those the outputs depend on.
        relevant: set[Relation] = set()
        todo = [rel for rel in OUTPUT_RELATIONS]
        while todo:
            rel = todo.pop()
            if rel in relevant:
                continue
            relevant.add(rel)
            todo.extend(depends.get(rel, ()))
        # Dynamic relations: those depending on true or does.
        dependants: dict[Relation, set[Relation]] = defaultdict(set)
        for head, bodies in depends.items():
            for body in bodies:
                dependants[body].add(head)
        dynamic: set[Relation] = set()
        todo = [TRUE, DOES]
        while todo:
            rel = todo.pop()
            if rel in dynamic:
                continue
            dynamic.add(rel)
            todo.extend(dependants.get(rel, ()))
        self.relevant = relevant
        self.static = frozenset(rel for rel in relevant if rel not in dynamic)
        self.dynamic = frozenset(rel for rel in relevant if rel in dynamic)
        order = sorted(relevant)
        self.components = strongly_connected_components(
            order, {rel: sorted(depends[rel]) for rel in order}
        )
        self.depends = depends
        # Static negation must be stratified: it is evaluated exactly.
        for component in self.components:
            members = set(component)
            if not members <= self.static:
                continue
            for rel in component:
                for rule in heads.get(rel, ()):
                    for literal in rule.negative:
                        if relation_of(literal) in members and rule.source is not None:
                            raise _error(
                                self.description,
                                rule.source,
                                f"unstratified negation: {rel[0]} depends on (not {literal}) "
                                "through a cycle",
                            )

    def _existential(self, rule: _NormalRule) -> list[_NormalRule]:
        """Rewrite each ``(not L)`` with variables of its own as ``(not (aux S))``.

        A variable that occurs only inside one ``not`` (not in the head, a positive
        literal or a ``distinct``) is existential inside it, as in negation as failure:
        ``(not (true (cell ?x ?y b)))`` holds when no cell is blank. The auxiliary
        relation ``aux`` (a name KIF cannot write) holds for the values ``S`` of the
        literal's other variables for which some binding of its own ones makes ``L``
        true. Returns the auxiliary rules.
        """
        others: list[Var] = []
        _variables(rule.head, others)
        for literal in rule.positive:
            _variables(literal, others)
        for a, b in rule.distinct:
            _variables(a, others)
            _variables(b, others)
        shared_set = set(others)
        aux_rules: list[_NormalRule] = []
        for i, literal in enumerate(rule.negative):
            names: list[Var] = []
            _variables(literal, names)
            shared = [v for v in names if v in shared_set]
            if len(shared) == len(names):
                continue
            self.aux_count += 1
            name = f" exists {self.aux_count}"
            head: Term = Func(name, tuple(shared)) if shared else Const(name)
            aux_rules.append(_NormalRule(head, [literal], [], [], rule.source))
            rule.negative[i] = head
        return aux_rules

    def _make_safe(self, rule: _NormalRule) -> None:
        """Give every variable no positive literal binds a universe literal."""
        bound: list[Var] = []
        for literal in rule.positive:
            _variables(literal, bound)
        loose: list[Var] = []
        _variables(rule.head, loose)
        for literal in rule.negative:
            _variables(literal, loose)
        for a, b in rule.distinct:
            _variables(a, loose)
            _variables(b, loose)
        for var in loose:
            if var not in bound:
                rule.positive.append(Func(_UNIVERSE_NAME, (var,)))
                bound.append(var)

    # -- evaluation -------------------------------------------------------------------

    def _size(self, relation: Relation) -> int:
        return len(self.store.atoms.get(relation, ()))

    def _run(
        self,
        plan: _Plan,
        delta: list[tuple[Term, ...]] | None,
        emit: Callable[[list[Term], list[Term]], None],
    ) -> None:
        """Enumerate every binding of ``plan``; ``emit(env, negated_dynamic_atoms)``."""
        steps = plan.steps
        store = self.store
        known = store.known
        n_steps = len(steps)
        env: list[Term] = [Const("?")] * len(plan.slots)
        negdyn: list[Term] = []
        instantiators: dict[int, Callable[[list[Term]], Term]] = {}
        indexes: list[dict[tuple[Term, ...], list[tuple[Term, ...]]] | None] = []
        for i, step in enumerate(steps):
            if step.kind == "pos":
                indexes.append(store.index(step.relation, step.shapes, step.key_positions))
            else:
                indexes.append(None)
                if step.kind in ("neg", "negdyn"):
                    instantiators[i] = _instantiator(step.literal, plan.slots)
                elif step.kind == "distinct":
                    instantiators[i] = _instantiator(step.literal.args[0], plan.slots)
                    instantiators[-1 - i] = _instantiator(step.literal.args[1], plan.slots)

        def recurse(i: int) -> None:
            if i == n_steps:
                emit(env, negdyn)
                return
            step = steps[i]
            kind = step.kind
            if kind == "pos":
                index = indexes[i]
                assert index is not None
                key = tuple([env[slot] if c is None else c for c, slot in step.key_sources])
                bucket = index.get(key)
                if not bucket:
                    return
                binds, repeats = step.binds, step.repeats
                for view in bucket:
                    if repeats and any(view[p] is not view[q] for p, q in repeats):
                        continue
                    for position, slot in binds:
                        env[slot] = view[position]
                    recurse(i + 1)
            elif kind == "delta":
                assert delta is not None
                binds, repeats = step.binds, step.repeats
                checks, bound_checks = step.checks, step.bound_checks
                for view in delta:
                    if checks and any(view[p] is not c for p, c in checks):
                        continue
                    if bound_checks and any(view[p] is not env[s] for p, s in bound_checks):
                        continue
                    if repeats and any(view[p] is not view[q] for p, q in repeats):
                        continue
                    for position, slot in binds:
                        env[slot] = view[position]
                    recurse(i + 1)
            elif kind == "neg":
                if instantiators[i](env) not in known:
                    recurse(i + 1)
            elif kind == "distinct":
                if instantiators[i](env) is not instantiators[-1 - i](env):
                    recurse(i + 1)
            else:  # negdyn: record the negated atom if it can ever hold
                atom = instantiators[i](env)
                if atom in known:
                    negdyn.append(atom)
                    recurse(i + 1)
                    negdyn.pop()
                else:
                    recurse(i + 1)

        recurse(0)

    def _evaluate_component(self, component: list[Relation]) -> None:
        members = set(component)
        rules = [rule for rel in component for rule in self.heads.get(rel, ())]
        if not rules:
            return
        store = self.store
        pending: dict[Relation, list[Term]] = defaultdict(list)
        pending_set: set[Term] = set()
        known = store.known

        def make_emit(rule: _NormalRule, slots: Mapping[Var, int]) -> Callable[..., None]:
            head = _instantiator(rule.head, slots)
            relation = relation_of(rule.head)

            def emit(env: list[Term], negdyn: list[Term]) -> None:
                self.derivations += 1
                atom = head(env)
                if atom not in known and atom not in pending_set:
                    pending_set.add(atom)
                    pending[relation].append(atom)

            return emit

        recursive = len(component) > 1 or any(
            relation_of(lit) in members for rule in rules for lit in rule.positive
        )
        # First round: every rule over everything known so far.
        for rule in rules:
            plan = _plan(rule, None, self._size, self.static, False)
            self._run(plan, None, make_emit(rule, plan.slots))
        self._check_derivations()
        delta = self._commit(pending, pending_set)
        if not recursive:
            return
        plans: dict[tuple[int, int], _Plan] = {}
        while delta:
            for r, rule in enumerate(rules):
                for p, literal in enumerate(rule.positive):
                    relation = relation_of(literal)
                    if relation not in members or relation not in delta:
                        continue
                    if (r, p) not in plans:
                        plans[(r, p)] = _plan(rule, p, self._size, self.static, False)
                    plan = plans[(r, p)]
                    step = next(s for s in plan.steps if s.kind == "delta")
                    viewer = _make_viewer(step.shapes)
                    views = [v for a in delta[relation] if (v := viewer(a)) is not None]
                    if views:
                        self._run(plan, views, make_emit(rule, plan.slots))
            self._check_derivations()
            delta = self._commit(pending, pending_set)

    def _commit(
        self, pending: dict[Relation, list[Term]], pending_set: set[Term]
    ) -> dict[Relation, list[Term]]:
        delta = {rel: atoms for rel, atoms in pending.items() if atoms}
        for rel, atoms in delta.items():
            for atom in atoms:
                self.store.add(rel, atom)
        pending.clear()
        pending_set.clear()
        return delta

    def _check_derivations(self) -> None:
        if self.derivations > self.limits.max_derivations:
            raise GroundingError(
                f"grounding exceeds {self.limits.max_derivations:,} derivations "
                f"(GroundingLimits.max_derivations); the relation that grows is "
                f"{_largest_relation(self.store.atoms)}"
            )

    def _instantiate(self) -> list[GroundRule]:
        result: list[GroundRule] = []
        seen: set[GroundRule] = set()
        static = self.static
        for rule in self.rules:
            if rule.source is None or relation_of(rule.head) not in self.dynamic:
                continue
            plan = _plan(rule, None, self._size, static, True)
            head = _instantiator(rule.head, plan.slots)
            positives = [
                _instantiator(lit, plan.slots)
                for lit in rule.positive
                if relation_of(lit) not in static
            ]

            def emit(
                env: list[Term],
                negdyn: list[Term],
                head: Callable[[list[Term]], Term] = head,
                positives: list[Callable[[list[Term]], Term]] = positives,
            ) -> None:
                self.derivations += 1
                instance = GroundRule(
                    head(env),
                    tuple(dict.fromkeys([p(env) for p in positives])),
                    tuple(dict.fromkeys(negdyn)),
                )
                if instance not in seen:
                    seen.add(instance)
                    result.append(instance)
                    if len(result) > self.limits.max_rule_instances:
                        counts = Counter(relation_of(r.head) for r in result)
                        (name, arity), count = counts.most_common(1)[0]
                        raise GroundingError(
                            f"grounding exceeds {self.limits.max_rule_instances:,} rule "
                            f"instances (GroundingLimits.max_rule_instances); the relation "
                            f"that grows is {name}/{arity} ({count:,} instances)"
                        )

            self._run(plan, None, emit)
            self._check_derivations()
        return result

    def run(self) -> GroundProgram:
        start = time.perf_counter()
        self.prepare()
        for constant in sorted(self.constants, key=str):
            self.store.add(_UNIVERSE, Func(_UNIVERSE_NAME, (constant,)))
        for component in self.components:
            self._evaluate_component(component)
        rules = self._instantiate()
        store = self.store
        static_atoms = frozenset(
            atom for rel in self.static if rel != _UNIVERSE for atom in store.atoms.get(rel, ())
        )
        possible = frozenset(atom for rel in self.dynamic for atom in store.atoms.get(rel, ()))
        roles = self._roles(static_atoms)
        base_terms = {atom.args[0] for atom in store.atoms.get(TRUE, ())}
        base = tuple(sorted(base_terms, key=str))
        role_set = set(roles)
        moves: dict[Const, set[Term]] = {role: set() for role in roles}
        legal_atoms = store.atoms.get(LEGAL, ())
        for atom in legal_atoms:
            role = atom.args[0]
            if isinstance(role, Const) and role in role_set:
                moves[role].add(atom.args[1])
        seconds = time.perf_counter() - start
        stats = GroundingStats(
            static_atoms=len(static_atoms),
            dynamic_atoms=len(possible),
            rule_instances=len(rules),
            derivations=self.derivations,
            seconds=seconds,
        )
        logger.info(
            "grounded %s: %d roles, %d base, %d moves, %d static atoms, %d possible "
            "dynamic atoms, %d rule instances, %d derivations in %.3f s",
            self.description.path,
            len(roles),
            len(base),
            sum(len(m) for m in moves.values()),
            stats.static_atoms,
            stats.dynamic_atoms,
            stats.rule_instances,
            stats.derivations,
            seconds,
        )
        return GroundProgram(
            roles=roles,
            base=base,
            moves=tuple(tuple(sorted(moves[role], key=str)) for role in roles),
            static_relations=self.static,
            static_atoms=static_atoms,
            possible=possible,
            rules=tuple(rules),
            constants=self.constants,
            stats=stats,
            path=self.description.path,
        )

    def _roles(self, static_atoms: frozenset[Term]) -> tuple[Const, ...]:
        """Roles in file order (the order of the ``role`` facts)."""
        roles: list[Const] = []
        for rule in self.description.rules:
            head = rule.head
            if (
                not rule.body
                and head.name == "role"
                and len(head.args) == 1
                and isinstance(head.args[0], Const)
                and head.args[0] not in roles
            ):
                roles.append(head.args[0])
        derived = sorted(
            (
                atom.args[0]
                for atom in static_atoms
                if relation_of(atom) == ROLE and isinstance(atom.args[0], Const)
            ),
            key=str,
        )
        for role in derived:
            if isinstance(role, Const) and role not in roles:
                roles.append(role)
        return tuple(roles)


def ground(description: Description, limits: GroundingLimits | None = None) -> GroundProgram:
    """Ground a game description: static relations evaluated, dynamic rules instantiated.

    Args:
        description: The parsed game.
        limits: Size limits (default: :class:`GroundingLimits` ()).

    Returns:
        The ground program.

    Raises:
        GroundingError: The grounding would exceed ``limits``; the message names the
            relation that grows.
        GDLSemanticError: Negation among static relations is not stratified.
    """
    return _Grounder(description, limits or GroundingLimits()).run()
