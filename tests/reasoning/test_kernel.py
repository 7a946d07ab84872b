"""The native kernel's build and fallback (its answers are cross-checked in test_propnet)."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import numpy as np
import pytest

from ggp import native
from ggp.gdl.parser import parse_text
from ggp.reasoning import kernel
from ggp.reasoning.propnet_machine import PropnetStateMachine

from conftest import GAMES

COUNTER = """
    (role r) (init (count 0)) (succ 0 1) (succ 1 2) (succ 2 3)
    (<= (legal r inc) (true (count ?n)) (succ ?n ?m))
    (legal r stay)
    (<= (next (count ?m)) (does r inc) (true (count ?n)) (succ ?n ?m))
    (<= (next (count ?n)) (does r stay) (true (count ?n)))
    (<= terminal (true (count 3))) (<= (goal r 100) (true (count 3)))
"""

needs_compiler = pytest.mark.skipif(
    shutil.which(native.compiler()[0]) is None, reason="no C compiler on this machine"
)


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """An empty kernel cache and no kernel loaded yet in this process."""
    monkeypatch.setenv("GGP_CACHE_DIR", str(tmp_path))
    monkeypatch.delenv("GGP_NATIVE", raising=False)
    monkeypatch.setattr(native, "_loaded", {})
    monkeypatch.setattr(native, "_failed", {})
    return tmp_path


@needs_compiler
def test_the_kernel_builds_into_the_cache_and_loads(fresh: Path) -> None:
    path = kernel.kernel_path()
    assert path.is_relative_to(fresh) and not path.exists()
    module = kernel.load_kernel()
    assert module is not None and path.exists()
    assert module.ABI == 1 and kernel.load_kernel() is module  # built once per process
    machine = PropnetStateMachine(parse_text(COUNTER))
    assert machine.backend == "native"
    state = machine.initial_state()
    for _ in range(3):
        state = machine.next_state(state, machine.legal_moves(state, machine.roles[0])[:1])
    assert machine.is_terminal(state) and machine.goals(state) == (100,)


def test_without_a_compiler_the_python_propnet_is_used(
    fresh: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setenv("CC", str(fresh / "no-such-compiler"))
    with caplog.at_level(logging.WARNING):
        assert kernel.load_kernel() is None
        assert kernel.load_kernel() is None
    warnings = [r for r in caplog.records if "native propnet kernel unavailable" in r.message]
    assert len(warnings) == 1 and "no-such-compiler" in warnings[0].message  # one warning
    machine = PropnetStateMachine(parse_text(COUNTER))
    assert machine.backend == "python"
    result = machine.random_playouts(machine.initial_state(), 50, np.random.default_rng(0))
    assert result.finished.all() and (result.goals == 100).all()
    with pytest.raises(RuntimeError, match="cannot be built"):
        PropnetStateMachine(parse_text(COUNTER), backend="native")


def test_a_failing_compile_is_reported_with_the_compiler_output(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(native, "CFLAGS", ("-no-such-flag-for-any-compiler",))
    if shutil.which(native.compiler()[0]) is None:
        pytest.skip("no C compiler on this machine")
    with pytest.raises(kernel.KernelBuildError, match="the C compiler failed"):
        kernel.build_kernel(fresh / "k.so")
    assert not any(fresh.iterdir())  # no half-written file left behind


def test_ggp_native_0_forces_python(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("GGP_NATIVE", "0")
    assert kernel.load_kernel() is None
    assert PropnetStateMachine(parse_text(COUNTER)).backend == "python"


@needs_compiler
def test_both_backends_agree_on_zobrist_keys_and_expansions() -> None:
    from ggp.gdl.parser import parse_file

    description = parse_file(GAMES / "tictactoe.gdl")
    native = PropnetStateMachine(description, backend="native")
    python = PropnetStateMachine(description, backend="python")
    a, b = native.initial_state(), python.initial_state()
    for _ in range(4):
        assert native.zobrist(a) == python.zobrist(b)
        (legal_a, children_a), (legal_b, children_b) = native.expand(a), python.expand(b)
        assert legal_a == legal_b
        assert [s.key for s in children_a] == [s.key for s in children_b]
        assert all(s.owner is native and hash(s) == hash(s.key) for s in children_a)
        a, b = children_a[-1], children_b[-1]
