"""The exception taxonomy of ggp.

Every error raised because of bad input is a :class:`GGPError`. Problems in a game
description are :class:`GDLError` and carry the file, line and column of the rule at
fault; ``str(error)`` reads ``path:line:col: message`` followed, when the source text
is known, by the offending line and a caret under the column (as lark's
``get_context`` does).

    GGPError
    ├── GDLError
    │   ├── GDLSyntaxError      text that is not well-formed KIF
    │   └── GDLSemanticError    well-formed KIF that breaks a rule of GDL / GDL-II
    ├── GameError               misuse of a Game: illegal move, unknown role, foreign state
    │   ├── GroundingError      a game too large to ground within the configured limits
    │   └── TreeSizeError       a game tree larger than a search's node limit
    ├── NoConsistentHistoryError  no history of the rules explains a role's observations
    ├── ProtocolError           a malformed message from a game manager
    └── SettingError            a setting ggp cannot use (an environment variable, ...)

    OutOfTime (not a GGPError)  work stopped at a deadline it was given

:class:`NoConsistentHistoryError` is not a :class:`GameError` on purpose: a player that
cannot place its observations (they contradict the rules, or the sampler's limits ran
out) falls back to a move it knows to be legal, while a :class:`GameError` (misuse, or a
bug in the engine) is never mistaken for it.
"""

from __future__ import annotations

__all__ = [
    "GGPError",
    "GDLError",
    "GDLSyntaxError",
    "GDLSemanticError",
    "GameError",
    "GroundingError",
    "TreeSizeError",
    "NoConsistentHistoryError",
    "ProtocolError",
    "SettingError",
    "OutOfTime",
]


class GGPError(Exception):
    """Base class of every error ggp raises because of bad input."""


class GDLError(GGPError):
    """A problem in a game description, at ``path:line:column``.

    Args:
        message: What is wrong, quoting the symbols involved.
        path: The file name as the user gave it (``"<string>"`` for text).
        line: 1-based line number, 0 when unknown.
        column: 1-based column number, 0 when unknown.
        source: The full source text, used to print the offending line with a caret.
        warning: True for a problem reported but tolerated (an unsafe rule).
    """

    kind = "error"

    def __init__(
        self,
        message: str,
        path: str = "<string>",
        line: int = 0,
        column: int = 0,
        source: str | None = None,
        *,
        warning: bool = False,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        self.source = source
        self.warning = warning

    @property
    def location(self) -> str:
        """``path:line:col`` (``path`` alone when the position is unknown)."""
        if self.line <= 0:
            return self.path
        return f"{self.path}:{self.line}:{self.column}"

    def context(self, span: int = 60) -> str:
        """The offending source line with a caret under the column ('' if unknown)."""
        if self.source is None or self.line <= 0:
            return ""
        lines = self.source.splitlines()
        if self.line > len(lines):
            return ""
        text = lines[self.line - 1].rstrip("\r")
        col = max(self.column - 1, 0)
        start = max(col - span, 0)
        shown = text[start : col + span]
        # Control characters would garble the terminal: show them escaped.
        shown = "".join(ch if ch.isprintable() or ch == "\t" else "?" for ch in shown)
        return f"{shown}\n{' ' * (col - start)}^"

    def __str__(self) -> str:
        prefix = "warning: " if self.warning else ""
        head = f"{self.location}: {prefix}{self.message}"
        context = self.context()
        return f"{head}\n{context}" if context else head

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}({self.message!r}, {self.path!r}, "
            f"{self.line!r}, {self.column!r})"
        )


class GDLSyntaxError(GDLError):
    """Text that is not well-formed KIF (unbalanced parentheses, bad tokens, ...)."""


class GDLSemanticError(GDLError):
    """Well-formed KIF that breaks a rule of GDL or GDL-II."""


class GameError(GGPError):
    """Misuse of a :class:`ggp.Game`: an illegal move, an unknown role, a foreign state."""


class GroundingError(GameError):
    """A game whose grounding would exceed the configured size, time or memory limit."""


class TreeSizeError(GameError):
    """A game tree that would exceed the node limit of a search (search less deep)."""


class NoConsistentHistoryError(GGPError):
    """No full history of the rules explains a role's observations.

    Raised by the history samplers when the observations contradict the rules (a game
    manager that reports other percepts than the rules give, say) or when no consistent
    history was found within a sampler's limits (attempts, expanded states). A player's
    search catches this one error to fall back to a legal move; anything else is a bug
    or misuse and is not caught there.
    """


class ProtocolError(GGPError):
    """A malformed message from a game manager."""


class SettingError(GGPError, ValueError):
    """A setting ggp cannot use, such as an environment variable that is not a number."""


class OutOfTime(Exception):
    """Work stopped at its deadline: a search step (sampling histories, building a tree)
    or a query to a reasoner that observes one (the prover, see ``Game.until``).

    Not a :class:`GGPError` on purpose: running out of time is no error of the input, and
    whoever set the deadline catches it.
    """
