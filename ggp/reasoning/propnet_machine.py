"""The compiled propositional-network reasoner: :class:`PropnetStateMachine`.

The game is grounded (:mod:`ggp.reasoning.ground`) and turned into an optimised
propositional network (:mod:`ggp.reasoning.propnet`), which one of two backends
evaluates (:attr:`PropnetStateMachine.backend`):

- ``"native"``: the C kernel (:mod:`ggp.reasoning.kernel`, built at first use), which
  propagates only what changes from one state to the next and evaluates batches
  bit-sliced over 64-bit words;
- ``"python"``: generated Python functions (:mod:`ggp.reasoning.compile`), used where no
  C compiler is available (or with ``backend="python"`` / ``GGP_NATIVE=0``).

Both give the same answers (tests cross-check them with the reference prover). A
:class:`~ggp.reasoning.state_machine.State` of this machine has ``key`` = an int with
bit ``k`` set when base proposition ``k`` (``machine.propnet.base[k]``) is true.

Besides the :class:`~ggp.reasoning.state_machine.StateMachine` protocol it offers a
batched API, in which many states are evaluated at once, one bit per state
(:class:`StateBatch`): :meth:`PropnetStateMachine.legal_batch`,
:meth:`~PropnetStateMachine.next_batch`, :meth:`~PropnetStateMachine.terminal_batch`,
:meth:`~PropnetStateMachine.goals_batch`, :meth:`~PropnetStateMachine.percepts_batch`,
:meth:`~PropnetStateMachine.next_states` (all children of a node in one call) and
:meth:`~PropnetStateMachine.random_playouts`.

Example:
    >>> import numpy as np
    >>> from ggp.gdl.parser import parse_text
    >>> machine = PropnetStateMachine(parse_text('''
    ...     (role robot) (init (count 0)) (succ 0 1) (succ 1 2)
    ...     (legal robot wait) (<= (legal robot inc) (true (count ?n)) (succ ?n ?m))
    ...     (<= (next (count ?m)) (does robot inc) (true (count ?n)) (succ ?n ?m))
    ...     (<= (next (count ?n)) (does robot wait) (true (count ?n)))
    ...     (<= terminal (true (count 2))) (<= (goal robot 100) (true (count 2)))'''))
    >>> robot = machine.roles[0]
    >>> state = machine.initial_state()
    >>> [str(m) for m in machine.legal_moves(state, robot)]
    ['inc', 'wait']
    >>> state = machine.next_state(state, machine.legal_moves(state, robot)[:1])
    >>> sorted(str(f) for f in machine.state_facts(state))
    ['(count 1)']
    >>> result = machine.random_playouts(machine.initial_state(), 8, np.random.default_rng(0))
    >>> result.goals.shape, bool((result.goals == 100).all())
    ((8, 1), True)
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ggp.errors import GameError
from ggp.gdl.parser import parse_file
from ggp.gdl.terms import Const, Description, Term
from ggp.reasoning.compile import CompiledBatch, CompiledSingle, compile_batch, compile_single
from ggp.reasoning.ground import GroundingLimits, ground
from ggp.reasoning.kernel import kernel_spec, load_kernel
from ggp.reasoning.propnet import Propnet, build_propnet
from ggp.reasoning.state_machine import FastQueries, JointMove, State, fact_hash64

__all__ = ["PropnetStateMachine", "StateBatch", "PlayoutResult", "Backend"]

logger = logging.getLogger(__name__)

#: Which evaluator to use: the C kernel where it can be built (``"auto"``), always
#: (``"native"``: an error where it cannot), or the generated Python (``"python"``).
Backend = Literal["auto", "native", "python"]


def playout_lane_words(nodes: int) -> int:
    """64-bit words per node in the native bit-sliced playouts: wide (2,048 states at a
    time) for small nets, narrow (512) where a wide vector per node would leave the cache
    (measured on tic-tac-toe, connect four, breakthrough and the 11x11 snake game)."""
    if nodes <= 4096:
        return 32
    return 16 if nodes <= 8192 else 8


@dataclass(frozen=True, eq=False)
class StateBatch:
    """``size`` states of one machine, bit-sliced.

    Attributes:
        bits: ``[num_base]`` ints; bit ``i`` of ``bits[k]`` is base proposition ``k`` in
            state ``i``.
        size: N, the number of states.
        owner: The machine that made the batch.
    """

    bits: tuple[int, ...]
    size: int
    owner: object

    @property
    def mask(self) -> int:
        """``(1 << size) - 1``: one bit per state."""
        return (1 << self.size) - 1

    def __len__(self) -> int:
        return self.size

    def __repr__(self) -> str:
        return f"<StateBatch of {self.size} states, {len(self.bits)} base propositions>"


@dataclass(frozen=True, eq=False)
class PlayoutResult:
    """Outcome of :meth:`PropnetStateMachine.random_playouts`.

    Attributes:
        goals: ``[N, num_roles]`` int64: goal values at the end of each playout (0 where
            the playout did not finish).
        lengths: ``[N]`` int64: joint moves played in each playout.
        finished: ``[N]`` bool: whether the playout reached a terminal state within
            ``max_steps``.
    """

    goals: npt.NDArray[np.int64]
    lengths: npt.NDArray[np.int64]
    finished: npt.NDArray[np.bool_]


def ints_to_bits(values: Sequence[int], n: int) -> npt.NDArray[np.bool_]:
    """``[len(values), n]`` bool: bit ``i`` of each int (all ints < ``2 ** n``)."""
    nbytes = (n + 7) // 8
    if not values:
        return np.zeros((0, n), dtype=bool)
    buffer = b"".join([v.to_bytes(nbytes, "little") for v in values])
    array = np.frombuffer(buffer, dtype=np.uint8).reshape(len(values), nbytes)
    return np.unpackbits(array, axis=1, count=n, bitorder="little").view(bool)


#: Keys longer than this many bits are scanned a 64-bit word at a time (set_bits).
WORD_SCAN_BITS = 1024


def set_bits(key: int) -> list[int]:
    """The indices of the bits set in ``key`` (>= 0), lowest first: a state's true base
    propositions. One big-int step per set bit on short keys; on long ones (a large
    game's thousands of base propositions, a few dozen true) the nonzero 64-bit words
    first, then small-int steps inside each: 2-7x faster there.

    Example:
        >>> set_bits(0b1010_0001), set_bits((1 << 5000) | (1 << 64) | 1)
        ([0, 5, 7], [0, 64, 5000])
    """
    found: list[int] = []
    if key.bit_length() <= WORD_SCAN_BITS:
        while key:
            low = key & -key
            found.append(low.bit_length() - 1)
            key ^= low
        return found
    words = np.frombuffer(key.to_bytes((key.bit_length() + 63) // 64 * 8, "little"), np.uint64)
    nonzero = np.flatnonzero(words)
    for w, v in zip(nonzero.tolist(), words[nonzero].tolist(), strict=True):
        offset = w << 6
        while v:
            low = v & -v
            found.append(offset + low.bit_length() - 1)
            v ^= low
    return found


def ints_to_words(values: Sequence[int], n: int) -> npt.NDArray[np.uint64]:
    """``[len(values), ceil(n / 64)]`` uint64: each int (< ``2 ** n``) as 64-bit words,
    least significant first (the native kernel's state rows)."""
    words = (n + 63) // 64
    if not values or not words:
        return np.zeros((len(values), words), dtype=np.uint64)
    buffer = b"".join([v.to_bytes(words * 8, "little") for v in values])
    return np.frombuffer(buffer, dtype=np.uint64).reshape(len(values), words)


def words_to_ints(rows: npt.NDArray[np.uint64]) -> list[int]:
    """The inverse of :func:`ints_to_words`: one int per row."""
    data = np.ascontiguousarray(rows).tobytes()
    width = rows.shape[1] * 8
    from_bytes = int.from_bytes
    return [from_bytes(data[i * width : (i + 1) * width], "little") for i in range(len(rows))]


def bits_to_ints(matrix: npt.NDArray[np.bool_]) -> list[int]:
    """One int per row of a ``[K, N]`` bool matrix: bit ``i`` = column ``i``."""
    packed = np.packbits(matrix, axis=1, bitorder="little")
    data = packed.tobytes()
    width = packed.shape[1]
    from_bytes = int.from_bytes
    return [from_bytes(data[i * width : (i + 1) * width], "little") for i in range(len(packed))]


class PropnetStateMachine:
    """A :class:`~ggp.reasoning.state_machine.StateMachine` over a compiled propnet.

    Args:
        description: The parsed game.
        limits: Grounding size limits (default :class:`GroundingLimits` ()).
        backend: ``"auto"`` (the native kernel where it can be built, else Python),
            ``"native"`` or ``"python"``.

    Raises:
        GroundingError: The game is too large to ground within ``limits``.
        GDLSemanticError: Negation is not stratified.
        RuntimeError: ``backend="native"`` and the kernel cannot be built.
    """

    def __init__(
        self,
        description: Description,
        *,
        limits: GroundingLimits | None = None,
        backend: Backend = "auto",
    ) -> None:
        start = time.perf_counter()
        self._path = description.path
        limits = limits or GroundingLimits()
        budget = limits.budget()  # grounding and building together
        program = ground(description, limits, budget)
        net = build_propnet(program, budget)
        self._net = net
        self._roles = net.roles
        self._role_index = {role: r for r, role in enumerate(net.roles)}
        self._base_index = {fluent: k for k, fluent in enumerate(net.base)}
        self._move_index = tuple({move: i for i, move in enumerate(moves)} for moves in net.moves)
        self._legal_tables: tuple[dict[int, tuple[Term, ...]], ...] = tuple({} for _ in net.roles)
        self._percept_tables: tuple[dict[int, frozenset[Term]], ...] = tuple({} for _ in net.roles)
        self._batch: CompiledBatch | None = None
        self._zobrist_table: npt.NDArray[np.uint64] | None = None
        if backend not in ("auto", "native", "python"):
            raise ValueError(f"unknown backend {backend!r}: use auto, native or python")
        module = load_kernel() if backend != "python" else None
        if backend == "native" and module is None:
            raise RuntimeError("the native propnet kernel cannot be built on this machine")
        self._native: Any = None
        self._single: CompiledSingle | None = None
        if module is not None:
            self._native = module.Net(kernel_spec(net))
            self._illegal: type[Exception] = module.IllegalMove
            init = self._native.values(np.array(net.init, dtype=np.int32).tobytes())
            self.backend: Literal["native", "python"] = "native"
        else:
            single = compile_single(net, label=Path(description.path).name)
            self._single = single
            n_base = len(net.base)
            # Per role: move -> (legality check, input bit in the single-state word).
            self._move_entries = tuple(
                {
                    move: (single.legal_check[r][i], 1 << (n_base + net.move_inputs[r][i]))
                    for i, move in enumerate(net.moves[r])
                }
                for r in range(len(net.roles))
            )
            init = single.init
            self.backend = "python"
        self._initial = State(init, self)
        logger.info(
            "propnet machine for %s ready in %.3f s (%s backend)",
            description.path,
            time.perf_counter() - start,
            self.backend,
        )

    @classmethod
    def from_file(
        cls, path: str | Path, *, limits: GroundingLimits | None = None, backend: Backend = "auto"
    ) -> PropnetStateMachine:
        """Parse, ground and compile a game file."""
        return cls(parse_file(path), limits=limits, backend=backend)

    # -- introspection --------------------------------------------------------------------

    @property
    def propnet(self) -> Propnet:
        """The network this machine evaluates."""
        return self._net

    @property
    def roles(self) -> tuple[Const, ...]:
        """The roles in file order."""
        return self._roles

    def all_moves(self, role: Const) -> tuple[Term, ...]:
        """Every move ``role`` can ever make, sorted: the columns of :meth:`legal_batch`."""
        return self._net.moves[self._role(role)]

    def all_percepts(self, role: Const) -> tuple[Term, ...]:
        """Every percept ``role`` can get, sorted: the columns of :meth:`percepts_batch`."""
        return self._net.percepts[self._role(role)]

    # -- checks ---------------------------------------------------------------------------

    def _key(self, state: State) -> int:
        if not isinstance(state, State) or state.owner is not self:
            raise GameError(f"state {state!r} was not made by this machine")
        key = state.key
        assert isinstance(key, int)
        return key

    def _role(self, role: Const) -> int:
        r = self._role_index.get(role)
        if r is None:
            names = ", ".join(str(x) for x in self._roles)
            raise GameError(f"unknown role {role!r}; the roles are {names}")
        return r

    def _indices(self, joint: Sequence[Term]) -> list[int]:
        """Each role's move of ``joint`` as an index into :meth:`all_moves` (-1: unknown)."""
        index = self._move_index
        if len(joint) != len(index):
            raise GameError(
                f"a joint move needs {len(index)} moves (one per role), got {len(joint)}"
            )
        return [index[r].get(move, -1) for r, move in enumerate(joint)]

    def _illegal_move(self, error: Exception, joint: Sequence[Term]) -> GameError:
        r = int(error.args[0])
        return GameError(f"illegal move {joint[r]} for role {self._roles[r]} in this state")

    def _word(self, key: int, joint: Sequence[Term]) -> int:
        """The state's int with the joint move's input bits; checks legality."""
        entries = self._move_entries
        if len(joint) != len(entries):
            raise GameError(
                f"a joint move needs {len(entries)} moves (one per role), got {len(joint)}"
            )
        x = key
        for r, move in enumerate(joint):
            entry = entries[r].get(move)
            if entry is None or not entry[0](key):
                raise GameError(f"illegal move {move} for role {self._roles[r]} in this state")
            x |= entry[1]
        return x

    # -- the StateMachine protocol --------------------------------------------------------

    def initial_state(self) -> State:
        """The state given by ``init``."""
        return self._initial

    def legal_moves(self, state: State, role: Const) -> tuple[Term, ...]:
        """The legal moves of ``role`` in ``state``, sorted by KIF text.

        Raises:
            GameError: Foreign state or unknown role.
        """
        if state.owner is not self:
            self._key(state)
        r = self._role_index.get(role)
        if r is None:
            r = self._role(role)
        if self._native is not None:
            moves: tuple[Term, ...] = self._native.legal(state.key, r)
            return moves
        assert self._single is not None
        mask = self._single.legal[r](state.key)  # type: ignore[arg-type]
        table = self._legal_tables[r]
        found = table.get(mask)
        if found is None:
            all_moves = self._net.moves[r]
            found = table[mask] = tuple(m for i, m in enumerate(all_moves) if mask >> i & 1)
        return found

    def next_state(self, state: State, joint: Sequence[Term]) -> State:
        """The state after ``joint`` (one move per role, in role order).

        Raises:
            GameError: Foreign state, wrong number of moves, or an illegal move.
        """
        if state.owner is not self:
            self._key(state)
        native = self._native
        if native is not None:
            try:
                successor: State = native.step(state.key, joint, self)
                return successor
            except self._illegal as e:
                raise self._illegal_move(e, joint) from None
            except ValueError as e:
                raise GameError(str(e)) from None
        assert self._single is not None
        return State(self._single.next(self._word(state.key, joint)), self)  # type: ignore[arg-type]

    def percepts(self, state: State, joint: Sequence[Term], role: Const) -> frozenset[Term]:
        """What ``role`` sees when ``joint`` is played in ``state``."""
        key = self._key(state)
        r = self._role(role)
        native = self._native
        if native is not None:
            try:
                mask = native.sees(key, self._indices(joint), r)
            except self._illegal as e:
                raise self._illegal_move(e, joint) from None
        else:
            assert self._single is not None
            mask = self._single.sees[r](self._word(key, joint))
        table = self._percept_tables[r]
        found = table.get(mask)
        if found is None:
            percepts = self._net.percepts[r]
            found = table[mask] = frozenset(p for i, p in enumerate(percepts) if mask >> i & 1)
        return found

    def is_terminal(self, state: State) -> bool:
        """Whether ``state`` is terminal."""
        if state.owner is not self:
            self._key(state)
        if self._native is not None:
            terminal: bool = self._native.terminal(state.key)
            return terminal
        assert self._single is not None
        return bool(self._single.terminal(state.key))  # type: ignore[arg-type]

    def fast_queries(
        self,
        legal_moves: Callable[[State, Any], tuple[Term, ...]],
        next_state: Callable[[State, Any], State],
        is_terminal: Callable[[State], bool],
    ) -> FastQueries | None:
        """The three queries of a playout answered in one native call each, as
        :class:`~ggp.game.Game` takes them (states, roles, joint moves of terms); whatever
        is not this machine's own state, role and legal move terms goes to the given
        fallbacks (which convert it or raise the GameError). None without the kernel."""
        if self._native is None:
            return None
        front = self._native.front(self, self._role_index, legal_moves, next_state, is_terminal)
        return FastQueries(front.legal_moves, front.next_state, front.is_terminal)

    def goals(self, state: State) -> tuple[int, ...]:
        """Each role's goal value in ``state`` (the largest if several, 0 if none)."""
        key = self._key(state)
        if self._native is not None:
            goals: tuple[int, ...] = self._native.goals(key)
            return goals
        assert self._single is not None
        return self._single.goals(key)

    def state_facts(self, state: State) -> frozenset[Term]:
        """The true base propositions of ``state``."""
        base = self._net.base
        return frozenset([base[i] for i in set_bits(self._key(state))])

    def zobrist(self, state: State) -> int:
        """The state's 64-bit Zobrist key: the XOR of
        :func:`~ggp.reasoning.state_machine.fact_hash64` over its true facts."""
        key = self._key(state)
        if self._native is not None:
            zobrist: int = self._native.zobrist(key)
            return zobrist
        table = self._zobrist_table
        if table is None:
            words = [fact_hash64(fact) for fact in self._net.base]
            table = self._zobrist_table = np.array(words, dtype=np.uint64)
        bits = ints_to_bits([key], len(table))[0]
        return int(np.bitwise_xor.reduce(table[bits])) if bits.any() else 0

    def state_from_facts(self, facts: Iterable[Term]) -> State:
        """The state whose true base propositions are ``facts``.

        Raises:
            GameError: A fact can never be true in this game (it is no base proposition).
        """
        key = 0
        for fact in facts:
            k = self._base_index.get(fact)
            if k is None:
                raise GameError(f"{fact} is not a base proposition of this game")
            key |= 1 << k
        return State(key, self)

    # -- batches ----------------------------------------------------------------------------

    @property
    def compiled_batch(self) -> CompiledBatch:
        """The bit-sliced functions (compiled on first use)."""
        if self._batch is None:
            start = time.perf_counter()
            self._batch = compile_batch(self._net, label=Path(self._path).name + " batch")
            logger.info("compiled batch functions in %.3f s", time.perf_counter() - start)
        return self._batch

    def batch_from_states(self, states: Sequence[State]) -> StateBatch:
        """Bit-slice ``states`` into one :class:`StateBatch`."""
        keys = [self._key(state) for state in states]
        n_base = len(self._net.base)
        if not keys:
            return StateBatch((0,) * n_base, 0, self)
        matrix = ints_to_bits(keys, n_base)  # [N, num_base]
        return StateBatch(tuple(bits_to_ints(np.ascontiguousarray(matrix.T))), len(keys), self)

    def states_from_batch(self, batch: StateBatch) -> list[State]:
        """The states of a batch, in order."""
        self._check_batch(batch)
        if not batch.bits:
            return [State(0, self) for _ in range(batch.size)]
        matrix = ints_to_bits(batch.bits, batch.size)  # [num_base, N]
        return [State(key, self) for key in bits_to_ints(np.ascontiguousarray(matrix.T))]

    def repeat_state(self, state: State, n: int) -> StateBatch:
        """A batch of ``n`` copies of ``state``."""
        key = self._key(state)
        m = (1 << n) - 1
        return StateBatch(
            tuple(m if key >> k & 1 else 0 for k in range(len(self._net.base))), n, self
        )

    def _check_batch(self, batch: StateBatch) -> None:
        if not isinstance(batch, StateBatch) or batch.owner is not self:
            raise GameError("the batch was not made by this machine")

    def _rows(self, batch: StateBatch) -> npt.NDArray[np.uint64]:
        """``[N, ceil(num_base / 64)]`` the batch's states as the native kernel's rows."""
        n_base = len(self._net.base)
        words = (n_base + 63) // 64
        if not batch.bits:
            return np.zeros((batch.size, words), dtype=np.uint64)
        matrix = ints_to_bits(batch.bits, batch.size)  # [num_base, N]
        packed = np.packbits(matrix.T, axis=1, bitorder="little")  # [N, ceil(num_base / 8)]
        rows = np.zeros((batch.size, words * 8), dtype=np.uint8)
        rows[:, : packed.shape[1]] = packed
        return rows.view(np.uint64)

    def _batch_from_rows(self, rows: npt.NDArray[np.uint64]) -> StateBatch:
        n_base = len(self._net.base)
        bits = np.unpackbits(rows.view(np.uint8), axis=1, count=n_base, bitorder="little")
        ints = bits_to_ints(np.ascontiguousarray(bits.T).view(bool)) if n_base else []
        return StateBatch(tuple(ints), len(rows), self)

    def _evaluate(
        self,
        batch: StateBatch,
        moves: npt.NDArray[np.int32] | None = None,
        *,
        legal: bool = False,
        terminal: bool = False,
        goals: bool = False,
        next_rows: bool = False,
        sees: bool = False,
    ) -> dict[str, Any]:
        """One native bit-sliced evaluation of ``batch``; the outputs asked for, by name."""
        n = batch.size
        net = self._net
        out: dict[str, Any] = {}
        if legal:
            out["legal"] = np.zeros((n, sum(len(m) for m in net.moves)), dtype=np.uint8)
        if terminal:
            out["terminal"] = np.zeros(n, dtype=np.uint8)
        if goals:
            out["goals"] = np.zeros((n, len(self._roles)), dtype=np.int64)
        if next_rows:
            out["next"] = np.zeros((n, (len(net.base) + 63) // 64), dtype=np.uint64)
        if sees:
            out["sees"] = np.zeros((n, sum(len(p) for p in net.percepts)), dtype=np.uint8)
        self._native.evaluate(
            self._rows(batch),
            None if moves is None else np.ascontiguousarray(moves, dtype=np.int32),
            n,
            *(out.get(name) for name in ("legal", "terminal", "goals", "next", "sees")),
        )
        return out

    def _role_columns(self, r: int, percepts: bool = False) -> slice:
        groups = self._net.percepts if percepts else self._net.moves
        start = sum(len(g) for g in groups[:r])
        return slice(start, start + len(groups[r]))

    def legal_batch(self, batch: StateBatch, role: Const) -> npt.NDArray[np.bool_]:
        """``[N, len(all_moves(role))]`` bool: which moves of ``role`` are legal where."""
        self._check_batch(batch)
        r = self._role(role)
        if self._native is not None:
            legal = self._evaluate(batch, legal=True)["legal"][:, self._role_columns(r)]
            return np.ascontiguousarray(legal).view(bool)
        ints = self.compiled_batch.legal[r](batch.bits, batch.mask)
        return np.ascontiguousarray(ints_to_bits(list(ints), batch.size).T)

    def legal_bits(self, states: Sequence[State]) -> tuple[npt.NDArray[np.bool_], ...]:
        """Per role, ``[len(states), len(all_moves(role))]`` bool: which moves the rules
        make legal in each state (terminal states included); one native call."""
        if self._native is None:
            batch = self.batch_from_states(states)
            return tuple(self.legal_batch(batch, role) for role in self._roles)
        rows = ints_to_words([self._key(state) for state in states], len(self._net.base))
        legal = np.zeros((len(states), sum(len(m) for m in self._net.moves)), dtype=np.uint8)
        self._native.evaluate(rows, None, len(states), legal, None, None, None, None)
        flags = legal.view(bool)
        return tuple(flags[:, self._role_columns(r)] for r in range(len(self._roles)))

    def terminal_batch(self, batch: StateBatch) -> npt.NDArray[np.bool_]:
        """``[N]`` bool: which states are terminal."""
        self._check_batch(batch)
        if self._native is not None:
            flags: npt.NDArray[np.bool_] = self._evaluate(batch, terminal=True)["terminal"]
            return flags.view(bool)
        value = self.compiled_batch.terminal(batch.bits, batch.mask)
        terminal: npt.NDArray[np.bool_] = ints_to_bits([value], batch.size)[0]
        return terminal

    def goals_batch(self, batch: StateBatch) -> npt.NDArray[np.int64]:
        """``[N, num_roles]`` int64: each role's goal value in each state."""
        self._check_batch(batch)
        if self._native is not None:
            goals: npt.NDArray[np.int64] = self._evaluate(batch, goals=True)["goals"]
            return goals
        ints = self.compiled_batch.goals(batch.bits, batch.mask)
        return self._goal_values(ints, batch.size)

    def _goal_values(self, ints: tuple[tuple[int, ...], ...], n: int) -> npt.NDArray[np.int64]:
        goals = np.zeros((n, len(self._roles)), dtype=np.int64)
        flat = [value for group in ints for value in group]
        if not flat:
            return goals
        matrix = ints_to_bits(flat, n)
        row = 0
        for r, pairs in enumerate(self._net.goals):
            assigned = np.zeros(n, dtype=bool)
            for value, _ in pairs:  # largest first
                hit = matrix[row] & ~assigned
                goals[hit, r] = value
                assigned |= hit
                row += 1
        return goals

    def _move_indices(
        self, moves: npt.ArrayLike, batch: StateBatch
    ) -> tuple[npt.NDArray[np.int64], list[npt.NDArray[np.bool_]]]:
        """Checked ``[N, num_roles]`` move indices, and each role's ``[M_r, N]`` one-hot."""
        n = batch.size
        indices = np.asarray(moves, dtype=np.int64)
        if indices.shape != (n, len(self._roles)):
            raise GameError(
                f"moves must have shape [N, num_roles] = [{n}, {len(self._roles)}], "
                f"got {list(indices.shape)}"
            )
        legal_all = self._evaluate(batch, legal=True)["legal"] if self._native is not None else None
        onehots = []
        for r, move_inputs in enumerate(self._net.move_inputs):
            column = indices[:, r]
            count = len(move_inputs)
            if n and (column.min() < 0 or column.max() >= count):
                raise GameError(f"move index out of range for role {self._roles[r]}")
            onehot = column[None, :] == np.arange(count)[:, None]  # [M_r, N]
            if legal_all is not None:
                legal = legal_all[:, self._role_columns(r)].T.astype(bool)
            else:
                legal = ints_to_bits(list(self.compiled_batch.legal[r](batch.bits, batch.mask)), n)
            bad = onehot & ~legal
            if bad.any():
                i, state = np.argwhere(bad)[0]
                raise GameError(
                    f"illegal move {self._net.moves[r][i]} for role {self._roles[r]} "
                    f"in state {state} of the batch"
                )
            onehots.append(onehot)
        return indices, onehots

    def _inputs_from_onehots(self, onehots: list[npt.NDArray[np.bool_]]) -> list[int]:
        """The bit-sliced input ints of the Python backend."""
        d = [0] * len(self._net.inputs)
        for move_inputs, onehot in zip(self._net.move_inputs, onehots, strict=True):
            for i, value in enumerate(bits_to_ints(onehot)):
                d[move_inputs[i]] = value
        return d

    def next_batch(self, batch: StateBatch, moves: npt.ArrayLike) -> StateBatch:
        """The successors of a batch.

        Args:
            batch: N states.
            moves: ``[N, num_roles]`` ints: for each state, each role's move as an index
                into :meth:`all_moves`.

        Raises:
            GameError: A move is illegal in its state, or ``moves`` has a wrong shape.
        """
        self._check_batch(batch)
        indices, onehots = self._move_indices(moves, batch)
        if self._native is not None:
            rows = self._evaluate(batch, indices.astype(np.int32), next_rows=True)["next"]
            return self._batch_from_rows(rows)
        d = self._inputs_from_onehots(onehots)
        bits = self.compiled_batch.next(batch.bits, d, batch.mask)
        return StateBatch(tuple(bits), batch.size, self)

    def percepts_batch(
        self, batch: StateBatch, moves: npt.ArrayLike, role: Const
    ) -> npt.NDArray[np.bool_]:
        """``[N, len(all_percepts(role))]`` bool: what ``role`` sees in each state.

        Args:
            batch: N states.
            moves: ``[N, num_roles]`` move indices, as for :meth:`next_batch`.
            role: The role that sees.
        """
        self._check_batch(batch)
        r = self._role(role)
        indices, onehots = self._move_indices(moves, batch)
        if self._native is not None:
            sees = self._evaluate(batch, indices.astype(np.int32), sees=True)["sees"]
            return np.ascontiguousarray(sees[:, self._role_columns(r, percepts=True)]).view(bool)
        d = self._inputs_from_onehots(onehots)
        ints = self.compiled_batch.sees[r](batch.bits, d, batch.mask)
        return np.ascontiguousarray(ints_to_bits(list(ints), batch.size).T)

    def next_states(self, state: State, joint_moves: Sequence[JointMove]) -> list[State]:
        """The successors of one state under many joint moves, in one call.

        Raises:
            GameError: Foreign state, or a joint move that is malformed or illegal.
        """
        key = self._key(state)
        n = len(joint_moves)
        if n == 0:
            return []
        native = self._native
        if native is not None:
            step = native.step
            states = []
            for joint in joint_moves:
                try:
                    states.append(step(key, joint, self))
                except self._illegal as e:
                    raise self._illegal_move(e, joint) from None
                except ValueError as e:
                    raise GameError(str(e)) from None
            return states
        for joint in joint_moves:
            self._word(key, joint)  # validates
        m = (1 << n) - 1
        bits = [m if key >> k & 1 else 0 for k in range(len(self._net.base))]
        d = [0] * len(self._net.inputs)
        index = self._move_index
        move_inputs = self._net.move_inputs
        for i, joint in enumerate(joint_moves):
            bit = 1 << i
            for r, move in enumerate(joint):
                d[move_inputs[r][index[r][move]]] |= bit
        result = self.compiled_batch.next(bits, d, m)
        return self.states_from_batch(StateBatch(tuple(result), n, self))

    def expand(self, state: State) -> tuple[tuple[tuple[Term, ...], ...], list[State]]:
        """Each role's legal moves and the successor of every legal joint move, in
        ``itertools.product`` order (the last role fastest), in one call."""
        key = self._key(state)
        if self._native is not None:
            legal, states = self._native.children(key, self)
            return legal, states
        legal = tuple(self.legal_moves(state, role) for role in self._roles)
        return legal, self.next_states(state, list(itertools.product(*legal)))

    def children(self, state: State) -> list[tuple[JointMove, State]]:
        """Every legal joint move in ``state`` with its successor (one call)."""
        legal, states = self.expand(state)
        return list(zip(itertools.product(*legal), states, strict=True))

    def random_playouts(
        self,
        start: State | StateBatch,
        n: int,
        rng: np.random.Generator,
        max_steps: int = 100_000,
        deadline: float | None = None,
    ) -> PlayoutResult:
        """Play ``n`` uniformly random games to the end, bit-sliced.

        Every role picks uniformly among its legal moves, independently in each state
        (the choice is made with numpy from ``rng``). Finished playouts are dropped from
        the batch once they are the majority, so long tails cost little.

        Args:
            start: A state (all playouts start there) or a batch of ``n`` states.
            n: Number of playouts.
            rng: The source of randomness.
            max_steps: Stop playouts that have not ended after this many joint moves.
            deadline: A ``time.monotonic()`` value (checked every joint move): the
                playouts still running or not begun then stop unfinished.

        Returns:
            Goals, lengths and which playouts finished.
        """
        if self._native is not None:
            if isinstance(start, State):
                rows = np.repeat(ints_to_words([self._key(start)], len(self._net.base)), n, axis=0)
            else:
                self._check_batch(start)
                if start.size != n:
                    raise GameError(f"the batch has {start.size} states, not {n}")
                rows = self._rows(start)
            goals_out = np.zeros((n, len(self._roles)), dtype=np.int64)
            lengths_out = np.zeros(n, dtype=np.int64)
            finished_out = np.zeros(n, dtype=np.uint8)
            seed = int(rng.integers(0, 2**63))
            self._native.playouts(
                np.ascontiguousarray(rows),
                n,
                seed,
                max_steps,
                goals_out,
                lengths_out,
                finished_out,
                playout_lane_words(len(self._net.ops)),
                -1.0 if deadline is None else deadline,
            )
            return PlayoutResult(goals_out, lengths_out, finished_out.view(bool))
        batch = self.repeat_state(start, n) if isinstance(start, State) else start
        self._check_batch(batch)
        if batch.size != n:
            raise GameError(f"the batch has {batch.size} states, not {n}")
        compiled = self.compiled_batch
        net = self._net
        goals = np.zeros((n, len(self._roles)), dtype=np.int64)
        lengths = np.zeros(n, dtype=np.int64)
        finished = np.zeros(n, dtype=bool)
        origin = np.arange(n)  # column of the (possibly compacted) batch -> playout
        width = n
        m = batch.mask
        bits: Sequence[int] = batch.bits
        active = m
        n_inputs = len(net.inputs)
        steps = 0
        while True:
            terminal = compiled.terminal(bits, m) & active
            if terminal:
                self._record_goals(compiled.goals(bits, m), terminal, goals, origin)
                finished[origin[ints_to_bits([terminal], width)[0]]] = True
                active &= ~terminal
            if not active or steps >= max_steps:
                break
            if deadline is not None and time.monotonic() >= deadline:
                break
            active_bits = ints_to_bits([active], width)[0]
            count = int(active_bits.sum())
            if width >= 64 and 2 * count <= width:  # compact: keep the running playouts
                keep = np.flatnonzero(active_bits)
                matrix = ints_to_bits(bits, width)[:, keep]
                bits = bits_to_ints(matrix) if len(bits) else []
                origin = origin[keep]
                width = count
                m = active = (1 << width) - 1
                active_bits = np.ones(width, dtype=bool)
            lengths[origin[active_bits]] += 1
            d = [0] * n_inputs
            for r, legal_fn in enumerate(compiled.legal):
                move_inputs = net.move_inputs[r]
                if not move_inputs:
                    continue
                legal = ints_to_bits([v & active for v in legal_fn(bits, m)], width)
                for i, value in enumerate(bits_to_ints(_choose(legal, rng))):
                    d[move_inputs[i]] = value
            bits = compiled.next(bits, d, m)
            steps += 1
        return PlayoutResult(goals, lengths, finished)

    def __repr__(self) -> str:
        roles = " ".join(map(str, self._roles))
        return f"<PropnetStateMachine {self._path!r} roles: {roles}>"

    def _record_goals(
        self,
        ints: tuple[tuple[int, ...], ...],
        where: int,
        goals: npt.NDArray[np.int64],
        origin: npt.NDArray[np.int64],
    ) -> None:
        width = len(origin)
        values = self._goal_values(tuple(tuple(v & where for v in g) for g in ints), width)
        hit = ints_to_bits([where], width)[0]
        goals[origin[hit]] = values[hit]


def _choose(legal: npt.NDArray[np.bool_], rng: np.random.Generator) -> npt.NDArray[np.bool_]:
    """One uniformly random legal move per column of ``legal`` ``[M, N]``, one-hot.

    A column with no legal move gets no move. The k-th legal move of a column (k uniform
    below the column's count) is where the running count of legal moves reaches k + 1;
    the running count is summed row by row (numpy's ``cumsum`` along axis 0 is far
    slower for this shape).
    """
    rows, n = legal.shape
    if rows == 1:
        return legal
    dtype = np.uint8 if rows < 255 else np.int32
    flags = legal.view(np.uint8)
    running = np.empty((rows, n), dtype=dtype)
    running[0] = flags[0]
    for j in range(1, rows):
        np.add(running[j - 1], flags[j], out=running[j])
    pick = (rng.random(n) * running[-1]).astype(dtype)
    pick += 1
    chosen: npt.NDArray[np.bool_] = legal & (running == pick)
    return chosen
