"""A goal-directed reasoner: the un-ground rules evaluated top-down, answers tabled per state.

:class:`TopDownStateMachine` answers the same questions as the reference
:class:`~ggp.reasoning.prover.ProverStateMachine`, from the same un-ground rules, but
works backwards from each query (``legal`` of one role, ``next``, ``terminal``, ``goal``,
``sees``) as a Prolog-based player does, evaluating only the instances of each relation
that the query asks for. Where the bottom-up prover must derive every fact of a state
(3.7 million for a chess state: ``threatened_with_capture`` has seven arguments), this
evaluates the few thousand calls that the legal moves of the position need. It is the
reasoner that ``Game(reasoner="auto")`` falls back to when a game cannot be grounded.

How it works:

- The *static* relations (those depending on neither ``true`` nor ``does``) are
  evaluated bottom-up once, by the prover's machinery, and indexed for every lookup
  the rules make.
- Every other relation is compiled, for each *mode* in which the rules call it, into a
  Python function of the call's ground values that returns the relation's answers (a
  dict of argument tuples, used as an ordered set). A mode says, per argument, whether
  it is ground, free, or a compound with ground parts (``(legal2 ?p (move ?piece ?u ?v
  ?x ?y))`` with the piece and its square known), so a call is as specific as Prolog's.
  Modes are found by following the calls from the queries' modes.
- A clause's body is ordered for its mode by
  :func:`~ggp.reasoning.join_compiler.join_order`, given the head variables that the
  call binds: lookups that only test run first, a call keeps its place in the source
  order (as in Prolog) behind the literals written before it that share a variable
  with it. Each literal is a loop over an index lookup (a static relation, the state's
  ``true`` facts grouped by function symbol, the joint move's ``does``) or over a
  call's answers; a test (every argument ground) stops at its first answer, and a
  ground term matched once is reused, not built again (the frame axioms' ``(cell ?x ?y
  ?p)``).
- A call is first checked against its relation's static relaxation
  (:mod:`ggp.reasoning.relax`: what the rules derive with every condition on the state
  assumed to hold, evaluated once at load within a budget): a call that no state can
  answer fails with one set lookup. In chess a bishop and a king off each other's
  diagonals no longer walk the four diagonals through the state (twice the speed).
- Answers are tabled: each call (mode and ground values) is evaluated once per state
  (``does``-dependent relations once per state and joint move). The tables of the
  latest ``table_states`` states are kept; the legal moves, terminal flag and goals of
  ``cache_size`` states.
- Recursion: a recursive relation whose calls walk along an acyclic static relation
  (``(next_file ?u ?u2)`` before ``(clear_row ?u2 ...)``) is tabled like any other. In
  any other, a call that meets itself (the same mode and values still being evaluated,
  as left recursion does) reads the answers found so far, and as they grow; the
  earliest such call evaluates its cycle again until nothing new is found (a fixpoint
  over the calls of the cycle, which are tabled only once it is complete). Negation is
  stratified (the prover's check), so a negated call is always complete.

The answers are exactly the prover's, which tests/reasoning/test_topdown.py checks state
by state on every game of the corpus, the scale games and ours.

Example:
    >>> from ggp.gdl.parser import parse_text
    >>> machine = TopDownStateMachine(parse_text('''
    ...     (role you) (init (at 1)) (succ 1 2) (succ 2 3)
    ...     (<= (path ?x ?y) (succ ?x ?y))
    ...     (<= (path ?x ?z) (path ?x ?y) (succ ?y ?z))
    ...     (<= (legal you (go ?y)) (true (at ?x)) (path ?x ?y))
    ...     (<= (next (at ?y)) (does you (go ?y)))
    ...     (<= terminal (true (at 3)))
    ...     (<= (goal you 100) (true (at 3)))
    ... '''))
    >>> state, you = machine.initial_state(), machine.roles[0]
    >>> machine.legal_moves(state, you)
    (Func('go', (Const('2'),)), Func('go', (Const('3'),)))
    >>> machine.is_terminal(machine.next_state(state, machine.legal_moves(state, you)[1:]))
    True
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Hashable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import cast

from ggp.errors import GameError
from ggp.gdl.parser import parse_file
from ggp.gdl.terms import Const, Description, Func, Term, Var
from ggp.reasoning.clauses import ANY, DISTINCT, EQUAL, NEG, POS, BodyLiteral, Clause, variables_of
from ggp.reasoning.fact_tables import Fact, IndexSpec, RelKey, Table
from ggp.reasoning.join_compiler import JoinCompiler, join_order
from ggp.reasoning.prover import (
    _DOES,
    _GOAL,
    _LEGAL,
    _MOVE,
    _NEXT,
    _SEES,
    _STATIC,
    _TERMINAL,
    _TRUE,
    ProverStateMachine,
)
from ggp.reasoning.relax import Relaxation, projection
from ggp.reasoning.state_machine import State

__all__ = ["TopDownStateMachine"]

ModeArg = bool | tuple[str, "Mode"]
#: A call mode: for each argument, True (ground), False (free) or, for a compound term
#: with ground parts, its function name and the mode of its arguments.
Mode = tuple[ModeArg, ...]
#: Answers of one call: the argument tuples, in a dict used as an ordered set.
Answers = dict[Fact, None]

#: Calls that miss the tables between two looks at the deadline.
_TICKS = 256
#: Python's recursion limit while a query runs: each nested call of the rules is one or
#: two Python frames (a recursion along a 10,000-link chain in the state needs 20,000),
#: which in CPython 3.11 take no C stack.
_RECURSION_LIMIT = 100_000
#: The answers of a test (a call with every argument ground) that holds, as tabled.
_YES: Answers = {(): None}
#: Join bindings within which each component's static relaxation is evaluated (about
#: 0.1 s at most; chess's need 0.3 s in all).
RELAX_BINDINGS = 200_000
#: The generated line that becomes a call's relaxation filter, or nothing.
_FILTER = "#filter "


class _Recursion:
    """Bookkeeping of one query's recursive calls (see the module docstring)."""

    __slots__ = ("tentative", "depth", "low", "changes")

    def __init__(self) -> None:
        #: Calls of an unfinished cycle: (function, key) -> (its leader's depth,
        #: answers, the same as a list).
        self.tentative: dict[tuple[int, Hashable], tuple[int, Answers, list[Fact]]] = {}
        self.depth = 0
        self.low = _NEVER
        self.changes = 0


_NEVER = 1 << 62


class _Recent(dict[Hashable, object]):
    """A small cache that forgets its oldest entry when full (cheaper to keep than an
    LRU cache, for caches that are mostly written once and read soon after)."""

    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def put(self, key: Hashable, value: object) -> None:
        if len(self) >= self.size:
            del self[next(iter(self))]
        self[key] = value


class _Context:
    """The tables of one state (``does`` empty) or of one state and joint move.

    ``sm`` holds the state-layer functions' tables by function number (shared by the
    state's move contexts), ``mm`` the move-layer ones. ``T[n]`` is the state's
    ``true`` facts as the generated code's lookup ``n`` reads them (a list, a set or an
    index by some arguments), built on first use by :meth:`t` (None until then).
    """

    __slots__ = ("facts", "sm", "mm", "T", "does", "ticks", "rec", "check", "_lookups", "_groups")

    def __init__(
        self,
        facts: frozenset[Term],
        functions: int,
        lookups: Sequence[tuple[RelKey, Callable[..., object]]],
        check: Callable[[], None],
        rec: _Recursion,
        state: _Context | None = None,
        does: Sequence[Fact] = (),
    ) -> None:
        self.facts = facts
        self.check = check
        self.ticks = _TICKS
        self.rec = rec
        self.does = does
        self.mm: list[dict[Hashable, Answers]] = [{} for _ in range(functions)]
        if state is None:
            self.sm = self.mm
            self.T: list[object] = [None] * len(lookups)
            self._lookups = lookups
            self._groups: dict[RelKey, list[Fact]] | None = None
        else:
            self.sm = state.sm
            self.T = state.T
            self._lookups = state._lookups
            self._groups = state._groups

    def t(self, n: int) -> object:
        """Build ``T[n]`` from the facts of its function symbol (each fact read as its
        arguments followed by the term)."""
        groups = self._groups
        if groups is None:
            groups = self._groups = {}
            for fact in self.facts:
                groups.setdefault((fact.name, len(fact.args)), []).append((*fact.args, fact))
        symbol, builder = self._lookups[n]
        index = self.T[n] = builder(groups.get(symbol, ()))
        return index

    def tick(self) -> None:
        self.ticks = _TICKS
        self.check()


@dataclass(slots=True)
class _Lookups:
    """The ``true`` lookups of the generated code: (function symbol, how) -> number,
    where how is ``"set"`` (the argument tuples, or the argument of a one-argument
    symbol, as a set) or an index spec (() for the list of all). Facts are read as
    their arguments followed by the term itself (so a rule can reuse it whole)."""

    keys: list[tuple[RelKey, str | IndexSpec]] = field(default_factory=list)
    numbers: dict[tuple[RelKey, str | IndexSpec], int] = field(default_factory=dict)

    def number(self, symbol: RelKey, how: str | IndexSpec) -> int:
        n = self.numbers.get((symbol, how))
        if n is None:
            n = self.numbers[(symbol, how)] = len(self.keys)
            self.keys.append((symbol, how))
        return n

    def source(self) -> list[str]:
        """The builder functions ``t0``, ``t1``, ...: facts of the symbol -> lookup."""
        lines: list[str] = []
        for n, ((_, arity), how) in enumerate(self.keys):
            lines.append(f"def t{n}(facts):")
            if isinstance(how, str):  # "set"
                lines.append(
                    "    return {f[0] for f in facts}"
                    if arity == 1
                    else "    return {f[-1].args for f in facts}"
                )
            elif not how:
                lines.append("    return facts")
            else:
                parts = [
                    f"(f[{p}].name, len(f[{p}].args))" if by_functor else f"f[{p}]"
                    for p, by_functor in how
                ]
                key = parts[0] if len(parts) == 1 else "(" + "".join(x + ", " for x in parts) + ")"
                lines.append("    index = {}")
                lines.append("    for f in facts:")
                lines.append(f"        k = {key}")
                lines.append("        rows = index.get(k)")
                lines.append("        if rows is None:")
                lines.append("            index[k] = [f]")
                lines.append("        else:")
                lines.append("            rows.append(f)")
                lines.append("    return index")
            lines.append("")
        return lines


def _show(mode: Mode) -> str:
    """A mode as text: b (ground), f (free) or name(...) (a compound, partly ground)."""
    return " ".join(
        "b" if m is True else "f" if m is False else f"{m[0]}({_show(m[1])})" for m in mode
    )


def _leaves(mode: Mode) -> int:
    """How many ground values a call in ``mode`` passes."""
    return sum(1 if m is True else 0 if m is False else _leaves(m[1]) for m in mode)


def _leaf_paths(mode: Mode, prefix: tuple[int, ...] = ()) -> list[tuple[int, ...]]:
    """Where each ground value a call in ``mode`` passes sits in an answer: an argument
    position, then a sub-term's index at each level (in the order of the values)."""
    paths: list[tuple[int, ...]] = []
    for i, m in enumerate(mode):
        if m is True:
            paths.append((*prefix, i))
        elif m is not False:
            paths.extend(_leaf_paths(m[1], (*prefix, i)))
    return paths


class _Compiler:
    """Generates the functions of the top-down program, one per relation and mode."""

    def __init__(
        self,
        clauses: dict[RelKey, list[Clause]],
        layer: dict[RelKey, int],
        recursive: Callable[[RelKey], bool],
        partners: Callable[[RelKey], int],
        static: dict[RelKey, Table],
        universe: tuple[Const, ...],
    ) -> None:
        self.clauses = clauses
        self.layer = layer
        self.recursive = recursive
        self.partners = partners
        self.static = static
        self.joins = JoinCompiler(universe, lambda facts: facts)
        self.joins.names.update({"E": (), "NEVER": _NEVER, "YES": _YES, "NO": {}})
        self.functions: dict[tuple[RelKey, Mode], int] = {}
        self.pending: list[str] = []
        self.todo: list[tuple[RelKey, Mode]] = []
        self.lookups = _Lookups()
        self.static_names: dict[tuple[RelKey, IndexSpec], str] = {}
        self.lines: list[str] = []
        #: Per clause: compound patterns used more than once, the locals holding the
        #: ground terms some matched, and what the last lookup matched.
        self.reused: set[Term] = set()
        self.live: set[Var] = set()
        self.terms: dict[Term, str] = {}
        self.found: dict[Term, str] = {}

    # ---- names -----------------------------------------------------------------------

    def function(self, key: RelKey, mode: Mode) -> int:
        """The number of ``key``'s function for ``mode``, queued for generation."""
        n = self.functions.get((key, mode))
        if n is None:
            n = self.functions[(key, mode)] = len(self.functions)
            self.todo.append((key, mode))
        return n

    def generate(self) -> str:
        """The program's source, each call unfiltered (see :meth:`filtered`)."""
        while self.todo:
            key, mode = self.todo.pop()
            self._function(key, mode, self.functions[(key, mode)])
        return "\n".join(self.lines)

    def filtered(self, source: str, relaxed: dict[RelKey, Relaxation]) -> str:
        """``source`` with a first test in each function whose relation has a
        relaxation that rejects some calls: a call whose ground values at the kept
        positions are not in the set ``X{n}`` (the relaxation's facts read as such
        keys, :func:`~ggp.reasoning.relax.projection`) fails at once."""
        modes = {n: key_mode for key_mode, n in self.functions.items()}
        lines: list[str] = []
        for line in source.split("\n"):
            if not line.startswith(_FILTER):
                lines.append(line)
                continue
            n = int(line[len(_FILTER) :])
            key, mode = modes[n]
            relaxation = relaxed.get(key)
            if relaxation is None:
                continue
            column = {p: i for i, p in enumerate(relaxation.positions)}
            leaves = [  # the call's values (a0, a1, ...) at the positions kept
                (f"a{i}", (column[path[0]], *path[1:]))
                for i, path in enumerate(_leaf_paths(mode))
                if path[0] in column
            ]
            keys = projection(relaxation.table, [path for _, path in leaves]) if leaves else None
            if keys is None:
                continue
            if len(leaves) == _leaves(mode):  # the key the function made: K, or a0 alone
                call_key = "a0" if len(leaves) == 1 else "K"
            elif len(leaves) == 1:
                call_key = leaves[0][0]
            else:
                call_key = "(" + "".join(name + ", " for name, _ in leaves) + ")"
            self.joins.names[f"X{n}"] = keys
            lines.append(f"    if {call_key} not in X{n}:")
            lines.append("        return NO")
        return "\n".join(lines)

    # ---- one function ------------------------------------------------------------------

    def _function(self, key: RelKey, mode: Mode, n: int) -> None:
        args = [f"a{i}" for i in range(_leaves(mode))]
        params = "".join(", " + a for a in args)
        table = "C.mm" if self.layer[key] == _MOVE else "C.sm"
        call_key = args[0] if len(args) == 1 else "(" + "".join(a + ", " for a in args) + ")"
        lines = self.lines
        test = all(m is True for m in mode)
        lines.append(f"def q{n}(C{params}):  # {key[0]}/{key[1]} {_show(mode)}")
        lines.append(f"    M = {table}[{n}]")
        if len(args) != 1:  # the key tuple, made once
            lines.append(f"    K = {call_key}")
            call_key = "K"
        if args:  # where the relaxation rejects the call (see filtered)
            lines.append(f"{_FILTER}{n}")
        lines.append(f"    R = M.get({call_key})")
        lines.append("    if R is not None:")
        lines.append("        return R")
        if self.recursive(key) and not self._descends(key, mode):
            # Recursive: the call is marked as being evaluated (in P{n}); meeting it
            # again is a cycle, which the slow paths (REC, FINISH) see to.
            self.joins.names[f"P{n}"] = {}
            self.pending.append(f"P{n}")
            rest = f"{n}, {call_key}, b{n}, ({''.join(a + ', ' for a in args)})"
            lines.append(f"    w = P{n}.get({call_key})")
            lines.append("    if w is not None:")
            lines.append("        if w[0] < RC.low:")
            lines.append("            RC.low = w[0]")
            lines.append("        return LIVE(w[2])  # what it has found, and finds meanwhile")
            self._tick()
            lines.append("    if RC.tentative:")
            lines.append(f"        return REC(C, M, P{n}, {rest})")
            lines.append("    out = {}")
            lines.append("    L = []")
            lines.append("    changes = RC.changes")
            lines.append("    d = RC.depth = RC.depth + 1")
            lines.append(f"    P{n}[{call_key}] = (d, out, L)")
            lines.append("    outer = RC.low")
            lines.append("    RC.low = NEVER")
            lines.append(f"    b{n}(C, out, L{params})")
            lines.append(f"    del P{n}[{call_key}]")
            lines.append("    RC.depth = d - 1")
            lines.append("    if RC.low == NEVER:")
            lines.append("        RC.low = outer")
            if test:  # the table keeps a shared answer, not the dict
                lines.append(f"        M[{call_key}] = YES if out else NO")
            else:
                lines.append(f"        M[{call_key}] = out")
            lines.append("        return out")
            lines.append(f"    return FINISH(C, M, P{n}, {rest}, out, L, d, outer, changes)")
            lines.append("")
            # The body adds each new answer to the dict and to the list L, which a call
            # that meets this one reads as it grows (so a linear recursion, as a path
            # along a row, is found in one pass, and the second finds nothing new).
            lines.append(f"def b{n}(C, out, L{params}):")
            body_start = len(lines)
            for clause in self.clauses.get(key, ()):
                self._clause(clause, mode, 1, "return", growing=True)
            if len(lines) == body_start:
                lines.append("    pass")
        elif test:  # a test: its one possible answer is YES
            self._tick()
            for clause in self.clauses.get(key, ()):
                self._clause(clause, mode, 1, f"M[{call_key}] = YES; return YES")
            lines.append(f"    M[{call_key}] = NO")
            lines.append("    return NO")
        else:
            self._tick()
            lines.append("    out = {}")
            for clause in self.clauses.get(key, ()):
                self._clause(clause, mode, 1, "")
            lines.append(f"    M[{call_key}] = out")
            lines.append("    return out")
        lines.append("")

    def _descends(self, key: RelKey, mode: Mode) -> bool:
        """Whether ``key``'s calls in ``mode`` can never meet themselves: ``key`` is
        alone in its recursive component, and there is a ground argument position
        that every recursive call (in the same mode) moves along an acyclic static
        relation, one of whose literals links the head's variable there to the call's
        before the call (as ``(next_file ?u ?u2)`` before ``(clear_row ?u2 ...)``).
        Such calls are tabled as if the relation were not recursive."""
        if self.partners(key) != 1:
            return False
        for p, m in enumerate(mode):
            if m is not True:
                continue
            edges: set[tuple[Term, Term]] = set()
            if all(
                self._moves_along(clause, key, mode, p, edges)
                for clause in self.clauses.get(key, ())
            ) and _acyclic(edges):
                return True
        return False

    def _moves_along(
        self, clause: Clause, key: RelKey, mode: Mode, p: int, edges: set[tuple[Term, Term]]
    ) -> bool:
        """Whether each recursive call of ``clause`` (for ``mode``) is linked at position
        ``p`` to the head by a static literal before it; the links' pairs go to
        ``edges``."""
        known: dict[Var, str] = {}
        params = iter([""] * _leaves(mode))
        binds: dict[Var, str] = {}
        if not all(
            [
                self._head(a, m, params, known, binds, [])
                for a, m in zip(clause.head_args, mode, strict=True)
            ]
        ):
            return True  # the clause never matches a call in this mode
        known.update(binds)
        x = clause.head_args[p]
        before: list[BodyLiteral] = []
        for step in join_order(clause, known.keys(), self._derived):
            if step.kind == POS and step.key == key:
                y = step.args[p]
                call = tuple(self._mode(arg, known) for arg in step.args)
                if call != mode or not isinstance(x, Var) or not isinstance(y, Var) or x is y:
                    return False
                linked = False
                for lit in before:
                    rows = (self.static.get(lit.key) or Table()).rows if lit.key else []
                    for i, a in enumerate(lit.args):
                        for j, b in enumerate(lit.args):
                            if a is x and b is y:
                                edges.update((row[i], row[j]) for row in rows)
                                linked = True
                if not linked:
                    return False
            if (
                step.kind == POS
                and step.key is not None
                and not self._derived(step.key)
                and step.key not in (_TRUE, _DOES)
            ):
                before.append(step)
            if step.kind in (POS, EQUAL, ANY):
                known.update(dict.fromkeys(step.variables(), ""))
        return True

    def _derived(self, key: RelKey) -> bool:
        """Whether a literal of ``key`` is a call (not a lookup)."""
        return key not in (_TRUE, _DOES) and self.layer.get(key, _STATIC) != _STATIC

    def _tick(self) -> None:
        self.lines.append("    C.ticks -= 1")
        self.lines.append("    if C.ticks < 0:")
        self.lines.append("        C.tick()")

    def _head(
        self,
        pattern: Term,
        mode: ModeArg,
        params: Iterator[str],
        bound: dict[Var, str],
        binds: dict[Var, str],
        conditions: list[str],
    ) -> bool:
        """Unify a head argument with what the call passes in ``mode`` (the next of
        ``params`` for each ground value); False when the clause cannot match."""
        if mode is False:
            return True
        if mode is True:
            self.joins.match(pattern, next(params), bound, binds, conditions)
            return True
        name, subs = mode
        matches = True
        if isinstance(pattern, Func) and pattern.name == name and len(pattern.args) == len(subs):
            for arg, sub in zip(pattern.args, subs, strict=True):
                matches = self._head(arg, sub, params, bound, binds, conditions) and matches
            return matches
        for _ in range(_leaves(subs)):  # a variable takes the term as the caller checks
            next(params)
        return isinstance(pattern, Var)

    def _clause(
        self, clause: Clause, mode: Mode, depth: int, done: str, *, growing: bool = False
    ) -> None:
        """Append the code of ``clause`` for ``mode`` (which adds its answers to
        ``out``); ``done`` is the code that ends the call once a test (every argument
        ground) has found its one possible answer."""
        lines = self.lines
        self.terms = {}
        self.reused = _repeated_compounds(clause)
        bound: dict[Var, str] = {}
        conditions: list[str] = []
        binds: dict[Var, str] = {}
        params = iter([f"a{i}" for i in range(_leaves(mode))])
        matches = True
        for pattern, m in zip(clause.head_args, mode, strict=True):
            matches = self._head(pattern, m, params, bound, binds, conditions) and matches
        if not matches:
            return
        pad = "    " * depth
        lines.append(f"{pad}# {clause.rule}".replace("\n", " "))
        if conditions:
            lines.append(f"{pad}if {' and '.join(conditions)}:")
            depth += 1
        steps = join_order(clause, bound.keys(), self._derived)
        # live[k]: the variables that the steps after step k, or the head, read.
        live: list[set[Var]] = [set() for _ in steps]
        needed = variables_of(clause.head_args)
        for k in range(len(steps) - 1, -1, -1):
            live[k] = set(needed)
            needed |= steps[k].variables()
        self.live = needed
        depth = self._assign(binds, bound, depth)
        for k, step in enumerate(steps):
            self.live = live[k]
            depth = self._step(step.kind, step.key, step.args, bound, depth)
        pad = "    " * depth
        ground = iter(range(_leaves(mode)))
        parts: list[str] = []
        for arg, m in zip(clause.head_args, mode, strict=True):
            if m is True:
                parts.append(f"a{next(ground)}")
            else:
                parts.append(self._build(arg, bound))
        head = "".join(part + ", " for part in parts)
        if growing:
            lines.append(f"{pad}k = ({head})")
            lines.append(f"{pad}if k not in out:")
            lines.append(f"{pad}    out[k] = None")
            lines.append(f"{pad}    L.append(k)")
            if all(m is True for m in mode):
                lines.append(f"{pad}{done}")
        elif not all(m is True for m in mode):
            lines.append(f"{pad}out[({head})] = None")
        else:  # a test that is not recursive: no answer dict
            lines.append(f"{pad}{done}")

    def _build(self, term: Term, bound: dict[Var, str]) -> str:
        """An expression for ``term`` (all its variables bound): a ground term met
        earlier in the clause when it is one, else built."""
        known = self.terms.get(term)
        if known is not None:
            return known
        if term.is_ground:
            return self.joins.ref(term)
        if isinstance(term, Var):
            return bound[term]
        args = "".join(self._build(arg, bound) + ", " for arg in term.args)
        return f"F({term.name!r}, ({args}))"

    def _remember(self, found: dict[Term, str], depth: int) -> None:
        """Keep the ground terms just matched by patterns the clause uses again."""
        pad = "    " * depth
        for pattern, expr in found.items():
            if pattern in self.reused and pattern not in self.terms:
                name = f"t{len(self.terms)}_{depth}"
                self.lines.append(f"{pad}{name} = {expr}")
                self.terms[pattern] = name

    def _assign(self, binds: dict[Var, str], bound: dict[Var, str], depth: int) -> int:
        """Local names for newly bound variables (so each is read once)."""
        pad = "    " * depth
        for var, expr in binds.items():
            if var not in self.live or (expr[:1] == "a" and expr[1:].isdigit()):
                bound[var] = expr  # read no more, or a call's argument: no copy
                continue
            name = f"v{len(bound)}_{depth}"
            self.lines.append(f"{pad}{name} = {expr}")
            bound[var] = name
        return depth

    def _ground(self, arg: Term, bound: dict[Var, str]) -> bool:
        return arg.is_ground or variables_of((arg,)) <= bound.keys()

    def _lookup(
        self, args: tuple[Term, ...], bound: dict[Var, str]
    ) -> tuple[IndexSpec, str | None, list[str], dict[Var, str]]:
        """Index spec, key expression, conditions on a candidate ``f`` and its binds."""
        return self.joins.index_lookup(args, bound, self._build)

    def _candidates(
        self, key: RelKey, args: tuple[Term, ...], bound: dict[Var, str]
    ) -> tuple[str, list[str], dict[Var, str]]:
        """An expression for the candidate facts of a positive or negative literal, the
        conditions on a candidate ``f`` and the variables it binds; ``self.found``
        gets the expression of the ground term each compound pattern matches."""
        joins = self.joins
        self.found = {
            arg: f"f[{position}]"
            for position, arg in enumerate(args)
            if isinstance(arg, Func) and not self._ground(arg, bound)
        }
        if key == _TRUE:
            (arg,) = args
            if isinstance(arg, Func) and not self._ground(arg, bound):
                self.found = {arg: f"f[{len(arg.args)}]"}
                symbol = (arg.name, len(arg.args))
                spec, key_expr, conditions, binds = self._lookup(arg.args, bound)
                n = self.lookups.number(symbol, spec)
                if key_expr is None:
                    return f"(C.T[{n}] or C.t({n}))", conditions, binds
                return f"(C.T[{n}] or C.t({n})).get({key_expr}, E)", conditions, binds
            if self._ground(arg, bound):
                return f"((),) if {self._build(arg, bound)} in C.facts else E", [], {}
            assert isinstance(arg, Var)
            return "C.facts", [], {arg: "f"}
        if key == _DOES:
            conditions, binds = [], {}
            for position, arg in enumerate(args):
                joins.match(arg, f"f[{position}]", bound, binds, conditions)
            return "C.does", conditions, binds
        if self.layer.get(key, _STATIC) == _STATIC:
            spec, key_expr, conditions, binds = self._lookup(args, bound)
            name = self._static_name(key, spec)
            if key_expr is None:
                return name, conditions, binds
            return f"{name}.get({key_expr}, E)", conditions, binds
        mode = tuple(self._mode(arg, bound) for arg in args)
        n = self.function(key, mode)
        values: list[str] = []
        for arg, m in zip(args, mode, strict=True):
            self._values(arg, m, bound, values)
        call = f"q{n}(C" + "".join(", " + v for v in values) + ")"
        conditions, binds = [], {}
        for position, (arg, m) in enumerate(zip(args, mode, strict=True)):
            if m is True:
                continue
            if m is not False and all(
                _fits(clause.head_args[position], m) for clause in self.clauses.get(key, ())
            ):  # every answer has the shape and the ground parts: read the rest only
                self._match_rest(arg, m, f"f[{position}]", bound, binds, conditions)
            else:  # (a head variable takes any term: see _head)
                joins.match(arg, f"f[{position}]", bound, binds, conditions)
        return call, conditions, binds

    def _match_rest(
        self,
        arg: Term,
        mode: ModeArg,
        subject: str,
        bound: dict[Var, str],
        binds: dict[Var, str],
        conditions: list[str],
    ) -> None:
        """Match the parts of ``arg`` that ``mode`` left free against ``subject``."""
        if mode is True:
            return
        if mode is False:
            self.joins.match(arg, subject, bound, binds, conditions)
            return
        for j, (sub, m) in enumerate(zip(arg.args, mode[1], strict=True)):
            self._match_rest(sub, m, f"{subject}.args[{j}]", bound, binds, conditions)

    def _mode(self, arg: Term, bound: dict[Var, str]) -> ModeArg:
        """How ``arg`` is passed: ground, free, or a compound with ground parts."""
        if self._ground(arg, bound):
            return True
        if isinstance(arg, Func):
            subs = tuple(self._mode(sub, bound) for sub in arg.args)
            if any(sub is not False for sub in subs):
                return (arg.name, subs)
        return False

    def _values(self, arg: Term, mode: ModeArg, bound: dict[Var, str], out: list[str]) -> None:
        """Expressions of the ground values a call passes for ``arg`` in ``mode``."""
        if mode is True:
            out.append(self._build(arg, bound))
        elif mode is not False:
            for sub, m in zip(arg.args, mode[1], strict=True):
                self._values(sub, m, bound, out)

    def _static_name(self, key: RelKey, spec: IndexSpec) -> str:
        """The generated module's name for a static relation's rows (no ``spec``) or
        its index by ``spec`` (built now: static tables are complete)."""
        name = self.static_names.get((key, spec))
        if name is None:
            name = self.static_names[(key, spec)] = f"S{len(self.static_names)}"
            table = self.static.get(key) or Table()
            self.joins.names[name] = table.index(spec) if spec else tuple(table.rows)
        return name

    def _holds(self, key: RelKey, args: tuple[Term, ...], bound: dict[Var, str]) -> str:
        """An expression, true when the ground atom ``key(args)`` holds."""
        values = [self._build(arg, bound) for arg in args]
        if key == _TRUE:
            (arg,) = args
            if isinstance(arg, Func):  # a tuple in the state's set: no term to build
                symbol = (arg.name, len(arg.args))
                parts = [self._build(sub, bound) for sub in arg.args]
                index_key = (
                    parts[0] if len(parts) == 1 else "(" + "".join(v + ", " for v in parts) + ")"
                )
                n = self.lookups.number(symbol, "set")
                return f"{index_key} in (C.T[{n}] or C.t({n}))"
            return f"{values[0]} in C.facts"
        if key == _DOES:
            return f"({values[0]}, {values[1]}) in C.does"
        if self.layer.get(key, _STATIC) == _STATIC:
            if not args:
                return self._static_name(key, ())
            spec = tuple((position, False) for position in range(len(args)))
            index_key = (
                values[0] if len(values) == 1 else "(" + "".join(v + ", " for v in values) + ")"
            )
            return f"{index_key} in {self._static_name(key, spec)}"
        n = self.function(key, (True,) * len(args))
        return f"q{n}(C" + "".join(", " + v for v in values) + ")"

    def _step(
        self,
        kind: int,
        key: RelKey | None,
        args: tuple[Term, ...],
        bound: dict[Var, str],
        depth: int,
    ) -> int:
        joins = self.joins
        lines = self.lines
        pad = "    " * depth
        if kind in (POS, NEG) and all(self._ground(arg, bound) for arg in args):
            assert key is not None
            test = self._holds(key, args, bound)
            lines.append(f"{pad}if {test}:" if kind == POS else f"{pad}if not ({test}):")
            return depth + 1
        if kind == POS:
            assert key is not None
            source, conditions, binds = self._candidates(key, args, bound)
            lines.append(f"{pad}for f in {source}:")
            depth += 1
            if conditions:
                lines.append(f"{pad}    if {' and '.join(conditions)}:")
                depth += 1
            depth = self._assign(binds, bound, depth)
            self._remember(self.found, depth)
            return depth
        if kind == NEG:
            assert key is not None
            source, conditions, _ = self._candidates(key, args, bound)
            if conditions:
                test = f"any(True for f in {source} if {' and '.join(conditions)})"
            else:
                test = source
            lines.append(f"{pad}if not ({test}):")
            return depth + 1
        if kind == DISTINCT:
            left, right = (self._build(arg, bound) for arg in args)
            lines.append(f"{pad}if {left} is not {right}:")
            return depth + 1
        if kind == EQUAL:
            known, pattern = args
            if not self._ground(known, bound):
                known, pattern = pattern, known
            checks: list[str] = []
            found: dict[Var, str] = {}
            lines.append(f"{pad}s = {self._build(known, bound)}")
            joins.match(pattern, "s", bound, found, checks)
            if checks:
                lines.append(f"{pad}if {' and '.join(checks)}:")
                depth += 1
            return self._assign(found, bound, depth)
        assert kind == ANY
        (var,) = args
        assert isinstance(var, Var)
        lines.append(f"{pad}for u in U:")
        return self._assign({var: "u"}, bound, depth + 1)


def _fits(head: Term, mode: ModeArg) -> bool:
    """Whether a head argument gives every answer the shape of a call's partly ground
    compound ``mode`` (so the call's answers need no check of that shape)."""
    if mode is True or mode is False:
        return True
    name, subs = mode
    return (
        isinstance(head, Func)
        and head.name == name
        and len(head.args) == len(subs)
        and all(_fits(arg, m) for arg, m in zip(head.args, subs, strict=True))
    )


def _repeated_compounds(clause: Clause) -> set[Term]:
    """The non-ground compound terms that occur more than once in ``clause`` (head
    arguments and body literals' arguments, at any depth)."""
    seen: set[Term] = set()
    repeated: set[Term] = set()
    stack = list(clause.head_args)
    for lit in clause.literals:
        stack.extend(lit.args)
    while stack:
        term = stack.pop()
        if isinstance(term, Func) and not term.is_ground:
            if term in seen:
                repeated.add(term)
            seen.add(term)
            stack.extend(term.args)
    return repeated


def _acyclic(edges: set[tuple[Term, Term]]) -> bool:
    """Whether the directed graph of ``edges`` has no cycle (Kahn's algorithm)."""
    successors: dict[Term, list[Term]] = {}
    indegree: dict[Term, int] = {}
    for a, b in edges:
        successors.setdefault(a, []).append(b)
        indegree[b] = indegree.get(b, 0) + 1
        indegree.setdefault(a, 0)
    ready = [node for node, degree in indegree.items() if degree == 0]
    seen = 0
    while ready:
        node = ready.pop()
        seen += 1
        for nxt in successors.get(node, ()):
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                ready.append(nxt)
    return seen == len(indegree)


class _Live:
    """The answers of a call still being evaluated, read as they grow: iterating goes on
    over answers added meanwhile."""

    __slots__ = ("rows",)

    def __init__(self, rows: list[Fact]) -> None:
        self.rows = rows

    def __iter__(self) -> Iterator[Fact]:
        rows = self.rows
        i = 0
        while i < len(rows):
            yield rows[i]
            i += 1

    def __bool__(self) -> bool:
        return bool(self.rows)


#: A call being evaluated: its depth, its answers, and the same in the order found.
_Pending = tuple[int, Answers, list[Fact]]


@dataclass(slots=True)
class _Call:
    """A call of a recursive relation on the slow path: what another pass needs."""

    table: dict[Hashable, Answers]
    pending: dict[Hashable, _Pending]
    function: int
    key: Hashable
    body: Callable[..., None]
    args: tuple[Term, ...]
    out: Answers
    rows: list[Fact]
    depth: int


def _recursive_call(
    C: _Context,
    table: dict[Hashable, Answers],
    pending: dict[Hashable, _Pending],
    function: int,
    key: Hashable,
    body: Callable[..., None],
    args: tuple[Term, ...],
) -> Answers:
    """A call of a recursive relation while some cycle is unfinished (the generated
    code's fast path does the rest; see the module docstring)."""
    rec = C.rec
    held = rec.tentative.pop((function, key), None)
    out, rows = ({}, []) if held is None else (held[1], held[2])
    call = _Call(table, pending, function, key, body, args, out, rows, rec.depth + 1)
    size, changes = len(out), rec.changes
    rec.depth = call.depth
    pending[key] = (call.depth, out, rows)
    outer = rec.low
    rec.low = _NEVER
    body(C, out, rows, *args)
    if rec.low == _NEVER and held is None:
        table[key] = out
        return _close(rec, call, outer, _NEVER)
    return _close(rec, call, outer, _cycle(C, call, rec.low, size, changes))


def _finish(
    C: _Context,
    table: dict[Hashable, Answers],
    pending: dict[Hashable, _Pending],
    function: int,
    key: Hashable,
    body: Callable[..., None],
    args: tuple[Term, ...],
    out: Answers,
    rows: list[Fact],
    depth: int,
    outer: int,
    changes: int,
) -> Answers:
    """The rest of a recursive call whose first pass (the generated code's fast path)
    met an unfinished call."""
    call = _Call(table, pending, function, key, body, args, out, rows, depth)
    pending[key] = (depth, out, rows)
    C.rec.depth = depth
    return _close(C.rec, call, outer, _cycle(C, call, C.rec.low, 0, changes))


def _close(rec: _Recursion, call: _Call, outer: int, low: int) -> Answers:
    """End ``call``: no longer pending; ``low`` (the depth it leaves unfinished) passes
    to its caller."""
    del call.pending[call.key]
    rec.depth = call.depth - 1
    rec.low = outer if outer < low else low
    return call.out


def _cycle(C: _Context, call: _Call, low: int, size: int, changes: int) -> int:
    """After a pass of a recursive call that met an unfinished call (the earliest at
    depth ``low``) or was part of a cycle before (``size`` answers then, and
    ``changes`` growths counted): keep its answers as tentative while an earlier call
    leads the cycle, else pass again while the cycle it leads grows. Returns the depth
    it leaves unfinished (:data:`_NEVER`: none)."""
    rec = C.rec
    out = call.out
    while True:
        grew = len(out) != size or rec.changes != changes
        if len(out) != size:
            rec.changes += 1
        if low < call.depth:  # inside an earlier call's cycle: complete only with it
            rec.tentative[(call.function, call.key)] = (low, out, call.rows)
            return low
        if low == call.depth and grew:  # it leads a cycle that grew: another pass
            size, changes = len(out), rec.changes
            rec.low = _NEVER
            call.body(C, out, call.rows, *call.args)
            low = rec.low
            continue
        # Complete. The other calls of its cycle are dropped, not tabled: the last pass
        # need not have evaluated them again; a later call does, from complete answers.
        call.table[call.key] = out
        for t in [t for t, (lead, _, _) in rec.tentative.items() if lead >= call.depth]:
            del rec.tentative[t]
        return _NEVER


_ROOTS: dict[RelKey, Mode] = {
    _LEGAL: (True, False),
    _GOAL: (False, False),
    _TERMINAL: (),
    _NEXT: (False,),
    _SEES: (True, False),
}


class TopDownStateMachine(ProverStateMachine):
    """A :class:`~ggp.reasoning.state_machine.StateMachine` evaluating the rules
    top-down with tabling (see the module docstring).

    Args:
        description: The parsed game.
        cache_size: How many states keep their answers (legal moves, terminal, goals).
        table_states: How many states (and as many (state, joint move) pairs) keep
            the tables of every call evaluated in them.
        relax_bindings: The join bindings within which each component of the rules'
            static relaxations is evaluated (:mod:`ggp.reasoning.relax`; 0: no
            relaxations, every call evaluated).

    Raises:
        ValueError: ``cache_size`` is below 1.
        GDLSemanticError: As :class:`~ggp.reasoning.prover.ProverStateMachine`.
    """

    def __init__(
        self,
        description: Description,
        *,
        cache_size: int = 256,
        table_states: int = 8,
        relax_bindings: int = RELAX_BINDINGS,
    ) -> None:
        if table_states < 1:
            raise ValueError(f"table_states must be at least 1, got {table_states}")
        super().__init__(description, cache_size=cache_size)
        clauses: dict[RelKey, list[Clause]] = {}
        for clause in self._clauses:
            clauses.setdefault(clause.key, []).append(clause)
        recursive = {key for part in self._parts if part.recursive for key in part.keys}
        compiler = _Compiler(
            clauses,
            self._layer,
            recursive.__contains__,
            lambda key: len(self._parts[self._where[key]].keys),
            self._static.tables,
            self._constants,
        )
        self._roots: dict[RelKey, int] = {}
        for key, mode in _ROOTS.items():
            if self._layer.get(key, _STATIC) != _STATIC:
                self._roots[key] = compiler.function(key, mode)
        source = compiler.generate()
        relaxed = (
            self.relaxations(
                {key for key, mode in compiler.functions if _leaves(mode)},
                max_bindings=relax_bindings,
            )
            if relax_bindings > 0
            else {}
        )
        source = compiler.filtered(source, relaxed)
        self._td_source = source + "\n" + "\n".join(compiler.lookups.source())
        self._rec = _Recursion()
        namespace = dict(compiler.joins.names)
        namespace.update(REC=_recursive_call, FINISH=_finish, RC=self._rec, LIVE=_Live)
        self._pending = [cast(dict[Hashable, _Pending], namespace[n]) for n in compiler.pending]
        code = compile(self._td_source, f"<top-down rules of {description.path}>", "exec")
        exec(code, namespace)
        self._functions = [
            cast(Callable[..., Answers], namespace[f"q{n}"]) for n in range(len(compiler.functions))
        ]
        self._lookups = [
            (symbol, cast(Callable[..., object], namespace[f"t{n}"]))
            for n, (symbol, _) in enumerate(compiler.lookups.keys)
        ]
        # The tables of the latest few states only: each holds thousands of objects,
        # which the cyclic collector scans again and again while they live (a cache
        # of 256 chess states' tables made play 1.5x slower than one of 8). What a
        # player asks again (legal moves, terminal, goals) is kept for cache_size.
        self._contexts = _Recent(table_states)
        self._move_contexts = _Recent(table_states)
        self._legal = _Recent(len(self._roles) * cache_size)
        self._terminal = _Recent(cache_size)
        self._goals = _Recent(cache_size)

    @classmethod
    def from_file(cls, path: str | Path, *, cache_size: int = 256) -> TopDownStateMachine:
        """Parse a game file and build its reasoner.

        Raises:
            GDLError: The file cannot be read or parsed, or the rules are refused.
        """
        return cls(parse_file(path), cache_size=cache_size)

    # ---- construction hooks ------------------------------------------------------------

    def _compile(self, clauses: list[Clause]) -> None:
        super()._compile(clauses)
        self._clauses = clauses
        _, self._layer = self._layers(clauses)

    @property
    def source(self) -> str:
        """The generated Python source of the top-down program (for debugging)."""
        return self._td_source

    # ---- contexts ----------------------------------------------------------------------

    def _look_at_deadline(self) -> None:
        self._check_deadline()

    def _context(self, state: State) -> _Context:
        context = cast(_Context | None, self._contexts.get(state))
        if context is None:
            context = _Context(
                self._facts(state),
                len(self._functions),
                self._lookups,
                self._look_at_deadline,
                self._rec,
            )
            self._contexts.put(state, context)
        return context

    def _move_context(self, state: State, joint: Sequence[Term]) -> _Context:
        moves = self._check_joint(state, joint)
        key = (state, moves)
        context = cast(_Context | None, self._move_contexts.get(key))
        if context is None:
            base = self._context(state)
            does = tuple(zip(self._roles, moves, strict=True))
            context = _Context(
                base.facts,
                len(self._functions),
                self._lookups,
                self._look_at_deadline,
                self._rec,
                base,
                does,
            )
            self._move_contexts.put(key, context)
        return context

    def _query(self, context: _Context, key: RelKey, *args: Term) -> list[Fact]:
        """The answers of a root query (one of :data:`_ROOTS`, ``args`` its ground
        arguments)."""
        n = self._roots.get(key)
        if n is None:  # a static relation, or one without rules
            table = self._static.tables.get(key)
            rows = table.rows if table is not None else []
            return [row for row in rows if all(row[i] is a for i, a in enumerate(args))]
        rec = self._rec
        self._check_deadline()
        context.ticks = _TICKS
        limit = sys.getrecursionlimit()
        if limit < _RECURSION_LIMIT:
            sys.setrecursionlimit(_RECURSION_LIMIT)
        try:
            return list(self._functions[n](context, *args))
        except BaseException as e:  # the deadline, or an interrupt: forget unfinished calls
            for pending in self._pending:
                pending.clear()
            rec.tentative.clear()
            rec.depth, rec.low = 0, _NEVER
            if isinstance(e, RecursionError):
                raise GameError(
                    f"{self._description.path}: the rules recurse deeper than the top-down "
                    f"prover follows ({_RECURSION_LIMIT:,} nested calls); "
                    "reasoner='prover' evaluates them bottom-up"
                ) from None
            raise
        finally:
            if limit < _RECURSION_LIMIT:
                sys.setrecursionlimit(limit)

    # ---- the StateMachine protocol ---------------------------------------------------

    def legal_moves(self, state: State, role: Const) -> tuple[Term, ...]:
        """The legal moves of ``role`` in ``state``, sorted by their KIF text.

        Raises:
            GameError: A foreign state or an unknown role.
        """
        moves = cast(tuple[Term, ...] | None, self._legal.get((state, role)))
        if moves is None:
            self._check_role(role)
            found = {fact[1] for fact in self._query(self._context(state), _LEGAL, role)}
            moves = tuple(sorted(found, key=str))
            self._legal.put((state, role), moves)
        return moves

    def next_state(self, state: State, joint: Sequence[Term]) -> State:
        """The state after every role plays its move of ``joint`` (in ``roles`` order).

        Raises:
            GameError: A foreign state, or a joint move of the wrong length or with a
                missing or illegal move.
        """
        context = self._move_context(state, joint)
        return State(frozenset(fact[0] for fact in self._query(context, _NEXT)), self)

    def percepts(self, state: State, joint: Sequence[Term], role: Const) -> frozenset[Term]:
        """What ``role`` sees (each ``p`` of ``(sees role p)``) as ``joint`` is played.

        Raises:
            GameError: A foreign state, an unknown role, or a bad joint move.
        """
        self._check_role(role)
        context = self._move_context(state, joint)
        return frozenset(fact[1] for fact in self._query(context, _SEES, role))

    def is_terminal(self, state: State) -> bool:
        """Whether ``terminal`` holds in ``state``.

        Raises:
            GameError: A foreign state.
        """
        terminal = cast(bool | None, self._terminal.get(state))
        if terminal is None:
            terminal = bool(self._query(self._context(state), _TERMINAL))
            self._terminal.put(state, terminal)
        return terminal

    def goals(self, state: State) -> tuple[int, ...]:
        """Each role's goal value in ``roles`` order: the largest if the rules give
        several, 0 if none. Values that are not integers are ignored.

        Raises:
            GameError: A foreign state.
        """
        goals = cast(tuple[int, ...] | None, self._goals.get(state))
        if goals is None:
            best: dict[Term, int] = {}
            for role, value in self._query(self._context(state), _GOAL):
                if isinstance(value, Const) and value.name.isdigit():
                    best[role] = max(best.get(role, 0), int(value.name))
            goals = tuple(best.get(role, 0) for role in self._roles)
            self._goals.put(state, goals)
        return goals

    def __repr__(self) -> str:
        roles = " ".join(map(str, self._roles))
        return f"<TopDownStateMachine {self._description.path!r} roles: {roles}>"
