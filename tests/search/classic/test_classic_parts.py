"""The parts of classic search: the sequential view, chance, the table, ordering,
heuristics, anytime behaviour, max^n and MCTS."""

from __future__ import annotations

import time

import numpy as np
import pytest

from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.terms import Const
from ggp.reasoning.state_machine import State
from ggp.search.classic import (
    MCTS,
    MTDF,
    PVS,
    AlphaBeta,
    HeuristicEvaluator,
    MaxN,
    Minimax,
    NodeKind,
    Paranoid,
    SearchTimeout,
    SequentialGame,
    TranspositionTable,
    TreeSearch,
    iterative_deepening,
)
from ggp.search.classic.dropped import DEFAULT_SLICE, Dropped
from ggp.search.classic.mcts import MCTSSettings
from ggp.search.classic.ordering import HistoryTable, order_moves
from ggp.search.classic.tt import INFINITY
from ggp.search.policy_models import UniformPolicy

from conftest import GAMES, SHARED, requires_shared

GDL = SHARED / "gdl" / "gdl"

#: A perfect-information game with chance: ``safe`` is worth 50; ``gamble`` lets random
#: roll a die (1, 2: 100; 3: 0), worth 66.67. In the turn-taking version the roll is the
#: next step; in the simultaneous one it happens in the same step as the choice.
CHANCE_KIF = """
(role player) (role random)
(die 1) (die 2) (die 3)
(init (step 0))
(<= (legal player safe) (true (step 0)))
(<= (legal player gamble) (true (step 0)))
(<= (legal player noop) (true (step 1)))
(<= (legal random noop) (true (step 0)))
(<= (legal random (roll ?d)) (true (step 1)) (true (chose gamble)) (die ?d))
(<= (legal random noop) (true (step 1)) (true (chose safe)))
(<= (next (chose ?m)) (does player ?m))
(<= (next (chose ?m)) (true (chose ?m)))
(<= (next (rolled ?d)) (does random (roll ?d)))
(<= (next (step 1)) (true (step 0)))
(<= (next (step 2)) (true (step 1)))
(<= terminal (true (step 2)))
(<= (goal player 50) (true (chose safe)))
(<= (goal player 100) (true (rolled 1)))
(<= (goal player 100) (true (rolled 2)))
(<= (goal player 0) (true (rolled 3)))
(<= (goal random 0) (true (step 2)))
"""

SIMULTANEOUS_CHANCE_KIF = """
(role player) (role random)
(die 1) (die 2) (die 3)
(init (step 0))
(<= (legal player safe) (true (step 0)))
(<= (legal player gamble) (true (step 0)))
(<= (legal random (roll ?d)) (true (step 0)) (die ?d))
(<= (next (chose ?m)) (does player ?m))
(<= (next (rolled ?d)) (does random (roll ?d)))
(<= (next (step 1)) (true (step 0)))
(<= terminal (true (step 1)))
(<= (goal player 50) (true (chose safe)))
(<= (goal player 100) (true (chose gamble)) (true (rolled 1)))
(<= (goal player 100) (true (chose gamble)) (true (rolled 2)))
(<= (goal player 0) (true (chose gamble)) (true (rolled 3)))
(<= (goal random 0) (true (step 1)))
"""

DEPTH_FIRST: list[type[TreeSearch]] = [Minimax, AlphaBeta, PVS, MTDF, Paranoid, MaxN]


@pytest.fixture(scope="module")
def tictactoe() -> Game:
    return Game.from_file(GAMES / "tictactoe.gdl")


# --------------------------------------------------------------------------- the view


def test_turn_taking_has_one_decision_per_step(tictactoe: Game) -> None:
    view = SequentialGame(tictactoe, "oplayer")
    root = view.root(tictactoe.initial_state())
    assert view.kind(root) == NodeKind.DECISION
    assert view.chooser(root) == 0  # xplayer moves; oplayer's noop adds no sub-ply
    assert root[0].order == (0,)
    child, advanced = view.child(root, 0)
    assert advanced and view.chooser(child) == 1


@requires_shared
def test_simultaneous_step_splits_root_role_first() -> None:
    game = Game.from_file(GDL / "connectFourSimultaneous.kif")
    for role in game.player_roles:
        view = SequentialGame(game, role)
        root = view.root(game.initial_state())
        me = game.role_index(role)
        assert view.kind(root) == NodeKind.DECISION  # expands the state
        assert root[0].order == (me, 1 - me)
        middle, advanced = view.child(root, 2)
        assert not advanced and view.chooser(middle) == 1 - me
        leaf, advanced = view.child(middle, 5)
        assert advanced
        picks = [0, 0]
        picks[me], picks[1 - me] = 2, 5
        assert leaf[0].state == root[0].expansion.child(picks)  # type: ignore[union-attr]


def test_chance_picks_last_and_forced_steps() -> None:
    game = Game.from_text(SIMULTANEOUS_CHANCE_KIF)
    view = SequentialGame(game, "player")
    root = view.root(game.initial_state())
    assert view.chooser(root) == 0
    assert root[0].order == (0, 1)
    middle, _ = view.child(root, 0)
    assert view.kind(middle) == NodeKind.CHANCE
    turn_taking = Game.from_text(CHANCE_KIF)
    view = SequentialGame(turn_taking, "player")
    safe, _ = view.child(view.root(turn_taking.initial_state()), 1)
    assert view.kind(safe) == NodeKind.FORCED  # after safe, nobody has a choice


def test_random_and_terminal_are_refused(tictactoe: Game) -> None:
    game = Game.from_text(CHANCE_KIF)
    with pytest.raises(GameError, match="random"):
        SequentialGame(game, "random")
    terminal = tictactoe.state_from_facts(
        ["(cell 1 1 x)", "(cell 1 2 x)", "(cell 1 3 x)", "(control oplayer)"]
        + [f"(cell {r} {c} b)" for r in (2, 3) for c in (1, 2, 3)]
    )
    with pytest.raises(GameError, match="terminal"):
        AlphaBeta(tictactoe, "xplayer").search_depth(terminal, 1, None)


# --------------------------------------------------------------------------- chance


@pytest.mark.parametrize("kif", [CHANCE_KIF, SIMULTANEOUS_CHANCE_KIF], ids=["turns", "same step"])
@pytest.mark.parametrize("search_class", DEPTH_FIRST, ids=lambda c: c.__name__)
def test_chance_is_the_expectation(kif: str, search_class: type[TreeSearch]) -> None:
    game = Game.from_text(kif)
    result = iterative_deepening(search_class(game, "player"), game.initial_state())
    assert result.solved
    assert result.value == pytest.approx(200 / 3, abs=0.01)
    assert str(result.move) == "gamble"


@pytest.mark.parametrize("kif", [CHANCE_KIF, SIMULTANEOUS_CHANCE_KIF], ids=["turns", "same step"])
def test_mcts_proves_the_expectation(kif: str) -> None:
    game = Game.from_text(kif)
    search = MCTS(game, "player", rng=np.random.default_rng(0))
    result = search.search(game.initial_state(), max_simulations=2_000)
    assert result.solved and str(result.move) == "gamble"
    assert result.value == pytest.approx(200 / 3)


# --------------------------------------------------------------------------- table, order


def test_table_keeps_bounds_per_depth() -> None:
    table = TranspositionTable()
    table.store(7, depth=2, value=30, alpha=40, beta=50, move=None, heuristic=False)
    entry = table.probe(7)
    assert entry is not None and (entry.lower, entry.upper) == (-INFINITY, 30)
    table.store(7, depth=2, value=20, alpha=10, beta=20, move=3, heuristic=True)
    assert (entry.lower, entry.upper, entry.move, entry.heuristic) == (20, 30, 3, True)
    table.store(7, depth=3, value=25, alpha=0, beta=100, move=1, heuristic=False)
    replaced = table.probe(7)
    assert replaced is not None and (replaced.depth, replaced.lower, replaced.upper) == (3, 25, 25)
    assert table.stats().probes == 2 and len(table) == 1


def test_table_is_emptied_when_full() -> None:
    table = TranspositionTable(max_entries=2)
    for key in range(3):
        table.store(key, 1, 0, -1, 1, None, False)
    assert len(table) == 1 and table.probe(2) is not None


def test_ordering_tries_table_move_then_history() -> None:
    history = HistoryTable()
    moves = (Const("a"), Const("b"), Const("c"), Const("d"))
    assert order_moves(0, moves, None, None) == [0, 1, 2, 3]
    history.reward(0, moves[2], 3)
    history.reward(0, moves[1], 1)
    history.reward(1, moves[3], 9)  # another role's counter
    assert order_moves(0, moves, None, history) == [2, 1, 0, 3]
    assert order_moves(0, moves, 3, history) == [3, 2, 1, 0]
    history.age()
    assert history.score(0, moves[2]) == 4 and history.score(0, moves[1]) == 1


# --------------------------------------------------------------------------- evaluation


def test_heuristic_values_stay_inside_proven_ones(tictactoe: Game) -> None:
    rng = np.random.default_rng(0)
    states = []
    state = tictactoe.initial_state()
    while not tictactoe.is_terminal(state):
        states.append(state)
        expansion = tictactoe.expand(state)
        state = expansion.states[int(rng.integers(len(expansion)))]
    values = HeuristicEvaluator().evaluate(tictactoe, states).values
    assert values.shape == (len(states), 2)
    assert ((values >= 10) & (values <= 90)).all()
    assert np.allclose(values.sum(axis=1), 100.0)  # two players: constant sum


def test_leaves_above_the_horizon_are_valued_in_batches(tictactoe: Game) -> None:
    batched = AlphaBeta(tictactoe, "xplayer", use_tt=False, aspiration=None)
    single = AlphaBeta(tictactoe, "xplayer", use_tt=False, aspiration=None, batch_leaves=False)
    state = tictactoe.initial_state()
    assert batched.search_depth(state, 3, None) == single.search_depth(state, 3, None)
    assert batched.nodes == single.nodes
    # Leaves reached twice (transpositions) are valued once either way.
    assert batched.evaluations >= single.evaluations
    assert single.evaluations <= single.leaves


# --------------------------------------------------------------------------- node counts


@requires_shared
def test_pruning_visits_no_more_than_minimax() -> None:
    game = Game.from_file(GDL / "connectFour.kif")
    state = game.initial_state()
    for depth in range(1, 5):
        minimax = Minimax(game, "red")
        plain = AlphaBeta(game, "red", use_tt=False, use_history=False, aspiration=None)
        value = minimax.search_depth(state, depth, None).value
        assert plain.search_depth(state, depth, None).value == value
        assert plain.nodes <= minimax.nodes
        mtdf = MTDF(game, "red")
        outcome = mtdf.search_depth(state, depth, value)  # a perfect guess: two passes
        assert outcome.value == value and outcome.passes == 2


# --------------------------------------------------------------------------- anytime


class _Interrupted(PVS):
    """PVS whose clock runs out after ``budget`` nodes (a deterministic deadline)."""

    def __init__(self, game: Game, role: str, budget: int) -> None:
        super().__init__(game, role)
        self.budget = budget

    def tick(self) -> None:
        self.nodes += 1
        if self.nodes > self.budget:
            raise SearchTimeout


@requires_shared
def test_interrupted_search_still_returns_a_legal_move() -> None:
    game = Game.from_file(GDL / "breakthrough.kif")
    state = game.initial_state()
    legal = game.legal_moves(state, "white")
    for budget in (0, 5, 50, 500, 5_000):
        search = _Interrupted(game, "white", budget)
        search.view.cache_size = 100  # states' information is dropped mid-search
        result = iterative_deepening(search, state)
        assert result.move in legal
        assert not result.solved
        finished = [r for r in result.reports if r.complete]
        assert result.depth == len(finished)
        assert not result.reports or not result.reports[-1].complete
    # A deadline already passed: no iteration, the first legal move.
    passed = iterative_deepening(PVS(game, "white"), state, deadline=time.monotonic() - 1)
    assert passed.depth == 0 and passed.value is None and passed.move == legal[0]


def test_partial_iteration_is_used_when_a_root_move_finished(tictactoe: Game) -> None:
    state = tictactoe.initial_state()
    full = iterative_deepening(PVS(tictactoe, "xplayer"), state)
    depth_nodes = [r.nodes for r in full.reports]
    # Stop a few nodes into iteration 3: its first root move (the previous best) is done.
    budget = sum(depth_nodes[:2]) + depth_nodes[2] // 2
    result = iterative_deepening(_Interrupted(tictactoe, "xplayer", budget), state)
    assert result.depth == 2
    assert result.reports[-1].move is not None
    assert result.move == result.reports[-1].move


# --------------------------------------------------------------------------- N players


def _first_choice(game: Game) -> State:
    """The first state where the first player has a choice (each role's first move)."""
    state = game.initial_state()
    while len(game.legal_moves(state, game.player_roles[0])) == 1:
        state = game.next_state(state, tuple(game.legal_moves(state, r)[0] for r in game.roles))
    return state


@pytest.mark.parametrize("search_class", [AlphaBeta, Minimax, MaxN, Paranoid])
@pytest.mark.parametrize("kif", ["snake", SIMULTANEOUS_CHANCE_KIF])
def test_lazy_expansion_searches_the_same_tree(kif: str, search_class: type[TreeSearch]) -> None:
    game = (
        Game.from_file(GAMES / "battlesnake" / "duel_7x7.gdl")
        if kif == "snake"
        else Game.from_text(kif)
    )
    state = game.initial_state()
    state = _first_choice(game)
    role = game.player_roles[0]
    for depth in (1, 2):
        eager = search_class(game, role)
        lazy = search_class(game, role)
        lazy.view.lazy_above = 0  # every step lazily
        eager_outcome = eager.search_depth(state, depth, None)
        lazy_outcome = lazy.search_depth(state, depth, None)
        assert lazy_outcome.value == eager_outcome.value
        assert lazy_outcome.move == eager_outcome.move
        assert lazy.nodes == eager.nodes


def test_a_lazy_step_computes_only_the_successors_searched() -> None:
    game = Game.from_file(GAMES / "battlesnake" / "standard_11x11.gdl")
    state = _first_choice(game)
    search = AlphaBeta(game, game.player_roles[0])
    search.view.lazy_above = 16  # four snakes and 50 chance moves: 12,800 joint moves
    search.deadline = time.monotonic() + 0.05
    with pytest.raises(SearchTimeout):
        search.search_depth(state, 3, None)
    expansion = search.view.info(state).expansion
    assert expansion is not None and len(expansion.states) == 12_800
    assert 0 < expansion.states.computed < 12_800  # type: ignore[attr-defined]


@requires_shared
def test_maxn_equals_minimax_in_two_player_constant_sum() -> None:
    game = Game.from_file(GDL / "connectFour.kif")
    rng = np.random.default_rng(3)
    state = game.initial_state()
    for _ in range(5):
        expansion = game.expand(state)
        state = expansion.states[int(rng.integers(len(expansion)))]
    for depth in range(1, 4):
        maxn = MaxN(game, "black").search_depth(state, depth, None).value
        minimax = Minimax(game, "black").search_depth(state, depth, None).value
        assert maxn == pytest.approx(minimax, abs=0.01)


@requires_shared
def test_three_players_search_for_their_own_role() -> None:
    game = Game.from_file(GDL / "3pConnectFour.kif")
    state = game.initial_state()
    mover = game.role("red")
    legal = game.legal_moves(state, mover)
    for make in (Paranoid, MaxN):
        result = iterative_deepening(make(game, mover), state, max_depth=3)
        assert result.depth == 3 and result.move in legal
    mcts = MCTS(game, mover, rng=np.random.default_rng(0)).search(state, max_simulations=200)
    assert mcts.move in legal and mcts.simulations == 200
    # A role that does not move at the root gets its only move.
    waiting = iterative_deepening(MaxN(game, "blue"), state, max_depth=2)
    assert str(waiting.move) == "noop"


# --------------------------------------------------------------------------- MCTS


@requires_shared
def test_mcts_in_simultaneous_moves_plays_legal_moves() -> None:
    game = Game.from_file(GDL / "connectFourSimultaneous.kif")
    state = game.initial_state()
    for role in game.player_roles:
        search = MCTS(game, role, rng=np.random.default_rng(1))
        result = search.search(state, max_simulations=300)
        assert result.move in game.legal_moves(state, role)
        assert not result.solved  # nodes where both choose are never proven
        again = search.search(state, max_simulations=100)  # the tree is kept
        assert again.simulations == 100


def test_mcts_is_reproducible_with_a_seed(tictactoe: Game) -> None:
    state = tictactoe.initial_state()
    moves = [
        MCTS(tictactoe, "xplayer", rng=np.random.default_rng(5))
        .search(state, max_simulations=400)
        .move
        for _ in range(2)
    ]
    assert moves[0] == moves[1]


def test_mcts_frees_a_dropped_tree_a_slice_after_each_batch(tictactoe: Game) -> None:
    # A tree past max_nodes is not freed at once inside the next move (0.74 s on
    # RTS-Full): it is dropped and freed DEFAULT_SLICE nodes after each batch.
    state = tictactoe.initial_state()
    settings = MCTSSettings(batch_size=4, solver=False, max_nodes=200)
    search = MCTS(tictactoe, "xplayer", settings=settings, rng=np.random.default_rng(3))
    search.search(state, max_simulations=400)
    grown = len(search._nodes)
    assert grown > 200 + 3 * DEFAULT_SLICE
    result = search.search(state, max_simulations=8)  # drops the tree, then two batches
    assert result.move in tictactoe.legal_moves(state, "xplayer")
    assert len(search._nodes) <= 1 + 8
    assert len(search._dropped) == grown - 2 * DEFAULT_SLICE
    search.search(state, max_simulations=4 * grown)
    assert len(search._dropped) == 0


def test_dropped_frees_linked_entries_one_at_a_time() -> None:
    # Each value taken out is unlinked first, so freeing the head of a chain whose other
    # links were taken out before frees them one by one, not as one long cascade.
    class Link:
        def __init__(self, after: Link | None) -> None:
            self.after = after

    chain: dict[int, Link] = {}
    after = None
    for i in range(10):
        after = chain[i] = Link(after)
    unlinked: list[Link] = []

    def unlink(link: Link) -> None:
        unlinked.append(link)
        link.after = None

    dropped: Dropped[int, Link] = Dropped(slice_size=3, unlink=unlink)
    dropped.drop(chain)
    dropped.drop({})  # nothing to free
    assert (len(dropped), repr(dropped)) == (10, "<Dropped 10 entries in 1 table(s)>")
    assert [dropped.free() for _ in range(5)] == [3, 3, 3, 1, 0]
    assert len(dropped) == 0 and chain == {}
    assert all(link.after is None for link in unlinked) and len(unlinked) == 10
    with pytest.raises(ValueError, match="slice_size must be >= 1, not 0"):
        Dropped(slice_size=0)


@pytest.mark.parametrize("solver", [True, False])
def test_mcts_run_batch_by_batch_from_outside_is_its_own_search(
    tictactoe: Game, solver: bool
) -> None:
    # What self-play's concurrent games do: begin, select a batch, value it elsewhere,
    # back it up; the same tree and statistics as search() with its own evaluator.
    state = tictactoe.initial_state()
    settings = MCTSSettings(batch_size=4, solver=solver)
    alone = MCTS(tictactoe, "xplayer", settings=settings, rng=np.random.default_rng(2))
    result = alone.search(state, max_simulations=150)
    driven = MCTS(tictactoe, "xplayer", settings=settings, rng=np.random.default_rng(2))
    with pytest.raises(GameError, match="select_leaves needs begin first"):
        driven.select_leaves(4)
    driven.begin(state)
    done = 0
    while done < 150 and not driven.root_proven:
        leaves = driven.select_leaves(min(4, 150 - done))
        done += min(4, 150 - done)
        values = driven.evaluator.evaluate(tictactoe, leaves.states).values
        driven.back_up(leaves, values if leaves.states else np.zeros((0, 2)))
    assert driven.root_visits(state) == alone.root_visits(state)
    assert driven.simulations == alone.simulations == result.simulations
    assert driven.root_proven == result.solved
    leaves = driven.select_leaves(4)
    if leaves.states:
        with pytest.raises(ValueError, match="values of shape"):
            driven.back_up(leaves, np.zeros((len(leaves.states), 3)))


# --------------------------------------------------------------------------- MCTS with a prior


class _FavourPolicy:
    """All of a role's prior on one move (when legal), the rest spread thinly."""

    def __init__(self, move: str) -> None:
        self.move = move

    def __call__(
        self, game: Game, state: object, role: int, legal_moves: tuple[object, ...], /
    ) -> np.ndarray:
        weights = np.full(len(legal_moves), 0.001)
        for i, move in enumerate(legal_moves):
            if str(move) == self.move:
                weights[i] = 1.0
        return weights


def _after(game: Game, moves: list[tuple[str, str]]) -> object:
    state = game.initial_state()
    for joint in moves:
        state = game.next_state(state, joint)
    return state


def test_puct_finds_the_win_and_counts_every_simulation_at_the_root(tictactoe: Game) -> None:
    # x: (1 1) (2 2); o: (1 2) (1 3); x to move wins with (3 3).
    state = _after(
        tictactoe,
        [
            ("(mark 1 1)", "noop"),
            ("noop", "(mark 1 2)"),
            ("(mark 2 2)", "noop"),
            ("noop", "(mark 1 3)"),
        ],
    )
    search = MCTS(
        tictactoe,
        "xplayer",
        settings=MCTSSettings(solver=False),
        rng=np.random.default_rng(0),
        prior=UniformPolicy(),
    )
    result = search.search(state, max_simulations=400)
    assert str(result.move) == "(mark 3 3)"
    visits = search.root_visits(state)
    assert list(visits) == [0]  # only x chooses
    moves, counts = visits[0]
    assert moves == tictactoe.legal_moves(state, "xplayer") and sum(counts) == 400
    assert max(counts) == counts[moves.index(tictactoe.term("(mark 3 3)"))]


def test_the_prior_steers_the_visits_and_noise_spreads_them(tictactoe: Game) -> None:
    state = tictactoe.initial_state()

    def visits(noise: float, seed: int) -> tuple[int, ...]:
        search = MCTS(
            tictactoe,
            "xplayer",
            settings=MCTSSettings(solver=False, root_noise=noise),
            rng=np.random.default_rng(seed),
            prior=_FavourPolicy("(mark 3 1)"),
        )
        search.search(state, max_simulations=60)
        moves, counts = search.root_visits(state)[0]
        assert sum(counts) == 60
        return counts[moves.index(tictactoe.term("(mark 3 1)"))], sum(1 for c in counts if c)

    favoured, tried = visits(0.0, 0)
    assert favoured >= 45 and tried <= 3  # UCB1 would try all 9 moves first
    noisy = [visits(0.5, seed) for seed in range(4)]
    assert all(count < favoured for count, _ in noisy)
    assert visits(0.5, 7) == visits(0.5, 7)  # the noise comes from the seeded generator


def test_native_puct_picks_as_the_python_loop(tictactoe: Game) -> None:
    """The C loop (ggp/search/classic/_native.c) gives the Python loop's pick on
    random statistics (ties included) and the same search, visit for visit."""
    import shutil

    from ggp.native import compiler
    from ggp.search.classic.native import load_native

    native = load_native()
    if native is None:
        assert shutil.which(compiler()[0]) is None, "a compiler, but no native search loops"
        pytest.skip("no C compiler on this machine")
    search = MCTS(tictactoe, "xplayer", rng=np.random.default_rng(0), prior=UniformPolicy())
    assert search._native_puct is not None
    rng = np.random.default_rng(1)
    for size in (1, 2, 5, 30, 100):
        for _ in range(200):
            counts = [int(c) for c in rng.integers(0, 4, size)]
            totals = [float(c * rng.integers(0, 101)) for c in counts]
            priors = rng.choice([0.0, 0.1, 0.25, 1 / 3], size).tolist()  # ties
            first, scale = float(rng.random()), float(rng.random() * 3)
            best, best_score = -1, -float("inf")
            for i, (n, total, prior) in enumerate(zip(counts, totals, priors, strict=True)):
                score = (total / (100.0 * n) if n else first) + scale * prior / (1 + n)
                if score > best_score:
                    best, best_score = i, score
            assert native.puct(counts, totals, priors, first, scale) == best
    with pytest.raises(ValueError, match="differ in length"):
        native.puct([0, 1], [0.0], [0.5, 0.5], 0.5, 1.0)
    with pytest.raises(TypeError, match="must be lists"):
        native.puct((0,), [0.0], [1.0], 0.5, 1.0)


@pytest.mark.parametrize(
    "kif, settings, with_prior",
    [
        ("tictactoe", MCTSSettings(solver=False, root_noise=0.25), True),  # all in C
        ("tictactoe", MCTSSettings(), False),  # UCB1 and the solver: _pick, _backup in Python
        ("connect_four", MCTSSettings(solver=False, root_noise=0.25), True),
        ("scissors_paper_rock", MCTSSettings(solver=False), True),  # two choosers a node
        ("chance", MCTSSettings(solver=False), True),  # random: _pick in Python
        ("chance", MCTSSettings(), False),
    ],
)
def test_native_search_loops_make_the_python_search(
    tictactoe: Game, kif: str, settings: MCTSSettings, with_prior: bool
) -> None:
    """MCTS with the native select/backup/PUCT (``_native.c``) is the Python search,
    statistic for statistic, whichever parts fall back to Python."""
    from ggp.search.classic.native import load_native

    if load_native() is None:
        pytest.skip("no native search loops (no C compiler)")
    if kif == "tictactoe":
        game = tictactoe
    elif kif == "chance":
        game = Game.from_text(CHANCE_KIF)
    else:
        game = Game.from_file(GAMES / f"{kif}.gdl")
    role = game.player_roles[0]
    state = game.initial_state()

    def run(native: bool) -> list[tuple[object, ...]]:
        search = MCTS(
            game,
            role,
            settings=settings,
            rng=np.random.default_rng(3),
            prior=UniformPolicy() if with_prior else None,
        )
        if not native:
            search._native_puct = search._native_select = search._native_backup = None
        else:
            assert search._native_select is not None
        search.search(state, max_simulations=300)
        return [
            (n.visits, n.value_sum, n.counts, n.totals, sorted(n.children), n.proven)
            for n in search._nodes.values()
        ] + [(search.steps, search.simulations)]

    assert run(True) == run(False)


def test_root_visits_need_a_searched_state_and_settings_are_checked(tictactoe: Game) -> None:
    search = MCTS(tictactoe, "xplayer", rng=np.random.default_rng(0), prior=UniformPolicy())
    with pytest.raises(GameError, match="searched"):
        search.root_visits(tictactoe.initial_state())
    with pytest.raises(ValueError, match="root_noise"):
        MCTSSettings(root_noise=1.5)
    with pytest.raises(ValueError, match="noise_alpha"):
        MCTSSettings(noise_alpha=0.0)
