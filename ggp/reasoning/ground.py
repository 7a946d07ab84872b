"""Grounding: from first-order GDL rules to the relevant ground rule instances.

The grounder turns a :class:`~ggp.gdl.terms.Description` into a :class:`GroundProgram`:

1. **Normalisation.** ``(or ...)`` literals are expanded into one rule per disjunct,
   ``(not (not L))``, ``(not (or ...))`` and ``(not (distinct a b))`` are rewritten, and
   each variable that no positive literal binds (an *unsafe* variable of the head, of a
   ``not`` or of a ``distinct``) is made to range over the game's constants (every
   :class:`~ggp.gdl.terms.Const` of the description), as a top-down prover reads it.
2. **Relevance.** Only relations that the keywords ``legal``, ``goal``, ``terminal``,
   ``sees``, ``next``, ``init`` and ``role`` depend on are evaluated.
3. **Demand** (:mod:`ggp.reasoning.demand`, with ``GroundingLimits(demand=True)``). The
   dynamic rules are rewritten by the magic-set transformation so that only the atoms
   the outputs can ask for are derived.
4. **Static relations** (those that depend neither on ``true`` nor on ``does``) are
   evaluated exactly, stratum by stratum, bottom-up and semi-naively; they become
   constants of the network (``(succ 1 2)``, ``(index 3)``, board geometry, ...).
5. **Domain analysis.** The dynamic relations are over-approximated by evaluating their
   rules with negated dynamic literals ignored, ``(true F)`` ranging over every ``F`` of
   ``init`` and ``next`` and ``(does R M)`` over every ``(legal R M)``, to a fixpoint.
   Every atom true in some reachable state is in this set.
6. **Instantiation.** Each dynamic rule is instantiated for every binding whose positive
   body atoms are all possible. Static literals are evaluated away (an instance with a
   false one is dropped), and a negated atom that is never possible is dropped.

The joins are hash joins over per-literal indexes, planned greedily (most bound
arguments first). Sizes are checked against :class:`GroundingLimits`: a game that would
exceed them stops with :class:`~ggp.errors.GroundingError` naming the relation that grows,
and so does one that takes more CPU time or memory than the limits' budget
(:mod:`ggp.reasoning.budget`, shared with building the network).

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

import itertools
import logging
import os
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import NamedTuple

from ggp.errors import GroundingError, SettingError
from ggp.gdl.graph import strongly_connected_components
from ggp.gdl.terms import Const, Description, Func, Term, Var, game_constants
from ggp.reasoning.budget import Budget
from ggp.reasoning.demand import with_demand
from ggp.reasoning.joins import (
    Plan,
    Shape,
    Store,
    instantiator,
    make_viewer,
    plan_rule,
    run_plan,
)
from ggp.reasoning.normal_form import (
    DOES,
    LEGAL,
    OUTPUT_RELATIONS,
    ROLE,
    TRUE,
    UNIVERSE,
    UNIVERSE_NAME,
    NormalRule,
    Relation,
    existential,
    make_safe,
    normalise,
    relation_of,
    semantic_error,
)

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

_CHECK_EVERY = 1 << 14  # derivations between two looks at the budget

View = tuple[Term, ...]  # an atom's subterms at the leaves of a literal's shape
Emit = Callable[[list[Term], list[Term]], None]  # run_plan's callback


@dataclass(frozen=True, slots=True)
class GroundingLimits:
    """Limits past which :func:`ground` gives up with a GroundingError.

    What ``reasoner="auto"`` grounds is decided by sizes, so that a game gets the same
    reasoner on every machine, fast or slow, idle or loaded. The work limit is
    ``max_derivations``, the rule bindings the joins enumerate, in proportion to which
    grounding and building the network take their time (13 us a derivation for both
    together on the 2-core machine of ``benchmarks/RESULTS.md`` on 2026-11-27, 30 us on
    a slower one on 2026-12-01). Its default of a million is about four times what the
    largest of our games needs (RTS-Full: 264k derivations, 122k rule instances; the
    eight-snake Battlesnake board 252k; ``benchmarks/bench_grounding.py``); chess passes
    it after about 13 CPU s on the slower machine (it would reach the million atoms of
    ``max_atoms`` at 30 s). The other sizes are 16-20 times the largest games' and
    keep memory to about 1 GB. The time and memory budgets (:mod:`ggp.reasoning.budget`,
    grounding and building the network together) are a safety net for what the sizes do
    not count.

    Attributes:
        max_atoms: Most ground atoms (static and possible dynamic ones together).
        max_rule_instances: Most ground instances of the dynamic rules.
        max_derivations: Most rule bindings enumerated in all (duplicates included;
            None: no limit); default 1,000,000, or the environment's
            ``GGP_GROUNDING_DERIVATIONS`` (``none``: no limit), so that every command
            can be given another.
        max_term_depth: Deepest derived atom (nesting of parentheses, as the parser's
            ``MAX_DEPTH``); stops a counter such as ``(s (s ...))`` that grows forever.
        demand: Ground only what the outputs can ask for (:mod:`ggp.reasoning.demand`)
            instead of every possible atom of every relation. Off by default: on the
            corpus it grounds nothing smaller, and the 11x11 snake games take 1.5-2x
            longer with it (0.9 -> 1.35 s for the 121-cell one).
        max_seconds: CPU seconds that grounding and building the network may take
            (None: no limit); default 60, or ``GGP_GROUNDING_SECONDS``.
        max_memory_mb: MiB by which they may grow the process's memory (None: no
            limit); default 2048, or ``GGP_GROUNDING_MEMORY_MB``.
    """

    max_atoms: int = 1_000_000
    max_rule_instances: int = 2_000_000
    max_derivations: int | None = field(
        default_factory=lambda: _int(_from_environment("GGP_GROUNDING_DERIVATIONS", 1_000_000))
    )
    max_term_depth: int = 100
    demand: bool = False
    max_seconds: float | None = field(
        default_factory=lambda: _from_environment("GGP_GROUNDING_SECONDS", 60.0)
    )
    max_memory_mb: int | None = field(
        default_factory=lambda: _int(_from_environment("GGP_GROUNDING_MEMORY_MB", 2048))
    )

    def budget(self) -> Budget:
        """A fresh time and memory budget of these limits, starting now."""
        return Budget(self.max_seconds, self.max_memory_mb)


def _from_environment(name: str, default: float) -> float | None:
    """A budget from the environment variable ``name``, else ``default``.

    Raises:
        SettingError: The variable is neither a number nor ``none``.
    """
    text = os.environ.get(name, "").strip()
    if not text:
        return default
    if text.lower() == "none":
        return None
    try:
        value = float(text)
    except ValueError:
        raise SettingError(f"{name}={text!r}: expected a number or 'none'") from None
    if value < 0:
        raise SettingError(f"{name}={text!r}: expected a number >= 0 or 'none'")
    return value


def _int(value: float | None) -> int | None:
    return None if value is None else int(value)


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


def _evaluating(component: list[Relation]) -> str:
    """What evaluating ``component`` is called in a limit's message (its first relation,
    adornments dropped)."""
    name, arity = component[0]
    return f"evaluating {name.split(' ')[0]}/{arity}"


class _Grounder:
    def __init__(
        self, description: Description, limits: GroundingLimits, budget: Budget | None = None
    ) -> None:
        self.description = description
        self.limits = limits
        self.budget = budget or limits.budget()
        self._next_check = _CHECK_EVERY
        self.store = Store(limits.max_atoms, limits.max_term_depth)
        self.derivations = 0
        self._aux_names = itertools.count(1)
        self.origin: dict[str, str] = {}  # adorned relation -> the game's relation
        self.magic: frozenset[str] = frozenset()  # demand-only relations
        self.constants = game_constants(description)

    # -- preparation ------------------------------------------------------------------

    def prepare(self) -> None:
        rules: list[NormalRule] = []
        for source in self.description.rules:
            for normal in normalise(self.description, source):
                rules.extend(existential(normal, self._aux_names))
                make_safe(normal)
                rules.append(normal)
        # (true F) ranges over init and next; (does R M) over legal.
        f, r, m = Var("?f"), Var("?r"), Var("?m")
        rules.append(NormalRule(Func("true", (f,)), [Func("init", (f,))], [], [], None))
        rules.append(NormalRule(Func("true", (f,)), [Func("next", (f,))], [], [], None))
        rules.append(NormalRule(Func("does", (r, m)), [Func("legal", (r, m))], [], [], None))
        self._analyse(rules)
        if self.limits.demand:
            outputs = sorted(rel for rel in OUTPUT_RELATIONS if rel in self.dynamic)
            demand = with_demand(rules, self.static, outputs)
            self.origin, self.magic = demand.origin, demand.magic
            self._analyse(list(demand.rules))
        # Static negation must be stratified: it is evaluated exactly.
        for component in self.components:
            members = set(component)
            if not members <= self.static:
                continue
            for rel in component:
                for rule in self.heads.get(rel, ()):
                    for literal in rule.negative:
                        if relation_of(literal) in members and rule.source is not None:
                            raise semantic_error(
                                self.description,
                                rule.source,
                                f"unstratified negation: {rel[0]} depends on (not {literal}) "
                                "through a cycle",
                            )

    def _analyse(self, rules: list[NormalRule]) -> None:
        """Relevant, static and dynamic relations, and components, of ``rules``."""
        self.rules = rules
        depends: dict[Relation, set[Relation]] = defaultdict(set)
        heads: dict[Relation, list[NormalRule]] = defaultdict(list)
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

    # -- evaluation -------------------------------------------------------------------

    def _size(self, relation: Relation) -> int:
        return len(self.store.atoms.get(relation, ()))

    def _evaluate_component(self, component: list[Relation]) -> None:
        members = set(component)
        rules = [rule for rel in component for rule in self.heads.get(rel, ())]
        if not rules:
            return
        store = self.store
        pending: dict[Relation, list[Term]] = defaultdict(list)
        pending_set: set[Term] = set()
        known = store.known

        def make_emit(rule: NormalRule, slots: Mapping[Var, int]) -> Emit:
            head = instantiator(rule.head, slots)
            relation = relation_of(rule.head)
            label = f"{relation[0].split(' ')[0]}/{relation[1]}"  # adornments dropped

            def emit(env: list[Term], negdyn: list[Term]) -> None:
                self.derivations += 1
                if self.derivations >= self._next_check:
                    self._check_budget(f"evaluating {label}")
                atom = head(env)
                if atom not in known and atom not in pending_set:
                    pending_set.add(atom)
                    pending[relation].append(atom)

            return emit

        recursive = len(component) > 1 or any(
            relation_of(lit) in members for rule in rules for lit in rule.positive
        )
        # First round: every rule over everything known so far.
        doing = _evaluating(component)
        for rule in rules:
            plan = plan_rule(rule, None, self._size, self.static, False)
            run_plan(self.store, plan, None, make_emit(rule, plan.slots))
        self._check_derivations(doing)
        delta = self._commit(pending, pending_set)
        if not recursive:
            return
        # Per (rule, literal scanned over the delta): its plan, the shape of that literal
        # and its emit, made once; per round, the delta's views per (relation, shape).
        plans: dict[tuple[int, int], tuple[Plan, tuple[Shape | None, ...], Emit]] = {}
        scans = [
            (r, p, relation_of(literal))
            for r, rule in enumerate(rules)
            for p, literal in enumerate(rule.positive)
            if relation_of(literal) in members
        ]
        while delta:
            round_views: dict[tuple[Relation, tuple[Shape | None, ...]], list[View]] = {}
            for r, p, relation in scans:
                if relation not in delta:
                    continue
                if (r, p) not in plans:
                    rule = rules[r]
                    plan = plan_rule(rule, p, self._size, self.static, False)
                    step = next(s for s in plan.steps if s.kind == "delta")
                    plans[(r, p)] = (plan, step.shapes, make_emit(rule, plan.slots))
                plan, shapes, emit = plans[(r, p)]
                views = round_views.get((relation, shapes))
                if views is None:
                    viewer = make_viewer(shapes)
                    views = [v for a in delta[relation] if (v := viewer(a)) is not None]
                    round_views[(relation, shapes)] = views
                if views:
                    run_plan(self.store, plan, views, emit)
            self._check_derivations(doing)
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

    def _check_budget(self, doing: str) -> None:
        self._next_check = self.derivations + _CHECK_EVERY
        self.budget.check(doing)
        self._check_derivations(doing)

    def _check_derivations(self, doing: str) -> None:
        limit = self.limits.max_derivations
        if limit is not None and self.derivations > limit:
            raise GroundingError(
                f"grounding exceeds {limit:,} derivations "
                f"(GroundingLimits.max_derivations) while {doing}"
            )

    def _instantiate(self) -> list[GroundRule]:
        result: list[GroundRule] = []
        seen: set[GroundRule] = set()
        static, magic, origin = self.static, self.magic, self.origin
        renamed: dict[Term, Term] = {}
        renaming = bool(origin)

        def original(atom: Term) -> Term:
            """An adorned relation's atom as the game relation's atom."""
            name = origin.get(atom.name)
            if name is None:
                return atom
            found = renamed.get(atom)
            if found is None:
                found = renamed[atom] = Func(name, atom.args) if atom.args else Const(name)
            return found

        for rule in self.rules:
            if (
                rule.source is None
                or relation_of(rule.head) not in self.dynamic
                or rule.head.name in magic
            ):
                continue
            plan = plan_rule(rule, None, self._size, static, True)
            head = instantiator(rule.head, plan.slots)
            label = original(rule.head).name
            positives = [
                instantiator(lit, plan.slots)
                for lit in rule.positive
                if relation_of(lit) not in static and lit.name not in magic
            ]

            def emit(
                env: list[Term],
                negdyn: list[Term],
                head: Callable[[list[Term]], Term] = head,
                positives: list[Callable[[list[Term]], Term]] = positives,
                label: str = label,
            ) -> None:
                self.derivations += 1
                if self.derivations >= self._next_check:
                    self._check_budget(f"instantiating the rules of {label}")
                if renaming:
                    instance = GroundRule(
                        original(head(env)),
                        tuple(dict.fromkeys([original(p(env)) for p in positives])),
                        tuple(dict.fromkeys([original(atom) for atom in negdyn])),
                    )
                else:  # no adorned relations (demand off, the default): the atoms as made
                    instance = GroundRule(
                        head(env),
                        tuple(dict.fromkeys([p(env) for p in positives])),
                        tuple(dict.fromkeys(negdyn)) if negdyn else (),
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

            run_plan(self.store, plan, None, emit)
            self._check_derivations(f"instantiating the rules of {label}")
        return result

    def run(self) -> GroundProgram:
        start = time.perf_counter()
        self.prepare()
        for constant in sorted(self.constants, key=str):
            self.store.add(UNIVERSE, Func(UNIVERSE_NAME, (constant,)))
        for component in self.components:
            self._evaluate_component(component)
            self.budget.check(_evaluating(component))
        rules = self._instantiate()
        store = self.store
        static_atoms = frozenset(
            atom for rel in self.static if rel != UNIVERSE for atom in store.atoms.get(rel, ())
        )
        possible = frozenset(
            atom
            for rel in self.dynamic
            if rel[0] not in self.magic and rel[0] not in self.origin
            for atom in store.atoms.get(rel, ())
        ) | frozenset(
            Func(self.origin[rel[0]], atom.args) if atom.args else Const(self.origin[rel[0]])
            for rel in self.dynamic
            if rel[0] in self.origin
            for atom in store.atoms.get(rel, ())
        )
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


def ground(
    description: Description, limits: GroundingLimits | None = None, budget: Budget | None = None
) -> GroundProgram:
    """Ground a game description: static relations evaluated, dynamic rules instantiated.

    Args:
        description: The parsed game.
        limits: Size limits (default: :class:`GroundingLimits` ()).
        budget: The time and memory budget to draw on (default: a fresh one of
            ``limits``); :func:`~ggp.reasoning.propnet.build_propnet` goes on with it.

    Returns:
        The ground program.

    Raises:
        GroundingError: The grounding would exceed ``limits`` or its budget; the
            message names the relation that grows or what was being done.
        GDLSemanticError: Negation among static relations is not stratified.
    """
    return _Grounder(description, limits or GroundingLimits(), budget).run()
