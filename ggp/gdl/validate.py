"""Semantic checks of a parsed GDL / GDL-II description.

:func:`validate` collects every problem of a :class:`~ggp.gdl.terms.Description` that
parsed, as python-chess collects ``game.errors``; :func:`check` raises the first one.
The checks follow the GDL specification (Love, Hinrichs, Haley, Schkufza and Genesereth,
"General Game Playing: Game Description Language Specification", Stanford LG-2006-01,
2008, http://games.stanford.edu/language/spec/gdl_spec_2008_03.pdf) and its GDL-II
extension (Thielscher, "A General Game Description Language for Incomplete Information
Games", AAAI 2010):

1. Arity: the keywords and the built-ins ``not``, ``distinct``, ``or`` have their fixed
   arities (:mod:`ggp.gdl.keywords`). Every other relation symbol and every function
   symbol should have one arity; one used with two is a warning naming both positions
   (an error with ``strict=True``): games written by others do it (a public Mastermind
   for GDL-II uses ``(set 1 ?c)`` and ``(set ?a ?b ?c ?d)``), the Prolog-based managers
   of the GDL literature (the Dresden GameController) play them, reading ``set/2`` and
   ``set/4`` as two symbols, and so does ggp. Relations and functions are separate
   namespaces (``(true (cell 1 1 b))`` and a relation ``cell`` may coexist), and a
   constant is not compared with a function of the same name.
2. Safety: every variable of the head, of a negated literal and of a ``distinct``
   occurs in a positive literal of the body (inside ``or``, only a variable bound in
   every disjunct counts). Unsafe rules are warnings, errors with ``strict=True``.
3. Stratification: no cycle of the dependency graph goes through a negated literal.
4. The recursion restriction (§3.5 of the specification): in a rule for ``p``, each
   argument of a positive literal whose relation is recursive with ``p`` is ground, an
   argument of the head, or bound by positive literals outside the recursion (literals
   inside ``or`` do not count, as in ggp-base's StaticValidator).
5. Keyword discipline: ``true``/``does`` only in bodies; ``init``, ``base``, ``input``
   only in heads and independent of the state and the moves; ``legal``, ``goal``,
   ``terminal`` independent of ``does``; ``role`` only as ground facts, each role
   declared once; the first argument of ``legal``, ``does``, ``goal``, ``sees`` and
   ``input`` a declared role; goal values integers from 0 to 100; ``random`` only as a
   role (never a relation name); ``role``, ``legal``, ``goal`` and ``terminal``
   present. GDL-II's ``next`` and ``sees`` in bodies are accepted, as real games use
   them there.

The dependency graph has one node per relation name; a rule's head depends on the
relation of each body literal (through ``not`` and ``or``), ``(true F)`` on the node
``true`` and ``(does R M)`` on the node ``does``. Every algorithm is iterative (Tarjan's
strongly connected components included), so no game can exhaust Python's stack.

Example:
    >>> from ggp.gdl.parser import parse_text
    >>> description = parse_text(
    ...     "(role robot) (legal robot go) (goal robot 100) (<= terminal (p ?x))"
    ... )
    >>> validate(description)
    []
    >>> bad = parse_text("(role robot) (legal robot) (goal robot 100) terminal")
    >>> [(error.line, error.column, error.message) for error in validate(bad)]
    [(1, 14, 'relation legal used with arity 1 here, but legal always has arity 2')]
    >>> summarize(description).roles
    ('robot',)
"""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import NamedTuple

from ggp.errors import GDLError, GDLSemanticError
from ggp.gdl.graph import strongly_connected_components
from ggp.gdl.keywords import BUILTIN_ARITIES, KEYWORD_ARITIES, RANDOM_ROLE
from ggp.gdl.terms import Const, Description, Func, Rule, Span, Term, Var

__all__ = [
    "KEYWORD_ARITIES",
    "DescriptionSummary",
    "validate",
    "check",
    "summarize",
]

#: Keywords a game cannot do without: a game needs players, moves, an end and payoffs.
_REQUIRED = ("role", "legal", "goal", "terminal")

#: Relations that only a game's state machinery supplies: never rule heads.
_BODY_ONLY = ("true", "does")

#: Relations that describe the game from outside time: never in rule bodies.
_HEAD_ONLY = ("init", "base", "input")

#: Keywords whose first argument names a role.
_ROLE_ARGUMENT = ("legal", "does", "goal", "sees", "input")

#: For each keyword, the relations it must not depend on, even indirectly. GDL puts
#: ``next`` and GDL-II puts ``sees`` only in rule heads, but real GDL-II games use both in
#: bodies (blind breakthrough's ``sees`` rules read ``next``; mastermind's ``goal`` and
#: ``terminal`` read ``sees``), so only these dependencies are refused.
_STATIC = ("true", "does", "next", "legal", "goal", "terminal", "sees")
_FORBIDDEN_DEPENDENCIES: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "init": _STATIC,
        "base": _STATIC,
        "input": _STATIC,
        "legal": ("does",),
        "goal": ("does",),
        "terminal": ("does",),
    }
)

#: Built-in connectives: name -> (fewest, most) arguments (most -1: unbounded).
_BUILTINS = BUILTIN_ARITIES

#: The order of :attr:`DescriptionSummary.rule_counts`.
_COUNTED = ("role", "init", "legal", "next", "sees", "goal", "terminal", "base", "input")


@dataclass(frozen=True, slots=True)
class DescriptionSummary:
    """What a description declares, at a glance (for ``ggp info``).

    Attributes:
        roles: The role names in file order, ``random`` included.
        has_random: Whether ``(role random)`` declares the chance player of GDL-II.
        has_sees: Whether any rule or fact has the head ``sees`` (GDL-II percepts).
        rule_counts: ``(keyword, number of rules and facts with that head)`` for role,
            init, legal, next, sees, goal, terminal, base, input, then ``other`` for
            every helper relation; always these ten entries, in this order.
    """

    roles: tuple[str, ...]
    has_random: bool
    has_sees: bool
    rule_counts: tuple[tuple[str, int], ...]


class _Atom(NamedTuple):
    """A relation atom inside a rule body (``true`` and ``does`` included)."""

    term: Term
    positive: bool
    in_or: bool
    span: Span  # the position of the top-level body literal that holds the atom


class _Graph(NamedTuple):
    """The dependency graph over relation names.

    ``edges[head]`` lists, without repeats and in file order, the relations that rules
    for ``head`` use; ``negative[(head, body)]`` is where ``body`` is first used negated
    by a rule for ``head``; ``component`` maps every node to its strongly connected
    component.
    """

    edges: dict[str, dict[str, None]]
    negative: dict[tuple[str, str], Span]
    component: dict[str, int]


def _variables(term: Term) -> list[Var]:
    """The distinct variables of ``term``, left to right (iterative)."""
    if term.is_ground:
        return []
    found: dict[Var, None] = {}
    stack = [term]
    while stack:
        current = stack.pop()
        if isinstance(current, Var):
            found[current] = None
        elif not current.is_ground:
            stack.extend(reversed(current.args))
    return list(found)


def _functions(term: Term) -> list[Func]:
    """Every compound subterm of ``term`` (``term`` itself included), outermost first."""
    if not isinstance(term, Func):
        return []
    result: list[Func] = []
    stack: list[Term] = [term]
    while stack:
        current = stack.pop()
        if isinstance(current, Func):
            result.append(current)
            stack.extend(reversed(current.args))
    return result


def _is_builtin_call(literal: Term, name: str) -> bool:
    """Whether ``literal`` is a well-formed use of the built-in ``name``."""
    if literal.name != name:
        return False
    fewest, most = _BUILTINS[name]
    return literal.arity >= fewest and (most < 0 or literal.arity <= most)


def _body_atoms(rule: Rule) -> tuple[list[_Atom], list[tuple[Term, Span]]]:
    """The relation atoms of a rule body, and its other terms (distinct's arguments).

    Malformed built-ins (``(not a b)``) contribute their arguments as plain terms, so
    function arities are still checked inside them; the arity error itself is reported
    by the arity check.
    """
    atoms: list[_Atom] = []
    loose: list[tuple[Term, Span]] = []
    for index, literal in enumerate(rule.body):
        span = rule.literal_span(index)
        stack: list[tuple[Term, bool, bool]] = [(literal, True, False)]
        while stack:
            current, positive, in_or = stack.pop()
            name = current.name
            if name in _BUILTINS:
                if _is_builtin_call(current, "not"):
                    stack.append((current.args[0], not positive, in_or))
                elif _is_builtin_call(current, "or"):
                    stack.extend((arg, positive, True) for arg in reversed(current.args))
                else:  # distinct, or a malformed built-in
                    loose.extend((arg, span) for arg in current.args)
            else:
                atoms.append(_Atom(current, positive, in_or, span))
    return atoms, loose


def _bound_variables(literal: Term) -> set[Var]:
    """Variables that a body literal binds: those of its positive atoms.

    A disjunction binds only what every disjunct binds; nested disjunctions are
    evaluated bottom-up with an explicit stack.
    """
    results: list[set[Var]] = []
    stack: list[tuple[Term, bool]] = [(literal, False)]
    while stack:
        current, expanded = stack.pop()
        name = current.name
        if name in ("not", "distinct") or (name == "or" and current.arity == 0):
            results.append(set())
        elif name == "or" and not expanded:
            stack.append((current, True))
            stack.extend((disjunct, False) for disjunct in current.args)
        elif name == "or":
            parts = results[-current.arity :]
            del results[-current.arity :]
            merged = parts[0]
            for part in parts[1:]:
                merged &= part
            results.append(merged)
        else:
            results.append(set(_variables(current)))
    return results[0]


def _needing_binding(literal: Term, bound: set[Var]) -> list[tuple[Var, Term]]:
    """``(variable, literal)`` for each variable of a negation or distinct not in ``bound``.

    Inside a disjunct, the disjunct's own positive atoms also bind.
    """
    result: list[tuple[Var, Term]] = []
    stack: list[tuple[Term, set[Var]]] = [(literal, bound)]
    while stack:
        current, context = stack.pop()
        name = current.name
        if name in ("not", "distinct"):
            result.extend((var, current) for var in _variables(current) if var not in context)
        elif name == "or":
            for disjunct in reversed(current.args):
                stack.append((disjunct, context | _bound_variables(disjunct)))
    return result


def _strongly_connected(edges: Mapping[str, Iterable[str]], nodes: Iterable[str]) -> dict[str, int]:
    """Node -> number of its strongly connected component (dependencies first)."""
    components = strongly_connected_components(nodes, edges)
    return {node: number for number, members in enumerate(components) for node in members}


def _shortest_path(
    edges: Mapping[str, Iterable[str]], start: str, goal: str, within: set[str] | None = None
) -> list[str]:
    """A shortest path ``start -> ... -> goal`` (breadth-first), [] if there is none."""
    parent: dict[str, str] = {start: start}
    queue = deque([start])
    while queue:
        node = queue.popleft()
        for successor in edges.get(node, ()):
            if successor in parent or (within is not None and successor not in within):
                continue
            parent[successor] = node
            if successor == goal:
                path = [goal]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return path[::-1]
            queue.append(successor)
    return []


class _Validator:
    """One pass of checks over a description; the errors accumulate in ``errors``."""

    def __init__(self, description: Description, strict: bool) -> None:
        self.description = description
        self.strict = strict
        self.errors: list[GDLError] = []
        self.rule_atoms: list[tuple[list[_Atom], list[tuple[Term, Span]]]] = [
            _body_atoms(rule) for rule in description.rules
        ]
        #: (kind, name, arity) of the symbols already reported with a second arity.
        self.two_arities: set[tuple[str, str, int]] = set()

    def error(self, message: str, span: Span, *, warning: bool = False) -> None:
        self.errors.append(
            GDLSemanticError(
                message,
                self.description.path,
                span.line,
                span.column,
                self.description.source or None,
                warning=warning,
            )
        )

    def run(self) -> list[GDLError]:
        self.check_arities()
        self.check_keyword_places()
        self.check_roles()
        self.check_safety()
        graph = self.dependency_graph()
        self.check_stratification(graph)
        self.check_recursion(graph)
        self.check_dependencies(graph)
        self.check_required()
        # Stable sort into file order; ties keep the order of the checks.
        return sorted(self.errors, key=lambda e: (e.line, e.column))

    # -- 1. arities -----------------------------------------------------------------

    def check_arities(self) -> None:
        relations: dict[str, tuple[int, Span]] = {}
        functions: dict[str, tuple[int, Span]] = {}
        for rule, (atoms, loose) in zip(self.description.rules, self.rule_atoms, strict=True):
            reported: set[tuple[str, str, int]] = set()
            sentences = [(rule.head, rule.span), *((atom.term, atom.span) for atom in atoms)]
            for sentence, span in sentences:
                self._relation_arity(sentence, span, relations, reported)
                for arg in sentence.args:
                    self._function_arities(arg, span, functions, reported)
            for index, literal in enumerate(rule.body):
                self._builtin_arities(literal, rule.literal_span(index), reported)
            for term, span in loose:
                self._function_arities(term, span, functions, reported)

    def _relation_arity(
        self,
        sentence: Term,
        span: Span,
        relations: dict[str, tuple[int, Span]],
        reported: set[tuple[str, str, int]],
    ) -> None:
        name, arity = sentence.name, sentence.arity
        key = ("relation", name, arity)
        if key in reported:
            return
        fixed = KEYWORD_ARITIES.get(name)
        if name in _BUILTINS:
            reported.add(key)
            self.error(f"{name} is a built-in and cannot be the head of a rule", span)
        elif fixed is not None:
            if arity != fixed:
                reported.add(key)
                self.error(
                    f"relation {name} used with arity {arity} here, "
                    f"but {name} always has arity {fixed}",
                    span,
                )
        else:
            first = relations.setdefault(name, (arity, span))
            if first[0] != arity:
                reported.add(key)
                self._two_arities("relation", name, arity, first, span)

    def _function_arities(
        self,
        term: Term,
        span: Span,
        functions: dict[str, tuple[int, Span]],
        reported: set[tuple[str, str, int]],
    ) -> None:
        for function in _functions(term):
            name, arity = function.name, function.arity
            first = functions.setdefault(name, (arity, span))
            key = ("function", name, arity)
            if first[0] != arity and key not in reported:
                reported.add(key)
                self._two_arities("function", name, arity, first, span)

    def _two_arities(
        self, kind: str, name: str, arity: int, first: tuple[int, Span], span: Span
    ) -> None:
        """A symbol used with a second arity: a warning (an error when strict), once per
        symbol and arity, naming both positions."""
        key = (kind, name, arity)
        if key in self.two_arities:
            return
        self.two_arities.add(key)
        where = f"line {first[1].line}, column {first[1].column}"
        self.error(
            f"{kind} {name} used with arity {arity} here and arity {first[0]} at {where}",
            span,
            warning=not self.strict,
        )

    def _builtin_arities(
        self, literal: Term, span: Span, reported: set[tuple[str, str, int]]
    ) -> None:
        stack = [literal]
        while stack:
            current = stack.pop()
            name = current.name
            if name not in _BUILTINS:
                continue
            fewest, most = _BUILTINS[name]
            if _is_builtin_call(current, name):
                if name != "distinct":
                    stack.extend(current.args)
                continue
            key = ("builtin", name, current.arity)
            if key in reported:
                continue
            reported.add(key)
            if most < 0:
                wanted = f"at least {fewest} argument" + ("s" if fewest != 1 else "")
            else:
                wanted = f"exactly {fewest} argument" + ("s" if fewest != 1 else "")
            self.error(f"{name} takes {wanted}, got {current.arity} in {current}", span)

    # -- 5. keywords in their places ------------------------------------------------

    def check_keyword_places(self) -> None:
        for rule, (atoms, _) in zip(self.description.rules, self.rule_atoms, strict=True):
            head = rule.head.name
            if head in _BODY_ONLY:
                self.error(
                    f"{head} may appear only in rule bodies, not as the head {rule.head}",
                    rule.span,
                )
            if head == RANDOM_ROLE:
                self.error(
                    "random is reserved for the chance player, (role random); "
                    f"it cannot name a relation, as in {rule.head}",
                    rule.span,
                )
            if head == "goal" and rule.head.arity == 2:
                self._goal_value(rule.head.args[1], rule.span)
            seen: set[str] = set()
            for atom in atoms:
                name = atom.term.name
                if name in seen:
                    continue
                if name in _HEAD_ONLY:
                    seen.add(name)
                    self.error(
                        f"{name} may appear only in rule heads, "
                        f"not in the body literal {atom.term}",
                        atom.span,
                    )
                elif name == RANDOM_ROLE:
                    seen.add(name)
                    self.error(
                        "random is reserved for the chance player, (role random); "
                        f"it cannot name a relation, as in {atom.term}",
                        atom.span,
                    )

    def _goal_value(self, value: Term, span: Span) -> None:
        if not value.is_ground:
            return
        if not (isinstance(value, Const) and value.name.isdecimal() and int(value.name) <= 100):
            self.error(f"goal value {value} is not an integer from 0 to 100", span)

    def check_roles(self) -> None:
        roles: dict[str, Span] = {}
        for rule in self.description.rules:
            head = rule.head
            if head.name != "role" or head.arity != 1:
                continue
            if rule.body:
                self.error(
                    f"role must be declared by facts, not by a rule with a body: {rule}",
                    rule.span,
                )
            player = head.args[0]
            if not isinstance(player, Const):
                what = "variables" if not player.is_ground else "a compound term"
                self.error(f"role declaration {head} has {what}; a role is a constant", rule.span)
            elif player.name in roles and not rule.body:
                first = roles[player.name]
                self.error(
                    f"role {player.name} declared twice (first at line {first.line})", rule.span
                )
            elif not rule.body:
                roles[player.name] = rule.span
        if not roles:
            return
        for rule, (atoms, _) in zip(self.description.rules, self.rule_atoms, strict=True):
            self._role_argument(rule.head, rule.span, roles)
            for atom in atoms:
                if atom.term.name == "does":
                    self._role_argument(atom.term, atom.span, roles)

    def _role_argument(self, sentence: Term, span: Span, roles: Mapping[str, Span]) -> None:
        name = sentence.name
        if name not in _ROLE_ARGUMENT or sentence.arity != KEYWORD_ARITIES[name]:
            return
        player = sentence.args[0]
        if player.is_ground and not (isinstance(player, Const) and player.name in roles):
            self.error(
                f"{player} in {sentence} is not a role (roles: {', '.join(roles)})",
                span,
            )

    # -- 2. safety ------------------------------------------------------------------

    def check_safety(self) -> None:
        warning = not self.strict
        for rule in self.description.rules:
            if not rule.body and rule.head.is_ground:
                continue
            bound: set[Var] = set()
            for literal in rule.body:
                bound |= _bound_variables(literal)
            reported: set[Var] = set()
            for var in _variables(rule.head):
                if var not in bound:
                    reported.add(var)
                    self.error(
                        f"unsafe rule: variable {var} in the head does not occur "
                        "in a positive literal of the body",
                        rule.span,
                        warning=warning,
                    )
            for index, literal in enumerate(rule.body):
                for var, culprit in _needing_binding(literal, bound):
                    if var in reported:
                        continue
                    reported.add(var)
                    self.error(
                        f"unsafe rule: variable {var} in {culprit} does not occur "
                        "in a positive literal of the body",
                        rule.literal_span(index),
                        warning=warning,
                    )

    # -- 6. the dependency graph ----------------------------------------------------

    def dependency_graph(self) -> _Graph:
        edges: dict[str, dict[str, None]] = {}
        negative: dict[tuple[str, str], Span] = {}
        nodes: dict[str, None] = {}
        for rule, (atoms, _) in zip(self.description.rules, self.rule_atoms, strict=True):
            head = rule.head.name
            nodes[head] = None
            targets = edges.setdefault(head, {})
            for atom in atoms:
                name = atom.term.name
                nodes[name] = None
                targets[name] = None
                if not atom.positive:
                    negative.setdefault((head, name), atom.span)
        return _Graph(edges, negative, _strongly_connected(edges, nodes))

    # -- 3. stratified negation -----------------------------------------------------

    def check_stratification(self, graph: _Graph) -> None:
        component = graph.component
        for (head, body), span in graph.negative.items():
            if component[head] != component[body]:
                continue
            if head == body:
                self.error(
                    f"negation is not stratified: {head} depends on (not {body}), itself",
                    span,
                )
                continue
            members = {n for n, c in component.items() if c == component[head]}
            cycle = [head, *_shortest_path(graph.edges, body, head, members)]
            self.error(
                f"negation is not stratified: {head} depends on (not {body}) and {body} "
                f"depends on {head} (cycle {' -> '.join(cycle)})",
                span,
            )

    # -- 4. the recursion restriction -----------------------------------------------

    def check_recursion(self, graph: _Graph) -> None:
        component = graph.component
        for rule, (atoms, _) in zip(self.description.rules, self.rule_atoms, strict=True):
            head = rule.head.name
            recursive: list[_Atom] = []
            outside: set[Term] = set()
            outside_vars: set[Var] = set()
            for atom in atoms:
                if not atom.positive:
                    continue
                if component[atom.term.name] == component[head]:
                    recursive.append(atom)
                elif not atom.in_or:
                    outside.update(atom.term.args)
                    outside_vars.update(_variables(atom.term))
            if not recursive:
                continue
            head_args = set(rule.head.args)
            for atom in recursive:
                for arg in atom.term.args:
                    if (
                        arg.is_ground
                        or arg in head_args
                        or arg in outside
                        or all(var in outside_vars for var in _variables(arg))
                    ):
                        continue
                    self.error(
                        f"recursion restriction violated: in a rule for {head}, argument "
                        f"{arg} of {atom.term} ({atom.term.name} is recursive with {head}) is "
                        "neither ground, nor an argument of the head, nor bound by a "
                        f"positive literal outside the recursion",
                        atom.span,
                    )
                    break

    # -- 5. keyword dependencies ----------------------------------------------------

    def check_dependencies(self, graph: _Graph) -> None:
        reverse: dict[str, list[str]] = {}
        for head, targets in graph.edges.items():
            for target in targets:
                reverse.setdefault(target, []).append(head)
        # toward[f][node]: the next node on a shortest path from node to f.
        toward: dict[str, dict[str, str]] = {}
        for forbidden in {f for fs in _FORBIDDEN_DEPENDENCIES.values() for f in fs}:
            step: dict[str, str] = {forbidden: forbidden}
            queue = deque([forbidden])
            while queue:
                node = queue.popleft()
                for user in reverse.get(node, ()):
                    if user not in step:
                        step[user] = node
                        queue.append(user)
            toward[forbidden] = step
        for rule, (atoms, _) in zip(self.description.rules, self.rule_atoms, strict=True):
            head = rule.head.name
            for forbidden in _FORBIDDEN_DEPENDENCIES.get(head, ()):
                step = toward[forbidden]
                for atom in atoms:
                    node = atom.term.name
                    if node not in step:
                        continue
                    chain = [head, node]
                    while chain[-1] != forbidden:
                        chain.append(step[chain[-1]])
                    self.error(
                        f"{head} must not depend on {forbidden}: {' -> '.join(chain)}",
                        atom.span,
                    )
                    break

    def check_required(self) -> None:
        heads = {rule.head.name for rule in self.description.rules}
        missing = [keyword for keyword in _REQUIRED if keyword not in heads]
        if not missing:
            return
        # A missing keyword belongs to no rule: report it at the end of the file, where it
        # could be added (as the parser reports an unexpected end of input).
        source = self.description.source
        if source:
            end = Span(source.count("\n") + 1, len(source) - source.rfind("\n"))
        elif self.description.rules:
            end = Span(max(rule.span.line for rule in self.description.rules) + 1, 1)
        else:
            end = Span(1, 1)
        for keyword in missing:
            self.error(f"no {keyword} rule or fact: every game needs {keyword}", end)


def validate(description: Description, *, strict: bool = False) -> list[GDLError]:
    """Every semantic problem of a description, in file order.

    Args:
        description: A parsed game description.
        strict: Report unsafe rules as errors rather than warnings.

    Returns:
        :class:`~ggp.errors.GDLSemanticError` s positioned at the rule or body literal
        at fault; unsafe rules have ``warning=True`` unless ``strict``. Problems that
        belong to no rule (a missing ``terminal``) are placed at the end of the file.
        An empty list means the description is valid GDL-II.
    """
    return _Validator(description, strict).run()


def check(description: Description, *, strict: bool = False) -> list[GDLError]:
    """Raise the first error of :func:`validate`; otherwise return its warnings.

    Args:
        description: A parsed game description.
        strict: Treat unsafe rules as errors.

    Returns:
        The warnings (unsafe rules), in file order.

    Raises:
        GDLSemanticError: The first problem that is not a warning.
    """
    problems = validate(description, strict=strict)
    for problem in problems:
        if not problem.warning:
            raise problem
    return problems


def summarize(description: Description) -> DescriptionSummary:
    """Roles, chance, percepts and rule counts of a description (no validation).

    Example:
        >>> from ggp.gdl.parser import parse_text
        >>> summarize(parse_text("(role a) (role random) (<= (sees a x) (does random x))"))
        ... # doctest: +NORMALIZE_WHITESPACE
        DescriptionSummary(roles=('a', 'random'), has_random=True, has_sees=True,
            rule_counts=(('role', 2), ('init', 0), ('legal', 0), ('next', 0),
            ('sees', 1), ('goal', 0), ('terminal', 0), ('base', 0), ('input', 0),
            ('other', 0)))
    """
    roles: dict[str, None] = {}
    counts = dict.fromkeys((*_COUNTED, "other"), 0)
    for rule in description.rules:
        head = rule.head
        name = head.name if head.name in counts else "other"
        counts[name] += 1
        if name == "role" and not rule.body and head.arity == 1:
            player = head.args[0]
            if isinstance(player, Const):
                roles[player.name] = None
    return DescriptionSummary(
        roles=tuple(roles),
        has_random=RANDOM_ROLE in roles,
        has_sees=counts["sees"] > 0,
        rule_counts=tuple(counts.items()),
    )
