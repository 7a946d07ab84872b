"""The interface every reasoner implements, and the immutable game :class:`State`.

Two implementations exist: :class:`~ggp.reasoning.prover.ProverStateMachine` (the slow,
plainly correct reference over the un-ground rules) and the compiled propnet. Tests
cross-check them. Users and everything above the reasoner use :class:`ggp.Game`, which
wraps one of them with argument checking and the LRU transition cache.

Conventions shared by all implementations:

- Roles are :class:`~ggp.gdl.terms.Const` terms in file order, ``random`` included.
- A joint move is a tuple with one move (a term) per role, in ``roles`` order.
- ``legal_moves`` returns the moves in canonical order: sorted by their KIF text.
- ``goals`` gives one int per role in ``roles`` order: the role's goal value, the largest
  if the rules give several, 0 if they give none (e.g. for ``random``).
- ``percepts`` is the frozenset of ``p`` with ``(sees role p)`` in the state, given the
  joint move being played from it.
- States are :class:`State` values made by the machine itself; passing a state made by
  another machine, a role that does not exist, or a joint move with a missing or illegal
  move raises :class:`~ggp.errors.GameError`.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Hashable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

from ggp.gdl.terms import Const, Term

__all__ = [
    "State",
    "StateMachine",
    "JointMove",
    "FastQueries",
    "fact_hash64",
    "zobrist_of_facts",
]

#: One move per role, in the machine's ``roles`` order.
JointMove = tuple[Term, ...]


class State:
    """An immutable, hashable game state.

    Attributes:
        key: The machine's own encoding of the set of true base propositions (a frozenset
            of terms for the prover, an int bit-set for the propnet). Equal states of one
            machine have equal keys.
        owner: An object identifying the machine that made the state; states of different
            machines never compare equal, and a machine refuses a foreign state.
    """

    __slots__ = ("key", "owner", "_hash")

    key: Hashable
    owner: object
    _hash: int

    def __init__(self, key: Hashable, owner: object) -> None:
        object.__setattr__(self, "key", key)
        object.__setattr__(self, "owner", owner)
        object.__setattr__(self, "_hash", hash(key))

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("State is immutable")

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, State)
            and self._hash == other._hash
            and self.owner is other.owner
            and self.key == other.key
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        return f"<State {self.key!r}>"


def fact_hash64(fact: Term) -> int:
    """A fixed 64-bit random-looking word for a base proposition, from its KIF text.

    The same in every process and run, so Zobrist keys (the XOR of these words over a
    state's true facts) agree between reasoners, processes and sessions.
    """
    return int.from_bytes(hashlib.blake2b(str(fact).encode(), digest_size=8).digest(), "little")


def zobrist_of_facts(facts: Iterable[Term]) -> int:
    """The Zobrist key of a set of facts: the XOR of their :func:`fact_hash64` words."""
    key = 0
    for fact in facts:
        key ^= fact_hash64(fact)
    return key


@runtime_checkable
class StateMachine(Protocol):
    """What a reasoner offers; see the module docstring for the conventions."""

    @property
    def roles(self) -> tuple[Const, ...]: ...

    def initial_state(self) -> State: ...

    def legal_moves(self, state: State, role: Const) -> tuple[Term, ...]: ...

    def next_state(self, state: State, joint: Sequence[Term]) -> State: ...

    def percepts(self, state: State, joint: Sequence[Term], role: Const) -> frozenset[Term]: ...

    def is_terminal(self, state: State) -> bool: ...

    def goals(self, state: State) -> tuple[int, ...]: ...

    def state_facts(self, state: State) -> frozenset[Term]:
        """The true base propositions of ``state`` (the F of each ``(true F)``)."""
        ...

    def state_from_facts(self, facts: frozenset[Term]) -> State:
        """The state whose true base propositions are ``facts``."""
        ...


@dataclass(frozen=True)
class FastQueries:
    """A reasoner's playout queries taking :class:`~ggp.game.Game`'s arguments directly
    (one native call each, no Python frame), with the Game's own methods as fallbacks for
    the arguments they do not take: ``PropnetStateMachine.fast_queries``.

    Attributes:
        legal_moves: ``(state, role) -> moves``, as :meth:`ggp.Game.legal_moves`.
        next_state: ``(state, joint) -> state``, as :meth:`ggp.Game.next_state`.
        is_terminal: ``(state) -> bool``, as :meth:`ggp.Game.is_terminal`.
    """

    legal_moves: Callable[[State, Any], tuple[Term, ...]]
    next_state: Callable[[State, Any], State]
    is_terminal: Callable[[State], bool]
