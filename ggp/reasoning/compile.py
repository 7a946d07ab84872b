"""Compile a :class:`~ggp.reasoning.propnet.Propnet` to Python functions.

Each query becomes its own generated function that computes only the query's cone of
influence, as straight-line code (``compile()`` + ``exec`` of generated source). Two
flavours are generated from the same net:

**Single state** (:func:`compile_single`). The argument ``x`` is one int: bit ``k`` is
base proposition ``k`` and bit ``len(base) + j`` is input proposition ``j``. A gate over
leaves becomes one masked comparison: ``AND(b3, b5, NOT b7)`` is ``x & 168 == 40`` and
``OR(b3, b5)`` is ``x & 40 != 0``; other gates combine with ``and`` / ``or`` / ``not``
(short-circuiting). Values are 0/1 ints or bools. A legal-move query returns a bit mask
over the role's moves, ``next`` returns the successor state's int.

**Batched** (:func:`compile_batch`). Each proposition is a Python int holding one bit per
state: ``b[k]`` has bit ``i`` set when base proposition ``k`` is true in state ``i``,
``d[j]`` likewise for input ``j``, and ``m`` is the all-ones mask of the batch. Gates
become ``&``, ``|`` and ``m ^ x``; Python's arbitrary-precision ints make this a
bit-sliced (SIMD-within-a-register) evaluator of any width.

Positive cycles (LOOP nodes) are evaluated by iterating to the least fixpoint from
all-false inside the generated code.

The generated source is kept in :attr:`CompiledSingle.source` /
:attr:`CompiledBatch.source` and registered with :mod:`linecache`, so tracebacks and
debuggers show it.

Example:
    >>> from ggp.gdl.parser import parse_text
    >>> from ggp.reasoning.ground import ground
    >>> from ggp.reasoning.propnet import build_propnet
    >>> net = build_propnet(ground(parse_text('''
    ...     (role robot) (init (light off))
    ...     (legal robot flip)
    ...     (<= (next (light on)) (does robot flip) (true (light off)))
    ...     (<= (next (light off)) (does robot flip) (true (light on)))
    ...     (<= terminal (true (light on))) (goal robot 100)''')))
    >>> single = compile_single(net)
    >>> state = single.init
    >>> state, single.terminal(state), single.legal[0](state)
    (1, 0, 1)
    >>> flip = 1 << (len(net.base) + net.move_inputs[0][0])
    >>> single.next(state | flip)
    2
    >>> batch = compile_batch(net)
    >>> batch.next([0b01, 0b10], [0b11], 0b11)  # two states, both flip
    [2, 1]
"""

from __future__ import annotations

import itertools
import linecache
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ggp.gdl.graph import strongly_connected_components
from ggp.reasoning.propnet import FALSE_NODE, TRUE_NODE, Op, Propnet

__all__ = [
    "CompiledSingle",
    "CompiledBatch",
    "compile_single",
    "compile_batch",
    "generate_single_source",
    "generate_batch_source",
]

#: Inlined sub-expressions deeper than this are assigned to a local variable instead.
MAX_INLINE_DEPTH = 24

_counter = itertools.count()

SingleFn = Callable[[int], int]
CheckFn = Callable[[int], int]
GoalsFn = Callable[[int], tuple[int, ...]]
BatchLegalFn = Callable[[Sequence[int], int], tuple[int, ...]]
BatchNextFn = Callable[[Sequence[int], Sequence[int], int], list[int]]
BatchTerminalFn = Callable[[Sequence[int], int], int]
BatchGoalsFn = Callable[[Sequence[int], int], tuple[tuple[int, ...], ...]]
BatchSeesFn = Callable[[Sequence[int], Sequence[int], int], tuple[int, ...]]


@dataclass(frozen=True)
class CompiledSingle:
    """Generated single-state functions of one propnet.

    ``x`` below is a state's int, or'ed with ``1 << (len(base) + j)`` for each input
    proposition ``j`` of the joint move where inputs matter (``next``, ``sees``).

    Attributes:
        legal: For each role, ``x -> mask`` with bit ``i`` set when the role's move ``i``
            (in :attr:`Propnet.moves` order) is legal.
        legal_check: For each role and move, ``x -> 0/1``: whether that move is legal.
        next: ``x -> successor state``.
        terminal: ``x -> 0/1`` (or a bool).
        goals: ``x -> tuple`` with each role's goal value (largest true one, else 0).
        sees: For each role, ``x -> mask`` over the role's percepts
            (:attr:`Propnet.percepts` order).
        init: The initial state's int.
        source: The generated Python source.
    """

    legal: tuple[SingleFn, ...]
    legal_check: tuple[tuple[CheckFn, ...], ...]
    next: SingleFn
    terminal: CheckFn
    goals: GoalsFn
    sees: tuple[SingleFn, ...]
    init: int
    source: str = field(repr=False)


@dataclass(frozen=True)
class CompiledBatch:
    """Generated bit-sliced functions of one propnet, over ``N`` states at once.

    ``b`` is a sequence of ``len(base)`` ints (bit ``i`` of ``b[k]``: base proposition
    ``k`` in state ``i``), ``d`` a sequence of ``len(inputs)`` ints likewise, ``m`` the
    mask ``(1 << N) - 1``. Every result int is a subset of ``m``.

    Attributes:
        legal: For each role, ``(b, m) -> tuple`` of one int per move of the role.
        next: ``(b, d, m) -> list`` of ``len(base)`` ints: the successor states.
        terminal: ``(b, m) -> int``: the terminal states.
        goals: ``(b, m) -> tuple`` per role of one int per ``(value, node)`` pair of
            :attr:`Propnet.goals`.
        sees: For each role, ``(b, d, m) -> tuple`` of one int per percept.
        source: The generated Python source.
    """

    legal: tuple[BatchLegalFn, ...]
    next: BatchNextFn
    terminal: BatchTerminalFn
    goals: BatchGoalsFn
    sees: tuple[BatchSeesFn, ...]
    source: str = field(repr=False)


class _Writer:
    """Generates the statements and expressions of one function over a cone."""

    def __init__(self, net: Propnet, roots: Sequence[int], batch: bool) -> None:
        self.net = net
        self.batch = batch
        self.n_base = len(net.base)
        ops, args = net.ops, net.args
        cone = net.cone(roots)
        uses: Counter[int] = Counter()
        for node in cone:
            for child in net.children(node):
                uses[child] += 1
        for root in roots:
            uses[root] += 1
        edges = {node: net.children(node) for node in cone}
        self.components = strongly_connected_components(sorted(cone), edges)
        self.cyclic: set[int] = set()
        for component in self.components:
            if len(component) > 1 or component[0] in edges[component[0]]:
                self.cyclic.update(component)
        named: set[int] = set()
        for node in cone:
            op = ops[node]
            if op in (Op.TRUE, Op.FALSE):
                continue
            if batch:
                if op in (Op.BASE, Op.INPUT) or uses[node] > 1 or node in self.cyclic:
                    named.add(node)
            elif (
                op == Op.LOOP
                or node in self.cyclic
                or (uses[node] > 1 and not self._is_leafish(node))
            ):
                named.add(node)
        # Bound the nesting of inlined expressions.
        height: dict[int, int] = {}
        for node in sorted(cone):
            if node in named or ops[node] not in (Op.AND, Op.OR, Op.NOT):
                height[node] = 0
                continue
            h = 1 + max((height.get(c, 0) for c in args[node] if c not in named), default=0)
            if h > MAX_INLINE_DEPTH:
                named.add(node)
                h = 0
            height[node] = h
        self.named = named

    # -- naming -------------------------------------------------------------------------

    def _is_leafish(self, node: int) -> bool:
        op = self.net.ops[node]
        if op in (Op.BASE, Op.INPUT, Op.TRUE, Op.FALSE):
            return True
        return op == Op.NOT and self.net.ops[self.net.args[node][0]] in (Op.BASE, Op.INPUT)

    def name(self, node: int) -> str:
        op = self.net.ops[node]
        if op == Op.BASE:
            return f"b{self.net.args[node][0]}"
        if op == Op.INPUT:
            return f"d{self.net.args[node][0]}"
        if op == Op.LOOP:
            return f"p{node}"
        return f"v{node}"

    def ref(self, node: int) -> str:
        """The expression that reads ``node``: its name, or its inlined definition."""
        if node == FALSE_NODE:
            return "0"
        if node == TRUE_NODE:
            return "m" if self.batch else "1"
        if node in self.named:
            return self.name(node)
        return self.define(node)

    def _bit(self, node: int) -> int | None:
        """The bit position of a BASE or INPUT node in the single-state word."""
        op = self.net.ops[node]
        if op == Op.BASE:
            return self.net.args[node][0]
        if op == Op.INPUT:
            return self.n_base + self.net.args[node][0]
        return None

    # -- definitions ----------------------------------------------------------------------

    def define(self, node: int) -> str:
        """The expression computing ``node`` from its children."""
        net = self.net
        op = net.ops[node]
        if node == FALSE_NODE:
            return "0"
        if node == TRUE_NODE:
            return "m" if self.batch else "1"
        if self.batch:
            return self._define_batch(node, op)
        return self._define_single(node, op)

    def _define_batch(self, node: int, op: Op) -> str:
        args = self.net.args[node]
        if op == Op.BASE:
            return f"b[{args[0]}]"
        if op == Op.INPUT:
            return f"d[{args[0]}]"
        if op == Op.NOT:
            return f"(m ^ {self.ref(args[0])})"
        if op == Op.AND:
            return _balanced([self.ref(c) for c in args], " & ")
        if op == Op.OR:
            return _balanced([self.ref(c) for c in args], " | ")
        raise AssertionError(f"cannot define {op.name} node {node}")

    def _define_single(self, node: int, op: Op) -> str:
        net = self.net
        args = net.args[node]
        bit = self._bit(node)
        if bit is not None:
            return f"(x >> {bit} & 1)" if bit else "(x & 1)"
        if op == Op.NOT:
            child_bit = self._bit(args[0])
            if child_bit is not None:
                return f"(x & {_literal(1 << child_bit)} == 0)"
            return f"(not {self.ref(args[0])})"
        if op not in (Op.AND, Op.OR):
            raise AssertionError(f"cannot define {op.name} node {node}")
        positive = 0
        negative = 0
        count = 0
        others: list[str] = []
        for child in args:
            child_bit = self._bit(child)
            if child_bit is not None:
                positive |= 1 << child_bit
                count += 1
                continue
            if net.ops[child] == Op.NOT:
                grand_bit = self._bit(net.args[child][0])
                if grand_bit is not None:
                    negative |= 1 << grand_bit
                    count += 1
                    continue
            others.append(self.ref(child))
        parts: list[str] = []
        mask = positive | negative
        if count == 1 and positive:
            bit = positive.bit_length() - 1
            parts.append(f"(x >> {bit} & 1)" if bit else "(x & 1)")
        elif count == 1:
            parts.append(f"(x & {_literal(negative)} == 0)")
        elif count and op == Op.AND:
            parts.append(f"(x & {_literal(mask)} == {_literal(positive)})")
        elif count:
            parts.append(f"(x & {_literal(mask)} != {_literal(negative)})")
        parts.extend(others)
        if len(parts) == 1:
            return parts[0]
        joiner = " and " if op == Op.AND else " or "
        return "(" + joiner.join(parts) + ")"

    # -- statements -----------------------------------------------------------------------

    def statements(self) -> list[str]:
        """Assignments of the named nodes, in dependency order, with fixpoint loops."""
        lines: list[str] = []
        for component in self.components:
            if not (set(component) & self.cyclic):
                node = component[0]
                if node in self.named:
                    lines.append(f"{self.name(node)} = {self.define(node)}")
                continue
            loops = sorted(n for n in component if self.net.ops[n] == Op.LOOP)
            inner = sorted(n for n in component if self.net.ops[n] != Op.LOOP)
            lines.append(" = ".join([self.name(n) for n in loops] + ["0"]))
            lines.append("while True:")
            for n in inner:
                lines.append(f"    {self.name(n)} = {self.define(n)}")
            for n in loops:
                lines.append(f"    t{n} = {self.ref(self.net.loops[n])}")
            same = " and ".join(f"t{n} == {self.name(n)}" for n in loops)
            lines.append(f"    if {same}:")
            lines.append("        break")
            for n in loops:
                lines.append(f"    {self.name(n)} = t{n}")
        return lines


def _balanced(parts: Sequence[str], operator: str) -> str:
    """``parts`` joined by a binary ``operator``, grouped so the nesting stays shallow.

    CPython's compiler recurses once per operand of a chain such as ``a | b | c``;
    thousands of operands would exceed its recursion limit.
    """
    if len(parts) == 1:
        return parts[0]
    while len(parts) > _CHUNK:
        parts = [
            "(" + operator.join(parts[i : i + _CHUNK]) + ")" for i in range(0, len(parts), _CHUNK)
        ]
    return "(" + operator.join(parts) + ")"


_CHUNK = 32


def _literal(value: int) -> str:
    """An int as Python source: hexadecimal when large (a decimal literal past 4,300
    digits, a mask over bit 14,000, is refused by Python's int conversion limit)."""
    return str(value) if value < 1 << 64 else hex(value)


def _function(
    name: str, params: str, writer: _Writer, result: str, extra: Sequence[str] = ()
) -> str:
    body = [*writer.statements(), *extra, f"return {result}"]
    return f"def {name}({params}):\n" + "".join(f"    {line}\n" for line in body) + "\n"


def _mask_statements(writer: _Writer, nodes: Sequence[int], target: str) -> list[str]:
    """Statements setting ``target`` to ``e0 | e1 << 1 | ...`` over 0/1 valued nodes."""
    parts: list[str] = []
    constant = 0
    for i, node in enumerate(nodes):
        if node == FALSE_NODE:
            continue
        if node == TRUE_NODE:
            constant |= 1 << i
            continue
        expression = writer.ref(node)
        parts.append(f"{expression} << {i}" if i else expression)
    lines = [f"{target} = {_literal(constant)}"] if constant or not parts else []
    for start in range(0, len(parts), _CHUNK):
        chunk = " | ".join(parts[start : start + _CHUNK])
        lines.append(f"{target} |= {chunk}" if lines else f"{target} = {chunk}")
    return lines


def _goals_statements(writer: _Writer, net: Propnet) -> list[str]:
    """Statements setting ``g0, g1, ...`` to each role's goal value."""
    lines: list[str] = []
    for r, pairs in enumerate(net.goals):
        if len(pairs) <= 8:
            expression = "0"
            for value, node in reversed(pairs):  # smallest first, so the largest wins
                if node == TRUE_NODE:
                    expression = str(value)
                else:
                    expression = f"({value} if {writer.ref(node)} else {expression})"
            lines.append(f"g{r} = {expression}")
            continue
        lines.append(f"g{r} = 0")
        for value, node in reversed(pairs):  # later, larger values overwrite
            lines.append(f"if {writer.ref(node)}:")
            lines.append(f"    g{r} = {value}")
    return lines


def generate_single_source(net: Propnet) -> str:
    """The Python source of the single-state functions (see :class:`CompiledSingle`)."""
    chunks: list[str] = []

    def mask_function(name: str, nodes: Sequence[int]) -> None:
        writer = _Writer(net, nodes, batch=False)
        lines = _mask_statements(writer, nodes, "result")
        if len(lines) == 1:  # a single expression: return it directly
            chunks.append(_function(name, "x", writer, lines[0].split(" = ", 1)[1]))
        else:
            chunks.append(_function(name, "x", writer, "result", lines))

    for r, nodes in enumerate(net.legal):
        mask_function(f"legal_{r}", nodes)
        for i, node in enumerate(nodes):
            writer = _Writer(net, [node], batch=False)
            chunks.append(_function(f"check_{r}_{i}", "x", writer, writer.ref(node)))
    mask_function("next_state", net.next)
    writer = _Writer(net, [net.terminal], batch=False)
    chunks.append(_function("terminal", "x", writer, writer.ref(net.terminal)))
    goal_nodes = [node for pairs in net.goals for _, node in pairs]
    writer = _Writer(net, goal_nodes, batch=False)
    result = "(" + "".join(f"g{r}, " for r in range(len(net.goals))) + ")"
    chunks.append(_function("goals", "x", writer, result, _goals_statements(writer, net)))
    for r, nodes in enumerate(net.sees):
        mask_function(f"sees_{r}", nodes)
    mask_function("initial", net.init)
    return "".join(chunks)


def generate_batch_source(net: Propnet) -> str:
    """The Python source of the batched functions (see :class:`CompiledBatch`)."""

    def tuple_of(writer: _Writer, nodes: Sequence[int]) -> str:
        return "(" + "".join(f"{writer.ref(n)}, " for n in nodes) + ")"

    chunks: list[str] = []
    for r, nodes in enumerate(net.legal):
        writer = _Writer(net, nodes, batch=True)
        chunks.append(_function(f"legal_{r}", "b, m", writer, tuple_of(writer, nodes)))
    writer = _Writer(net, net.next, batch=True)
    result = "[" + ", ".join(writer.ref(n) for n in net.next) + "]"
    chunks.append(_function("next_state", "b, d, m", writer, result))
    writer = _Writer(net, [net.terminal], batch=True)
    chunks.append(_function("terminal", "b, m", writer, writer.ref(net.terminal)))
    goal_nodes = [node for pairs in net.goals for _, node in pairs]
    writer = _Writer(net, goal_nodes, batch=True)
    result = "(" + "".join(tuple_of(writer, [n for _, n in pairs]) + ", " for pairs in net.goals)
    chunks.append(_function("goals", "b, m", writer, result + ")"))
    for r, nodes in enumerate(net.sees):
        writer = _Writer(net, nodes, batch=True)
        chunks.append(_function(f"sees_{r}", "b, d, m", writer, tuple_of(writer, nodes)))
    return "".join(chunks)


def _load(source: str, label: str) -> dict[str, object]:
    filename = f"<propnet {label} #{next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace: dict[str, object] = {}
    exec(compile(source, filename, "exec"), namespace)
    return namespace


def compile_single(net: Propnet, label: str = "single") -> CompiledSingle:
    """Generate, compile and load the single-state functions of ``net``."""
    source = generate_single_source(net)
    ns = _load(source, label)
    roles = range(len(net.roles))
    initial: SingleFn = ns["initial"]  # type: ignore[assignment]
    return CompiledSingle(
        legal=tuple(ns[f"legal_{r}"] for r in roles),  # type: ignore[misc]
        legal_check=tuple(
            tuple(ns[f"check_{r}_{i}"] for i in range(len(net.legal[r])))  # type: ignore[misc]
            for r in roles
        ),
        next=ns["next_state"],  # type: ignore[arg-type]
        terminal=ns["terminal"],  # type: ignore[arg-type]
        goals=ns["goals"],  # type: ignore[arg-type]
        sees=tuple(ns[f"sees_{r}"] for r in roles),  # type: ignore[misc]
        init=int(initial(0)),
        source=source,
    )


def compile_batch(net: Propnet, label: str = "batch") -> CompiledBatch:
    """Generate, compile and load the batched functions of ``net``."""
    source = generate_batch_source(net)
    ns = _load(source, label)
    roles = range(len(net.roles))
    return CompiledBatch(
        legal=tuple(ns[f"legal_{r}"] for r in roles),  # type: ignore[misc]
        next=ns["next_state"],  # type: ignore[arg-type]
        terminal=ns["terminal"],  # type: ignore[arg-type]
        goals=ns["goals"],  # type: ignore[arg-type]
        sees=tuple(ns[f"sees_{r}"] for r in roles),  # type: ignore[misc]
        source=source,
    )
