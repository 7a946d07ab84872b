"""The IDAPOS leaf heuristics: known values on small boards, and the evaluator's range."""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pytest

from ggp.battlesnake.board import (
    Board,
    Point,
    SnakeBody,
    board_state,
    distances,
    neighbours,
    read_board,
    search_game,
)
from ggp.battlesnake.heuristics import (
    LIVE_HIGH,
    LIVE_LOW,
    SnakeHeuristicEvaluator,
    adversarial_fill,
    duel_heuristic,
    duel_terms,
    flood_fill,
    multi_terms,
    sigma,
)
from ggp.battlesnake.reflex import greedy_move
from ggp.game import Game
from ggp.players.base import MatchInfo
from ggp.players.registry import make_player

GAMES = Path(__file__).resolve().parents[2] / "games" / "battlesnake"

A = SnakeBody(((1, 1), (1, 0), (0, 0)), 100)
B = SnakeBody(((5, 5), (5, 6), (6, 6)), 100)  # A turned half-way round the centre


def test_sigma() -> None:
    assert sigma(0) == 0
    assert sigma(1) == pytest.approx(2 * (1 / (1 + math.exp(-0.2)) - 0.5))
    assert sigma(-3) == pytest.approx(-sigma(3))


def test_flood_fill_counts_every_free_cell_once() -> None:
    board = Board(7, 0, (A, B), frozenset({(3, 3)}))
    reach = flood_fill(board, A.head)
    assert reach.count == 49 - 6  # every cell but the six body cells
    assert reach.nearest == 4  # the food at (3, 3)
    assert flood_fill(board, A.head, [(2, 1)]).nearest == 1
    assert flood_fill(board, A.head, [A.head]).nearest == 0
    assert flood_fill(board, A.head, [B.body[1]]).nearest is None  # a body is not entered


def test_adversarial_fill_gives_contested_cells_to_the_longer_snake() -> None:
    # heads at (0, 3) and (6, 3) on row 3; (3, 3) is 3 steps from both
    long = SnakeBody(((0, 3), (0, 2), (0, 1), (0, 0)), 100)
    short = SnakeBody(((6, 3), (6, 2), (6, 1)), 100)
    fill = adversarial_fill(Board(7, 0, (short, long), frozenset({(3, 3)})))
    assert fill.owner((3, 3)) == 1 and fill.food_distance == (None, 3)
    assert sum(fill.claimed) == 49
    assert sum(fill.free) == 49 - 7
    assert fill.free[1] > fill.free[0]


def test_a_lead_starts_a_snakes_fill_early() -> None:
    # as above; the short snake given two layers' lead takes the centre and its food
    long = SnakeBody(((0, 3), (0, 2), (0, 1), (0, 0)), 100)
    short = SnakeBody(((6, 3), (6, 2), (6, 1)), 100)
    board = Board(7, 0, (short, long), frozenset({(3, 3)}))
    plain = adversarial_fill(board)
    assert adversarial_fill(board, {}) == plain
    led = adversarial_fill(board, {0: 2})
    assert led.owner((3, 3)) == 0 and led.food_distance == (1, None)  # 3 steps, 2 of them led
    assert led.free[0] > plain.free[0] and sum(led.claimed) == 49
    assert adversarial_fill(board, {0: 3}).food_distance == (0, None)
    assert adversarial_fill(board, {1: 2}).free[1] > plain.free[1]


def test_a_lead_lowers_our_value_against_a_frozen_enemy() -> None:
    # the enemy frozen at the root 3 turns ago: with the lead it claims what it could
    # have reached in those turns, and our duel value drops
    game = search_game(11, 2)
    ours = SnakeBody(((2, 5), (1, 5), (0, 5)), 90)
    theirs = SnakeBody(((8, 5), (9, 5), (10, 5)), 90)
    state = board_state(game, Board(11, 10, (ours, theirs), frozenset({(5, 8)})), frozen={1})
    plain = SnakeHeuristicEvaluator()
    assert plain.with_lead(frozenset(), 7).lead is None
    led = plain.with_lead(frozenset({1}), 7)
    assert led.lead == (frozenset({1}), 7) and "lead=" in repr(led)
    before = plain.evaluate(game, [state]).values[0]
    after = led.evaluate(game, [state]).values[0]
    assert after[0] < before[0] and after[1] > before[1]
    assert plain.with_lead(frozenset({1}), 10).evaluate(game, [state]).values[0] == (
        pytest.approx(before)  # no turn played since: no lead
    )


def _reference_distances(board: Board, start: Point) -> dict[Point, int]:
    """Breadth-first distances over the cells without a body, a queue of cells: the
    fills as the paper's code writes them, to hold the bitboards to."""
    bodies = {c for s in board.snakes if s is not None for c in s.body}
    return distances(board.size, start, bodies)


def _reference_fill(
    board: Board, lead: dict[int, int] | None = None
) -> tuple[dict[Point, int], dict[Point, int]]:
    """The adversarial fill with a queue per snake: each cell's owner and distance (a
    snake with a lead starts that many layers early; distances count from the others'
    start, 0 for cells reached in a lead)."""
    lead = lead or {}
    bodies = {c for s in board.snakes if s is not None for c in s.body}
    live = [i for i, s in enumerate(board.snakes) if s is not None]
    order = sorted(live, key=lambda i: -len(board.snakes[i].body))  # type: ignore[union-attr]
    owner: dict[Point, int] = {}
    distance: dict[Point, int] = {}
    frontier: dict[int, list[Point]] = {}
    for i in order:
        head = board.snakes[i].head  # type: ignore[union-attr]
        if head not in owner:
            owner[head], distance[head] = i, 0
        frontier[i] = [head]
    depth = -max(lead.values(), default=0)
    while any(frontier.values()):
        depth += 1
        for i in order:
            if depth + lead.get(i, 0) < 1:
                continue
            grown: list[Point] = []
            for cell in frontier[i]:
                for nxt in neighbours(board.size, cell):
                    if nxt not in owner:
                        owner[nxt], distance[nxt] = i, max(depth, 0)
                        if nxt not in bodies:
                            grown.append(nxt)
            frontier[i] = grown
    return owner, distance


def _boards_of_games(path: Path, games: int, seed: int) -> list[Board]:
    """Every board of seeded games where each snake plays greedy or random moves."""
    game = Game.from_file(path)
    rng = np.random.default_rng(seed)
    boards = []
    for _ in range(games):
        state = game.initial_state()
        while not game.is_terminal(state):
            board = read_board(game, state)
            boards.append(board)
            joint = []
            for role in game.roles:
                moves = game.legal_moves(state, role)
                names = [m.name for m in moves]
                pick = int(rng.integers(len(moves)))
                if role in game.player_roles and len(moves) > 1 and rng.random() < 0.8:
                    greedy = greedy_move(board, game.player_roles.index(role))
                    pick = names.index(greedy) if greedy in names else pick
                joint.append(moves[pick])
            state = game.next_state(state, tuple(joint))
    return boards


@pytest.mark.parametrize("name", ["duel_7x7", "standard_11x11", "eight_11x11"])
def test_the_bitboard_fills_equal_the_queue_fills(name: str) -> None:
    boards = _boards_of_games(GAMES / f"{name}.gdl", 8, seed=1)
    assert len(boards) > 40
    rng = np.random.default_rng(2)
    for board, led in zip(boards, itertools.cycle([False, True])):
        # every other board with a lead of 1-3 layers for some of the live snakes
        live = [i for i, s in enumerate(board.snakes) if s is not None]
        lead = {i: int(rng.integers(1, 4)) for i in live if led and rng.random() < 0.5}
        owner, distance = _reference_fill(board, lead)
        fill = adversarial_fill(board, lead)
        for i, snake in enumerate(board.snakes):
            mine = [c for c, o in owner.items() if o == i]
            assert fill.claimed[i] == len(mine)
            bodies = {c for s in board.snakes if s is not None for c in s.body}
            assert fill.free[i] == sum(c not in bodies for c in mine)
            food = [distance[f] for f in board.food if owner.get(f) == i]
            assert fill.food_distance[i] == (min(food) if food else None)
            if snake is None:
                continue
            assert fill.owner(snake.body[-1]) == owner.get(snake.body[-1])
            reach = _reference_distances(board, snake.head)
            found = flood_fill(board, snake.head)
            assert found.count == len(reach) - 1
            near = [reach[f] for f in board.food if f in reach]
            assert found.nearest == (min(near) if near else None)


def test_duel_terms_of_a_symmetric_start() -> None:
    board = Board(7, 0, (A, B), frozenset({(3, 3)}))
    terms = duel_terms(board, 0, 1)
    assert terms["total_fill"] == 0
    assert terms["hunger_pressure"] == 0  # both above 75 health
    f = math.exp(-0.2 * 4)  # 4 steps to the food
    assert terms["delta_length_food"] == pytest.approx(f * sigma(1))
    # the tie-break of equal lengths (snake order) is the only asymmetry
    assert terms["adversarial_fill"] >= 0


def test_hunger_and_length_move_the_duel_heuristic() -> None:
    food = frozenset({(1, 3)})
    fed = Board(7, 0, (A, B), food)
    starving = Board(7, 0, (SnakeBody(A.body, 10), B), food)
    assert duel_heuristic(starving, 0, 1) < duel_heuristic(fed, 0, 1)
    longer = SnakeBody(((5, 5), (5, 6), (6, 6), (6, 5), (6, 4)), 100)
    assert duel_terms(Board(7, 0, (A, longer), food), 0, 1)["delta_length_food"] < 0


def test_tail_term_only_for_long_snakes() -> None:
    short = Board(11, 0, (A, B, SnakeBody(((9, 1), (9, 0)), 100)), frozenset())
    assert multi_terms(short, 0)["tail_reachable"] == 0
    body = ((5, 5), (5, 4), (5, 3), (4, 3), (3, 3), (3, 4), (3, 5))
    long = Board(11, 0, (SnakeBody(body, 100), B, A), frozenset())
    assert multi_terms(long, 0)["tail_reachable"] == 1


def test_evaluator_values_are_goals() -> None:
    game = Game.from_file(GAMES / "duel_7x7.gdl")
    board = Board(7, 3, (A, SnakeBody(B.body, 20)), frozenset({(1, 3)}))
    values = SnakeHeuristicEvaluator().evaluate(game, [board_state(game, board)]).values
    assert values.shape == (1, 3)
    assert values[0, 0] + values[0, 1] == pytest.approx(100)
    assert values[0, 0] > 50  # the enemy is hungry and far from food


def test_alphabeta_with_the_snake_heuristic_chooses_a_safe_move() -> None:
    game = Game.from_file(GAMES / "duel_7x7.gdl")
    player = make_player("alphabeta:eval=snake,depth=2", np.random.default_rng(0), game)
    player.start(MatchInfo("m", game, game.roles[0]))
    me = SnakeBody(((0, 3), (1, 3), (2, 3)), 90)  # at the left edge, heading left
    board = Board(7, 3, (me, SnakeBody(((5, 5), (5, 6), (6, 6)), 90)), frozenset({(3, 3)}))
    move = player.choose_move(board_state(game, board))  # type: ignore[attr-defined]
    assert str(move) in ("up", "down")


def _contested_food(health: int) -> tuple[Game, Board]:
    # Our head (3, 3) heads up to the food at (3, 4); the enemy, as long as we are, can
    # reach it too (left): moving up risks a head-on collision that kills both.
    game = Game.from_file(GAMES / "duel_7x7.gdl")
    me = SnakeBody(((3, 3), (3, 2), (3, 1)), health)
    enemy = SnakeBody(((4, 4), (5, 4), (6, 4)), 90)
    return game, Board(7, 3, (me, enemy), frozenset({(3, 4)}))


def test_a_mutual_kill_ranks_below_every_live_position() -> None:
    game, board = _contested_food(90)
    state = board_state(game, board)
    evaluator = SnakeHeuristicEvaluator()
    chance = str(game.legal_moves(state, "random")[0])
    both_dead = game.next_state(state, ("up", "left", chance))
    assert game.is_terminal(both_dead) and game.goals(both_dead)[:2] == (50, 50)
    turn = 4e-4  # board turn 3, then one turn played: 4 * TURN_WEIGHT
    dead = evaluator.terminal_values(game, [both_dead]).values[0, :2]
    assert dead.tolist() == pytest.approx([5.0 + turn, 5.0 + turn])
    live = [game.next_state(state, (m, "up", chance)) for m in ("left", "right")]
    values = evaluator.evaluate(game, live).values[:, :2]
    assert (values >= LIVE_LOW).all() and (values <= LIVE_HIGH).all()
    won = game.next_state(state, ("down", "left", chance))  # we run into our own body
    won_values = evaluator.terminal_values(game, [won]).values[0, :2]
    assert won_values.tolist() == pytest.approx([turn, 100.0 - turn])


@pytest.mark.parametrize("health", [10, 90])
@pytest.mark.parametrize("depth", [1, 2])
def test_the_search_takes_a_head_on_draw_only_when_all_else_loses(health: int, depth: int) -> None:
    # With the rules' goals the draw (50 each) was worth an even position, and alpha-beta
    # went up for the food whether behind (health 10) or not.
    game, board = _contested_food(health)
    player = make_player(f"alphabeta:eval=snake,depth={depth}", np.random.default_rng(0), game)
    player.start(MatchInfo("m", game, game.roles[0]))
    move = player.choose_move(board_state(game, board))  # type: ignore[attr-defined]
    assert str(move) == "left"
