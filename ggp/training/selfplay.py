"""One self-play game: CFR-D for every decision, training positions for every step.

The published loop (Partridge & Thielscher 2022, https://arxiv.org/abs/2207.07195),
with information sets keyed by observations. At each step of the game, for every role
with a choice:

1. histories consistent with the role's own observations are sampled (the exact
   posterior, the other roles modelled by the network's policy mixed with the uniform
   one),
2. a CFR-D tree is grown from them within a node budget, its leaves valued by the
   network, and solved by CFR+ warm-started from the network's policy
   (:func:`~ggp.nn.guided.solve_subgame`),
3. the role's policy at its root information set is its policy target for the true
   state, and its move is drawn from it.

Optionally (``true_value_weight > 0``), CFR-D is also run on the true state alone, and
its value there is mixed into the value target; the rest of the value target is the
game's outcome. Chance (``random``) plays uniformly.

The perfect-information fast path (``search`` ``mcts``, chosen by ``auto`` where the
game's moves are public, so that every role knows the true state and there is nothing
to sample): one PUCT search a step (:class:`~ggp.search.classic.mcts.MCTS` with the
network as prior and leaf evaluator, decoupled per-role statistics so simultaneous moves
need no special case, Dirichlet noise at the root), its tree kept from step to step; each
choosing role's visit counts at the root are its policy target and the distribution its
move is drawn from. Generic, not per game. The value target is the outcome, mixed with
weight ``true_value_weight`` with the search's mean value at the root (the "z and q"
average that sped up AlphaZero's connect four in Oracle's blog series *Lessons from
AlphaZero*, part 4, *Improving the training target*, 2018).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.nn.features import GameEncoding
from ggp.nn.guided import SubgameSettings, solve_subgame
from ggp.nn.net_evaluator import NetEvaluator, OpponentModel, bfloat16_is_fast
from ggp.reasoning.state_machine import JointMove, State
from ggp.search.cfr import expected_values
from ggp.search.classic.mcts import MCTS, MCTSSettings, PendingLeaves
from ggp.search.history import ObservationHistory
from ggp.search.sampler import PosteriorSampler, SampledHistory, live_roots
from ggp.search.tree import choosable_moves
from ggp.training.config import TrainConfig
from ggp.training.replay import Positions

__all__ = [
    "GameResult",
    "play_selfplay_game",
    "play_selfplay_games",
    "selfplay_precision",
    "selfplay_search",
    "subgame_settings",
]

#: Steps a self-play game may take (the referee's cap, ggp.match.run_match, too): the
#: 8x8 RTS games run to 2,400 steps and more (their 1,500 ticks and the orders between).
MAX_SELFPLAY_STEPS = 10_000

#: Exact-filter limits of the self-play samplers (smaller than in play: speed first).
SAMPLER_MAX_STATES = 3000
SAMPLER_PARTICLES = 500

#: Leaves valued in one network call by the self-play MCTS (the network's throughput
#: on 2 cores doubles from 8 states a call to 16; 200 simulations are then 13 calls).
SELFPLAY_BATCH = 16


@dataclass(frozen=True)
class GameResult:
    """One self-play game.

    Attributes:
        positions: One position per step (per non-terminal state reached).
        goals: ``[R]`` the final goals.
        steps: Joint moves played.
        decisions: Searches run (one per role with a choice per step).
    """

    positions: Positions
    goals: tuple[int, ...]
    steps: int
    decisions: int


def subgame_settings(config: TrainConfig) -> SubgameSettings:
    """The self-play search settings of ``config``."""
    return SubgameSettings(
        max_depth=config.max_depth,
        max_nodes=config.max_nodes,
        iterations=config.iterations,
        prior_weight=config.prior_weight,
    )


def selfplay_search(game: Game, config: TrainConfig) -> str:
    """The search self-play runs on ``game``: ``config.search``, with ``auto`` read as
    ``mcts`` where the game's moves are public (perfect information), else ``cfr``."""
    if config.search != "auto":
        return config.search
    return "mcts" if game.moves_public else "cfr"


def selfplay_precision(config: TrainConfig) -> str:
    """The self-play network's precision: ``config.precision``, with ``auto`` read as
    ``bfloat16`` where the CPU computes it natively, else ``float32``."""
    if config.precision != "auto":
        return config.precision
    return "bfloat16" if bfloat16_is_fast() else "float32"


def play_selfplay_games(
    game: Game,
    evaluator: NetEvaluator,
    config: TrainConfig,
    rngs: Sequence[np.random.Generator],
    max_steps: int = MAX_SELFPLAY_STEPS,
    parallel: int | None = None,
) -> list[GameResult]:
    """Play one game per generator in ``rngs``, game ``i`` drawing from ``rngs[i]``.

    On the perfect-information fast path ``parallel`` games (default: all) are played at
    once, a finished game's place taken by the next, their searches' leaves valued in
    one network call a round (up to ``parallel`` times :data:`SELFPLAY_BATCH` states,
    where the network is several times faster a state than in one game's batches); each
    game is the one :func:`play_selfplay_game` plays with its generator, up to the
    network's rounding in larger batches. Otherwise one after another.

    Raises:
        GameError: As :func:`play_selfplay_game`.
    """
    if selfplay_search(game, config) == "mcts":
        return _play_mcts_games(game, evaluator, config, rngs, max_steps, parallel or len(rngs))
    return [play_selfplay_game(game, evaluator, config, rng, max_steps) for rng in rngs]


def play_selfplay_game(
    game: Game,
    evaluator: NetEvaluator,
    config: TrainConfig,
    rng: np.random.Generator,
    max_steps: int = MAX_SELFPLAY_STEPS,
) -> GameResult:
    """Play one game against itself and return its training positions.

    Raises:
        GameError: The game does not end within ``max_steps``, or ``config.search`` is
            ``mcts`` and the game's moves are not public.
    """
    if selfplay_search(game, config) == "mcts":
        return _play_mcts_games(game, evaluator, config, [rng], max_steps, 1)[0]
    encoding: GameEncoding = evaluator.encoding
    settings = subgame_settings(config)
    roles = game.roles
    heads = encoding.policy_roles
    offsets = np.concatenate([[0], np.cumsum(encoding.policy_sizes)]).astype(np.int64)
    model = OpponentModel(evaluator, config.uniform_mix)
    samplers = {
        r: PosteriorSampler(
            game, model, max_states=SAMPLER_MAX_STATES, num_particles=SAMPLER_PARTICLES
        )
        for r in heads
    }
    histories = {r: ObservationHistory(roles[r]) for r in heads}
    state = game.initial_state()
    true_states: list[State] = [state]
    true_joints: list[JointMove] = []
    policy_rows: list[npt.NDArray[np.float32]] = []
    has_rows: list[npt.NDArray[np.bool_]] = []
    true_values: list[npt.NDArray[np.float64]] = []
    decisions = 0
    while not game.is_terminal(state):
        if len(true_joints) >= max_steps:
            raise GameError(f"the self-play game did not end within {max_steps} steps")
        policy_row = np.zeros(int(offsets[-1]), dtype=np.float32)
        has_row = np.zeros(len(heads), dtype=bool)
        joint: list[Term] = []
        for r, role in enumerate(roles):
            legal = game.legal_moves(state, role)
            head = encoding.head_of(r)
            if head is None or len(legal) == 1:
                joint.append(legal[int(rng.integers(len(legal)))])
                continue
            roots = live_roots(game, samplers[r], histories[r], config.samples, rng)
            if not roots:  # no sampled history continues: play uniformly, learn nothing
                joint.append(legal[int(rng.integers(len(legal)))])
                continue
            roots, choosable = choosable_moves(game, roots, role)
            if len(choosable) == 1:  # one safe move (the rules hide the legal moves)
                joint.append(_as_played(choosable[0], legal, rng))
                continue
            tree, solver = solve_subgame(
                game, roots, evaluator, settings, root_moves={role: choosable}
            )
            infoset = tree.root_infoset(role)
            if infoset is None:
                raise GameError(f"{role} has no information set at the root")
            moves = tree.infoset_moves[infoset]
            policy = np.asarray(solver.policy(infoset), dtype=np.float64)
            policy = policy / policy.sum()
            columns = offsets[head] + encoding.move_indices(head, moves)
            policy_row[columns] = policy
            has_row[head] = True
            decisions += 1
            play = (1.0 - config.explore) * policy + config.explore / len(moves)
            joint.append(
                _as_played(moves[int(rng.choice(len(moves), p=play / play.sum()))], legal, rng)
            )
        if config.true_value_weight > 0:
            root = [(SampledHistory(tuple(true_states), tuple(true_joints)), 1.0)]
            tree, solver = solve_subgame(game, root, evaluator, settings)
            true_values.append(expected_values(tree, solver.average_strategy()) / 100.0)
        policy_rows.append(policy_row)
        has_rows.append(has_row)
        moves_now: JointMove = tuple(joint)
        for r in heads:
            histories[r] = histories[r].extend(
                moves_now[r], game.percepts(state, moves_now, roles[r])
            )
        state = game.next_state(state, moves_now)
        true_states.append(state)
        true_joints.append(moves_now)
    return _result(
        game, encoding, state, true_states, policy_rows, has_rows, true_values, config, decisions
    )


def _play_mcts_games(
    game: Game,
    evaluator: NetEvaluator,
    config: TrainConfig,
    rngs: Sequence[np.random.Generator],
    max_steps: int,
    parallel: int,
) -> list[GameResult]:
    """The perfect-information fast path (module docstring): the games of ``rngs``,
    ``parallel`` at once (a finished game's place goes to the next), each with its own
    search, the leaves of all in one network call a round."""
    if not game.moves_public:
        raise GameError(
            "self-play search mcts needs a game whose moves are public (no sees rules): "
            "this one hides information, use search cfr"
        )
    game = game.with_cache(0)  # the search trees hold the transitions
    no_values = np.zeros((0, len(game.roles)))
    results: list[GameResult | None] = [None] * len(rngs)
    waiting = list(enumerate(rngs))[::-1]
    playing: list[tuple[int, _MCTSGame]] = []
    with _without_cycle_collection():
        while waiting or playing:
            while waiting and len(playing) < parallel:
                index, rng = waiting.pop()
                playing.append((index, _MCTSGame(game, evaluator, config, rng, max_steps)))
            for index, g in playing:
                if g.over:
                    results[index] = g.result()
            playing = [(index, g) for index, g in playing if not g.over]
            pending = [(g, g.select()) for _, g in playing]
            states = list(dict.fromkeys(s for _, leaves in pending for s in leaves.states))
            values = evaluator.evaluate(game, states).values if states else no_values
            row = {s: i for i, s in enumerate(states)}
            for g, leaves in pending:
                g.back_up(leaves, values[[row[s] for s in leaves.states]])
    return [result for result in results if result is not None]


@contextmanager
def _without_cycle_collection() -> Iterator[None]:
    """Python's cyclic garbage collector off for the block: the search trees are large
    and free of cycles (reference counting frees them), and the collector's full passes
    over them took a fifth of a breakthrough self-play step."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


class _MCTSGame:
    """One game of :func:`_play_mcts_games`, a search batch at a time: one PUCT search
    of ``config.simulations`` a step, in batches of :data:`SELFPLAY_BATCH` leaves."""

    def __init__(
        self,
        game: Game,
        evaluator: NetEvaluator,
        config: TrainConfig,
        rng: np.random.Generator,
        max_steps: int,
    ) -> None:
        self.game = game
        self.encoding: GameEncoding = evaluator.encoding
        self.config = config
        self.rng = rng
        self.max_steps = max_steps
        encoding = self.encoding
        self.offsets = np.concatenate([[0], np.cumsum(encoding.policy_sizes)]).astype(np.int64)
        self.players = [r for r in range(len(game.roles)) if encoding.head_of(r) is not None]
        self.search = MCTS(
            game,
            game.roles[self.players[0]] if self.players else game.roles[0],
            evaluator,
            MCTSSettings(solver=False, root_noise=config.root_noise, batch_size=SELFPLAY_BATCH),
            rng,
            prior=evaluator,
        )
        self.state = game.initial_state()
        self.true_states: list[State] = [self.state]
        self.root_values: list[npt.NDArray[np.float64] | None] = []  # 0..1, None: no search
        self.policy_rows: list[npt.NDArray[np.float32]] = []
        self.has_rows: list[npt.NDArray[np.bool_]] = []
        self.decisions = 0
        self.left = 0  # simulations left in this step's search
        self.joint: list[Term] = []
        self.choosing: list[int] = []
        self.over = False
        self._next_search()

    def _next_search(self) -> None:
        """Play the steps where no player chooses, then begin the next step's search
        (or mark the game over)."""
        game = self.game
        while not game.is_terminal(self.state):
            if len(self.true_states) > self.max_steps:
                raise GameError(f"the self-play game did not end within {self.max_steps} steps")
            legal = [game.legal_moves(self.state, role) for role in game.roles]
            self.choosing = [r for r in self.players if len(legal[r]) > 1]
            self.joint = [moves[int(self.rng.integers(len(moves)))] for moves in legal]
            if self.choosing:
                self.search.begin(self.state)
                self.decisions += 1
                self.left = self.config.simulations
                return
            self.root_values.append(None)
            self._record(
                np.zeros(int(self.offsets[-1]), np.float32), np.zeros(len(self.offsets) - 1, bool)
            )
        self.over = True

    def _record(self, policy_row: npt.NDArray[np.float32], has_row: npt.NDArray[np.bool_]) -> None:
        """Keep the step's targets and play ``self.joint``."""
        self.policy_rows.append(policy_row)
        self.has_rows.append(has_row)
        self.state = self.game.next_state(self.state, tuple(self.joint))
        self.true_states.append(self.state)

    def select(self) -> PendingLeaves:
        """The next batch of the step's search."""
        size = min(SELFPLAY_BATCH, self.left)
        self.left -= size
        return self.search.select_leaves(size)

    def back_up(self, leaves: PendingLeaves, values: npt.NDArray[np.float64]) -> None:
        """Back up a batch; after the step's last one, play the step."""
        self.search.back_up(leaves, values)
        if self.left > 0 and not self.search.root_proven:
            return
        encoding, config, rng = self.encoding, self.config, self.rng
        policy_row = np.zeros(int(self.offsets[-1]), dtype=np.float32)
        has_row = np.zeros(len(self.offsets) - 1, dtype=bool)
        visits = self.search.root_visits(self.state)
        drawn = not config.sample_steps or len(self.true_states) <= config.sample_steps
        for r in self.choosing:
            moves, counts = visits[r]
            policy = np.asarray(counts, dtype=np.float64)
            policy = policy / policy.sum()
            head = encoding.head_of(r)
            assert head is not None
            policy_row[self.offsets[head] + encoding.move_indices(head, moves)] = policy
            has_row[head] = True
            if drawn:
                play = (1.0 - config.explore) * policy + config.explore / len(moves)
                self.joint[r] = moves[int(rng.choice(len(moves), p=play / play.sum()))]
            else:  # the most visited move (ties drawn)
                best = np.flatnonzero(policy == policy.max())
                self.joint[r] = moves[int(best[rng.integers(len(best))])]
        if config.true_value_weight > 0:
            self.root_values.append(np.asarray(self.search.root_value(self.state)) / 100.0)
        self._record(policy_row, has_row)
        self._next_search()

    def result(self) -> GameResult:
        """The finished game's positions."""
        outcome = np.asarray(self.game.goals(self.state), dtype=np.float64) / 100.0
        root_values = (
            [outcome if v is None else v for v in self.root_values]
            if self.config.true_value_weight > 0
            else []
        )
        return _result(
            self.game,
            self.encoding,
            self.state,
            self.true_states,
            self.policy_rows,
            self.has_rows,
            root_values,
            self.config,
            self.decisions,
        )


def _result(
    game: Game,
    encoding: GameEncoding,
    state: State,
    true_states: list[State],
    policy_rows: list[npt.NDArray[np.float32]],
    has_rows: list[npt.NDArray[np.bool_]],
    true_values: list[npt.NDArray[np.float64]],
    config: TrainConfig,
    decisions: int,
) -> GameResult:
    """The training positions of a finished game (``state`` terminal)."""
    heads = encoding.policy_roles
    width = int(sum(encoding.policy_sizes))
    goals = game.goals(state)
    steps = len(true_states) - 1
    outcome = np.asarray(goals, dtype=np.float64) / 100.0
    value = np.tile(outcome, (steps, 1))
    if true_values and steps:
        w = config.true_value_weight
        value = (1.0 - w) * value + w * np.stack(true_values)
    visited = true_states[:-1]
    masks = encoding.legal_masks(visited)
    legal_mask = np.concatenate(masks, axis=1) if masks else np.zeros((steps, 0), dtype=bool)
    positions = Positions(
        features=encoding.encode_bits(visited),
        legal=legal_mask,
        policy=np.stack(policy_rows) if steps else np.zeros((0, width), np.float32),
        has_policy=np.stack(has_rows) if steps else np.zeros((0, len(heads)), bool),
        value=value.astype(np.float32),
    )
    return GameResult(positions, goals, steps, decisions)


def _as_played(move: Term, legal: tuple[Term, ...], rng: np.random.Generator) -> Term:
    """``move`` if it is legal in the true state, else a random legal move (what a game
    manager does with an illegal move; possible where the rules hide a role's legal
    moves from it and the sampled histories all differ from the true one)."""
    if move in legal:
        return move
    return legal[int(rng.integers(len(legal)))]
