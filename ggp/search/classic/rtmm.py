"""RTMM and RRTMM: real-time minimax with a time cutoff (Ontañón 2012), over any
two-player deterministic GDL game.

The paper's game model (../shared/REFERENCE-SEARCH.md section 3.1) maps onto a GDL game
this way (section 4, "RTMM over GDL"):

- a role whose only legal move is one move (``noop``) cannot act: PA = {∅};
- a step where no role has a choice is a ``simulate`` step: time passes;
- the time stamp ``t(s)`` is the game's clock counter, the ``N`` of a state fact
  ``(time N)`` (the 8x8 RTS of ``games/rts/``: ticks) or ``(step N)`` (BattleCity: one
  step = 8 cycles), read by :meth:`~ggp.game.Game.counter`; a game with neither is timed
  by the steps played from the root.

The search (section 3.2), alpha-beta as in the paper's experiments, values a state from
MAX's (the root role's) side:

- a terminal state, or one at or past the cutoff time ``t_max``, is a leaf: its goals, or
  the :class:`~ggp.search.evaluator.Evaluator`'s values;
- if MAX can act, MAX picks (a max node); if MIN can act too, in the same step, MIN then
  picks knowing MAX's move (max-min: the paper tests MAX first); then the step is made;
- if only MIN can act, MIN picks (a min node);
- if nobody can act, the state's only successor is searched (``simulate``).

RRTMM (section 3.5): at each internal non-root node where both can act, a fair coin
decides whether MAX or MIN picks first (the paper's rule, not the first microRTS code's).

Iterative deepening in time (section 3.4): the first cutoff is ``t_root + step``; after
each finished iteration the next cutoff is ``max(t_min + 1, t_max + step)``, where
``t_min`` is the earliest time of a leaf the cutoff stopped (any cutoff below it searches
the same tree again); it stops when no leaf was cut off (the tree is solved) or at the
deadline, and plays the best root move of the last finished iteration (the paper's
greedy one-ply fallback is the first iteration when the cutoff is one step away).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from ggp.errors import GameError, OutOfTime
from ggp.game import Game
from ggp.gdl.terms import Const, Term
from ggp.reasoning.state_machine import State
from ggp.search.classic.engine import SCALE, SearchTimeout, TreeSearch
from ggp.search.classic.sequential import StepInfo
from ggp.search.classic.tt import INFINITY
from ggp.search.evaluator import Evaluator

__all__ = ["RTMM", "RTMMResult", "CLOCK_FACTS"]

#: The state facts read as the time stamp, first found first.
CLOCK_FACTS = ("time", "step")


@dataclass(frozen=True)
class RTMMResult:
    """What one move's RTMM search found.

    Attributes:
        move: The move to play (one of the root role's legal moves).
        value: The root value of the last finished iteration, in goal points for the root
            role (None if none finished).
        lookahead: The cutoff of the last finished iteration, in clock units past the
            root (0 if none finished).
        iterations: Iterations finished.
        nodes: Nodes visited (all iterations, the unfinished one included).
        leaves: Leaves valued by the evaluator at the cutoff (all iterations).
        max_branching: The most moves one role had at a node.
        solved: The last finished iteration cut no leaf off: its value is exact (under
            max-min ordering of simultaneous orders).
        seconds: Wall time (of a search run in time slices,
            :class:`~ggp.search.classic.pondering.Pondering`: the slices' time, as
            :class:`~ggp.players.rts_players.RtmmPlayer` reports it).
    """

    move: Term
    value: float | None
    lookahead: int
    iterations: int
    nodes: int
    leaves: int
    max_branching: int
    solved: bool
    seconds: float


class RTMM(TreeSearch):
    """RTMM / RRTMM for one role of a two-player deterministic game (module docstring).

    Args:
        game: The rules (two roles besides none: no ``random``).
        role: The searching role (MAX).
        evaluator: Values leaves at the cutoff.
        randomized: RRTMM: a coin decides who picks first at internal simultaneous nodes.
        step: The least cutoff increment between iterations, in clock units.
        rng: The coin (RRTMM).
        clock: The time stamp of a state (default: the game's ``time`` or ``step``
            counter, else None and the search counts steps).

    Example:
        >>> from ggp.game import Game
        >>> game = Game.from_file("games/tictactoe.gdl")
        >>> result = RTMM(game, "xplayer", step=9).search(game.initial_state(), max_lookahead=9)
        >>> result.solved, result.value
        (True, 50.0)
    """

    name = "rtmm"

    def __init__(
        self,
        game: Game,
        role: Const | str,
        evaluator: Evaluator | None = None,
        *,
        randomized: bool = False,
        step: int = 1,
        rng: np.random.Generator | None = None,
        clock: Callable[[State], int | None] | None = None,
    ) -> None:
        super().__init__(game, role, evaluator, batch_leaves=False)
        if game.random_role is not None or len(game.player_roles) != 2:
            raise GameError(
                f"RTMM searches two-player games without chance, not {game.description.path}"
            )
        if step < 1:
            raise ValueError(f"step must be >= 1, not {step}")
        self.randomized = randomized
        self.name = "rrtmm" if randomized else "rtmm"
        self.step = step
        self.rng = rng if rng is not None else np.random.default_rng(0)
        self.opp = next(i for i in self.view.player_indices if i != self.me)
        if clock is None:
            for fact in CLOCK_FACTS:
                reader = game.counter(fact)
                if reader(game.initial_state()) is not None:
                    clock = reader
                    break
        self.clock = clock
        self._t_min = math.inf  # earliest time of a leaf cut off in this iteration
        self._max_branching = 0

    # ----------------------------------------------------------------- one iteration

    def _time(self, info: StepInfo, steps: int) -> int:
        if self.clock is None:
            return steps
        t = self.clock(info.state)
        return steps if t is None else t

    def value(self, info: StepInfo, t_max: int, alpha: int, beta: int, steps: int) -> int:
        """The value of ``info``'s state for MAX (an integer score) under cutoff
        ``t_max``, alpha-beta with window ``(alpha, beta)``; ``steps`` from the root.

        Raises:
            SearchTimeout: The deadline passed.
        """
        self.tick()
        if info.terminal:
            return self.score(self.leaf_values(info))
        t = self._time(info, steps)
        if t >= t_max:
            self._t_min = min(self._t_min, t)
            self.leaves += 1
            return self.score(self.leaf_values(info))
        expansion = self.view.expand(info)
        legal = expansion.legal
        order = [r for r in (self.me, self.opp) if len(legal[r]) > 1]
        if not order:  # simulate: nobody can act
            return self.value(self.view.info(expansion.states[0]), t_max, alpha, beta, steps + 1)
        if self.randomized and len(order) == 2 and steps > 0 and self.rng.random() < 0.5:
            order.reverse()
        return self._pick(info, order, (), t_max, alpha, beta, steps)

    def _pick(
        self,
        info: StepInfo,
        order: list[int],
        picks: tuple[int, ...],
        t_max: int,
        alpha: int,
        beta: int,
        steps: int,
    ) -> int:
        expansion = info.expansion
        assert expansion is not None
        if len(picks) == len(order):
            position = sum(p * expansion.strides[r] for r, p in zip(order, picks, strict=True))
            child = self.view.info(expansion.states[position])
            return self.value(child, t_max, alpha, beta, steps + 1)
        role = order[len(picks)]
        moves = len(expansion.legal[role])
        self._max_branching = max(self._max_branching, moves)
        at_root = steps == 0 and not picks
        indices: list[int] = list(range(moves))
        if at_root and self._root_best is not None:
            indices.remove(self._root_best)
            indices.insert(0, self._root_best)
        maximizing = role == self.me
        best = -INFINITY - 1 if maximizing else INFINITY + 1
        for i in indices:
            v = self._pick(info, order, (*picks, i), t_max, alpha, beta, steps)
            if maximizing:
                if v > best:
                    best = v
                    if at_root:
                        self._root_best = i
                alpha = max(alpha, v)
            else:
                best = min(best, v)
                beta = min(beta, v)
            if alpha >= beta:
                break
        return best

    # ----------------------------------------------------------------- the driver

    def search(
        self, state: State, deadline: float = math.inf, max_lookahead: int | None = None
    ) -> RTMMResult:
        """Iterative deepening in time from ``state`` until ``deadline`` (or until the
        cutoff would pass ``max_lookahead`` clock units past the root, or the tree is
        solved).

        Raises:
            GameError: ``state`` is terminal.
        """
        started = time.monotonic()
        root = self.check_root(state)
        info = root[0]
        legal = info.expansion.legal[self.me] if info.expansion is not None else ()
        if len(legal) == 1:
            return RTMMResult(legal[0], None, 0, 0, 0, 0, 1, False, 0.0)
        if max_lookahead is None and math.isinf(deadline):
            raise GameError("RTMM needs a deadline or a lookahead limit")
        self.deadline = deadline
        self.nodes = self.leaves = 0
        self._max_branching = 0
        t_root = self._time(info, 0)
        lookahead = self.step
        best: int | None = None
        value: float | None = None
        done_lookahead = 0
        iterations = 0
        solved = False
        self._root_best = None
        try:
            while max_lookahead is None or lookahead <= max_lookahead:
                self._t_min = math.inf
                t_max = t_root + lookahead
                score = self.value(info, t_max, -INFINITY, INFINITY, 0)
                iterations += 1
                best, value, done_lookahead = self._root_best, score / SCALE, lookahead
                if math.isinf(self._t_min):
                    solved = True
                    break
                lookahead = max(int(self._t_min) + 1 - t_root, lookahead + self.step)
        except (SearchTimeout, OutOfTime):  # our clock, or the reasoner's query cut
            pass
        finally:
            self.deadline = math.inf
        if best is None:  # no iteration finished: the unfinished one's best so far
            best = self._root_best
        move = legal[best] if best is not None else legal[0]
        return RTMMResult(
            move,
            value,
            done_lookahead,
            iterations,
            self.nodes,
            self.leaves,
            self._max_branching,
            solved,
            time.monotonic() - started,
        )
