"""The sequential view of a GDL game that the classic searches walk.

GDL is a simultaneous-move language: at every step every role, ``random`` included,
plays one move, and the state advances once. Classic game-tree search wants one mover
per node, so each step is split into *sub-plies* ("delayed move execution",
``../shared/REFERENCE-SEARCH.md`` §1.7):

- The roles with a choice (more than one legal move) pick one after the other, the
  searching role (the *root role*) first, then the other players in role order, each
  seeing the earlier picks; the state advances after the last pick, by
  :meth:`~ggp.game.Expansion.child`.
- ``random`` (chance) picks last, uniformly, when it has more than one legal move: a
  *chance node*, valued by the expectation over its moves.
- A role with a single legal move (``noop``) adds no sub-ply, so a turn-taking game,
  which GDL writes as a simultaneous game where all roles but the mover play ``noop``,
  gets exactly one decision node per step, and the mover is detected per state.
- A step where nobody has a choice is a *forced* node with one child.

For two sides (alpha-beta, PVS, MTD(f), paranoid) the root role moving first and the
others answering is the paranoid, no-peeking sequentialisation of the Battlesnake paper
(Schier & Wüstenbecker 2019, IDAPOS: "our move is the outer loop"): in a truly
simultaneous step the opponents are assumed to see the root role's move, so the value
is a lower bound of the simultaneous game's pure-strategy value (max-min). In a
turn-taking game it is exact. For N players, max^n uses the same order, every player
maximising its own component over its own moves.

*Depth* counts steps (joint moves), not sub-plies: one depth is one full round in which
every role moves once, as in IDAPOS.

A node is a pair ``(StepInfo, picks)``: the state's cached information and the move
indices picked so far in this step (``picks[k]`` indexes the legal moves of
``info.order[k]``).

Roles may be given fixed policies (:attr:`SequentialGame.policy`: a state and its legal
moves to the move index each such role plays there): they then have one move per state
and add no sub-ply, an opponent model the search does not question (IDAPOS masks the
snakes out of reach this way, by a reflex policy). Moves may also be pruned
(:attr:`SequentialGame.prune`: a state and its legal moves to the move indices each named
role may still play there, at least one): the search never looks at the others (IDAPOS
leaves out the snakes' certainly fatal moves).
"""

from __future__ import annotations

import enum
import itertools
import logging
import math
from collections.abc import Callable, Mapping, Sequence

from ggp.errors import GameError
from ggp.game import Expansion, Game, LazySequence
from ggp.gdl.terms import Const, Term
from ggp.reasoning.state_machine import JointMove, State

__all__ = ["NodeKind", "StepInfo", "Node", "SequentialGame", "FixedPolicy", "MovePruning"]

#: A state and every role's legal moves to ``{role index: move index}`` for the roles
#: whose move is fixed there.
FixedPolicy = Callable[[State, Sequence[Sequence[Term]]], Mapping[int, int]]
#: A state and every role's legal moves to ``{role index: move indices}`` for the roles
#: whose moves are pruned there (the indices kept, in order, at least one).
MovePruning = Callable[[State, Sequence[Sequence[Term]]], Mapping[int, Sequence[int]]]

logger = logging.getLogger(__name__)

#: States whose :class:`StepInfo` is kept (the cache is emptied when it is full).
DEFAULT_INFO_CACHE = 50_000
#: The widest step (joint moves) expanded at once; wider ones are expanded lazily.
LAZY_ABOVE = 1024


class NodeKind(enum.IntEnum):
    """What happens at a node."""

    TERMINAL = 0  # the game is over
    FORCED = 1  # no role has a choice: one successor
    CHANCE = 2  # random picks uniformly among its legal moves
    DECISION = 3  # a player picks


class StepInfo:
    """What the search needs to know about one state, computed once and cached.

    Attributes:
        state: The state.
        terminal: Whether it ends the game.
        goals: ``[R]`` the goals (terminal states only, else None).
        expansion: Every legal joint move with its successor (None until expanded and
            in terminal states).
        order: ``[K]`` role indices that pick in this step, in sub-ply order (the root
            role, the other players in role order, then ``random``); empty when nobody
            has a choice.
        strides: ``[R]`` of :attr:`expansion`, precomputed.
    """

    __slots__ = ("state", "terminal", "goals", "expansion", "order", "strides", "_key")

    def __init__(self, state: State, terminal: bool, goals: tuple[int, ...] | None) -> None:
        self.state = state
        self.terminal = terminal
        self.goals = goals
        self.expansion: Expansion | None = None
        self.order: tuple[int, ...] = ()
        self.strides: tuple[int, ...] = ()
        self._key: int | None = None

    def __repr__(self) -> str:
        return f"<StepInfo {self.state!r} terminal={self.terminal} order={self.order}>"


#: A node of the sequential tree: a state's info and the moves picked so far this step.
Node = tuple[StepInfo, tuple[int, ...]]


class SequentialGame:
    """A game seen from one role as a tree with one mover per node (module docstring).

    Args:
        game: The rules.
        role: The root role (the searching player): it picks first in every step.
        cache_size: States whose :class:`StepInfo` is kept.

    Example:
        >>> from ggp.game import Game
        >>> game = Game.from_file("games/tictactoe.gdl")
        >>> view = SequentialGame(game, "xplayer")
        >>> root = view.root(game.initial_state())
        >>> view.kind(root).name, view.chooser(root), len(view.moves(root))
        ('DECISION', 0, 9)
        >>> child, advanced = view.child(root, 4)
        >>> advanced, view.chooser(child), str(view.moves(child)[0])
        (True, 1, '(mark 1 1)')
    """

    def __init__(self, game: Game, role: Const | str, cache_size: int = DEFAULT_INFO_CACHE) -> None:
        self.game = game
        self.role = game.role(role)
        if self.role == game.random_role:
            raise GameError("random is chance, played by the referee: it does not search")
        self.me = game.role_index(self.role)
        self.num_roles = len(game.roles)
        self.random_index = (
            game.role_index(game.random_role) if game.random_role is not None else -1
        )
        self.player_indices = tuple(game.role_index(r) for r in game.player_roles)
        self.cache_size = cache_size
        self._infos: dict[State, StepInfo] = {}
        # Players in sub-ply order: the root role first, then the others in role order.
        self._pick_order = (self.me, *(i for i in self.player_indices if i != self.me))
        #: Roles whose move a policy fixes in each state (module docstring); None: none.
        self.policy: FixedPolicy | None = None
        #: The moves kept in each state (module docstring); None: all.
        self.prune: MovePruning | None = None
        #: States with more joint moves than this are expanded lazily: their successors
        #: are computed as the search reaches them, so that a search of a wide step (eight
        #: snakes: 4^8 joint moves) keeps its clock (:data:`LAZY_ABOVE`).
        self.lazy_above = LAZY_ABOVE

    # ----------------------------------------------------------------- states

    def info(self, state: State) -> StepInfo:
        """The cached :class:`StepInfo` of ``state`` (terminal test and goals done)."""
        info = self._infos.get(state)
        if info is None:
            if len(self._infos) >= self.cache_size:
                self._infos.clear()
            game = self.game
            terminal = game.is_terminal(state)
            info = StepInfo(state, terminal, game.goals(state) if terminal else None)
            self._infos[state] = info
        return info

    def expand(self, info: StepInfo) -> Expansion:
        """Expand ``info``'s state (once): its joint moves, successors and pick order.

        Raises:
            GameError: A non-terminal state where some role has no legal move.
        """
        expansion = info.expansion
        if expansion is None:
            expansion = self._expand(info.state)
            if not expansion.joints:
                raise GameError(
                    f"a role has no legal move in a non-terminal state of "
                    f"{self.game.description.path}"
                )
            legal = expansion.legal
            order = [r for r in self._pick_order if len(legal[r]) > 1]
            if self.random_index >= 0 and len(legal[self.random_index]) > 1:
                order.append(self.random_index)
            info.order = tuple(order)
            info.strides = expansion.strides
            info.expansion = expansion
        return expansion

    def _expand(self, state: State) -> Expansion:
        """The state's expansion, restricted by :attr:`policy` and :attr:`prune`; lazy
        (successors computed when a search reaches them) above :attr:`lazy_above` joint
        moves."""
        game = self.game
        legal = tuple(game.legal_moves(state, role) for role in game.roles)
        if math.prod(len(moves) for moves in legal) <= self.lazy_above:
            expansion = game.expand(state)
            if self.policy is not None and expansion.joints:
                fixed = self.policy(state, expansion.legal)
                expansion = _restricted(expansion, {r: (i,) for r, i in fixed.items()})
            if self.prune is not None and expansion.joints:
                expansion = _restricted(expansion, self.prune(state, expansion.legal))
            return expansion
        if self.policy is not None:
            fixed = self.policy(state, legal)
            legal = tuple(
                (moves[fixed[r]],) if r in fixed else moves for r, moves in enumerate(legal)
            )
        if self.prune is not None:
            kept = self.prune(state, legal)
            legal = tuple(
                tuple(moves[i] for i in kept[r]) if r in kept else moves
                for r, moves in enumerate(legal)
            )
        return _lazy_expansion(game, state, legal)

    def key(self, info: StepInfo) -> int:
        """The state's 64-bit Zobrist key (:meth:`Game.zobrist`), cached."""
        key = info._key
        if key is None:
            key = info._key = self.game.zobrist(info.state)
        return key

    # ----------------------------------------------------------------- nodes

    def root(self, state: State) -> Node:
        """The node of ``state`` before anyone has picked."""
        return (self.info(state), ())

    def kind(self, node: Node) -> NodeKind:
        """What happens at ``node`` (expands its state if needed)."""
        info, picks = node
        if info.terminal:
            return NodeKind.TERMINAL
        if info.expansion is None:
            self.expand(info)
        if not info.order:
            return NodeKind.FORCED
        if info.order[len(picks)] == self.random_index:
            return NodeKind.CHANCE
        return NodeKind.DECISION

    def chooser(self, node: Node) -> int:
        """The index of the role that picks at ``node``; -1 at terminal and forced nodes."""
        info, picks = node
        if info.terminal:
            return -1
        if info.expansion is None:
            self.expand(info)
        return info.order[len(picks)] if info.order else -1

    def moves(self, node: Node) -> tuple[Term, ...]:
        """The legal moves of the role that picks at ``node`` (empty at terminal nodes;
        the single successor's joint move does not count as a choice at forced nodes)."""
        chooser = self.chooser(node)
        if chooser < 0:
            return ()
        expansion = node[0].expansion
        assert expansion is not None
        return expansion.legal[chooser]

    def child(self, node: Node, index: int) -> tuple[Node, bool]:
        """The node after the chooser picks its ``index``-th move (at a forced node:
        index 0, the only successor).

        Returns:
            The child and whether the state advanced (a step was made: depth goes down).
        """
        info, picks = node
        expansion = info.expansion
        if expansion is None:
            expansion = self.expand(info)
        order = info.order
        if not order:
            return (self.info(expansion.states[0]), ()), True
        picked = (*picks, index)
        if len(picked) < len(order):
            return (info, picked), False
        position = 0
        strides = info.strides
        for role, move in zip(order, picked, strict=True):
            position += move * strides[role]
        return (self.info(expansion.states[position]), ()), True

    def node_key(self, node: Node) -> int:
        """A transposition key of ``node``: the state's Zobrist key, mixed with the
        picks when some role has already picked in this step."""
        info, picks = node
        key = self.key(info)
        return key if not picks else hash((key, *picks))

    def root_move(self, node: Node, index: int) -> Term:
        """The root role's move when it picks its ``index``-th move at ``node``."""
        expansion = node[0].expansion
        assert expansion is not None
        return expansion.legal[self.me][index]

    def single_move(self, state: State) -> Term | None:
        """The root role's only legal move in ``state``, or None if it has a choice."""
        info = self.info(state)
        if info.terminal:
            return None
        expansion = self.expand(info)
        legal = expansion.legal[self.me]
        return legal[0] if len(legal) == 1 else None


def _lazy_expansion(game: Game, state: State, legal: tuple[tuple[Term, ...], ...]) -> Expansion:
    """The expansion of ``state`` over ``legal`` with joint moves and successors computed
    on demand (in :meth:`Game.expand`'s order: the last role varies fastest)."""
    sizes = [len(moves) for moves in legal]

    def joint(index: int) -> JointMove:
        picks = []
        for moves, size in zip(reversed(legal), reversed(sizes), strict=True):
            index, i = divmod(index, size)
            picks.append(moves[i])
        return tuple(reversed(picks))

    joints = LazySequence(math.prod(sizes), joint)
    return Expansion(
        state, legal, joints, LazySequence(len(joints), lambda i: game.next_state(state, joints[i]))
    )


def _restricted(expansion: Expansion, kept: Mapping[int, Sequence[int]]) -> Expansion:
    """``expansion`` with role ``r`` held to its legal moves ``kept[r]`` (indices, in
    order; the product order, and so :attr:`Expansion.strides`, kept)."""
    if not kept:
        return expansion
    strides = expansion.strides
    ranges = [kept.get(r, range(len(moves))) for r, moves in enumerate(expansion.legal)]
    indices = [
        sum(i * s for i, s in zip(pick, strides, strict=True))
        for pick in itertools.product(*ranges)
    ]
    legal = tuple(
        tuple(moves[i] for i in kept[r]) if r in kept else moves
        for r, moves in enumerate(expansion.legal)
    )
    return Expansion(
        expansion.state,
        legal,
        tuple(expansion.joints[i] for i in indices),
        tuple(expansion.states[i] for i in indices),
    )
