"""KIF text -> :class:`~ggp.gdl.terms.Description` (rules of interned terms).

The grammar (``grammar.lark``) is parsed by lark's LALR parser with an inline
transformer, so no parse tree is ever built: each list becomes an interned term as soon
as it is reduced. Atoms are normalised to lower case. Every failure is a
:class:`~ggp.errors.GDLSyntaxError` with the line and column at fault; lark's own
exceptions never escape.

Example:
    >>> from ggp.gdl.parser import parse_text
    >>> description = parse_text("(role x) (<= (legal x (noop)) (true (step 1)))")
    >>> [str(rule) for rule in description.rules]
    ['(role x)', '(<= (legal x noop) (true (step 1)))']
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, NamedTuple, cast

from lark import Lark, Token, Transformer
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
    VisitError,
)

from ggp.errors import GDLError, GDLSyntaxError
from ggp.gdl.terms import Const, Description, Func, Rule, Span, Term, Var

__all__ = ["parse_text", "parse_file", "parse_term", "format_term", "MAX_DEPTH"]

#: Deepest nesting of parentheses accepted in one term. Real games stay below 10;
#: the limit keeps every later recursive pass over terms far from Python's stack limit.
MAX_DEPTH = 100

_GRAMMAR = Path(__file__).with_name("grammar.lark")
_ATOM_RE = re.compile(r"[^\s();\x00-\x08\x0e-\x1f\x7f]+")  # as ATOM in grammar.lark


class _Located(NamedTuple):
    """A level-2 item (rule head or body literal) and where it starts."""

    term: Term
    line: int
    column: int


class _Failure(Exception):
    """Raised inside transformer callbacks; turned into GDLSyntaxError by the caller."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.message = message
        self.line = line
        self.column = column


_atom_cache: dict[str, Term] = {}


def _atom(token: Token) -> Term:
    """The interned Const or Var for an atom token (lower-cased)."""
    text = str(token)
    term = _atom_cache.get(text)
    if term is None:
        name = text.lower()
        if name.startswith("?"):
            if len(name) == 1:
                raise _Failure("variable '?' has no name", token.line or 0, token.column or 0)
            term = Var(name)
        else:
            term = Const(name)
        _atom_cache[text] = term
    return term


def _compound(children: list[Any], level: int) -> Term:
    """Build the term for ``( name arg... )``; ``children[0]`` is the '(' token."""
    lpar: Token = children[0]
    if len(children) == 1:
        raise _Failure("empty list '()'", lpar.line or 0, lpar.column or 0)
    head = children[1]
    if not isinstance(head, Token):
        raise _Failure(
            f"expected a name after '(', found the list {_term_of(head)}",
            lpar.line or 0,
            lpar.column or 0,
        )
    name = _atom(head)
    if isinstance(name, Var):
        raise _Failure(
            f"expected a relation or function name after '(', found the variable {name}",
            head.line or 0,
            head.column or 0,
        )
    if len(children) == 2:
        return name  # (terminal) is the same relation as terminal
    args: list[Term] = []
    for child in children[2:]:
        if isinstance(child, Token):
            args.append(_atom(child))
        elif isinstance(child, _Located):
            args.append(child.term)
        else:
            args.append(child)
    term = Func(name.name, tuple(args))
    if term.depth > MAX_DEPTH - level + 1:
        raise _Failure(
            f"terms nested deeper than {MAX_DEPTH} levels",
            lpar.line or 0,
            lpar.column or 0,
        )
    return term


def _term_of(item: Any) -> Term:
    if isinstance(item, Token):
        return _atom(item)
    if isinstance(item, _Located):
        return item.term
    assert isinstance(item, Term)
    return item


class _ToRules(Transformer[Token, list[Rule]]):
    """Inline transformer: builds terms bottom-up and rules at the top level."""

    def term(self, children: list[Any]) -> Term:
        return _compound(children, 3)

    def literal(self, children: list[Any]) -> _Located:
        lpar: Token = children[0]
        return _Located(_compound(children, 2), lpar.line or 0, lpar.column or 0)

    def top_atom(self, children: list[Any]) -> Rule:
        token: Token = children[0]
        head = _atom(token)
        span = Span(token.line or 0, token.column or 0)
        if isinstance(head, Var):
            raise _Failure(f"a sentence cannot be the variable {head}", span.line, span.column)
        return Rule(head, (), span, ())

    def sentence(self, children: list[Any]) -> Rule:
        lpar: Token = children[0]
        span = Span(lpar.line or 0, lpar.column or 0)
        items = children[1:]
        if not items:
            raise _Failure("empty sentence '()'", span.line, span.column)
        first = items[0]
        if not isinstance(first, Token):
            raise _Failure(
                f"expected a name after '(', found the list {_term_of(first)}",
                span.line,
                span.column,
            )
        if str(first) != "<=":
            return Rule(_compound(children, 1), (), span, ())
        if len(items) == 1:
            raise _Failure("rule '(<= ...)' has no head", span.line, span.column)
        head = _term_of(items[1])
        if isinstance(head, Var):
            raise _Failure(f"rule head cannot be the variable {head}", span.line, span.column)
        body: list[Term] = []
        spans: list[Span] = []
        for item in items[2:]:
            if isinstance(item, _Located):
                body.append(item.term)
                spans.append(Span(item.line, item.column))
            else:
                term = _atom(item)
                if isinstance(term, Var):
                    raise _Failure(
                        f"a body literal cannot be the variable {term}",
                        item.line or 0,
                        item.column or 0,
                    )
                body.append(term)
                spans.append(Span(item.line or 0, item.column or 0))
        return Rule(head, tuple(body), span, tuple(spans))

    def start(self, children: list[Rule]) -> list[Rule]:
        return children


_parser: Lark | None = None


def _get_parser() -> Lark:
    global _parser
    if _parser is None:
        _parser = Lark(
            _GRAMMAR.read_text(encoding="utf-8"),
            parser="lalr",
            lexer="basic",
            transformer=_ToRules(),
            maybe_placeholders=False,
        )
    return _parser


def _describe(error: UnexpectedInput) -> str:
    if isinstance(error, UnexpectedCharacters):
        return f"unexpected character {error.char!r}"
    if isinstance(error, UnexpectedEOF):
        return "unexpected end of input: a '(' is never closed"
    if isinstance(error, UnexpectedToken):
        token = error.token
        if token.type == "$END":
            return "unexpected end of input: a '(' is never closed"
        if str(token) == ")":
            return "unexpected ')' with no matching '('"
        return f"unexpected {str(token)!r}"
    return "syntax error"


def _unclosed_paren(text: str) -> tuple[int, int]:
    """Line and column of the outermost '(' left open at the end of ``text``."""
    stack: list[int] = []
    in_comment = False
    for index, char in enumerate(text):
        if in_comment:
            in_comment = char != "\n"
        elif char == ";":
            in_comment = True
        elif char == "(":
            stack.append(index)
        elif char == ")" and stack:
            stack.pop()
    if not stack:
        return 0, 0
    index = stack[0]
    line = text.count("\n", 0, index) + 1
    column = index - (text.rfind("\n", 0, index) + 1) + 1
    return line, column


def parse_text(text: str | bytes, path: str = "<string>") -> Description:
    """Parse KIF text into a :class:`Description`.

    Args:
        text: The game description (bytes are decoded as UTF-8).
        path: Name used in error messages.

    Returns:
        The rules in file order, with their positions.

    Raises:
        GDLSyntaxError: The text is not well-formed KIF; the error names line and column.
    """
    if isinstance(text, bytes):
        raw = text
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            line = raw.count(b"\n", 0, e.start) + 1
            column = e.start - (raw.rfind(b"\n", 0, e.start) + 1) + 1
            raise GDLSyntaxError(
                f"not UTF-8 text: byte {raw[e.start]:#04x}", path, line, column
            ) from None
    try:
        rules = cast(list[Rule], _get_parser().parse(text))
    except _Failure as e:
        raise GDLSyntaxError(e.message, path, e.line, e.column, text) from None
    except VisitError as e:  # a callback failed under a lark wrapper
        orig = e.orig_exc
        if isinstance(orig, _Failure):
            raise GDLSyntaxError(orig.message, path, orig.line, orig.column, text) from None
        raise
    except UnexpectedInput as e:
        message = _describe(e)
        line, column = e.line, e.column
        if "never closed" in message:
            line, column = _unclosed_paren(text)
        if line is None or line < 1:
            line, column = text.count("\n") + 1, 1
        raise GDLSyntaxError(message, path, line, column, text) from e
    return Description(tuple(rules), path, text)


def parse_file(path: str | Path) -> Description:
    """Read and parse a game description file.

    Raises:
        GDLError: The file cannot be read (position 0:0) or is not well-formed KIF.
    """
    name = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise GDLError(f"cannot read file: {e.strerror or e}", name) from None
    return parse_text(data, name)


def parse_term(text: str) -> Term:
    """Parse one term, such as ``"(mark 1 1)"``, ``"noop"`` or ``"?x"``.

    Raises:
        GDLSyntaxError: The text is not exactly one well-formed term.

    Example:
        >>> parse_term("(MARK 1 (f ?X))")
        Func('mark', (Const('1'), Func('f', (Var('?x'),))))
    """
    stripped = text.strip()
    match = _ATOM_RE.fullmatch(stripped)
    if match is not None:
        try:
            return _atom(Token("ATOM", stripped, line=1, column=1))
        except _Failure as e:
            raise GDLSyntaxError(e.message, "<term>", e.line, e.column, text) from None
    rules = parse_text(text, "<term>").rules
    if len(rules) != 1 or rules[0].body or stripped.startswith("(<="):
        raise GDLSyntaxError(f"expected exactly one term, got {text!r}", "<term>", 1, 1, text)
    return rules[0].head


def format_term(term: Term) -> str:
    """Normalised KIF text of a term: the inverse of :func:`parse_term`."""
    return str(term)
