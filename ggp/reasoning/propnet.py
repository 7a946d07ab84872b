"""Propositional networks: the structure that the compiled reasoner evaluates.

A :class:`Propnet` is a directed graph of Boolean nodes built from a
:class:`~ggp.reasoning.ground.GroundProgram`:

- ``BASE`` node ``k`` is the proposition ``(true base[k])``: bit ``k`` of a state;
- ``INPUT`` node ``j`` is ``(does R M)`` for the ``j``-th (role, move) pair;
- ``AND``, ``OR`` and ``NOT`` gates compute every derived proposition;
- ``FALSE`` and ``TRUE`` are the constants (nodes 0 and 1);
- ``LOOP`` nodes stand for the atoms of a cycle of positive recursion (a cyclic strongly
  connected component of the ground dependency graph); each has a definition node in
  :attr:`Propnet.loops`, and their value is the least fixpoint, reached by iterating
  from all-false.

The outputs (``legal``, ``goal``, ``terminal``, ``sees``, ``next``, ``init``) point at
nodes. The net is optimised while it is built: gates are hash-consed (a shared
sub-expression is one node), constants are folded (static relations were already
evaluated away by grounding), ``AND(a, NOT a)``-style contradictions and absorbed terms
are removed, literals common to every disjunct of an ``OR`` are factored out, and only
nodes that some output depends on are kept.

References: Schkufza, Love and Genesereth, "Propositional Automata and Cell Automata:
Representational Frameworks for Discrete Dynamic Systems", AI 2008
(https://doi.org/10.1007/978-3-540-89378-3_6); Cox, Schkufza, Madsen and Genesereth,
"Factoring General Games using Propositional Automata", GIGA 2009.

Example:
    >>> from ggp.gdl.parser import parse_text
    >>> from ggp.reasoning.ground import ground
    >>> net = build_propnet(ground(parse_text('''
    ...     (role robot) (init (light off))
    ...     (legal robot flip)
    ...     (<= (next (light on)) (does robot flip) (true (light off)))
    ...     (<= (next (light off)) (does robot flip) (true (light on)))
    ...     (<= terminal (true (light on))) (goal robot 100)''')))
    >>> [str(f) for f in net.base]
    ['(light off)', '(light on)']
    >>> net.describe(net.next[1])
    '(AND (INPUT 0 robot flip) (BASE 0 (light off)))'
    >>> net.describe(net.terminal)
    '(BASE 1 (light on))'
"""

from __future__ import annotations

import logging
import time
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from enum import IntEnum
from types import MappingProxyType

from ggp.errors import GDLSemanticError
from ggp.gdl.graph import strongly_connected_components
from ggp.gdl.terms import Const, Func, Term
from ggp.reasoning.budget import Budget
from ggp.reasoning.ground import GroundProgram, GroundRule
from ggp.reasoning.normal_form import DOES, TRUE, relation_of

__all__ = ["Op", "Propnet", "PropnetStats", "build_propnet"]

logger = logging.getLogger(__name__)


class Op(IntEnum):
    """The kind of a propnet node."""

    FALSE = 0
    TRUE = 1
    BASE = 2  # args: (k,), the index of the base proposition
    INPUT = 3  # args: (j,), the index of the input proposition
    AND = 4
    OR = 5
    NOT = 6
    LOOP = 7  # args: (n,), a serial number; the definition is in Propnet.loops


_GATES = frozenset((Op.AND, Op.OR, Op.NOT))
_LOOP = Op.LOOP

FALSE_NODE = 0
TRUE_NODE = 1


@dataclass(frozen=True, slots=True)
class PropnetStats:
    """Sizes of a propnet.

    Attributes:
        nodes: All nodes kept (constants, leaves, gates and loop nodes).
        gates: AND, OR and NOT nodes.
        loops: LOOP nodes (atoms of positive cycles).
        seconds: Time to build the net from the ground program.
    """

    nodes: int
    gates: int
    loops: int
    seconds: float


@dataclass(frozen=True)
class Propnet:
    """A propositional network (see the module docstring).

    Node ``i`` has kind ``ops[i]`` and children ``args[i]``; every child of a gate has a
    smaller index than the gate, except through a LOOP node, whose definition
    ``loops[i]`` may come later.

    Attributes:
        roles: The roles in file order.
        base: Base proposition ``k`` is ``(true base[k])``.
        inputs: Input proposition ``j`` is ``(does roles[r] move)`` for ``(r, move)``.
        moves: For each role, its possible moves sorted by KIF text.
        move_inputs: For each role, the input index of each of its moves.
        legal: For each role, the node of ``(legal R M)`` for each of its moves.
        goals: For each role, ``(value, node)`` pairs, largest value first; values are
            natural numbers (others are ignored) and 0 is left out: it is the value when
            no goal holds.
        terminal: The node of ``terminal``.
        percepts: For each role, the terms ``P`` of its possible ``(sees R P)``, sorted.
        sees: For each role, the node of each of its percepts.
        next: For each base proposition, the node of ``(next F)``.
        init: For each base proposition, the node of ``(init F)``.
        ops: The kind of each node.
        args: The children of each node (or the index for BASE, INPUT and LOOP).
        loops: The definition node of each LOOP node.
        stats: Sizes and build time.
    """

    roles: tuple[Const, ...]
    base: tuple[Term, ...]
    inputs: tuple[tuple[int, Term], ...]
    moves: tuple[tuple[Term, ...], ...]
    move_inputs: tuple[tuple[int, ...], ...]
    legal: tuple[tuple[int, ...], ...]
    goals: tuple[tuple[tuple[int, int], ...], ...]
    terminal: int
    percepts: tuple[tuple[Term, ...], ...]
    sees: tuple[tuple[int, ...], ...]
    next: tuple[int, ...]
    init: tuple[int, ...]
    ops: tuple[Op, ...]
    args: tuple[tuple[int, ...], ...]
    loops: Mapping[int, int] = field(default_factory=lambda: MappingProxyType({}))
    stats: PropnetStats = field(default=PropnetStats(0, 0, 0, 0.0), compare=False)

    def children(self, node: int) -> tuple[int, ...]:
        """The nodes ``node`` reads: gate inputs, or a LOOP node's definition."""
        op = self.ops[node]
        if op in _GATES:  # module constants: an enum attribute per call was the cost
            return self.args[node]
        if op == _LOOP:
            return (self.loops[node],)
        return ()

    def cone(self, roots: Iterable[int]) -> set[int]:
        """Every node the ``roots`` depend on (the roots included)."""
        seen: set[int] = set()
        stack = list(roots)
        while stack:
            node = stack.pop()
            if node not in seen:
                seen.add(node)
                stack.extend(self.children(node))
        return seen

    def describe(self, node: int, depth: int = 4) -> str:
        """A readable s-expression of ``node`` (cut off below ``depth`` levels)."""
        op = self.ops[node]
        if op == Op.BASE:
            k = self.args[node][0]
            return f"(BASE {k} {self.base[k]})"
        if op == Op.INPUT:
            j = self.args[node][0]
            r, move = self.inputs[j]
            return f"(INPUT {j} {self.roles[r]} {move})"
        if op in (Op.FALSE, Op.TRUE):
            return op.name
        if op == Op.LOOP:
            return f"(LOOP {node})"
        if depth <= 0:
            return f"({op.name} ...)"
        inner = " ".join(self.describe(child, depth - 1) for child in self.args[node])
        return f"({op.name} {inner})"


class _Builder:
    """Hash-consing node factory with constant folding and local simplification."""

    def __init__(self) -> None:
        self.ops: list[Op] = [Op.FALSE, Op.TRUE]
        self.args: list[tuple[int, ...]] = [(), ()]
        self.table: dict[tuple[Op, tuple[int, ...]], int] = {}
        self.loops: dict[int, int] = {}

    def node(self, op: Op, args: tuple[int, ...]) -> int:
        key = (op, args)
        found = self.table.get(key)
        if found is None:
            found = len(self.ops)
            self.ops.append(op)
            self.args.append(args)
            self.table[key] = found
        return found

    def loop(self) -> int:
        return self.node(Op.LOOP, (len(self.loops) + len(self.ops),))

    def not_(self, child: int) -> int:
        if child == FALSE_NODE:
            return TRUE_NODE
        if child == TRUE_NODE:
            return FALSE_NODE
        if self.ops[child] == Op.NOT:
            return self.args[child][0]
        return self.node(Op.NOT, (child,))

    def _contradicts_or_absorbs(self, items: set[int], inner: Op) -> bool:
        """In one pass over the children ``items`` of an AND (``inner`` OR) or an OR
        (``inner`` AND): True if one is the negation of another; else drop those absorbed,
        an ``inner`` node sharing a child with ``items`` (AND(a, OR(a, b)) = a, and
        dually)."""
        ops, args = self.ops, self.args
        absorbed = []
        for item in items:
            op = ops[item]
            if op is Op.NOT:
                if args[item][0] in items:
                    return True
            elif op is inner and not items.isdisjoint(args[item]):
                absorbed.append(item)
        items.difference_update(absorbed)
        return False

    def and_(self, children: Iterable[int]) -> int:
        items = set(children)
        items.discard(TRUE_NODE)
        if FALSE_NODE in items:
            return FALSE_NODE
        if self._contradicts_or_absorbs(items, Op.OR):  # AND(a, NOT a) = FALSE
            return FALSE_NODE
        if not items:
            return TRUE_NODE
        if len(items) == 1:
            return next(iter(items))
        return self.node(Op.AND, tuple(sorted(items)))

    def or_(self, children: Iterable[int]) -> int:
        items = set(children)
        items.discard(FALSE_NODE)
        if TRUE_NODE in items:
            return TRUE_NODE
        if self._contradicts_or_absorbs(items, Op.AND):  # OR(a, NOT a) = TRUE
            return TRUE_NODE
        if not items:
            return FALSE_NODE
        if len(items) == 1:
            return next(iter(items))
        # Factoring: OR(AND(a, b), AND(a, c), d) = OR(AND(a, OR(b, c)), d), greedily
        # by the literal shared by the most conjunctions.
        conjunctions = [item for item in items if self.ops[item] == Op.AND]
        if len(conjunctions) >= 2:
            containing: dict[int, list[int]] = defaultdict(list)
            for item in conjunctions:
                for literal in self.args[item]:
                    containing[literal].append(item)
            candidates = sorted(
                (literal for literal, group in containing.items() if len(group) >= 2),
                key=lambda literal: (-len(containing[literal]), literal),
            )
            remaining = set(conjunctions)
            for literal in candidates:
                group = [item for item in containing[literal] if item in remaining]
                if len(group) < 2:
                    continue
                remaining.difference_update(group)
                items.difference_update(group)
                common = set.intersection(*(set(self.args[item]) for item in group))
                rest = self.or_(self.and_(set(self.args[item]) - common) for item in group)
                items.add(self.and_([*common, rest]))
            if len(items) == 1:
                return next(iter(items))
        return self.node(Op.OR, tuple(sorted(items)))


def build_propnet(program: GroundProgram, budget: Budget | None = None) -> Propnet:
    """Build the optimised propositional network of a ground program.

    Args:
        program: The output of :func:`~ggp.reasoning.ground.ground`.
        budget: The time and memory budget to observe (that of grounding, going on).

    Returns:
        The network, with only the nodes its outputs depend on.

    Raises:
        GDLSemanticError: Ground negation is not stratified (an atom depends on its own
            negation within one state).
        GroundingError: The budget ran out.
    """
    start = time.perf_counter()
    builder = _Builder()
    roles = program.roles
    base_index = {fluent: k for k, fluent in enumerate(program.base)}
    inputs: list[tuple[int, Term]] = []
    move_inputs: list[tuple[int, ...]] = []
    input_index: dict[Term, int] = {}
    for r, (role, moves) in enumerate(zip(roles, program.moves, strict=True)):
        indexes = []
        for move in moves:
            input_index[Func("does", (role, move))] = len(inputs)
            indexes.append(len(inputs))
            inputs.append((r, move))
        move_inputs.append(tuple(indexes))

    by_head: dict[Term, list[GroundRule]] = defaultdict(list)
    for rule in program.rules:
        by_head[rule.head].append(rule)
    static_atoms = program.static_atoms
    static_relations = program.static_relations
    atom_node: dict[Term, int] = {}

    leaf_node: dict[Term, int] = {}  # the nodes of static, true and does atoms, once found

    def value(atom: Term) -> int:
        node = atom_node.get(atom)
        if node is not None:
            return node
        node = leaf_node.get(atom)
        if node is not None:
            return node
        relation = relation_of(atom)
        if relation in static_relations:
            node = TRUE_NODE if atom in static_atoms else FALSE_NODE
        elif relation == TRUE:
            k = base_index.get(atom.args[0])
            node = FALSE_NODE if k is None else builder.node(Op.BASE, (k,))
        elif relation == DOES:
            j = input_index.get(atom)
            node = FALSE_NODE if j is None else builder.node(Op.INPUT, (j,))
        else:
            return FALSE_NODE  # a derived atom no rule defines
        leaf_node[atom] = node
        return node

    def definition(atom: Term) -> int:
        return builder.or_(
            builder.and_(
                [value(a) for a in rule.positive] + [builder.not_(value(a)) for a in rule.negative]
            )
            for rule in by_head[atom]
        )

    edges: dict[Term, list[Term]] = {
        head: [a for rule in rules for a in (*rule.positive, *rule.negative) if a in by_head]
        for head, rules in by_head.items()
    }
    for done, component in enumerate(strongly_connected_components(by_head, edges)):
        if budget is not None and done % 4096 == 0:
            budget.check("building the propositional network")
        if len(component) == 1 and component[0] not in edges[component[0]]:
            atom_node[component[0]] = definition(component[0])
            continue
        members = set(component)
        for atom in component:
            for rule in by_head[atom]:
                for negated in rule.negative:
                    if negated in members:
                        raise GDLSemanticError(
                            f"unstratified negation: {atom} depends on (not {negated}) "
                            "within one state",
                            program.path,
                        )
        loop_nodes = {atom: builder.loop() for atom in sorted(component, key=str)}
        atom_node.update(loop_nodes)
        for atom, node in loop_nodes.items():
            builder.loops[node] = definition(atom)

    def lookup(name: str, role: Const) -> list[tuple[Term, int]]:
        found: dict[Term, int] = {}
        for atom in (*program.static_atoms, *program.possible):
            if atom.name == name and len(atom.args) == 2 and atom.args[0] is role:
                node = value(atom)
                if node != FALSE_NODE:
                    found[atom.args[1]] = node
        return sorted(found.items(), key=lambda item: str(item[0]))

    legal = tuple(
        tuple(value(Func("legal", (role, move))) for move in moves)
        for role, moves in zip(roles, program.moves, strict=True)
    )
    goals: list[tuple[tuple[int, int], ...]] = []
    for role in roles:
        pairs = []
        for term, node in lookup("goal", role):
            if isinstance(term, Const) and term.name.isdigit():
                if int(term.name) > 0:  # 0 is the value when no goal holds
                    pairs.append((int(term.name), node))
            else:
                logger.warning("ignoring goal value %s of %s: not a natural number", term, role)
        goals.append(tuple(sorted(pairs, reverse=True)))
    percepts: list[tuple[Term, ...]] = []
    sees: list[tuple[int, ...]] = []
    for role in roles:
        pairs_s = lookup("sees", role)
        percepts.append(tuple(term for term, _ in pairs_s))
        sees.append(tuple(node for _, node in pairs_s))
    terminal = value(Const("terminal"))
    next_nodes = tuple(value(Func("next", (fluent,))) for fluent in program.base)
    init_nodes = tuple(value(Func("init", (fluent,))) for fluent in program.base)
    if budget is not None:
        budget.check("building the propositional network")

    net = _compact(
        builder,
        roles=roles,
        base=program.base,
        inputs=tuple(inputs),
        moves=program.moves,
        move_inputs=tuple(move_inputs),
        legal=legal,
        goals=tuple(goals),
        terminal=terminal,
        percepts=tuple(percepts),
        sees=tuple(sees),
        next_nodes=next_nodes,
        init_nodes=init_nodes,
        start=start,
    )
    logger.info(
        "propnet: %d base, %d inputs, %d nodes (%d gates, %d loops) in %.3f s",
        len(net.base),
        len(net.inputs),
        net.stats.nodes,
        net.stats.gates,
        net.stats.loops,
        net.stats.seconds,
    )
    return net


def _compact(
    builder: _Builder,
    *,
    roles: tuple[Const, ...],
    base: tuple[Term, ...],
    inputs: tuple[tuple[int, Term], ...],
    moves: tuple[tuple[Term, ...], ...],
    move_inputs: tuple[tuple[int, ...], ...],
    legal: tuple[tuple[int, ...], ...],
    goals: tuple[tuple[tuple[int, int], ...], ...],
    terminal: int,
    percepts: tuple[tuple[Term, ...], ...],
    sees: tuple[tuple[int, ...], ...],
    next_nodes: tuple[int, ...],
    init_nodes: tuple[int, ...],
    start: float,
) -> Propnet:
    """Keep the nodes the outputs depend on, renumbered in creation order."""
    ops, args, loops = builder.ops, builder.args, builder.loops
    roots: list[int] = [FALSE_NODE, TRUE_NODE, terminal, *next_nodes, *init_nodes]
    for group in (*legal, *sees):
        roots.extend(group)
    for pairs in goals:
        roots.extend(node for _, node in pairs)
    keep: set[int] = set()
    stack = list(roots)
    while stack:
        node = stack.pop()
        if node in keep:
            continue
        keep.add(node)
        op = ops[node]
        if op in (Op.AND, Op.OR, Op.NOT):
            stack.extend(args[node])
        elif op == Op.LOOP:
            stack.append(loops[node])
    order = sorted(keep)
    new = {old: i for i, old in enumerate(order)}
    new_ops = tuple(ops[old] for old in order)
    new_args: list[tuple[int, ...]] = []
    for old in order:
        op = ops[old]
        if op in (Op.AND, Op.OR, Op.NOT):
            new_args.append(tuple(new[a] for a in args[old]))
        elif op == Op.LOOP:
            new_args.append((new[old],))
        else:
            new_args.append(args[old])
    new_loops = {new[old]: new[definition] for old, definition in loops.items() if old in keep}

    def remap(nodes: Sequence[int]) -> tuple[int, ...]:
        return tuple(new[n] for n in nodes)

    gates = sum(1 for op in new_ops if op in (Op.AND, Op.OR, Op.NOT))
    stats = PropnetStats(
        nodes=len(order),
        gates=gates,
        loops=len(new_loops),
        seconds=time.perf_counter() - start,
    )
    return Propnet(
        roles=roles,
        base=base,
        inputs=inputs,
        moves=moves,
        move_inputs=move_inputs,
        legal=tuple(remap(group) for group in legal),
        goals=tuple(tuple((v, new[n]) for v, n in pairs) for pairs in goals),
        terminal=new[terminal],
        percepts=percepts,
        sees=tuple(remap(group) for group in sees),
        next=remap(next_nodes),
        init=remap(init_nodes),
        ops=new_ops,
        args=tuple(new_args),
        loops=MappingProxyType(new_loops),
        stats=stats,
    )
