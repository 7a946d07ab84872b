"""The compiled propositional-network reasoner: :class:`PropnetStateMachine`.

The game is grounded (:mod:`ggp.reasoning.ground`), turned into an optimised
propositional network (:mod:`ggp.reasoning.propnet`) and compiled to generated Python
functions (:mod:`ggp.reasoning.compile`). A :class:`~ggp.reasoning.state_machine.State`
of this machine has ``key`` = an int with bit ``k`` set when base proposition ``k``
(``machine.propnet.base[k]``) is true.

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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

from ggp.errors import GameError
from ggp.gdl.parser import parse_file
from ggp.gdl.terms import Const, Description, Term
from ggp.reasoning.compile import CompiledBatch, CompiledSingle, compile_batch, compile_single
from ggp.reasoning.ground import GroundingLimits, ground
from ggp.reasoning.propnet import Propnet, build_propnet
from ggp.reasoning.state_machine import JointMove, State, fact_hash64

__all__ = ["PropnetStateMachine", "StateBatch", "PlayoutResult"]

logger = logging.getLogger(__name__)


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

    Raises:
        GroundingError: The game is too large to ground within ``limits``.
        GDLSemanticError: Negation is not stratified.
    """

    def __init__(self, description: Description, *, limits: GroundingLimits | None = None):
        start = time.perf_counter()
        self._path = description.path
        program = ground(description, limits)
        net = build_propnet(program)
        self._net = net
        single = compile_single(net, label=Path(description.path).name)
        self._single: CompiledSingle = single
        self._batch: CompiledBatch | None = None
        self._roles = net.roles
        self._role_index = {role: r for r, role in enumerate(net.roles)}
        n_base = len(net.base)
        self._base_index = {fluent: k for k, fluent in enumerate(net.base)}
        # Per role: move -> (legality check, input bit in the single-state word).
        self._move_entries = tuple(
            {
                move: (single.legal_check[r][i], 1 << (n_base + net.move_inputs[r][i]))
                for i, move in enumerate(net.moves[r])
            }
            for r in range(len(net.roles))
        )
        self._move_index = tuple({move: i for i, move in enumerate(moves)} for moves in net.moves)
        self._legal_tables: tuple[dict[int, tuple[Term, ...]], ...] = tuple({} for _ in net.roles)
        self._percept_tables: tuple[dict[int, frozenset[Term]], ...] = tuple({} for _ in net.roles)
        self._initial = State(single.init, self)
        self._zobrist_table: npt.NDArray[np.uint64] | None = None
        logger.info(
            "propnet machine for %s ready in %.3f s", description.path, time.perf_counter() - start
        )

    @classmethod
    def from_file(
        cls, path: str | Path, *, limits: GroundingLimits | None = None
    ) -> PropnetStateMachine:
        """Parse, ground and compile a game file."""
        return cls(parse_file(path), limits=limits)

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
        mask = self._single.legal[r](state.key)  # type: ignore[arg-type]
        table = self._legal_tables[r]
        moves = table.get(mask)
        if moves is None:
            all_moves = self._net.moves[r]
            moves = table[mask] = tuple(m for i, m in enumerate(all_moves) if mask >> i & 1)
        return moves

    def next_state(self, state: State, joint: Sequence[Term]) -> State:
        """The state after ``joint`` (one move per role, in role order).

        Raises:
            GameError: Foreign state, wrong number of moves, or an illegal move.
        """
        if state.owner is not self:
            self._key(state)
        return State(self._single.next(self._word(state.key, joint)), self)  # type: ignore[arg-type]

    def percepts(self, state: State, joint: Sequence[Term], role: Const) -> frozenset[Term]:
        """What ``role`` sees when ``joint`` is played in ``state``."""
        key = self._key(state)
        r = self._role(role)
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
        return bool(self._single.terminal(state.key))  # type: ignore[arg-type]

    def goals(self, state: State) -> tuple[int, ...]:
        """Each role's goal value in ``state`` (the largest if several, 0 if none)."""
        return self._single.goals(self._key(state))

    def state_facts(self, state: State) -> frozenset[Term]:
        """The true base propositions of ``state``."""
        key = self._key(state)
        base = self._net.base
        return frozenset(base[k] for k in range(key.bit_length()) if key >> k & 1)

    def zobrist(self, state: State) -> int:
        """The state's 64-bit Zobrist key: the XOR of
        :func:`~ggp.reasoning.state_machine.fact_hash64` over its true facts."""
        key = self._key(state)
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

    def legal_batch(self, batch: StateBatch, role: Const) -> npt.NDArray[np.bool_]:
        """``[N, len(all_moves(role))]`` bool: which moves of ``role`` are legal where."""
        self._check_batch(batch)
        ints = self.compiled_batch.legal[self._role(role)](batch.bits, batch.mask)
        return np.ascontiguousarray(ints_to_bits(list(ints), batch.size).T)

    def terminal_batch(self, batch: StateBatch) -> npt.NDArray[np.bool_]:
        """``[N]`` bool: which states are terminal."""
        self._check_batch(batch)
        value = self.compiled_batch.terminal(batch.bits, batch.mask)
        terminal: npt.NDArray[np.bool_] = ints_to_bits([value], batch.size)[0]
        return terminal

    def goals_batch(self, batch: StateBatch) -> npt.NDArray[np.int64]:
        """``[N, num_roles]`` int64: each role's goal value in each state."""
        self._check_batch(batch)
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

    def _inputs_from_indices(
        self, moves: npt.ArrayLike, n: int, check: StateBatch | None
    ) -> list[int]:
        """Input ints from ``[N, num_roles]`` move indices (into ``all_moves``)."""
        indices = np.asarray(moves, dtype=np.int64)
        if indices.shape != (n, len(self._roles)):
            raise GameError(
                f"moves must have shape [N, num_roles] = [{n}, {len(self._roles)}], "
                f"got {list(indices.shape)}"
            )
        d = [0] * len(self._net.inputs)
        for r, move_inputs in enumerate(self._net.move_inputs):
            column = indices[:, r]
            count = len(move_inputs)
            if n and (column.min() < 0 or column.max() >= count):
                raise GameError(f"move index out of range for role {self._roles[r]}")
            onehot = column[None, :] == np.arange(count)[:, None]  # [M_r, N]
            if check is not None:
                legal = ints_to_bits(list(self.compiled_batch.legal[r](check.bits, check.mask)), n)
                bad = onehot & ~legal
                if bad.any():
                    i, state = np.argwhere(bad)[0]
                    raise GameError(
                        f"illegal move {self._net.moves[r][i]} for role {self._roles[r]} "
                        f"in state {state} of the batch"
                    )
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
        d = self._inputs_from_indices(moves, batch.size, batch)
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
        d = self._inputs_from_indices(moves, batch.size, batch)
        ints = self.compiled_batch.sees[r](batch.bits, d, batch.mask)
        return np.ascontiguousarray(ints_to_bits(list(ints), batch.size).T)

    def next_states(self, state: State, joint_moves: Sequence[JointMove]) -> list[State]:
        """The successors of one state under many joint moves, in one batched call.

        Raises:
            GameError: Foreign state, or a joint move that is malformed or illegal.
        """
        key = self._key(state)
        n = len(joint_moves)
        if n == 0:
            return []
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

    def children(self, state: State) -> list[tuple[JointMove, State]]:
        """Every legal joint move in ``state`` with its successor (one batched call)."""
        joints = list(itertools.product(*(self.legal_moves(state, role) for role in self._roles)))
        return list(zip(joints, self.next_states(state, joints), strict=True))

    def random_playouts(
        self,
        start: State | StateBatch,
        n: int,
        rng: np.random.Generator,
        max_steps: int = 100_000,
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

        Returns:
            Goals, lengths and which playouts finished.
        """
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
