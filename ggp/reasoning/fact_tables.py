"""Fact tables: the facts of one relation, indexed on demand, for the prover.

A fact is the tuple of a ground atom's arguments (interned terms, so comparisons are
identity tests); a :class:`Table` keeps a relation's facts once each, in the order they
were derived, and builds an index for each set of argument positions a join looks up by
(by value, or by the function name and arity of a compound argument).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable

from ggp.gdl.terms import Term

__all__ = ["Fact", "IndexSpec", "RelKey", "Table", "Watch", "index_into", "unwatched"]

#: A relation: its name and arity (``terminal`` is ``("terminal", 0)``).
RelKey = tuple[str, int]
#: A ground fact of a relation: its arguments (``()`` for a 0-ary relation).
Fact = tuple[Term, ...]
#: Which argument positions an index uses: ``(position, by_functor)`` pairs.
IndexSpec = tuple[tuple[int, bool], ...]
#: How a long pass over facts is read: the facts as they are, or through a generator
#: that may stop the pass part-way (the prover's deadline).
Watch = Callable[[Collection[Fact]], Iterable[Fact]]


def unwatched(facts: Collection[Fact]) -> Iterable[Fact]:
    """The :data:`Watch` that reads every fact, never stopping."""
    return facts


def index_into(index: dict[Hashable, list[Fact]], spec: IndexSpec, facts: Iterable[Fact]) -> None:
    """File each of ``facts`` under its key for ``spec`` (a scalar for one position)."""
    if len(spec) == 1:
        ((position, by_functor),) = spec
        if by_functor:
            for fact in facts:
                arg = fact[position]
                index.setdefault((arg.name, len(arg.args)), []).append(fact)
        else:
            for fact in facts:
                index.setdefault(fact[position], []).append(fact)
        return
    for fact in facts:
        key = tuple(
            (fact[p].name, len(fact[p].args)) if by_functor else fact[p] for p, by_functor in spec
        )
        index.setdefault(key, []).append(fact)


class Table:
    """The facts of one relation, with indexes built on first use and kept up to date."""

    __slots__ = ("rows", "seen", "_indexes")

    def __init__(self, facts: Iterable[Fact] = ()) -> None:
        self.seen: dict[Fact, None] = dict.fromkeys(facts)  # a set that keeps order
        self.rows: list[Fact] = list(self.seen)
        self._indexes: dict[IndexSpec, dict[Hashable, list[Fact]]] = {}

    def add(self, facts: Iterable[Fact]) -> list[Fact]:
        """Add ``facts``; return those that were not there yet, in order."""
        seen = self.seen
        new = [fact for fact in dict.fromkeys(facts) if fact not in seen]
        if new:
            seen.update(dict.fromkeys(new))
            self.rows.extend(new)
            for spec, index in self._indexes.items():
                index_into(index, spec, new)
        return new

    def index(self, spec: IndexSpec, watch: Watch = unwatched) -> dict[Hashable, list[Fact]]:
        """The facts grouped by their key under ``spec`` (shared: do not modify), built
        on first use through ``watch``; kept only once built whole."""
        index = self._indexes.get(spec)
        if index is None:
            index = {}
            index_into(index, spec, watch(self.rows))
            self._indexes[spec] = index
        return index
