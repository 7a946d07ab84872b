"""Compiled games shared by the matches of ``ggp serve``, and per-thread views of them.

Grounding and compiling a game takes a while, so :class:`GameCache` keeps the last few,
keyed by their rules: a game played again starts at once. Thread safety: the compiled
propnet is pure (its memo tables are dicts, safe under the GIL) and is shared by the
threads of a match and by later matches; each thread family gets its own
:class:`~ggp.game.Game` view (:func:`game_view`), so the transition caches (not
thread-safe) are never shared. The reference prover keeps mutable caches, so a shared
prover is wrapped in a lock.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any

from ggp.game import Game, ReasonerName
from ggp.gdl.terms import Const, Description, Term
from ggp.reasoning.state_machine import State

__all__ = ["GameCache", "game_view"]


class _LockedMachine:
    """A state machine whose calls are serialised by a lock (for the prover)."""

    def __init__(self, machine: Any) -> None:
        self._machine = machine
        self._lock = threading.Lock()

    @property
    def roles(self) -> tuple[Const, ...]:
        roles: tuple[Const, ...] = self._machine.roles
        return roles

    def _call(self, name: str, *args: Any) -> Any:
        with self._lock:
            return getattr(self._machine, name)(*args)

    def initial_state(self) -> State:
        state: State = self._call("initial_state")
        return state

    def legal_moves(self, state: State, role: Const) -> tuple[Term, ...]:
        moves: tuple[Term, ...] = self._call("legal_moves", state, role)
        return moves

    def next_state(self, state: State, joint: Sequence[Term]) -> State:
        result: State = self._call("next_state", state, joint)
        return result

    def percepts(self, state: State, joint: Sequence[Term], role: Const) -> frozenset[Term]:
        result: frozenset[Term] = self._call("percepts", state, joint, role)
        return result

    def is_terminal(self, state: State) -> bool:
        return bool(self._call("is_terminal", state))

    def goals(self, state: State) -> tuple[int, ...]:
        goals: tuple[int, ...] = self._call("goals", state)
        return goals

    def state_facts(self, state: State) -> frozenset[Term]:
        facts: frozenset[Term] = self._call("state_facts", state)
        return facts

    def state_from_facts(self, facts: frozenset[Term]) -> State:
        state: State = self._call("state_from_facts", facts)
        return state


def game_view(base: Game, cache_size: int) -> Game:
    """A new :class:`Game` over ``base``'s reasoner with its own transition cache."""
    game = Game(
        base.machine,
        base.description,
        reasoner=base.reasoner,
        warnings=base.warnings,
        cache_size=cache_size,
    )
    game.moves_public = base.moves_public
    return game


class GameCache:
    """Compiled games by their rules, least recently used dropped first."""

    def __init__(self, size: int, reasoner: ReasonerName = "auto") -> None:
        self._size = size
        self._reasoner: ReasonerName = reasoner
        self._games: OrderedDict[tuple[object, ...], Game] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, rules: Description) -> Game:
        """The game for ``rules``, built (and validated) when not cached.

        Raises:
            GDLError: The rules are not valid GDL / GDL-II.
            GameError: The game cannot be built.
        """
        key = tuple(rules.rules)
        with self._lock:
            game = self._games.get(key)
            if game is not None:
                self._games.move_to_end(key)
                return game
            game = Game.from_description(rules, reasoner=self._reasoner)
            if game.reasoner != "propnet":
                shared = Game(
                    _LockedMachine(game.machine),
                    game.description,
                    reasoner=game.reasoner,
                    warnings=game.warnings,
                )
                shared.moves_public = game.moves_public
                game = shared
            self._games[key] = game
            while len(self._games) > self._size:
                self._games.popitem(last=False)
            return game
