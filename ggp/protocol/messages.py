"""GGP protocol messages: parse what a game manager sends, format what it expects back.

A message is one KIF s-expression, ``(KEYWORD arg...)``. Its outer structure (keyword,
match id, clocks, lists of moves or percepts) is read by a small s-expression reader that
keeps each list's position in the text; the game terms inside it (the rules, moves and
percepts) are read by the GDL parser (:func:`~ggp.gdl.parser.parse_text`,
:func:`~ggp.gdl.parser.parse_term`), so they are the same interned, lower-cased terms the
reasoner uses. Keywords and atoms may come in any letter case (the Dresden game manager
upper-cases everything). Anything malformed raises :class:`~ggp.errors.ProtocolError`
quoting the offending text.

The messages (see ``../shared/protocol/README.md``):

=============================================  ===========================================
``(INFO)``                                     :class:`Info`
``(PREVIEW rules clock)``                      :class:`Preview`
``(START id role (rules...) start play)``      :class:`Start`
``(PLAY id turn lastmove percepts)``           :class:`Play`, GDL-II
``(PLAY id NIL)`` / ``(PLAY id (m1 ... mk))``  :class:`Play`, short form: GDL-I (the previous
                                               joint move) or older GDL-II managers (the
                                               percepts)
``(STOP ...)``                                 :class:`Stop`, the same two forms
``(ABORT id)``                                 :class:`Abort`
=============================================  ===========================================

Example:
    >>> message = parse_message("(PLAY M1 1 (CHOOSE 1) ((OPEN_DOOR 2) ))")
    >>> message
    Play(match_id='M1', turn=1, last_move=Func('choose', (Const('1'),)), terms=(Func('open_door', (Const('2'),)),))
    >>> format_message(message)
    '(play M1 1 (choose 1) ((open_door 2)))'
    >>> format_move(message.last_move, upper=uses_upper_case("(PLAY M1 0 NIL NIL)"))
    '(CHOOSE 1)'
"""  # noqa: E501

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from ggp.errors import GDLError, ProtocolError
from ggp.gdl.parser import MAX_DEPTH, parse_term, parse_text
from ggp.gdl.terms import Const, Description, Term

__all__ = [
    "Info",
    "Preview",
    "Start",
    "StepMessage",
    "Play",
    "Stop",
    "Abort",
    "Message",
    "InfoReply",
    "parse_message",
    "format_message",
    "format_move",
    "format_info_reply",
    "parse_info_reply",
    "parse_move_reply",
    "format_word",
    "uses_upper_case",
    "spelling_of",
]

#: Longest message quoted in an error message.
_QUOTE_CHARS = 80


# ------------------------------------------------------------------- message values


@dataclass(frozen=True)
class Info:
    """``(INFO)``: are you there, who are you, are you free?"""


@dataclass(frozen=True)
class Preview:
    """``(PREVIEW rules clock)``: the rules of a match to come.

    Attributes:
        rules: The game description.
        clock_s: Seconds the manager waits for ``ready``.
    """

    rules: Description = field(repr=False)
    clock_s: float


@dataclass(frozen=True)
class Start:
    """``(START id role (rules...) startclock playclock)``.

    Attributes:
        match_id: The manager's name for the match, as sent.
        role: The role to play (lower case, as every term).
        rules: The game description.
        start_clock_s: Seconds until the manager wants ``ready``.
        play_clock_s: Seconds per move.
    """

    match_id: str
    role: Const
    rules: Description = field(repr=False)
    start_clock_s: float
    play_clock_s: float


@dataclass(frozen=True)
class StepMessage:
    """A PLAY or STOP message, in either form.

    Attributes:
        match_id: The match, as sent.
        turn: The GDL-II turn (0 for the first move), or None for the short form
            ``(PLAY id NIL)`` / ``(PLAY id (...))``.
        last_move: GDL-II: the move the manager applied for this player on the previous
            turn (None on turn 0 and in the short form).
        terms: GDL-II: the percepts after the previous joint move. Short form: the
            list's items — the previous joint move in role order (GDL-I) or the percepts
            (older GDL-II managers); which of the two only the game tells. None for
            ``NIL`` (the first PLAY of the short form).
    """

    match_id: str
    turn: int | None
    last_move: Term | None
    terms: tuple[Term, ...] | None

    @property
    def short_form(self) -> bool:
        """Whether the message had no turn and last move (GDL-I or older GDL-II)."""
        return self.turn is None


@dataclass(frozen=True)
class Play(StepMessage):
    """``(PLAY ...)``: choose a move (the fields are :class:`StepMessage`'s)."""


@dataclass(frozen=True)
class Stop(StepMessage):
    """``(STOP ...)``: the match is over, after one more joint move."""


@dataclass(frozen=True)
class Abort:
    """``(ABORT id)``: the match is cancelled."""

    match_id: str


Message = Info | Preview | Start | Play | Stop | Abort


@dataclass(frozen=True)
class InfoReply:
    """A player's answer to INFO.

    Attributes:
        name: The player's name ('' when it gave none).
        status: ``available``, ``busy`` or whatever it said (lower case).
    """

    name: str
    status: str


# ------------------------------------------------------------------- s-expressions

_TOKEN_RE = re.compile(r"\s+|;[^\n]*|\(|\)|[^\s();]+")


@dataclass(frozen=True)
class _Node:
    """An atom (``atom`` set) or a list (``items``), with its span ``[start, end)``."""

    start: int
    end: int
    atom: str | None = None
    items: tuple[_Node, ...] = ()

    @property
    def is_list(self) -> bool:
        return self.atom is None


def _quote(text: str) -> str:
    text = " ".join(text.split())
    if len(text) > _QUOTE_CHARS:
        text = text[: _QUOTE_CHARS - 3] + "..."
    return repr(text)


def _read(text: str) -> _Node:
    """Read exactly one s-expression from ``text``.

    Raises:
        ProtocolError: Empty text, unbalanced parentheses, or more than one expression.
    """
    stack: list[tuple[int, list[_Node]]] = []
    top: list[_Node] = []
    for match in _TOKEN_RE.finditer(text):
        token = match.group()
        start = match.start()
        if token[0].isspace() or token[0] == ";":
            continue
        if token == "(":
            if len(stack) > MAX_DEPTH + 4:
                raise ProtocolError(f"message nested deeper than {MAX_DEPTH} levels")
            stack.append((start, []))
        elif token == ")":
            if not stack:
                raise ProtocolError(
                    f"unexpected ')' at character {start + 1} of message {_quote(text)}"
                )
            opened, items = stack.pop()
            node = _Node(opened, match.end(), items=tuple(items))
            (stack[-1][1] if stack else top).append(node)
        else:
            (stack[-1][1] if stack else top).append(_Node(start, match.end(), atom=token))
    if stack:
        raise ProtocolError(
            f"unbalanced parentheses: the '(' at character {stack[0][0] + 1} is never "
            f"closed in message {_quote(text)}"
        )
    if not top:
        raise ProtocolError("empty message: expected one s-expression such as (INFO)")
    if len(top) > 1:
        extra = text[top[1].start :]
        raise ProtocolError(
            f"expected one s-expression, found more after it: {_quote(extra)} "
            f"in message {_quote(text)}"
        )
    return top[0]


# ------------------------------------------------------------------- parsing

_SIGNATURES = {
    "info": "(INFO)",
    "preview": "(PREVIEW rules clock)",
    "start": "(START id role (rules...) startclock playclock)",
    "play": "(PLAY id turn lastmove percepts) or (PLAY id NIL) or (PLAY id (moves...))",
    "stop": "(STOP id turn lastmove percepts) or (STOP id NIL) or (STOP id (moves...))",
    "abort": "(ABORT id)",
}


class _Reader:
    """Turns the nodes of one message into values, quoting the message in errors."""

    def __init__(self, text: str) -> None:
        self.text = text

    def fail(self, message: str) -> ProtocolError:
        return ProtocolError(f"{message} in message {_quote(self.text)}")

    def source(self, node: _Node) -> str:
        return self.text[node.start : node.end]

    def match_id(self, node: _Node) -> str:
        if node.atom is None:
            raise self.fail(
                f"the match id must be an atom, not the list {_quote(self.source(node))}"
            )
        return node.atom

    def number(self, node: _Node, what: str) -> float:
        if node.atom is not None:
            try:
                value = float(node.atom)
            except ValueError:
                value = math.nan
            if math.isfinite(value) and value >= 0:
                return value
        raise self.fail(f"{what} must be a number of seconds >= 0, not {_quote(self.source(node))}")

    def turn(self, node: _Node) -> int:
        if node.atom is not None and node.atom.isdigit():
            return int(node.atom)
        raise self.fail(f"the turn must be a whole number >= 0, not {_quote(self.source(node))}")

    def term(self, node: _Node, what: str) -> Term:
        try:
            term = parse_term(self.source(node))
        except GDLError as e:
            raise self.fail(f"{what} {_quote(self.source(node))} is not a term: {e.message}") from e
        if not term.is_ground:
            raise self.fail(f"{what} {_quote(self.source(node))} has variables")
        return term

    def term_list(self, node: _Node, what: str) -> tuple[Term, ...] | None:
        """A list of terms; ``NIL`` (any case) is None, ``()`` the empty tuple."""
        if node.atom is not None:
            if node.atom.lower() == "nil":
                return None
            raise self.fail(f"expected a list of {what}s or NIL, not {_quote(node.atom)}")
        return tuple(self.term(item, what) for item in node.items)

    def rules(self, node: _Node) -> Description:
        if node.atom is not None:
            raise self.fail(f"the rules must be a list, not {_quote(node.atom)}")
        inner = self.text[node.start + 1 : node.end - 1]
        try:
            return parse_text(inner, "<rules>")
        except GDLError as e:
            raise ProtocolError(f"the rules are not well-formed KIF: {e}") from e


def parse_message(text: str | bytes) -> Message:
    """Parse one message from a game manager.

    Args:
        text: The request body (bytes are decoded as UTF-8).

    Returns:
        The message as a frozen value.

    Raises:
        ProtocolError: The text is not one well-formed message: not UTF-8, unbalanced
            parentheses, an unknown keyword, the wrong number of arguments, a bad clock,
            turn, term or rule. The error quotes the offending text.
    """
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError as e:
            raise ProtocolError(f"message is not UTF-8 text: byte {text[e.start]:#04x}") from e
    node = _read(text)
    reader = _Reader(text)
    if node.atom is not None or not node.items or node.items[0].atom is None:
        raise reader.fail("a message is a list that starts with a keyword such as PLAY")
    keyword = node.items[0].atom.lower()
    args = node.items[1:]
    signature = _SIGNATURES.get(keyword)
    if signature is None:
        raise reader.fail(
            f"unknown message {node.items[0].atom!r}: expected INFO, PREVIEW, START, PLAY, "
            "STOP or ABORT"
        )
    arities = {"info": (0,), "preview": (2,), "start": (5,), "abort": (1,)}.get(keyword, (2, 4))
    if len(args) not in arities:
        raise reader.fail(
            f"{keyword.upper()} takes {' or '.join(map(str, arities))} argument(s), "
            f"got {len(args)}; expected {signature}"
        )
    if keyword == "info":
        return Info()
    if keyword == "preview":
        return Preview(reader.rules(args[0]), reader.number(args[1], "the preview clock"))
    if keyword == "start":
        role = reader.term(args[1], "the role")
        if not isinstance(role, Const):
            raise reader.fail(f"the role must be an atom, not {_quote(reader.source(args[1]))}")
        return Start(
            reader.match_id(args[0]),
            role,
            reader.rules(args[2]),
            reader.number(args[3], "the start clock"),
            reader.number(args[4], "the play clock"),
        )
    if keyword == "abort":
        return Abort(reader.match_id(args[0]))
    kind = Play if keyword == "play" else Stop
    match_id = reader.match_id(args[0])
    if len(args) == 2:
        return kind(match_id, None, None, reader.term_list(args[1], "move"))
    turn = reader.turn(args[1])
    last = args[2]
    is_nil = last.atom is not None and last.atom.lower() == "nil"
    last_move = None if is_nil else reader.term(last, "the last move")
    percepts = reader.term_list(args[3], "percept")
    if turn > 0 and last_move is None:
        raise reader.fail(f"turn {turn} has no last move")
    return kind(match_id, turn, last_move, percepts if percepts is not None else ())


# ------------------------------------------------------------------- formatting


def uses_upper_case(text: str) -> bool:
    """Whether a manager wrote ``text`` in upper case (letters, none of them lower case).

    Example:
        >>> uses_upper_case("(PLAY M1 NIL)"), uses_upper_case("( PLAY m17 NIL )")
        (True, False)
    """
    return any(c.isalpha() for c in text) and not any(c.islower() for c in text)


def spelling_of(description: Description) -> dict[str, str]:
    """How each symbol of a game was spelled in its source: lower case -> as written.

    A player replies with its moves spelled as the manager spelled them in the rules.

    Example:
        >>> from ggp.gdl.parser import parse_text
        >>> spelling_of(parse_text("(ROLE xPlayer) (legal xPlayer NOOP)"))["xplayer"]
        'xPlayer'
    """
    spelling: dict[str, str] = {}
    for match in _TOKEN_RE.finditer(description.source):
        token = match.group()
        if token[0] not in "();" and not token[0].isspace():
            spelling.setdefault(token.lower(), token)
    return spelling


def format_word(word: str, upper: bool) -> str:
    """A fixed reply word (``ready``, ``done``, ...) in the manager's case."""
    return word.upper() if upper else word


def format_move(
    term: Term, spelling: Mapping[str, str] | None = None, *, upper: bool = False
) -> str:
    """``term`` as KIF, each symbol spelled as in ``spelling``, else in the manager's case.

    Args:
        term: A move (or any term).
        spelling: Lower-case symbol -> its spelling in the rules (:func:`spelling_of`).
        upper: Upper-case the symbols ``spelling`` does not know.
    """
    name = term.name
    if spelling is not None and name in spelling:
        name = spelling[name]
    elif upper:
        name = name.upper()
    if not term.args:
        return name
    return "(" + " ".join([name, *(format_move(a, spelling, upper=upper) for a in term.args)]) + ")"


def _format_clock(seconds: float) -> str:
    return str(int(seconds)) if float(seconds).is_integer() else f"{seconds:g}"


def _format_terms(terms: Sequence[Term] | None) -> str:
    if terms is None:
        return "nil"
    return "(" + " ".join(map(str, terms)) + ")"


def _format_rules(rules: Description) -> str:
    return "(" + " ".join(str(rule) for rule in rules.rules) + ")"


def format_message(message: Message) -> str:
    """The KIF text of ``message`` (lower case): the inverse of :func:`parse_message`."""
    if isinstance(message, Info):
        return "(info)"
    if isinstance(message, Preview):
        return f"(preview {_format_rules(message.rules)} {_format_clock(message.clock_s)})"
    if isinstance(message, Start):
        return (
            f"(start {message.match_id} {message.role} {_format_rules(message.rules)} "
            f"{_format_clock(message.start_clock_s)} {_format_clock(message.play_clock_s)})"
        )
    if isinstance(message, Abort):
        return f"(abort {message.match_id})"
    keyword = "stop" if isinstance(message, Stop) else "play"
    if message.turn is None:
        return f"({keyword} {message.match_id} {_format_terms(message.terms)})"
    last = "nil" if message.last_move is None else str(message.last_move)
    percepts = "nil" if message.turn == 0 and not message.terms else _format_terms(message.terms)
    return f"({keyword} {message.match_id} {message.turn} {last} {percepts})"


def format_info_reply(name: str, status: str, *, upper: bool = False) -> str:
    """``((name NAME) (status STATUS))``, or the bare ``busy`` while in a match."""
    if status == "busy":
        return format_word("busy", upper)
    return (
        f"(({format_word('name', upper)} {name}) "
        f"({format_word('status', upper)} {format_word(status, upper)}))"
    )


def parse_info_reply(text: str) -> InfoReply:
    """A player's INFO reply: ``((name N) (status S))``, or a bare status word.

    Raises:
        ProtocolError: Neither form.

    Example:
        >>> parse_info_reply("((NAME ggp) (STATUS AVAILABLE))")
        InfoReply(name='ggp', status='available')
        >>> parse_info_reply("busy")
        InfoReply(name='', status='busy')
    """
    node = _read(text)
    if node.atom is not None:
        return InfoReply("", node.atom.lower())
    name, status = "", ""
    for item in node.items:
        if len(item.items) == 2 and item.items[0].atom is not None:
            key = item.items[0].atom.lower()
            value = text[item.items[1].start : item.items[1].end]
            if key == "name":
                name = value
            elif key == "status":
                status = value.lower()
    if not status:
        raise ProtocolError(f"INFO reply has no status: {_quote(text)}")
    return InfoReply(name, status)


def parse_move_reply(text: str) -> Term:
    """A player's reply to PLAY: one ground term, any case.

    Raises:
        ProtocolError: Not exactly one ground term.
    """
    node = _read(text)
    return _Reader(text).term(node, "the reply")
