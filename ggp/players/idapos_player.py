"""IDAPOS, the Battlesnake search of Schier & Wuestenbecker (2019): spec ``idapos``.

Iterative deepening with adaptive play-out selection (../shared/REFERENCE-SEARCH.md
sections 2.3-2.5), over the classic searches of :mod:`ggp.search.classic` on a GDL search
model of the board (:func:`~ggp.battlesnake.generate.search_variant`: no food spawns
inside the tree, and the fact ``(frozen S)``):

- each depth ``d`` (one round: every simulated snake moves once) first selects the snakes
  that can meet ours within ``d`` rounds (:func:`played_out`: a head within ``2d`` of our
  head, or any body cell within ``d``; ours always);
- the others are masked: frozen (``mask=freeze``, the default: they stay put as obstacles,
  the paper's safest), moved by the code's reflex policy at every node of the search
  (``mask=reflex``, the paper's choice: they keep direction, eat and dodge, and add no
  sub-ply, :attr:`~ggp.search.classic.sequential.SequentialGame.policy`; it costs a board
  read per node: about one round less in 0.4 s), removed (``mask=remove``: they leave the
  board, the paper's worst) or frozen with a lead (``mask=lead``, ours: frozen in the
  tree, but at a leaf ``r`` rounds down the leaf heuristic's adversarial fill starts them
  ``r`` layers early, as if they had moved as often; a frozen enemy otherwise leaves us
  ground it would have contested; ``eval=snake`` only);
- the masked board is searched to depth ``d`` with alpha-beta when two snakes are simulated
  and max^n otherwise, leaves valued by the paper's heuristics
  (:class:`~ggp.battlesnake.heuristics.SnakeHeuristicEvaluator`);
- the move of the last finished depth is played; the search stops at the deadline less the
  margin. With no depth finished, the reflex policy's move.

- as the paper's code, the searches skip every simulated snake's certainly fatal moves
  (off the board, into its own body: :func:`~ggp.battlesnake.reflex.certainly_fatal`)
  while it has another (``prune=no`` searches them); the own-death penalty is the
  evaluator's (:mod:`ggp.battlesnake.heuristics`: any death ranks below any live position,
  survivors keep their goals; the turn breaks ties: die late, win early);
- with pruning, a move that leaves our snake a single move not certainly fatal is played
  at once, without a search (:meth:`IdaposPlayer.forced_move`: every depth would play it).

Not (yet) as in the paper: terminal scores by the reason of death (the state does not
record it), and its +2000 to every other snake's max^n score once ours is dead.

The paper's Table 1 compares IDAPOS with searches that simulate every live snake at every
depth (no locality, nothing masked): ``search=maxn`` (max^n), ``search=alphabeta`` (paranoid
alpha-beta: every other snake minimises ours; in a duel plain alpha-beta) and
``search=minimax`` (the same tree without pruning), each otherwise as IDAPOS (iterative
deepening, the same model, heuristics, pruning of fatal moves and clock).

Its heuristics column compares leaf heuristics in the same search: ``eval=greedy``,
``eval=aggressive`` or ``eval=tailchaser`` value leaves by the simple opponents' heuristics
(:mod:`ggp.battlesnake.simple_heuristics`) instead of the paper's (``eval=snake``).

Options (``idapos:KEY=VALUE,...``): ``search=idapos|maxn|alphabeta|minimax``,
``eval=snake|greedy|aggressive|tailchaser``,
``mask=reflex|freeze|remove|lead``, ``prune=yes|no``,
``depth=N`` (deepest round),
``margin=S`` (seconds kept before the deadline, default 0.1), ``weights=W`` (the heuristic's
weights: ``paper``, ``tuned`` (found by ``ggp tune``) or a weights file; default
:data:`~ggp.battlesnake.weights.DEFAULT_WEIGHTS_SPEC`).

Example:
    >>> settings = parse_idapos_options("mask=remove,depth=3,weights=paper")
    >>> settings.mask, settings.max_depth, settings.margin_s, settings.weights.duel.total_fill
    ('remove', 3, 0.1, 0.7)
    >>> parse_idapos_options("search=maxn,eval=greedy")
    IdaposSettings(search='maxn', leaf='greedy', ...)
"""

from __future__ import annotations

import gc
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Literal, get_args

import numpy as np

from ggp.battlesnake.board import Board, board_size, board_state, read_board, search_game
from ggp.battlesnake.heuristics import SnakeHeuristicEvaluator
from ggp.battlesnake.reflex import REFLEX_ORDER, certainly_fatal, reflex_move
from ggp.battlesnake.simple_heuristics import (
    SIMPLE_HEURISTICS,
    SimpleHeuristic,
    SimpleHeuristicEvaluator,
)
from ggp.battlesnake.weights import DEFAULT_WEIGHTS_SPEC, SnakeWeights, snake_weights
from ggp.collector import collect_frozen, collector_paused
from ggp.errors import GameError, OutOfTime
from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.players.base import MatchInfo, Observation, warn_if_no_time
from ggp.players.board_player import BoardPlayer
from ggp.reasoning.state_machine import State
from ggp.search.classic.alphabeta import AlphaBeta
from ggp.search.classic.engine import SearchTimeout, TreeSearch
from ggp.search.classic.maxn import MaxN
from ggp.search.classic.minimax import Minimax
from ggp.search.classic.sequential import FixedPolicy, MovePruning

__all__ = ["IdaposSettings", "IdaposPlayer", "parse_idapos_options", "played_out"]

Mask = Literal["reflex", "freeze", "remove", "lead"]
Algorithm = Literal["idapos", "maxn", "alphabeta", "minimax"]


@dataclass(frozen=True)
class IdaposSettings:
    """How :class:`IdaposPlayer` searches (module docstring).

    Attributes:
        search: ``idapos`` (locality: the snakes within reach, alpha-beta for two and
            max^n for more), or every live snake at every depth with ``maxn``,
            ``alphabeta`` (paranoid) or ``minimax``.
        leaf: The leaf heuristic: ``snake`` (the paper's, with ``weights``) or a simple
            opponent's (``greedy``, ``aggressive``, ``tailchaser``).
        mask: What becomes of the snakes out of reach (``idapos`` only).
        max_depth: The deepest round.
        margin_s: Seconds kept before the deadline.
        weights: The leaf heuristic's weights.
        prune: Leave the simulated snakes' certainly fatal moves out of the search.
    """

    search: Algorithm = "idapos"
    leaf: Literal["snake"] | SimpleHeuristic = "snake"
    mask: Mask = "freeze"
    max_depth: int = 64
    margin_s: float = 0.1
    weights: SnakeWeights = field(default_factory=lambda: snake_weights(DEFAULT_WEIGHTS_SPEC))
    prune: bool = True


def parse_idapos_options(argument: str | None) -> IdaposSettings:
    """The settings of spec ``idapos[:argument]``.

    Raises:
        GameError: An unknown option or a bad value.
        SettingError: ``weights=`` names a weights file that is missing or malformed.
    """
    settings = IdaposSettings()
    for item in filter(None, (argument or "").split(",")):
        key, _, value = item.partition("=")
        if key == "weights" and value:
            settings = replace(settings, weights=snake_weights(value))
            continue
        try:
            if key == "search" and value in get_args(Algorithm):
                settings = replace(settings, search=value)  # type: ignore[arg-type]
            elif key == "eval" and value in ("snake", *SIMPLE_HEURISTICS):
                settings = replace(settings, leaf=value)  # type: ignore[arg-type]
            elif key == "mask" and value in get_args(Mask):
                settings = replace(settings, mask=value)  # type: ignore[arg-type]
            elif key == "depth" and int(value) >= 1:
                settings = replace(settings, max_depth=int(value))
            elif key == "margin" and float(value) >= 0:
                settings = replace(settings, margin_s=float(value))
            elif key == "prune" and value in ("yes", "no"):
                settings = replace(settings, prune=value == "yes")
            else:
                raise ValueError(item)
        except ValueError:
            raise GameError(
                f"idapos option {item!r}: expected search=idapos|maxn|alphabeta|minimax, "
                "eval=snake|greedy|aggressive|tailchaser, mask=reflex|freeze|remove|lead, "
                "prune=yes|no, depth=N, margin=S or weights=paper|tuned|FILE"
            ) from None
    if settings.mask == "lead" and settings.leaf != "snake":
        raise GameError(
            f"idapos options {argument!r}: mask=lead needs the paper's heuristics (eval=snake)"
        )
    return settings


def played_out(board: Board, me: int, depth: int) -> frozenset[int]:
    """The snakes simulated at ``depth`` (the paper's Algorithm 2): ours, and every live
    snake whose head is within ``2 * depth`` of our head (head-to-head possible) or with a
    body cell within ``depth`` of it (head-to-body possible), by L1 distance."""
    ours = board.snakes[me]
    assert ours is not None
    hx, hy = ours.head
    chosen = {me}
    for i, snake in enumerate(board.snakes):
        if snake is None or i == me:
            continue
        x, y = snake.head
        if abs(x - hx) + abs(y - hy) <= 2 * depth or any(
            abs(x - hx) + abs(y - hy) <= depth for x, y in snake.body
        ):
            chosen.add(i)
    return frozenset(chosen)


class IdaposPlayer(BoardPlayer):
    """IDAPOS as a :class:`~ggp.players.base.Player` (module docstring)."""

    name = "idapos"

    def __init__(self, settings: IdaposSettings, rng: np.random.Generator | None = None) -> None:
        super().__init__(rng)
        self.settings = settings
        self.evaluator = (
            SnakeHeuristicEvaluator(settings.weights)
            if settings.leaf == "snake"
            else SimpleHeuristicEvaluator(settings.leaf)
        )
        #: ``[depths]`` the simulated snakes' count per finished depth of the last move.
        self.last_played_out: list[int] = []
        #: Nodes the last move's searches visited.
        self.last_nodes = 0
        #: The deepest round each move of the match finished (0: none, the reflex move),
        #: as :attr:`ClassicPlayer.depths <ggp.players.classic_player.ClassicPlayer.depths>`.
        self.depths: list[int] = []

    def start(self, match: MatchInfo) -> None:
        warn_if_no_time(self.name, match, self.settings.margin_s)
        self.depths = []
        super().start(match)
        snakes = [r for r in match.game.roles if r != match.game.random_role]
        search_game(board_size(match.game), len(snakes))  # ground it on the start clock

    def board_move(self, board: Board, deadline: float) -> str:
        forced = self.forced_move(board)
        if forced is not None:  # as ClassicPlayer with one legal move: no search, no depth
            self.last_played_out = []
            self.last_nodes = 0
            return forced
        with collector_paused():  # as ClassicPlayer: no collection inside the move clock
            try:
                move = self.search(board, deadline - self.settings.margin_s)
            finally:
                gc.freeze()
        self.depths.append(len(self.last_played_out))
        return move

    def forced_move(self, board: Board) -> str | None:
        """Our only move that is not certainly fatal, when the search prunes the others
        (``prune=yes``): every depth of the search would play it, and so would the reflex
        policy, so it is played at once. None when there are two or more, or none."""
        if not self.settings.prune:
            return None
        fatal = certainly_fatal(board, self.index)
        safe = [move for move in REFLEX_ORDER if move not in fatal]
        return safe[0] if len(safe) == 1 else None

    def search(self, board: Board, stop_at: float) -> str:
        """The move (``up``, ``down``, ``left``, ``right``) of the deepest depth finished
        by ``stop_at``; the reflex move if none."""
        me = self.index
        model = search_game(board.size, len(board.snakes))
        role = model.roles[me]
        searches: dict[frozenset[int], TreeSearch] = {}
        best = reflex_move(board, me)
        self.last_played_out = []
        self.last_nodes = 0
        live = frozenset(i for i, s in enumerate(board.snakes) if s is not None)
        for depth in range(1, self.settings.max_depth + 1):
            if time.monotonic() >= stop_at:
                break
            chosen = played_out(board, me, depth) if self.settings.search == "idapos" else live
            masked = live - chosen
            if self.settings.mask == "remove":
                cut = tuple(None if i in masked else s for i, s in enumerate(board.snakes))
                state = board_state(model, replace(board, snakes=cut))
            elif self.settings.mask in ("freeze", "lead"):
                state = board_state(model, board, frozen=masked)
            else:
                state = board_state(model, board)
            search = searches.get(masked)
            if search is None:
                evaluator = self.evaluator
                if self.settings.mask == "lead" and isinstance(evaluator, SnakeHeuristicEvaluator):
                    evaluator = evaluator.with_lead(masked, board.turn)
                search = searches[masked] = _SEARCHES[self.settings.search](len(chosen))(
                    model, role, evaluator
                )
                board_of = _last_board_reader(model)  # the policy and pruning share reads
                if self.settings.mask == "reflex" and masked:
                    search.view.policy = _reflex_policy(board_of, masked)
                if self.settings.prune:
                    search.view.prune = _fatal_pruning(board_of, chosen)
                search.new_move()
            search.deadline = stop_at
            nodes = search.nodes
            try:
                outcome = search.search_depth(state, depth, None)
            except (SearchTimeout, OutOfTime):  # our clock, or the reasoner's query cut
                break
            finally:
                search.deadline = math.inf
                self.last_nodes += search.nodes - nodes
            best = outcome.move.name
            self.last_played_out.append(len(chosen))
            if outcome.solved and chosen == live:
                break
        return best

    def stop(self, observation: Observation) -> None:
        super().stop(observation)
        collect_frozen()

    def abort(self) -> None:
        super().abort()
        collect_frozen()

    def __repr__(self) -> str:
        return f"IdaposPlayer({self.settings!r})"


#: The search class of each ``search=`` for a number of simulated snakes.
_SEARCHES: dict[str, Callable[[int], type[TreeSearch]]] = {
    "idapos": lambda snakes: AlphaBeta if snakes == 2 else MaxN,
    "maxn": lambda snakes: MaxN,
    "alphabeta": lambda snakes: AlphaBeta,
    "minimax": lambda snakes: Minimax,
}


def _last_board_reader(model: Game) -> Callable[[State], Board]:
    """``read_board(model, state)``, remembering the last state read: a state's expansion
    asks the fixed policy and then the pruning about the same state."""
    last: list[tuple[State, Board]] = []

    def board_of(state: State) -> Board:
        if not last or last[0][0] != state:
            last[:] = [(state, read_board(model, state))]
        return last[0][1]

    return board_of


def _reflex_policy(board_of: Callable[[State], Board], masked: frozenset[int]) -> FixedPolicy:
    """The masked snakes move by the reflex policy in every state of the search (the
    paper's "simple move" masking); snake ``i`` is role ``i`` of the search model."""

    def fixed(state: State, legal: Sequence[Sequence[Term]]) -> dict[int, int]:
        board = board_of(state)
        out = {}
        for i in masked:
            if board.snakes[i] is None:
                continue
            names = [m.name for m in legal[i]]
            move = reflex_move(board, i)
            if move in names:
                out[i] = names.index(move)
        return out

    return fixed


def _fatal_pruning(board_of: Callable[[State], Board], simulated: frozenset[int]) -> MovePruning:
    """The simulated snakes keep only their moves that are not certainly fatal, while
    they have one (the paper code's move pruning); snake ``i`` is role ``i``."""

    def kept(state: State, legal: Sequence[Sequence[Term]]) -> dict[int, list[int]]:
        board = board_of(state)
        out = {}
        for i in simulated:
            if board.snakes[i] is None or len(legal[i]) < 2:
                continue
            fatal = certainly_fatal(board, i)
            keep = [k for k, move in enumerate(legal[i]) if move.name not in fatal]
            if keep and len(keep) < len(legal[i]):
                out[i] = keep
        return out

    return kept
