"""Immutable, interned GDL terms and rules.

A term is a constant (``Const('cell')``), a variable (``Var('?x')``) or a compound
term (``Func('mark', (Const('1'), Const('1')))``). Terms are interned: building the same
term twice gives the same object, so equality and hashing are by identity and cost
nothing. ``str(term)`` is normalised KIF, ``repr(term)`` evaluates back to the term, and
:func:`parse_term` reads KIF back.

Body literals of rules are terms too, read as GDL reads them: ``(not L)``,
``(distinct a b)``, ``(or L1 ... Ln)``, ``(true F)``, ``(does R M)`` or a relation.

Example:
    >>> from ggp.gdl.terms import Func, Const
    >>> t = Func("mark", (Const("1"), Const("1")))
    >>> str(t)
    '(mark 1 1)'
    >>> t is Func("mark", (Const("1"), Const("1")))
    True
    >>> t.is_ground, t.arity, t.depth
    (True, 2, 1)
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import ClassVar, Self

__all__ = [
    "Term",
    "Const",
    "Var",
    "Func",
    "Span",
    "Rule",
    "Description",
    "variables_of",
    "game_constants",
    "substitute",
]


class Term:
    """A GDL term: :class:`Const`, :class:`Var` or :class:`Func` (immutable, interned)."""

    __slots__ = ()

    name: str
    args: tuple[Term, ...]
    is_ground: bool
    depth: int

    @property
    def arity(self) -> int:
        """Number of arguments (0 for constants and variables)."""
        return len(self.args)

    def __setattr__(self, key: str, value: object) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __delattr__(self, key: str) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __lt__(self, other: Term) -> bool:
        """A total order (by KIF text), so sets of terms print in a stable order."""
        return str(self) < str(other)


class _Atom(Term):
    """A symbol: what :class:`Const` and :class:`Var` share (a name, no arguments)."""

    __slots__ = ("name",)
    _interned: ClassVar[dict[str, _Atom]]
    args: tuple[Term, ...] = ()
    depth = 0

    def __new__(cls, name: str) -> Self:
        obj = cls._interned.get(name)
        if obj is None:
            obj = object.__new__(cls)
            object.__setattr__(obj, "name", name)
            cls._interned[name] = obj
        return obj  # type: ignore[return-value]

    def __reduce__(self) -> tuple[type[_Atom], tuple[str]]:
        return (type(self), (self.name,))

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"

    def __str__(self) -> str:
        return self.name


class Const(_Atom):
    """A constant symbol such as ``cell``, ``1`` or ``++`` (always lower case)."""

    __slots__ = ()
    _interned: ClassVar[dict[str, _Atom]] = {}
    is_ground = True


class Var(_Atom):
    """A variable such as ``?x``; the name keeps its leading ``?``."""

    __slots__ = ()
    _interned: ClassVar[dict[str, _Atom]] = {}
    is_ground = False


class Func(Term):
    """A compound term ``(name arg1 ... argn)`` with at least one argument."""

    __slots__ = ("name", "args", "is_ground", "depth", "_text")
    _interned: ClassVar[dict[tuple[str, tuple[Term, ...]], Func]] = {}
    _text: str | None

    def __new__(cls, name: str, args: tuple[Term, ...]) -> Func:
        key = (name, args)
        obj = cls._interned.get(key)
        if obj is None:
            if not args:
                raise ValueError(f"Func {name!r} needs arguments; use Const({name!r})")
            obj = object.__new__(cls)
            setter = object.__setattr__
            setter(obj, "name", name)
            setter(obj, "args", args)
            setter(obj, "is_ground", all(a.is_ground for a in args))
            setter(obj, "depth", 1 + max(a.depth for a in args))
            setter(obj, "_text", None)
            cls._interned[key] = obj
        return obj

    def __reduce__(self) -> tuple[type[Func], tuple[str, tuple[Term, ...]]]:
        return (Func, (self.name, self.args))

    def __repr__(self) -> str:
        return f"Func({self.name!r}, {self.args!r})"

    def __str__(self) -> str:
        text: str | None = self._text
        if text is None:
            text = "(" + self.name + " " + " ".join(map(str, self.args)) + ")"
            object.__setattr__(self, "_text", text)
        return text


def variables_of(term: Term) -> Iterator[Var]:
    """Yield the variables of ``term`` left to right (with repeats)."""
    if isinstance(term, Var):
        yield term
    elif not term.is_ground:
        for arg in term.args:
            yield from variables_of(arg)


def substitute(term: Term, binding: dict[Var, Term]) -> Term:
    """``term`` with each bound variable replaced by its value (one pass, no chasing)."""
    if term.is_ground:
        return term
    if isinstance(term, Var):
        return binding.get(term, term)
    return Func(term.name, tuple(substitute(a, binding) for a in term.args))


@dataclass(frozen=True, slots=True)
class Span:
    """A 1-based (line, column) position in a game description."""

    line: int
    column: int


NOWHERE = Span(0, 0)


@dataclass(frozen=True, slots=True)
class Rule:
    """``(<= head body...)``, or a fact when ``body`` is empty.

    Attributes:
        head: The relation the rule defines (a Const or Func).
        body: Literals, each a term: a relation, ``(not L)``, ``(distinct a b)``,
            ``(or ...)``, ``(true F)`` or ``(does R M)``.
        span: Where the rule starts (its opening parenthesis).
        body_spans: Where each body literal starts, ``len(body_spans) == len(body)``.
    """

    head: Term
    body: tuple[Term, ...] = ()
    span: Span = field(default=NOWHERE, compare=False)
    body_spans: tuple[Span, ...] = field(default=(), compare=False)

    @property
    def is_fact(self) -> bool:
        return not self.body

    def __str__(self) -> str:
        if not self.body:
            return str(self.head)
        return "(<= " + " ".join(str(t) for t in (self.head, *self.body)) + ")"

    def literal_span(self, index: int) -> Span:
        """The position of body literal ``index`` (the rule's own if unknown)."""
        if index < len(self.body_spans):
            return self.body_spans[index]
        return self.span


@dataclass(frozen=True)
class Description:
    """A parsed game description: its rules in file order, and where they came from.

    Attributes:
        rules: Every sentence of the file, facts included, in order.
        path: The file name used in error messages (``"<string>"`` for text).
        source: The original text, for caret context in error messages.
    """

    rules: tuple[Rule, ...]
    path: str = "<string>"
    source: str = field(default="", repr=False, compare=False)

    def __len__(self) -> int:
        return len(self.rules)

    def __iter__(self) -> Iterator[Rule]:
        return iter(self.rules)


def game_constants(description: Description) -> frozenset[Const]:
    """Every constant of the description: the range of an unsafe variable.

    Every :class:`~ggp.gdl.terms.Const` object that occurs in a rule counts, zero-arity
    relation names such as ``terminal`` included; function and relation names of
    compound terms do not (they are not terms).
    """
    found: set[Const] = set()
    seen: set[int] = set()
    stack: list[Term] = []
    for rule in description.rules:
        stack.append(rule.head)
        stack.extend(rule.body)
        while stack:
            term = stack.pop()
            if isinstance(term, Const):
                found.add(term)
            elif isinstance(term, Func) and id(term) not in seen:
                seen.add(id(term))
                stack.extend(term.args)
    return frozenset(found)
