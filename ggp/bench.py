"""Reasoner speed: random playouts to the end, counted in states and playouts per second.

A *state* is one step of a random playout: the legal moves of every role, the next state
and the terminal check (the gdl-perf convention). Used by ``ggp bench`` and by
``benchmarks/bench_propnet.py``. Speed is measured here, never asserted in tests.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from ggp.errors import GameError
from ggp.game import DEFAULT_CACHE_SIZE, CacheInfo, Game, ReasonerName
from ggp.gdl.terms import Const, Term
from ggp.reasoning.state_machine import State

__all__ = ["Rate", "BenchReport", "single_rate", "batched_rate", "run_bench", "human"]


class _Playable(Protocol):
    """What the single-state loop needs: a StateMachine or a Game."""

    @property
    def roles(self) -> tuple[Const, ...]: ...

    def initial_state(self) -> State: ...

    def legal_moves(self, state: State, role: Const) -> tuple[Term, ...]: ...

    def next_state(self, state: State, joint: Sequence[Term]) -> State: ...

    def is_terminal(self, state: State) -> bool: ...


@dataclass(frozen=True)
class Rate:
    """States and playouts completed in some seconds."""

    states: int
    playouts: int
    seconds: float

    @property
    def states_per_s(self) -> float:
        return self.states / self.seconds if self.seconds > 0 else 0.0

    @property
    def playouts_per_s(self) -> float:
        return self.playouts / self.seconds if self.seconds > 0 else 0.0


def single_rate(machine: _Playable, seconds: float, seed: int = 0) -> Rate:
    """Random playouts one state at a time (moves picked with uniforms drawn beforehand),
    for ``seconds``: the playout under way when they run out stops there, its states
    counted (a slow reasoner is measured on part of one playout)."""
    uniforms = np.random.default_rng(seed).random(1 << 16).tolist()
    roles = machine.roles
    legal_moves, next_state, is_terminal = (
        machine.legal_moves,
        machine.next_state,
        machine.is_terminal,
    )
    start_state = machine.initial_state()
    steps = playouts = u = 0
    start = time.perf_counter()
    deadline = start + seconds
    clock = time.perf_counter
    while clock() < deadline:
        state = start_state
        while not is_terminal(state):
            joint = []
            for role in roles:
                moves = legal_moves(state, role)
                joint.append(moves[int(uniforms[u] * len(moves))])
                u = (u + 1) & 0xFFFF
            state = next_state(state, joint)
            steps += 1
            if clock() >= deadline:
                break
        else:
            playouts += 1
    return Rate(steps, playouts, time.perf_counter() - start)


def batched_rate(game: Game, batch: int, seconds: float, seed: int = 0) -> Rate:
    """Random playouts ``batch`` states per call (one bit per state).

    Raises:
        GameError: The game's reasoner has no batched playouts (no propnet).
    """
    rng = np.random.default_rng(seed)
    if game.playout_batch(64, rng) is None:  # compile, warm up
        raise GameError(f"{game.description.path}: the {game.reasoner} has no batched playouts")
    states = playouts = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        result = game.playout_batch(batch, rng)
        assert result is not None
        states += int(result.lengths.sum())
        playouts += batch
    return Rate(states, playouts, time.perf_counter() - start)


@dataclass(frozen=True)
class BenchReport:
    """What ``ggp bench`` measured for one game.

    Attributes:
        game: The file.
        reasoner: ``"propnet"``, ``"topdown"`` or ``"prover"``.
        single: Single-state playouts through :class:`Game` with the cache off.
        cached: The same with the transition cache on (None with ``--no-cache``).
        cache: The cache's counters after the cached run.
        batched: Batched playouts (None without a propnet).
        batch: States per batched call.
    """

    game: str
    reasoner: str
    single: Rate
    cached: Rate | None
    cache: CacheInfo | None
    batched: Rate | None
    batch: int


def run_bench(
    path: str | Path,
    seconds: float = 3.0,
    batch: int = 16384,
    cache: bool = True,
    seed: int = 0,
    reasoner: ReasonerName = "auto",
) -> BenchReport:
    """Measure one game: single-state (cache off, then on) and batched playouts."""
    game = Game.from_file(path, cache_size=0, reasoner=reasoner)
    single = single_rate(game, seconds, seed)
    cached = info = None
    if cache:
        cached_game = game.with_cache(DEFAULT_CACHE_SIZE)
        cached = single_rate(cached_game, seconds, seed)
        info = cached_game.cache_info()
    batched = None
    if game.playout_batch(1, np.random.default_rng(seed)) is not None:
        batched = batched_rate(game, batch, seconds, seed)
    return BenchReport(str(path), game.reasoner, single, cached, info, batched, batch)


def human(rate: float) -> str:
    """``1234567`` -> ``'1.23M'``."""
    if rate >= 1e6:
        return f"{rate / 1e6:.2f}M"
    if rate >= 1e3:
        return f"{rate / 1e3:.1f}k"
    return f"{rate:.0f}"
