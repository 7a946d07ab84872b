"""The one interface to a game's rules: :class:`Game`.

Everything above the reasoner (sampler, CFR, players, protocol, training) talks to this
class only. It loads and validates a description, picks a reasoner (the compiled propnet
when the game grounds within the limits, otherwise the goal-directed top-down prover —
``reasoner`` says which is in use), checks arguments, and keeps an LRU transition cache from
``(state, joint move)`` to ``(next state, percepts)``.

Example:
    >>> game = Game.from_text('''
    ...     (role player) (init (count 0))
    ...     (<= (legal player inc) (true (count 0)))
    ...     (<= (next (count 1)) (does player inc))
    ...     (<= (sees player (now 1)) (does player inc))
    ...     (<= terminal (true (count 1)))
    ...     (<= (goal player 100) (true (count 1)))
    ...     (<= (goal player 0) (true (count 0)))
    ... ''', reasoner="prover")
    >>> s = game.initial_state()
    >>> game.legal_moves(s, "player")
    (Const('inc'),)
    >>> t = game.next_state(s, ["inc"])
    >>> sorted(map(str, game.state_facts(t))), game.is_terminal(t), game.goals(t)
    (['(count 1)'], True, (100,))
    >>> sorted(map(str, game.percepts(s, ["inc"], "player")))
    ['(now 1)']
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar, cast, overload, runtime_checkable

import numpy as np
import numpy.typing as npt
from cachetools import LRUCache

from ggp.errors import GameError, GDLError, GroundingError
from ggp.gdl.embed import with_public_moves
from ggp.gdl.parser import parse_file, parse_term, parse_text
from ggp.gdl.terms import Const, Description, Term
from ggp.gdl.validate import check, summarize
from ggp.reasoning.ground import GroundingLimits
from ggp.reasoning.state_machine import (
    FastQueries,
    JointMove,
    State,
    StateMachine,
    zobrist_of_facts,
)

if TYPE_CHECKING:
    from ggp.reasoning.propnet_machine import PlayoutResult, PropnetStateMachine

__all__ = ["Game", "CacheInfo", "Expansion", "LazySequence", "PropnetSize", "ReasonerName"]

T = TypeVar("T")

logger = logging.getLogger(__name__)

ReasonerName = Literal["auto", "propnet", "topdown", "prover"]


@runtime_checkable
class BatchedMachine(Protocol):
    """A reasoner that also plays many random playouts in one call (the propnet)."""

    def batch_from_states(self, states: Sequence[State]) -> Any: ...

    def random_playouts(
        self,
        start: Any,
        n: int,
        rng: np.random.Generator,
        max_steps: int = ...,
        deadline: float | None = ...,
    ) -> Any: ...


RoleLike = Const | str
MoveLike = Term | str
JointLike = Sequence[MoveLike] | Mapping[RoleLike, MoveLike]

#: Default number of transitions the LRU cache keeps.
DEFAULT_CACHE_SIZE = 100_000


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

    def until(self, deadline: float | None) -> AbstractContextManager[None]:
        until = getattr(self._machine, "until", None)
        return contextlib.nullcontext() if until is None else cast(Any, until)(deadline)

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


@dataclass(frozen=True)
class PropnetSize:
    """Size of a game's compiled propositional network.

    Attributes:
        components: All nodes of the net (constants, base and input propositions,
            gates and loop nodes).
        base: Base propositions (the state's bits).
        inputs: Input propositions (``(does role move)``).
        gates: AND, OR and NOT gates.
    """

    components: int
    base: int
    inputs: int
    gates: int


@dataclass(frozen=True)
class CacheInfo:
    """Counters of the transition cache (all zero when the cache is off)."""

    hits: int
    misses: int
    size: int
    maxsize: int

    @property
    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0


class LazySequence(Sequence[T]):
    """``[n]`` items computed on first access by ``item(i)``, then kept: the successors
    of an expansion too wide to compute at once (a search under a clock visits few).

    Example:
        >>> squares = LazySequence(4, lambda i: i * i)
        >>> len(squares), squares[3], list(squares), squares.computed
        (4, 9, [0, 1, 4, 9], 4)
    """

    def __init__(self, n: int, item: Callable[[int], T]) -> None:
        self._n = n
        self._item = item
        self._done: dict[int, T] = {}

    def __len__(self) -> int:
        return self._n

    @property
    def computed(self) -> int:
        """Items computed so far."""
        return len(self._done)

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> Sequence[T]: ...

    def __getitem__(self, index: int | slice) -> T | Sequence[T]:
        if isinstance(index, slice):
            return [self[i] for i in range(*index.indices(self._n))]
        if index < 0:
            index += self._n
        if not 0 <= index < self._n:
            raise IndexError(index)
        done = self._done.get(index)
        if done is None:
            done = self._done[index] = self._item(index)
        return done

    def __repr__(self) -> str:
        return f"<LazySequence of {self._n}, {len(self._done)} computed>"


@dataclass(frozen=True, eq=False)
class Expansion:
    """Every joint move legal in one state, with its successor: :meth:`Game.expand`.

    Joint moves come in ``itertools.product(*legal)`` order (the last role varies
    fastest), so the child of per-role move indices ``(i_0, ..., i_{R-1})`` is at
    ``sum(i_r * strides[r])``.

    Attributes:
        state: The expanded state.
        legal: ``[R][M_r]`` each role's legal moves in :attr:`Game.roles` order, sorted.
        joints: ``[J]`` the joint moves, ``J = prod(M_r)`` (0 in a terminal state where a
            role has no legal move).
        states: ``[J]`` the successor of each joint move (a tuple; a search's lazy view
            may compute them on demand, :class:`LazySequence`).
    """

    state: State
    legal: tuple[tuple[Term, ...], ...]
    joints: Sequence[JointMove]
    states: Sequence[State]

    @property
    def strides(self) -> tuple[int, ...]:
        """``[R]`` how far apart in :attr:`joints` consecutive moves of each role are."""
        strides = [1] * len(self.legal)
        for r in range(len(self.legal) - 2, -1, -1):
            strides[r] = strides[r + 1] * len(self.legal[r + 1])
        return tuple(strides)

    def child(self, moves: Sequence[int]) -> State:
        """The successor when role ``r`` plays its ``moves[r]``-th legal move."""
        return self.states[sum(i * s for i, s in zip(moves, self.strides, strict=True))]

    def __len__(self) -> int:
        return len(self.joints)

    def __repr__(self) -> str:
        counts = "x".join(str(len(moves)) for moves in self.legal)
        return f"<Expansion of {self.state!r}: {counts} joint moves>"


class Game:
    """A game's rules, ready to play: roles, states, moves, percepts and goals.

    Args:
        machine: The reasoner answering the queries.
        description: The parsed (and validated) game description, as the user gave it.
        reasoner: The name of the reasoner in use: ``"propnet"``, ``"topdown"`` or
            ``"prover"``.
        warnings: Problems tolerated at load time (unsafe rules).
        cache_size: Transitions kept in the LRU cache; 0 turns the cache off.
    """

    def __init__(
        self,
        machine: StateMachine,
        description: Description,
        *,
        reasoner: str,
        warnings: Sequence[GDLError] = (),
        cache_size: int = DEFAULT_CACHE_SIZE,
    ) -> None:
        self.machine = machine
        self.description = description
        self.reasoner = reasoner
        self.warnings = tuple(warnings)
        #: True for a classic GDL game: every role sees every joint move.
        self.moves_public = False
        #: Why ``reasoner="auto"`` fell back to the top-down prover (None: it did not).
        self.grounding_failure: str | None = None
        self.roles: tuple[Const, ...] = tuple(machine.roles)
        self._role_index = {role: i for i, role in enumerate(self.roles)}
        self.random_role: Const | None = (
            Const("random") if Const("random") in self._role_index else None
        )
        self.player_roles: tuple[Const, ...] = tuple(r for r in self.roles if r != self.random_role)
        self._cache: LRUCache[tuple[State, JointMove], list[object]] | None = (
            LRUCache(maxsize=cache_size) if cache_size > 0 else None
        )
        self._hits = 0
        self._misses = 0
        self._terms: dict[str, Term] = {}
        self._install_fast_queries()

    def _install_fast_queries(self) -> None:
        """With the native propnet kernel, :meth:`legal_moves` and :meth:`is_terminal`
        (and :meth:`next_state` when there is no transition cache) are answered in one C
        call each (a third of a playout's time went to the Python layers on breakthrough):
        instance attributes shadow the methods, which stay as the fallbacks for what the
        kernel does not take itself (role names, strings, mappings, errors)."""
        make = getattr(self.machine, "fast_queries", None)
        cls = type(self)
        if make is None or any(
            getattr(cls, name) is not getattr(Game, name)  # a subclass's override wins
            for name in ("legal_moves", "next_state", "is_terminal")
        ):
            return
        fast: FastQueries | None = make(
            cls.legal_moves.__get__(self),
            cls.next_state.__get__(self),
            cls.is_terminal.__get__(self),
        )
        if fast is not None:
            self.legal_moves = fast.legal_moves  # type: ignore[method-assign,assignment]
            self.is_terminal = fast.is_terminal  # type: ignore[method-assign,assignment]
            if self._cache is None:  # with one, next_state goes through it
                self.next_state = fast.next_state  # type: ignore[method-assign,assignment]

    # ----------------------------------------------------------------- loading

    @classmethod
    def from_file(
        cls,
        path: str | Path,
        *,
        reasoner: ReasonerName = "auto",
        cache_size: int = DEFAULT_CACHE_SIZE,
        strict: bool = False,
        limits: GroundingLimits | None = None,
    ) -> Game:
        """Load, validate and compile a game description file.

        Args:
            path: The game description.
            reasoner: ``"propnet"``, ``"topdown"`` (goal-directed evaluation of the
                rules, :mod:`ggp.reasoning.topdown`), ``"prover"`` (the bottom-up
                reference), or ``"auto"``: the propnet unless the game is too large to
                ground within ``limits`` (its sizes, or its time and memory budget: then
                ``"topdown"``, with a one-line warning of why).
            cache_size: Transitions kept in the LRU cache (0: no cache).
            strict: Refuse unsafe rules instead of warning.
            limits: Grounding limits (default :class:`GroundingLimits` ()).

        Raises:
            GDLError: The file cannot be read, parsed or validated.
            GroundingError: ``reasoner="propnet"`` and the game is too large to ground.
        """
        return cls.from_description(
            parse_file(path), reasoner=reasoner, cache_size=cache_size, strict=strict, limits=limits
        )

    @classmethod
    def from_text(
        cls,
        text: str,
        path: str = "<string>",
        *,
        reasoner: ReasonerName = "auto",
        cache_size: int = DEFAULT_CACHE_SIZE,
        strict: bool = False,
        limits: GroundingLimits | None = None,
    ) -> Game:
        """Like :meth:`from_file`, from KIF text."""
        return cls.from_description(
            parse_text(text, path),
            reasoner=reasoner,
            cache_size=cache_size,
            strict=strict,
            limits=limits,
        )

    @classmethod
    def from_description(
        cls,
        description: Description,
        *,
        reasoner: ReasonerName = "auto",
        cache_size: int = DEFAULT_CACHE_SIZE,
        strict: bool = False,
        limits: GroundingLimits | None = None,
    ) -> Game:
        """Validate ``description`` and build the reasoner for it (see :meth:`from_file`).

        A description without ``sees`` rules (classic GDL) is read as GDL-II reads it
        from a game manager: every role sees the whole joint move after each step
        (:data:`~ggp.gdl.embed.PUBLIC_MOVES_RULE`), so it always knows the true state.
        """
        warnings = check(description, strict=strict)
        moves_public = not summarize(description).has_sees
        rules = with_public_moves(description) if moves_public else description
        for warning in warnings:
            logger.warning("%s", warning)
        machine: StateMachine
        name: str
        failure: str | None = None
        if reasoner in ("auto", "propnet"):
            try:
                from ggp.reasoning.propnet_machine import PropnetStateMachine

                machine, name = PropnetStateMachine(rules, limits=limits), "propnet"
            except GroundingError as e:
                if reasoner == "propnet":
                    raise
                failure = str(e)
                logger.warning("%s: %s; using the top-down prover instead", description.path, e)
                machine, name = cls._unground(rules, "topdown"), "topdown"
        elif reasoner in ("topdown", "prover"):
            machine, name = cls._unground(rules, reasoner), reasoner
        else:
            raise ValueError(f"unknown reasoner {reasoner!r}: use auto, propnet, topdown or prover")
        game = cls(machine, description, reasoner=name, warnings=warnings, cache_size=cache_size)
        game.moves_public = moves_public
        game.grounding_failure = failure
        return game

    @staticmethod
    def _unground(description: Description, name: str) -> StateMachine:
        """A reasoner over the un-ground rules: ``"topdown"`` or ``"prover"``."""
        if name == "topdown":
            from ggp.reasoning.topdown import TopDownStateMachine

            return TopDownStateMachine(description)
        from ggp.reasoning.prover import ProverStateMachine

        return ProverStateMachine(description)

    # ----------------------------------------------------------------- arguments

    def role(self, role: RoleLike) -> Const:
        """The role term for ``role`` (a Const or its name, any case).

        Raises:
            GameError: No such role.
        """
        term = Const(role.lower()) if isinstance(role, str) else role
        if term not in self._role_index:
            names = " ".join(r.name for r in self.roles)
            raise GameError(f"no role {role!s} in this game (roles: {names})")
        return term

    def role_index(self, role: RoleLike) -> int:
        """Position of ``role`` in :attr:`roles`."""
        return self._role_index[self.role(role)]

    def term(self, move: MoveLike) -> Term:
        """``move`` as a term: terms pass through, strings are parsed as KIF."""
        if isinstance(move, Term):
            return move
        term = self._terms.get(move)
        if term is None:
            term = parse_term(move)
            self._terms[move] = term
        return term

    def joint_move(self, joint: JointLike) -> JointMove:
        """A joint move as a tuple in role order, from a sequence or a role->move mapping.

        Raises:
            GameError: The wrong number of moves, or a mapping that misses a role.
        """
        cls = type(joint)
        if (cls is tuple or cls is list) and len(joint) == len(self.roles):
            for move in joint:  # the common case: one term per role (on every step)
                if not isinstance(move, Term):
                    break
            else:
                return joint if cls is tuple else tuple(joint)  # type: ignore[return-value,arg-type]
        if isinstance(joint, Mapping):
            by_role = {self.role(r): m for r, m in joint.items()}
            missing = [r.name for r in self.roles if r not in by_role]
            if missing:
                raise GameError(f"joint move has no move for role(s) {' '.join(missing)}")
            return tuple(self.term(by_role[r]) for r in self.roles)
        if isinstance(joint, str):
            raise GameError(f"a joint move is one move per role, not the string {joint!r}")
        moves = tuple(m if isinstance(m, Term) else self.term(m) for m in joint)
        if len(moves) != len(self.roles):
            raise GameError(
                f"joint move has {len(moves)} moves, the game has {len(self.roles)} roles "
                f"({' '.join(r.name for r in self.roles)})"
            )
        return moves

    # ----------------------------------------------------------------- queries

    def initial_state(self) -> State:
        """The state defined by ``init``."""
        return self.machine.initial_state()

    def legal_moves(self, state: State, role: RoleLike) -> tuple[Term, ...]:
        """The legal moves of ``role`` in ``state``, sorted by their KIF text."""
        if role not in self._role_index:  # a name, or no role of this game
            role = self.role(role)
        return self.machine.legal_moves(state, role)

    def _transition(self, state: State, joint: JointMove) -> list[object]:
        cache = self._cache
        if cache is None:
            return [self.machine.next_state(state, joint), None]
        key = (state, joint)
        entry = cache.get(key)
        if entry is None:
            self._misses += 1
            entry = [self.machine.next_state(state, joint), None]
            cache[key] = entry
        else:
            self._hits += 1
        return entry

    def next_state(self, state: State, joint: JointLike) -> State:
        """The state after every role plays its move of ``joint``.

        Raises:
            GameError: A missing or illegal move, or a state from another game.
        """
        moves = self.joint_move(joint)
        if self._cache is None:
            return self.machine.next_state(state, moves)
        result = self._transition(state, moves)[0]
        assert isinstance(result, State)
        return result

    def next_states(self, state: State, joints: Sequence[JointMove]) -> list[State]:
        """The successors of ``state`` under each of ``joints`` (tuples of terms).

        The propnet computes them all in one batched call; the results also fill the
        transition cache.

        Raises:
            GameError: A malformed or illegal joint move, or a state from another game.
        """
        machine = self.machine
        cache = self._cache
        if cache is not None:
            found = [cache.get((state, joint)) for joint in joints]
            if all(entry is not None for entry in found):
                self._hits += len(joints)
                return [entry[0] for entry in found]  # type: ignore[index,misc]
        batched = getattr(machine, "next_states", None)
        if batched is not None:
            results: list[State] = batched(state, joints)
        else:
            results = [machine.next_state(state, joint) for joint in joints]
        if cache is not None:
            self._misses += len(joints)
            for joint, result in zip(joints, results, strict=True):
                cache[(state, joint)] = [result, None]
        return results

    def expand(self, state: State) -> Expansion:
        """Every legal joint move of ``state`` with its successor, in one call.

        The search-facing batch call: the propnet computes all successors at once, and
        they fill the transition cache. Terminal states are not special: the rules may
        still give legal moves there, so a search checks :meth:`is_terminal` first.

        Raises:
            GameError: A state from another game.
        """
        batched = getattr(self.machine, "expand", None)
        if batched is None:
            legal = tuple(self.machine.legal_moves(state, role) for role in self.roles)
            joints = tuple(itertools.product(*legal))
            return Expansion(state, legal, joints, tuple(self.next_states(state, joints)))
        legal, states = batched(state)
        joints = tuple(itertools.product(*legal))
        cache = self._cache
        if cache is not None:
            self._misses += len(joints)
            for joint, child in zip(joints, states, strict=True):
                cache[(state, joint)] = [child, None]
        return Expansion(state, legal, joints, tuple(states))

    def legal_moves_many(self, states: Sequence[State], role: RoleLike) -> list[tuple[Term, ...]]:
        """The legal moves of ``role`` in each of ``states`` (sorted, as :meth:`legal_moves`)."""
        term = self.role(role)
        legal_moves = self.machine.legal_moves
        return [legal_moves(state, term) for state in states]

    def percepts(self, state: State, joint: JointLike, role: RoleLike) -> frozenset[Term]:
        """What ``sees`` gives ``role`` when ``joint`` is played in ``state``."""
        moves = self.joint_move(joint)
        index = self.role_index(role)
        entry = self._transition(state, moves)
        percepts = entry[1]
        if percepts is None:
            percepts = tuple(self.machine.percepts(state, moves, r) for r in self.roles)
            entry[1] = percepts
        assert isinstance(percepts, tuple)
        result: frozenset[Term] = percepts[index]
        return result

    def is_terminal(self, state: State) -> bool:
        """Whether ``state`` ends the game."""
        return self.machine.is_terminal(state)

    def goals(self, state: State) -> tuple[int, ...]:
        """One goal value 0..100 per role, in :attr:`roles` order."""
        return self.machine.goals(state)

    def state_facts(self, state: State) -> frozenset[Term]:
        """The true base propositions of ``state``."""
        return self.machine.state_facts(state)

    def zobrist(self, state: State) -> int:
        """A 64-bit Zobrist key of ``state`` for transposition tables: the XOR of a fixed
        word per true fact (:func:`~ggp.reasoning.state_machine.fact_hash64`), so equal
        states get equal keys in every reasoner and process."""
        method = getattr(self.machine, "zobrist", None)
        if method is not None:
            key: int = method(state)
            return key
        return zobrist_of_facts(self.machine.state_facts(state))

    def counter(self, name: str) -> Callable[[State], int | None]:
        """A fast reader of a game's numeric counter: the ``N`` of the state fact
        ``(NAME N)`` (a step or time counter, say), or None when no such fact holds.

        With a propositional network it reads the state's bits directly (no fact set is
        built); with the prover it scans the state's facts.

        Example:
            >>> game = Game.from_text("(role r) (init (step 0)) (<= (legal r go) (true (step ?n)))"
            ...     " (<= (next (step 1)) (true (step 0))) (<= terminal (true (step 1)))"
            ...     " (goal r 100)")
            >>> clock = game.counter("step")
            >>> clock(game.initial_state()), clock(game.next_state(game.initial_state(), ["go"]))
            (0, 1)
        """
        net = self._propnet()
        if net is None:

            def from_facts(state: State) -> int | None:
                for fact in self.machine.state_facts(state):
                    if fact.name == name and len(fact.args) == 1 and fact.args[0].name.isdigit():
                        return int(fact.args[0].name)
                return None

            return from_facts
        values: dict[int, int] = {}
        mask = 0
        for k, fact in enumerate(net.propnet.base):
            if fact.name == name and len(fact.args) == 1 and fact.args[0].name.isdigit():
                values[k] = int(fact.args[0].name)
                mask |= 1 << k

        def from_bits(state: State) -> int | None:
            bits = cast(int, state.key) & mask
            return values[bits.bit_length() - 1] if bits else None

        return from_bits

    def fact_reader(self, parse: Callable[[Term], T]) -> Callable[[State], list[T]]:
        """A fast reader of a state's true facts, each as ``parse(fact)``, for code that
        reads the board out of states at every search leaf.

        With a propositional network every base proposition (any fact a state can
        hold: ``parse`` takes them all) is parsed once, here, and a state's set bits pick
        theirs (no fact set is built); with the prover a state's facts are parsed as they
        are read (cache in ``parse`` if it is costly).

        Example:
            >>> game = Game.from_file("games/tictactoe.gdl")
            >>> names = game.fact_reader(lambda fact: fact.name)
            >>> sorted(names(game.initial_state()))[-3:], len(names(game.initial_state()))
            (['cell', 'cell', 'control'], 10)
        """
        from ggp.reasoning.propnet_machine import set_bits

        net = self._propnet()
        if net is None:
            facts = self.machine.state_facts
            return lambda state: [parse(fact) for fact in facts(state)]
        table = [parse(fact) for fact in net.propnet.base]
        return lambda state: [table[i] for i in set_bits(cast(int, state.key))]

    def state_from_facts(self, facts: Iterable[Term | str]) -> State:
        """The state whose true base propositions are ``facts`` (terms or KIF text)."""
        return self.machine.state_from_facts(frozenset(self.term(f) for f in facts))

    def random_playouts(
        self,
        states: Sequence[State],
        n: int,
        rng: np.random.Generator,
        max_steps: int = 10_000,
        deadline: float | None = None,
    ) -> npt.NDArray[np.float64]:
        """Mean goals of ``n`` uniformly random playouts from each of ``states``.

        Uses the reasoner's batched playouts when it has them (the propnet: every playout
        of every state in one bit-sliced call), else plays one playout at a time. Either
        way it stops at ``deadline`` (a ``time.monotonic()`` value, checked every step):
        the playouts not finished by then count 0, so the caller that passed a deadline
        checks it before using the values.

        Returns:
            ``[len(states), num_roles]`` float64: the mean goal value of each role
            (a playout unfinished after ``max_steps`` counts 0 for everyone).
        """
        roles = len(self.roles)
        if not states or n <= 0:
            return np.zeros((len(states), roles), dtype=np.float64)
        machine = self.machine
        if isinstance(machine, BatchedMachine):
            batch = machine.batch_from_states([s for s in states for _ in range(n)])
            result = machine.random_playouts(batch, len(states) * n, rng, max_steps, deadline)
            grouped = result.goals.reshape(len(states), n, roles).astype(np.float64)
            means: npt.NDArray[np.float64] = grouped.mean(axis=1)
            return means
        total = np.zeros((len(states), roles), dtype=np.float64)
        clock = time.monotonic
        for i, state in enumerate(states):
            for _ in range(n):
                current = state
                for _step in range(max_steps):
                    if deadline is not None and clock() >= deadline:
                        return total / n  # partial (see above)
                    if machine.is_terminal(current):
                        total[i] += machine.goals(current)
                        break
                    joint = tuple(
                        moves[int(rng.integers(len(moves)))]
                        for moves in (machine.legal_moves(current, r) for r in self.roles)
                    )
                    current = machine.next_state(current, joint)
        result_means: npt.NDArray[np.float64] = total / n
        return result_means

    # ----------------------------------------------------------------- views and sizes

    def with_cache(self, cache_size: int) -> Game:
        """A Game over the same reasoner with a transition cache of its own.

        Games made this way share the compiled rules and may be used from different
        threads (a transition cache is not thread-safe: give each thread its own).

        Args:
            cache_size: Transitions its cache keeps (0: no cache).
        """
        game = Game(
            self.machine,
            self.description,
            reasoner=self.reasoner,
            warnings=self.warnings,
            cache_size=cache_size,
        )
        game.moves_public = self.moves_public
        game.grounding_failure = self.grounding_failure
        return game

    def until(self, deadline: float | None) -> AbstractContextManager[None]:
        """A block within which this thread's queries to the reasoner stop with
        :class:`~ggp.errors.OutOfTime` once ``deadline`` (a ``time.monotonic()`` value)
        has passed, where a single query can take long (the prover: a chess state takes
        seconds). The propnet answers in microseconds and ignores it.

        Example:
            >>> game = Game.from_file("games/tictactoe.gdl", reasoner="prover")
            >>> with game.until(time.monotonic() - 1):
            ...     game.legal_moves(game.initial_state(), "xplayer")
            Traceback (most recent call last):
            ...
            ggp.errors.OutOfTime: the prover's query stopped at the deadline
            >>> len(game.legal_moves(game.initial_state(), "xplayer"))  # afterwards
            9
        """
        until = getattr(self.machine, "until", None)
        return contextlib.nullcontext() if until is None else cast(Any, until)(deadline)

    def locked(self) -> Game:
        """This game with every call into the reasoner serialised by a lock: for threads
        sharing a reasoner that keeps mutable caches (the prover). Its own transition
        cache has the default size; :meth:`with_cache` views of it share the lock."""
        game = Game(
            _LockedMachine(self.machine),
            self.description,
            reasoner=self.reasoner,
            warnings=self.warnings,
        )
        game.moves_public = self.moves_public
        game.grounding_failure = self.grounding_failure
        return game

    @property
    def base_propositions(self) -> tuple[Term, ...] | None:
        """Every base proposition a state of the game can hold, sorted by KIF text (the
        propnet's grounded base); None when the prover plays the game (it does not list
        them)."""
        net = self._propnet()
        return None if net is None else net.propnet.base

    def all_moves(self, role: RoleLike) -> tuple[Term, ...] | None:
        """Every move ``role`` can ever make, sorted by KIF text (the propnet's inputs);
        None when the prover plays the game.

        Raises:
            GameError: No such role.
        """
        r = self.role(role)
        net = self._propnet()
        return None if net is None else net.all_moves(r)

    def state_bits(self, states: Sequence[State]) -> npt.NDArray[np.bool_]:
        """``[len(states), F]`` bool: which of the :attr:`base_propositions` (F of them,
        in that order) hold in each state.

        Raises:
            GameError: The prover plays the game (it has no fixed base).
        """
        net = self._propnet()
        if net is None:
            raise GameError(
                f"{self.description.path} runs on the reference prover: it has no "
                "grounded base propositions"
            )
        from ggp.reasoning.propnet_machine import ints_to_bits

        keys = [cast(int, state.key) for state in states]
        return ints_to_bits(keys, len(net.propnet.base))

    def legal_bits(self, states: Sequence[State]) -> tuple[npt.NDArray[np.bool_], ...]:
        """Per role (in :attr:`roles` order), ``[len(states), len(all_moves(role))]``
        bool: which of :meth:`all_moves` the rules make legal in each state, in one batched
        call (terminal states are not special: check :meth:`is_terminal`).

        Raises:
            GameError: The prover plays the game (it has no fixed set of moves).
        """
        net = self._propnet()
        if net is None:
            raise GameError(
                f"{self.description.path} runs on the reference prover: it has no grounded moves"
            )
        return net.legal_bits(states)

    @property
    def propnet_size(self) -> PropnetSize | None:
        """The size of the game's propositional network; None with the prover."""
        net = self._propnet()
        if net is None:
            return None
        propnet = net.propnet
        return PropnetSize(
            components=propnet.stats.nodes,
            base=len(propnet.base),
            inputs=len(propnet.inputs),
            gates=propnet.stats.gates,
        )

    def playout_batch(
        self, n: int, rng: np.random.Generator, max_steps: int = 100_000
    ) -> PlayoutResult | None:
        """``n`` uniformly random playouts from the initial state in one batched call
        (goals and lengths of each); None when the reasoner has no batched playouts."""
        machine = self.machine
        if not isinstance(machine, BatchedMachine):
            return None
        result: PlayoutResult = machine.random_playouts(machine.initial_state(), n, rng, max_steps)
        return result

    def _propnet(self) -> PropnetStateMachine | None:
        from ggp.reasoning.propnet_machine import PropnetStateMachine

        machine = self.machine
        return machine if isinstance(machine, PropnetStateMachine) else None

    # ----------------------------------------------------------------- cache

    def cache_info(self) -> CacheInfo:
        """Hit and miss counts of the transition cache."""
        if self._cache is None:
            return CacheInfo(self._hits, self._misses, 0, 0)
        return CacheInfo(self._hits, self._misses, len(self._cache), int(self._cache.maxsize))

    def cache_clear(self) -> None:
        """Empty the transition cache and reset its counters."""
        if self._cache is not None:
            self._cache.clear()
        self._hits = self._misses = 0

    def __repr__(self) -> str:
        roles = " ".join(r.name for r in self.roles)
        return f"<Game {self.description.path} roles=({roles}) reasoner={self.reasoner}>"
