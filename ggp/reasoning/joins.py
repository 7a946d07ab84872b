"""The join engine of the grounder: atom store, indexes, join plans and their evaluation.

Derived atoms are kept per relation in a :class:`Store`, with *views* (the leaves of an
atom under a literal's shape) and hash indexes on the leaf positions a literal knows when
it is joined, built on demand and kept up to date. :func:`plan_rule` orders a rule's
literals greedily (most bound arguments first); :func:`run_plan` enumerates every
binding of a plan.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from operator import itemgetter
from typing import NamedTuple

from ggp.errors import GroundingError
from ggp.gdl.terms import Const, Func, Term, Var
from ggp.reasoning.normal_form import (
    DOES,
    INIT,
    LEGAL,
    NEXT,
    TRUE,
    UNIVERSE_NAME,
    NormalRule,
    Relation,
    relation_of,
    variables,
)

__all__ = [
    "Store",
    "Plan",
    "Step",
    "plan_rule",
    "run_plan",
    "instantiator",
    "make_viewer",
    "largest_relation",
]

# The shape of a literal pattern: None for a leaf (a variable or a ground subterm),
# (name, child shapes) for a compound subterm that contains a variable.
Shape = tuple[str, tuple["Shape | None", ...]] | None


def shape_and_leaves(pattern: Term) -> tuple[tuple[Shape | None, ...], list[Term]]:
    """The shape of each argument of ``pattern`` and its leaves, left to right."""
    leaves: list[Term] = []

    def walk(term: Term) -> Shape | None:
        if term.is_ground or isinstance(term, Var):
            leaves.append(term)
            return None
        return (term.name, tuple(walk(arg) for arg in term.args))

    shapes = tuple(walk(arg) for arg in pattern.args)
    return shapes, leaves


def make_viewer(shapes: tuple[Shape | None, ...]) -> Callable[[Term], tuple[Term, ...] | None]:
    """A function from a ground atom to the subterms at the leaves of ``shapes``.

    It returns None when the atom does not have the shape (another functor or arity).
    The function is compiled to straight-line code per shape (a walk over the shape per
    atom was a tenth of grounding the largest games) and kept for the next request.

    >>> view = make_viewer((None, ("pos", (None, None))))
    >>> view(Func("at", (Const("a"), Func("pos", (Const("1"), Const("2"))))))
    (Const('a'), Const('1'), Const('2'))
    >>> view(Func("at", (Const("a"), Const("home")))) is None
    True
    """
    viewer = _viewers.get(shapes)
    if viewer is None:
        viewer = _viewers[shapes] = _compile_viewer(shapes)
    return viewer


_viewers: dict[tuple[Shape | None, ...], Callable[[Term], tuple[Term, ...] | None]] = {}


def _compile_viewer(
    shapes: tuple[Shape | None, ...],
) -> Callable[[Term], tuple[Term, ...] | None]:
    if all(shape is None for shape in shapes):
        return _args
    lines = ["def view(atom):", "    a0 = atom.args"]
    leaves: list[str] = []
    names: dict[str, str] = {}
    counter = [0]

    def walk(args: str, children: tuple[Shape | None, ...]) -> None:
        for i, shape in enumerate(children):
            if shape is None:
                leaves.append(f"{args}[{i}]")
                continue
            name, grandchildren = shape
            counter[0] += 1
            t, a = f"t{counter[0]}", f"a{counter[0]}"
            constant = names.setdefault(name, f"n{len(names)}")
            lines.append(f"    {t} = {args}[{i}]")
            lines.append(f"    {a} = {t}.args")
            lines.append(
                f"    if {t}.name != {constant} or len({a}) != {len(grandchildren)}: return None"
            )
            walk(a, grandchildren)

    walk("a0", shapes)
    lines.append(f"    return ({', '.join(leaves)},)")
    namespace: dict[str, object] = {constant: name for name, constant in names.items()}
    exec("\n".join(lines), namespace)  # the code is built above from the shape only
    view: Callable[[Term], tuple[Term, ...] | None] = namespace["view"]  # type: ignore[assignment]
    return view


def _args(atom: Term) -> tuple[Term, ...]:
    return atom.args


class Views:
    """The views of one relation's atoms through one shape, kept up to date lazily."""

    __slots__ = ("consumed", "items", "viewer")

    def __init__(self, viewer: Callable[[Term], tuple[Term, ...] | None]) -> None:
        self.viewer = viewer
        self.items: list[tuple[Term, ...]] = []
        self.consumed = 0


class Index:
    """Views of one relation through one shape, hashed on some leaf positions."""

    __slots__ = ("buckets", "consumed", "positions")

    def __init__(self, positions: tuple[int, ...]) -> None:
        self.positions = positions
        self.buckets: dict[tuple[Term, ...], list[tuple[Term, ...]]] = defaultdict(list)
        self.consumed = 0


class Store:
    """All derived atoms by relation, with views and indexes built on demand."""

    def __init__(self, max_atoms: int, max_term_depth: int) -> None:
        self.max_atoms = max_atoms
        self.max_term_depth = max_term_depth
        self.atoms: dict[Relation, list[Term]] = defaultdict(list)
        self.known: set[Term] = set()
        self._views: dict[tuple[Relation, tuple[Shape | None, ...]], Views] = {}
        self._indexes: dict[tuple[Relation, tuple[Shape | None, ...], tuple[int, ...]], Index] = {}

    def add(self, relation: Relation, atom: Term) -> None:
        self.known.add(atom)
        self.atoms[relation].append(atom)
        if atom.depth > self.max_term_depth:
            raise GroundingError(
                f"grounding derives terms nested deeper than {self.max_term_depth} "
                f"levels (GroundingLimits.max_term_depth), such as {shorten(atom)}; the "
                f"relation that grows is {relation[0]}/{relation[1]}"
            )
        if len(self.known) > self.max_atoms:
            raise GroundingError(
                f"grounding exceeds {self.max_atoms:,} atoms "
                f"(GroundingLimits.max_atoms); the relation that grows is "
                f"{largest_relation(self.atoms)}"
            )

    def views(self, relation: Relation, shapes: tuple[Shape | None, ...]) -> Views:
        key = (relation, shapes)
        views = self._views.get(key)
        if views is None:
            views = self._views[key] = Views(make_viewer(shapes))
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
        self, relation: Relation, shapes: tuple[Shape | None, ...], positions: tuple[int, ...]
    ) -> dict[tuple[Term, ...], list[tuple[Term, ...]]]:
        views = self.views(relation, shapes)
        key = (relation, shapes, positions)
        index = self._indexes.get(key)
        if index is None:
            index = self._indexes[key] = Index(positions)
        if index.consumed < len(views.items):
            buckets = index.buckets
            for view in views.items[index.consumed :]:
                buckets[tuple([view[p] for p in positions])].append(view)
            index.consumed = len(views.items)
        return index.buckets


def shorten(term: Term, limit: int = 80) -> str:
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


def largest_relation(atoms: Mapping[Relation, Sequence[Term]]) -> str:
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
class Step:
    """One step of a join plan.

    ``kind`` is "pos" (look up a positive literal), "neg" (a static negated literal:
    filter), "distinct" (filter), "negdyn" (record a dynamic negated literal) or "delta"
    (scan the given views of a positive literal).
    """

    kind: str
    literal: Term
    relation: Relation = ("", 0)
    shapes: tuple[Shape | None, ...] = ()
    key_positions: tuple[int, ...] = ()
    key_sources: tuple[tuple[Term | None, int], ...] = ()  # (constant, -1) | (None, slot)
    binds: tuple[tuple[int, int], ...] = ()  # (leaf position, slot)
    repeats: tuple[tuple[int, int], ...] = ()  # (leaf position, earlier leaf position)
    checks: tuple[tuple[int, Term], ...] = ()  # delta only: (leaf position, constant)
    bound_checks: tuple[tuple[int, int], ...] = ()  # delta only: (leaf position, slot)
    key: Callable[[list[Term]], tuple[Term, ...]] | None = None  # pos only: key_maker's


class Plan(NamedTuple):
    steps: tuple[Step, ...]
    slots: dict[Var, int]


def leaf_step(kind: str, literal: Term, bound: set[Var], slots: dict[Var, int]) -> Step:
    """Compile a positive literal's lookup given the variables bound before it."""
    shapes, leaves = shape_and_leaves(literal)
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
    return Step(
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
        key_maker(tuple(key_sources)) if kind == "pos" else None,
    )


def plan_rule(
    rule: NormalRule,
    first: int | None,
    sizes: Callable[[Relation], int],
    static: frozenset[Relation],
    record: bool,
) -> Plan:
    """Order a rule's literals for a join.

    Args:
        rule: The rule.
        first: Index of the positive literal scanned first over a delta, or None.
        sizes: Current number of atoms of a relation (for tie-breaking).
        static: The static relations (their negated literals are filters).
        record: Also record dynamic negated literals (the instantiation pass).
    """
    found: list[Var] = []
    for literal in rule.positive:
        variables(literal, found)
    slots = {var: i for i, var in enumerate(found)}
    bound: set[Var] = set()
    steps: list[Step] = []
    pending_filters: list[tuple[str, Term, list[Var]]] = []
    names: list[Var]
    for literal in rule.negative:
        relation = relation_of(literal)
        names = []
        variables(literal, names)
        if relation in static:
            pending_filters.append(("neg", literal, names))
        elif record:
            pending_filters.append(("negdyn", literal, names))
    for a, b in rule.distinct:
        names = []
        variables(a, names)
        variables(b, names)
        pending_filters.append(("distinct", Func("distinct", (a, b)), names))

    def flush() -> None:
        for item in list(pending_filters):
            kind, literal, names = item
            if all(v in bound for v in names):
                steps.append(Step(kind, literal))
                pending_filters.remove(item)

    remaining = list(range(len(rule.positive)))
    flush()
    if first is not None:
        literal = rule.positive[first]
        steps.append(leaf_step("delta", literal, bound, slots))
        remaining.remove(first)
        names = []
        variables(literal, names)
        bound.update(names)
        flush()
    while remaining:

        def score(i: int) -> tuple[int, int, int, int]:
            literal = rule.positive[i]
            names: list[Var] = []
            variables(literal, names)
            free = sum(1 for v in names if v not in bound)
            shared = len(names) - free
            universe = 1 if literal.name == UNIVERSE_NAME else 0
            return (universe, 0 if free == 0 else 1, -shared, sizes(relation_of(literal)))

        best = min(remaining, key=score)
        remaining.remove(best)
        literal = rule.positive[best]
        steps.append(leaf_step("pos", literal, bound, slots))
        names = []
        variables(literal, names)
        bound.update(names)
        flush()
    if pending_filters:  # cannot happen: unsafe variables were given universe literals
        raise AssertionError(f"unbound variables in {pending_filters}")
    return Plan(tuple(steps), slots)


def instantiator(term: Term, slots: Mapping[Var, int]) -> Callable[[list[Term]], Term]:
    """A function from a binding (list of terms by slot) to ``term`` instantiated."""
    if term.is_ground:
        return lambda env: term
    if isinstance(term, Var):
        slot = slots[term]
        return lambda env: env[slot]
    name = term.name
    parts = [instantiator(arg, slots) for arg in term.args]
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


def key_maker(
    sources: tuple[tuple[Term | None, int], ...],
) -> Callable[[list[Term]], tuple[Term, ...]]:
    """The index key of a "pos" step from a binding: per key position, a constant or the
    term bound to a slot (``Step.key_sources``).

    >>> key_maker(((None, 1), (Const("x"), -1)))([Const("a"), Const("b")])
    (Const('b'), Const('x'))
    """
    if all(c is None for c, _ in sources):
        slots = [slot for _, slot in sources]
        if len(slots) == 1:
            (s0,) = slots
            return lambda env: (env[s0],)
        if len(slots) == 2:
            s0, s1 = slots
            return lambda env: (env[s0], env[s1])
        return lambda env: tuple([env[s] for s in slots])
    if all(c is not None for c, _ in sources):
        constant = tuple(c for c, _ in sources if c is not None)
        return lambda env: constant
    return lambda env: tuple([env[slot] if c is None else c for c, slot in sources])


def filter_views(
    views: list[tuple[Term, ...]],
    checks: tuple[tuple[int, Term], ...],
    repeats: tuple[tuple[int, int], ...],
) -> list[tuple[Term, ...]]:
    """The views with the constant ``c`` at each ``(position, c)`` of ``checks`` and the
    same term at both positions of each pair of ``repeats``.

    >>> a, b = Const("a"), Const("b")
    >>> filter_views([(a, a), (a, b), (b, b)], ((0, a),), ())
    [(Const('a'), Const('a')), (Const('a'), Const('b'))]
    >>> filter_views([(a, a), (a, b), (b, b)], ((0, a),), ((1, 0),))
    [(Const('a'), Const('a'))]
    """
    if not repeats and len(checks) == 1:  # the usual cases, without a generator per view
        ((p0, c0),) = checks
        return [view for view in views if view[p0] is c0]
    if not repeats:  # terms compare by identity: the tuples' == is the checks' "is"
        picks = itemgetter(*(p for p, _ in checks))
        wanted = tuple(c for _, c in checks)
        return [view for view in views if picks(view) == wanted]
    return [
        view
        for view in views
        if all(view[p] is c for p, c in checks) and all(view[p] is view[q] for p, q in repeats)
    ]


def run_plan(
    store: Store,
    plan: Plan,
    delta: list[tuple[Term, ...]] | None,
    emit: Callable[[list[Term], list[Term]], None],
) -> None:
    """Enumerate every binding of ``plan``; ``emit(env, negated_dynamic_atoms)``."""
    steps = plan.steps
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
            # The constants and repeated variables of the literal scanned over the delta
            # do not depend on the binding: its views are filtered once, not per visit.
            if step.kind == "delta" and delta is not None and (step.checks or step.repeats):
                delta = filter_views(delta, step.checks, step.repeats)
            if step.kind in ("neg", "negdyn"):
                instantiators[i] = instantiator(step.literal, plan.slots)
            elif step.kind == "distinct":
                instantiators[i] = instantiator(step.literal.args[0], plan.slots)
                instantiators[-1 - i] = instantiator(step.literal.args[1], plan.slots)

    def recurse(i: int) -> None:
        if i == n_steps:
            emit(env, negdyn)
            return
        step = steps[i]
        kind = step.kind
        if kind == "pos":
            index, key = indexes[i], step.key
            assert index is not None and key is not None
            bucket = index.get(key(env))
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
            binds, bound_checks = step.binds, step.bound_checks
            for view in delta:  # checks and repeats filtered above
                if bound_checks and any(view[p] is not env[s] for p, s in bound_checks):
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
