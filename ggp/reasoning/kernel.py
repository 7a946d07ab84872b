"""The native propnet kernel: built at first use, with the pure-Python propnet as fallback.

``_kernel.c`` (beside this module) is a generic evaluator of a propositional network, a
CPython extension with no game-specific code (see its header comment for the two
engines: incremental propagation for single states, bit-sliced lanes for batches). It
is compiled once per machine and Python version by :mod:`ggp.native` (the cache folder,
the compiler, atomic builds). ``make setup`` builds it (``python -m
ggp.reasoning.kernel``); otherwise the first game loaded builds it (a few seconds).

Where there is no compiler, or the build fails, :func:`load_kernel` logs one warning
and returns None, and :class:`~ggp.reasoning.propnet_machine.PropnetStateMachine` uses
the pure-Python compiled propnet: the same answers, slower. ``GGP_NATIVE=0`` forces the
pure-Python backend.

:func:`kernel_spec` turns a :class:`~ggp.reasoning.propnet.Propnet` into the arrays the
kernel's ``Net`` is built from.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
import numpy.typing as npt

from ggp.gdl.graph import strongly_connected_components
from ggp.native import BuildError, build_extension, extension_path, load_extension
from ggp.reasoning.propnet import Op, Propnet
from ggp.reasoning.state_machine import State, fact_hash64

__all__ = ["load_kernel", "kernel_spec", "kernel_path", "KernelBuildError", "MODULE_NAME"]

logger = logging.getLogger(__name__)

SOURCE = Path(__file__).with_name("_kernel.c")
MODULE_NAME = "ggp_propnet_kernel"

#: The kernel's build errors are :mod:`ggp.native`'s.
KernelBuildError = BuildError


def kernel_path() -> Path:
    """Where the kernel for this source, Python and compiler flags is (or will be) built."""
    return extension_path(SOURCE, MODULE_NAME)


def build_kernel(target: Path) -> None:
    """Compile ``_kernel.c`` to ``target`` (atomically).

    Raises:
        KernelBuildError: No compiler, a failed compile, or a timeout.
    """
    build_extension(SOURCE, target)


def load_kernel() -> ModuleType | None:
    """The native kernel module, compiled on first use; None where it cannot be.

    Returns None (and logs one warning per process) when ``GGP_NATIVE=0`` or the
    kernel cannot be built; callers then use the pure-Python propnet.
    """
    module = load_extension(SOURCE, MODULE_NAME, "native propnet kernel")
    if module is not None:
        module.set_state_class(State)  # (cheap: once per state machine made)
    return module


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
