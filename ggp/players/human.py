"""A person at a terminal, as a :class:`~ggp.players.base.Player`.

:class:`HumanPlayer` shows the person what their role observes — its own moves and its
percepts, never the true state — lists its legal moves and reads a choice, by number or
as KIF. Its legal moves come from a :class:`~ggp.players.random_player.HistoryTracker`,
which keeps one history consistent with the observations (in a well-formed GDL-II game a
role's legal moves are the same in every state it cannot tell apart).

With ``show_board=True`` it also draws the grid of the tracked state (facts such as
``(cell 1 2 x)``, see :func:`format_board`). That state is the true one only when the
role's observations determine it, as in a classic GDL game played with every move public
(:func:`ggp.gdl.embed.with_public_moves`); set it for such games only.

Bad input is asked again. When the input ends (EOF) or the person types ``quit``, ``play``
raises :class:`PlayerQuit`, which a referee's ``except Exception`` lets through, so the
match ends instead of going on with replacement moves.
"""

from __future__ import annotations

import sys
from collections.abc import Iterable, Sequence
from typing import TextIO

import numpy as np

from ggp.errors import GameError, GDLError
from ggp.game import Game
from ggp.gdl.parser import parse_term
from ggp.gdl.terms import Const, Term
from ggp.players.base import MatchInfo, Observation
from ggp.players.random_player import HistoryTracker

__all__ = ["HumanPlayer", "PlayerQuit", "format_board"]

#: Cell values drawn as an empty square.
_BLANKS = frozenset({"b", "blank", "empty"})

#: Undecodable lines in a row after which the input counts as ended.
_READ_ATTEMPTS = 10

_HELP = (
    "Type a move's number, or the move in KIF (outer parentheses optional: mark 1 2); "
    "'history' shows what you have seen so far, 'quit' ends the match."
)


class PlayerQuit(BaseException):
    """The person ended the match (end of input, or ``quit``).

    A BaseException, as KeyboardInterrupt is, so that a referee that replaces the move of
    a failing player (``except Exception``) does not swallow it.
    """


def _is_number(text: str) -> bool:
    """Whether ``text`` is a natural number written in ASCII digits."""
    return text.isascii() and text.isdigit()


def _coordinate_key(term: Term) -> tuple[int, int, str]:
    name = term.name
    if _is_number(name):
        return (0, int(name), "")
    return (1, 0, name)


def _grid_cells(facts: Iterable[Term]) -> list[tuple[Const, Const, Term]] | None:
    """The ``(cell A B V)`` facts as (A, B, V); None if some A or B is not a constant."""
    cells: list[tuple[Const, Const, Term]] = []
    for fact in facts:
        if fact.name != "cell" or fact.arity != 3:
            continue
        a, b, value = fact.args
        if not (isinstance(a, Const) and isinstance(b, Const)):
            return None
        cells.append((a, b, value))
    return cells


def format_board(facts: Iterable[Term], extent: Iterable[Term] = ()) -> str | None:
    """Draw the grid of ``(cell A B V)`` facts as text; None when there is no grid.

    When every (A, B) pair has a fact (a dense grid, as Tic-Tac-Toe's ``(cell ROW COL
    MARK)`` with ``b`` for blank), A is the row (top to bottom) and B the column. When
    only occupied cells have facts (as Connect Four's ``(cell COL ROW ROLE)``), A is the
    column and B the row, the highest row at the top. Blank values (``b``, ``blank``,
    ``empty``) and missing cells are drawn as ``.``.

    Args:
        facts: True base propositions of a state.
        extent: Every ``(cell A B V)`` proposition the game can have (e.g. a propnet's
            base propositions), so that the whole board is drawn even where no fact
            names a row or column; without it the board spans the numbers 1 to the
            largest coordinate seen.

    Returns:
        The drawing, with coordinate labels and a line saying which argument is which.

    Example:
        >>> from ggp.gdl.parser import parse_term
        >>> facts = [parse_term(f"(cell {r} {c} {'x' if r == c else 'b'})")
        ...          for r in (1, 2) for c in (1, 2)]
        >>> print(format_board(facts))
           1 2
        1  x .
        2  . x
        (rows: 1st argument of cell, columns: 2nd)
        >>> print(format_board([parse_term("(cell 2 1 red)")]))
           1   2
        1  .   red
        (columns: 1st argument of cell, rows: 2nd)
    """
    state_cells = _grid_cells(facts)
    extent_cells = _grid_cells(extent)
    if state_cells is None or extent_cells is None:
        return None
    cells: dict[tuple[Const, Const], str] = {
        (a, b): "." if str(value) in _BLANKS else str(value) for a, b, value in state_cells
    }
    domain = set(cells) | {(a, b) for a, b, _ in extent_cells}
    if not domain:
        return None
    firsts = _axis({a for a, _ in domain})
    seconds = _axis({b for _, b in domain})
    if len(cells) == len(firsts) * len(seconds):
        rows, columns = firsts, seconds
        caption = "(rows: 1st argument of cell, columns: 2nd)"

        def at(row: Const, column: Const) -> str:
            return cells.get((row, column), ".")

    else:
        rows, columns = list(reversed(seconds)), firsts
        caption = "(columns: 1st argument of cell, rows: 2nd)"

        def at(row: Const, column: Const) -> str:
            return cells.get((column, row), ".")

    width = max(len(text) for text in (*cells.values(), *(c.name for c in columns)))
    label = max(len(r.name) for r in rows)
    lines = [" " * label + "  " + " ".join(c.name.ljust(width) for c in columns).rstrip()]
    for row in rows:
        marks = " ".join(at(row, column).ljust(width) for column in columns)
        lines.append(f"{row.name.rjust(label)}  {marks}".rstrip())
    lines.append(caption)
    return "\n".join(lines)


def _axis(coordinates: set[Const]) -> list[Const]:
    """The coordinates in order; positive numbers are filled in from 1 to the largest."""
    names = [c.name for c in coordinates]
    if names and all(_is_number(name) for name in names):
        return [Const(str(n)) for n in range(min(1, *map(int, names)), max(map(int, names)) + 1)]
    return sorted(coordinates, key=_coordinate_key)


def _all_base_propositions(game: Game) -> tuple[Term, ...]:
    """Every base proposition of ``game`` when its reasoner lists them (the propnet)."""
    return game.base_propositions or ()


def _format_percepts(percepts: Iterable[Term]) -> str:
    texts = sorted(map(str, percepts))
    return ", ".join(texts) if texts else "nothing"


class HumanPlayer:
    """A person choosing moves at a terminal; see the module docstring.

    Args:
        input_stream: Where the person's lines come from (default ``sys.stdin``).
        output: Where prompts and observations go (default ``sys.stdout``).
        show_board: Draw the tracked state's grid each turn. Only for games in which the
            role's observations determine the state (classic GDL with public moves).
        rng: Randomness of the history tracker (it picks one consistent history).

    The player has no clock: it waits for the person however long they take, so run it
    with a play clock that allows that.
    """

    name = "human"

    def __init__(
        self,
        input_stream: TextIO | None = None,
        output: TextIO | None = None,
        *,
        show_board: bool = False,
        rng: np.random.Generator | None = None,
    ) -> None:
        self.input = input_stream if input_stream is not None else sys.stdin
        self.output = output if output is not None else sys.stdout
        self.show_board = show_board
        self.rng = rng if rng is not None else np.random.default_rng()
        self._tracker: HistoryTracker | None = None
        self._extent: tuple[Term, ...] = ()

    # ----------------------------------------------------------------- output

    def _write(self, text: str = "") -> None:
        try:
            self.output.write(text + "\n")
            self.output.flush()
        except OSError as e:  # the terminal or pipe went away: nobody is playing any more
            raise PlayerQuit(f"output closed: {e}") from e

    def _show_step(self, step: int) -> None:
        assert self._tracker is not None
        history = self._tracker.history
        self._write(
            f"Step {step + 1}: you played {history.moves[step]}; "
            f"you see {_format_percepts(history.percepts[step])}"
        )

    def _show_history(self) -> None:
        assert self._tracker is not None
        if not len(self._tracker.history):
            self._write("Nothing has happened yet.")
        for step in range(len(self._tracker.history)):
            self._show_step(step)

    def _show_board(self) -> None:
        assert self._tracker is not None
        if not self.show_board:
            return
        game = self._tracker.game
        board = format_board(game.state_facts(self._tracker.current().state), self._extent)
        if board is not None:
            self._write(board)

    # ----------------------------------------------------------------- input

    def _read(self, prompt: str) -> str:
        try:
            self.output.write(prompt)
            self.output.flush()
        except OSError as e:
            raise PlayerQuit(f"output closed: {e}") from e
        line = ""
        for _ in range(_READ_ATTEMPTS):
            try:
                line = self.input.readline()
                break
            except UnicodeDecodeError:
                self._write("That line could not be read (not text); please type it again.")
        if not line:
            self._write()
            self._write("End of input: the match is abandoned.")
            raise PlayerQuit("end of input")
        return line.strip()

    def _choose(self, moves: Sequence[Term]) -> Term:
        for number, listed in enumerate(moves, 1):
            self._write(f"  {number:>2}) {listed}")
        while True:
            text = self._read(f"Your move (1-{len(moves)} or KIF, ? for help)> ")
            if not text:
                continue
            if _is_number(text):
                number = int(text)
                if 1 <= number <= len(moves):
                    return moves[number - 1]
                self._write(f"There is no move number {number}: choose 1 to {len(moves)}.")
                continue
            move = self._parse(text)
            if move is not None and move in moves:
                return move
            lowered = text.lower()
            if lowered in ("?", "help"):
                self._write(_HELP)
            elif lowered in ("history", "h"):
                self._show_history()
            elif lowered in ("quit", "q", "exit"):
                self._write("You quit: the match is abandoned.")
                raise PlayerQuit("quit")
            elif move is None:
                self._write(f"Not a move: {text!r}. {_HELP}")
            else:
                legal = " ".join(str(m) for m in moves)
                self._write(f"{move} is not one of your moves now: {legal}")

    @staticmethod
    def _parse(text: str) -> Term | None:
        for candidate in (text, f"({text})"):
            try:
                return parse_term(candidate)
            except GDLError:
                continue
        return None

    # ----------------------------------------------------------------- Player

    def start(self, match: MatchInfo) -> None:
        """Set up the history tracker and greet the person."""
        self._tracker = HistoryTracker(match, self.rng)
        self._extent = _all_base_propositions(match.game)
        roles = " ".join(role.name for role in match.game.roles)
        self._write(f"You play {match.role} in {match.game.description.path} (roles: {roles}).")
        self._write(_HELP)

    def play(self, observation: Observation, deadline: float) -> Term:
        """Show the last step's observations, then read the person's move.

        Raises:
            PlayerQuit: The input ended or the person quit.
            GameError: ``play`` before ``start``, or no legal move.
        """
        tracker = self._tracker
        if tracker is None:
            raise GameError("play() before start()")
        tracker.observe(observation)
        self._write()
        if observation.last_move is not None:
            self._show_step(len(tracker.history) - 1)
        moves = tracker.legal_moves()
        if len(moves) == 1:
            self._write(f"Turn {observation.turn + 1}: your only move is {moves[0]}.")
            return moves[0]
        self._show_board()
        self._write(f"Turn {observation.turn + 1}: your moves as {tracker.history.role}:")
        return self._choose(moves)

    def stop(self, observation: Observation) -> None:
        """Show the final observations."""
        tracker = self._tracker
        if tracker is None:
            return
        tracker.observe(observation)
        self._write()
        if observation.last_move is not None:
            self._show_step(len(tracker.history) - 1)
        self._show_board()
        self._write("The game is over.")
        self._tracker = None

    def abort(self) -> None:
        """Forget the match."""
        self._tracker = None
