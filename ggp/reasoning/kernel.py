"""The native propnet kernel: built at first use, with the pure-Python propnet as fallback.

``_kernel.c`` (beside this module) is a generic evaluator of a propositional network, a
CPython extension with no game-specific code (see its header comment for the two
engines: incremental propagation for single states, bit-sliced lanes for batches). It
is compiled once per machine and Python version with the C compiler Python was built
with (``sysconfig``'s ``CC``, or ``$CC``), into a cache folder:
``$GGP_CACHE_DIR``, else ``$XDG_CACHE_HOME/ggp``, else ``~/.cache/ggp``. ``make setup``
builds it (``python -m ggp.reasoning.kernel``); otherwise the first game loaded builds
it (a few seconds). A build is written to a temporary file and renamed, so concurrent
processes are safe.

Where there is no compiler, or the build fails, :func:`load_kernel` logs one warning
and returns None, and :class:`~ggp.reasoning.propnet_machine.PropnetStateMachine` uses
the pure-Python compiled propnet: the same answers, slower. ``GGP_NATIVE=0`` forces the
pure-Python backend.

:func:`kernel_spec` turns a :class:`~ggp.reasoning.propnet.Propnet` into the arrays the
kernel's ``Net`` is built from.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import logging
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from ggp.gdl.graph import strongly_connected_components
from ggp.reasoning.propnet import Op, Propnet
from ggp.reasoning.state_machine import State, fact_hash64

__all__ = ["load_kernel", "kernel_spec", "kernel_path", "KernelBuildError", "MODULE_NAME"]

logger = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("_kernel.c")
MODULE_NAME = "ggp_propnet_kernel"
#: Compiler flags; part of the cache key.
CFLAGS = ("-O3", "-std=gnu11", "-fPIC", "-shared", "-fno-strict-aliasing")
BUILD_TIMEOUT_S = 180.0

_loaded: ModuleType | None = None
_failed: str | None = None


class KernelBuildError(RuntimeError):
    """The native kernel could not be compiled or loaded (the message says why)."""


def _cache_dir() -> Path:
    explicit = os.environ.get("GGP_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ggp"


def _compiler() -> list[str]:
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shlex.split(str(cc))


def kernel_path() -> Path:
    """Where the kernel for this source, Python and compiler flags is (or will be) built."""
    digest = hashlib.sha256()
    digest.update(SOURCE.read_bytes())
    digest.update(sys.version.encode())
    digest.update(" ".join([*_compiler(), *CFLAGS]).encode())
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return _cache_dir() / digest.hexdigest()[:16] / f"{MODULE_NAME}{suffix}"


def build_kernel(target: Path) -> None:
    """Compile ``_kernel.c`` to ``target`` (atomically: a temporary file, then a rename).

    Raises:
        KernelBuildError: No compiler, a failed compile, or a timeout.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    include = sysconfig.get_paths()["include"]
    fd, temporary = tempfile.mkstemp(suffix=target.suffix, dir=target.parent)
    os.close(fd)
    command = [*_compiler(), *CFLAGS, f"-I{include}", str(SOURCE), "-o", temporary]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        Path(temporary).unlink(missing_ok=True)
        raise KernelBuildError(f"cannot run the C compiler ({' '.join(command[:1])}): {e}") from e
    if done.returncode != 0:
        Path(temporary).unlink(missing_ok=True)
        last = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise KernelBuildError(f"the C compiler failed: {' / '.join(last)}")
    os.replace(temporary, target)


def _import(path: Path) -> ModuleType:
    loader = importlib.machinery.ExtensionFileLoader(MODULE_NAME, str(path))
    spec = importlib.util.spec_from_file_location(MODULE_NAME, path, loader=loader)
    if spec is None:
        raise KernelBuildError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def load_kernel() -> ModuleType | None:
    """The native kernel module, compiled on first use; None where it cannot be.

    Returns None (and logs one warning per process) when ``GGP_NATIVE=0`` or the
    kernel cannot be built; callers then use the pure-Python propnet.
    """
    global _loaded, _failed
    if os.environ.get("GGP_NATIVE", "1") == "0":
        return None
    if _loaded is not None or _failed is not None:
        return _loaded
    try:
        path = kernel_path()
        if not path.exists():
            logger.info("building the native propnet kernel in %s", path.parent)
            build_kernel(path)
        module = _import(path)
        module.set_state_class(State)
        _loaded = module
    except (KernelBuildError, OSError, ImportError) as e:
        _failed = str(e)
        logger.warning("native propnet kernel unavailable (%s); using the pure-Python propnet", e)
        return None
    return _loaded


def _int32(values: Any) -> bytes:
    return np.asarray(values, dtype=np.int32).tobytes()


def _csr(lists: list[list[int]] | list[tuple[int, ...]]) -> tuple[bytes, bytes]:
    offsets = np.zeros(len(lists) + 1, dtype=np.int32)
    offsets[1:] = np.cumsum([len(x) for x in lists])
    flat = np.fromiter((v for x in lists for v in x), dtype=np.int32, count=int(offsets[-1]))
    return offsets.tobytes(), flat.tobytes()


def kernel_spec(net: Propnet) -> dict[str, object]:
    """The arrays (as bytes) and sizes from which the kernel's ``Net`` is built."""
    n = len(net.ops)
    ops = np.array(net.ops, dtype=np.uint8)
    children: list[tuple[int, ...]] = [net.children(node) for node in range(n)]
    parents: list[list[int]] = [[] for _ in range(n)]
    for node, kids in enumerate(children):
        for child in kids:
            parents[child].append(node)
    # Cyclic components (positive recursion through LOOP nodes) and levels.
    scc = np.full(n, -1, dtype=np.int32)
    components: list[list[int]] = []
    level = np.zeros(n, dtype=np.int32)
    if net.loops:
        for component in strongly_connected_components(range(n), dict(enumerate(children))):
            members = frozenset(component)
            if len(component) > 1 or component[0] in children[component[0]]:
                scc[component] = len(components)
                components.append(sorted(component))
            outside = [c for m in component for c in children[m] if c not in members]
            height = 1 + max((int(level[c]) for c in outside), default=-1)
            if any(children[m] for m in component):
                level[component] = max(height, 1)
    else:
        for node in range(n):  # children have smaller indices
            kids = children[node]
            if kids:
                level[node] = 1 + max(int(level[c]) for c in kids)
    # Node order for the bit-sliced programs: creation order is topological when there
    # are no cycles (children come first) and keeps related nodes close in memory.
    order = (
        np.argsort(level, kind="stable").astype(np.int32)
        if components
        else np.arange(n, dtype=np.int32)
    )
    # The nodes some input reaches (through parents, so cycles need no special case).
    reaches_input = np.zeros(n, dtype=bool)
    todo = np.flatnonzero(ops == int(Op.INPUT)).tolist()
    reaches_input[todo] = True
    while todo:
        node = todo.pop()
        for up in parents[node]:
            if not reaches_input[up]:
                reaches_input[up] = True
                todo.append(up)
    # What random playouts evaluate: the cones of legal, terminal, goal and next.
    played = np.zeros(n, dtype=bool)
    roots = [net.terminal, *net.next]
    roots.extend(node for nodes in net.legal for node in nodes)
    roots.extend(node for pairs in net.goals for _, node in pairs)
    cone = net.cone(roots)
    played[np.fromiter(cone, dtype=np.int64, count=len(cone))] = True
    base_node = np.full(len(net.base), -1, dtype=np.int32)
    input_node = np.full(len(net.inputs), -1, dtype=np.int32)
    for node in np.flatnonzero(ops == int(Op.BASE)).tolist():
        base_node[net.args[node][0]] = node
    for node in np.flatnonzero(ops == int(Op.INPUT)).tolist():
        input_node[net.args[node][0]] = node
    child_off, child_flat = _csr(children)
    parent_off, parent_flat = _csr(parents)
    scc_off, scc_flat = _csr(components)
    move_off = np.zeros(len(net.roles) + 1, dtype=np.int32)
    move_off[1:] = np.cumsum([len(m) for m in net.moves])
    sees_off = np.zeros(len(net.roles) + 1, dtype=np.int32)
    sees_off[1:] = np.cumsum([len(p) for p in net.percepts])
    goal_off = np.zeros(len(net.roles) + 1, dtype=np.int32)
    goal_off[1:] = np.cumsum([len(pairs) for pairs in net.goals])
    zobrist: npt.NDArray[np.uint64] = np.array(
        [fact_hash64(fact) for fact in net.base], dtype=np.uint64
    )
    return {
        "n_nodes": n,
        "n_base": len(net.base),
        "n_inputs": len(net.inputs),
        "n_roles": len(net.roles),
        "n_levels": int(level.max()) + 1 if n else 1,
        "n_scc": len(components),
        "terminal": net.terminal,
        "ops": ops.tobytes(),
        "child_off": child_off,
        "child": child_flat,
        "parent_off": parent_off,
        "parent": parent_flat,
        "level": level.tobytes(),
        "order": order.tobytes(),
        "scc": scc.tobytes(),
        "scc_off": scc_off,
        "scc_nodes": scc_flat,
        "base_node": base_node.tobytes(),
        "input_node": input_node.tobytes(),
        "next_node": _int32(net.next),
        "move_off": move_off.tobytes(),
        "move_input": _int32([j for inputs in net.move_inputs for j in inputs]),
        "legal_node": _int32([node for nodes in net.legal for node in nodes]),
        "sees_off": sees_off.tobytes(),
        "sees_node": _int32([node for nodes in net.sees for node in nodes]),
        "goal_off": goal_off.tobytes(),
        "goal_value": _int32([value for pairs in net.goals for value, _ in pairs]),
        "goal_node": _int32([node for pairs in net.goals for _, node in pairs]),
        "state_all": order[~reaches_input[order]].tobytes(),
        "move_all": order[reaches_input[order]].tobytes(),
        "state_play": order[~reaches_input[order] & played[order]].tobytes(),
        "move_play": order[reaches_input[order] & played[order]].tobytes(),
        "zobrist": zobrist.tobytes(),
        "moves": tuple(tuple(moves) for moves in net.moves),
        "move_index": tuple({move: i for i, move in enumerate(moves)} for moves in net.moves),
    }


def main() -> None:
    """``python -m ggp.reasoning.kernel``: build the kernel now and say where it is."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    module = load_kernel()
    if module is None:
        print("native propnet kernel: not available (the pure-Python propnet will be used)")
        sys.exit(0)
    print(f"native propnet kernel: {module.__file__}")


if __name__ == "__main__":
    main()
