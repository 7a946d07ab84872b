"""Compiled games shared by the matches of ``ggp serve``, and per-thread views of them.

Grounding and compiling a game takes a while, so :class:`GameCache` keeps the last few,
keyed by their rules: a game played again starts at once. Thread safety: the compiled
propnet is pure (its memo tables are dicts, safe under the GIL) and is shared by the
threads of a match and by later matches; each thread family gets its own
:class:`~ggp.game.Game` view (:meth:`~ggp.game.Game.with_cache`), so the transition
caches (not thread-safe) are never shared. The reference prover keeps mutable caches, so
a shared prover is played through a lock (:meth:`~ggp.game.Game.locked`).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from ggp.game import Game, ReasonerName
from ggp.gdl.terms import Description

__all__ = ["GameCache"]


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
                game = game.locked()
            self._games[key] = game
            while len(self._games) > self._size:
                self._games.popitem(last=False)
            return game
