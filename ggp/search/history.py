"""A role's observation history: exactly what a GDL-II game manager tells a player."""

from __future__ import annotations

from dataclasses import dataclass

from ggp.gdl.terms import Const, Term

__all__ = ["ObservationHistory"]


@dataclass(frozen=True)
class ObservationHistory:
    """The moves a role played and the percepts it received, step by step.

    Attributes:
        role: Whose history it is.
        moves: ``[steps]`` the move applied for ``role`` at each completed step.
        percepts: ``[steps]`` what ``sees`` gave ``role`` after each completed step.

    Example:
        >>> from ggp.gdl.terms import Const
        >>> h = ObservationHistory(Const("p1")).extend(Const("noop"), frozenset())
        >>> len(h), h.moves
        (1, (Const('noop'),))
    """

    role: Const
    moves: tuple[Term, ...] = ()
    percepts: tuple[frozenset[Term], ...] = ()

    def __post_init__(self) -> None:
        if len(self.moves) != len(self.percepts):
            raise ValueError(
                f"{len(self.moves)} moves but {len(self.percepts)} percept sets: one each per step"
            )

    def __len__(self) -> int:
        return len(self.moves)

    def extend(self, move: Term, percepts: frozenset[Term]) -> ObservationHistory:
        """The history after one more step."""
        return ObservationHistory(self.role, (*self.moves, move), (*self.percepts, percepts))

    def suffix_key(self, step: int) -> tuple[tuple[Term, ...], tuple[frozenset[Term], ...]]:
        """A hashable key for the observations from ``step`` on."""
        return (self.moves[step:], self.percepts[step:])

    def prefix(self, steps: int) -> ObservationHistory:
        """The history of the first ``steps`` steps."""
        return ObservationHistory(self.role, self.moves[:steps], self.percepts[:steps])
