"""Graph algorithms over relation dependency graphs, shared by the validator and reasoners."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import TypeVar

__all__ = ["strongly_connected_components"]

_T = TypeVar("_T")


def strongly_connected_components(
    nodes: Iterable[_T], edges: Mapping[_T, Iterable[_T]]
) -> list[list[_T]]:
    """Tarjan's algorithm (iterative): SCCs with every dependency before its dependants.

    ``edges[a]`` are the nodes ``a`` depends on; the result lists the SCC of a
    dependency before the SCC that depends on it.
    """
    index: dict[_T, int] = {}
    low: dict[_T, int] = {}
    on_stack: set[_T] = set()
    stack: list[_T] = []
    result: list[list[_T]] = []
    counter = 0
    for root in nodes:
        if root in index:
            continue
        work: list[tuple[_T, Iterator[_T]]] = [(root, iter(edges.get(root, ())))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(edges.get(child, ()))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component: list[_T] = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                result.append(component)
    return result
