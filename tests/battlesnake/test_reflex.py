"""The paper's simple snakes (the reflex policy's scores, the opponents' rules, the
``snake:POLICY`` players in whole matches) and IDAPOS (which snakes it simulates, the
frozen snakes of its search model, whole matches in time)."""

from __future__ import annotations

import functools
from pathlib import Path

import numpy as np
import pytest

from ggp.battlesnake.board import Board, SnakeBody, board_state, read_board, search_game
from ggp.battlesnake.generate import Variant, battlesnake_gdl
from ggp.battlesnake.reflex import (
    HUNGRY,
    POLICIES,
    aggressive_move,
    certainly_fatal,
    greedy_move,
    reflex_move,
    tail_chaser_move,
)
from ggp.errors import GameError
from ggp.game import Game
from ggp.match import run_match
from ggp.players.base import MatchInfo
from ggp.players.idapos_player import (
    IdaposPlayer,
    _fatal_pruning,
    _last_board_reader,
    parse_idapos_options,
    played_out,
)
from ggp.players.registry import make_player
from ggp.search.classic.sequential import SequentialGame

GAMES = Path(__file__).resolve().parents[2] / "games" / "battlesnake"


START3 = (
    SnakeBody(((2, 3), (1, 3), (0, 3)), 50),
    SnakeBody(((3, 5), (3, 6), (4, 6)), 50),
    SnakeBody(((6, 0), (6, 1), (6, 2)), 50),
)


@functools.cache
def duel() -> Game:
    return Game.from_file(GAMES / "duel_7x7.gdl")


def board(
    *snakes: SnakeBody | None, food: tuple[tuple[int, int], ...] = (), size: int = 7
) -> Board:
    return Board(size, 5, tuple(snakes), frozenset(food))


def test_reflex_keeps_its_direction_and_leaves_fatal_moves() -> None:
    # heading right along the bottom edge: down is off the board, left is its neck
    me = SnakeBody(((2, 0), (1, 0), (0, 0)), 90)
    assert reflex_move(board(me, None), 0) == "right"
    # at the right edge heading right: right is fatal; up is first among the rest
    me = SnakeBody(((6, 0), (5, 0), (4, 0)), 90)
    assert reflex_move(board(me, None), 0) == "up"


def test_certainly_fatal_moves_leave_the_board_or_hit_the_own_body() -> None:
    corner = SnakeBody(((2, 0), (1, 0), (0, 0)), 90)  # bottom edge, heading right
    assert certainly_fatal(board(corner, None), 0) == {"down", "left"}
    # coiled: the tail (1, 2) moves away, so stepping onto it is safe
    coiled = SnakeBody(((2, 2), (2, 3), (1, 3), (1, 2)), 90)
    assert certainly_fatal(board(coiled, None), 0) == {"up"}
    fed = SnakeBody(((2, 2), (2, 3), (1, 3), (1, 2), (1, 2)), 90)  # just ate: tail stays
    assert certainly_fatal(board(fed, None), 0) == {"up", "left"}


def test_idapos_prunes_the_simulated_snakes_fatal_moves() -> None:
    game = search_game(7, 3)
    state = board_state(game, board(*START3))
    # snake1 heads right from (2, 3): left is its neck; snake3 heads down into the
    # bottom-right corner: down and right are off the board, up its neck.
    counts = {}
    for prune in ("yes", "no"):
        player = IdaposPlayer(parse_idapos_options(f"prune={prune},depth=2"))
        player.start(MatchInfo("m", game, game.roles[0]))
        player.search(board(*START3), float("inf"))
        counts[prune] = player.last_nodes
    assert counts["yes"] < counts["no"]
    view = SequentialGame(game, "snake1")
    view.prune = _fatal_pruning(_last_board_reader(game), frozenset({0, 2}))
    expansion = view.expand(view.info(state))
    assert [m.name for m in expansion.legal[0]] == ["down", "right", "up"]
    assert len(expansion.legal[1]) == 4  # not simulated: searched in full
    assert [m.name for m in expansion.legal[2]] == ["left"]
    full = game.expand(state)
    for joint, child in zip(expansion.joints, expansion.states, strict=True):
        assert child == full.states[full.joints.index(joint)]
    with pytest.raises(GameError, match="prune=yes"):
        parse_idapos_options("prune=maybe")


def test_idapos_plays_a_forced_move_without_searching() -> None:
    game = search_game(7, 3)
    # snake3 heads down into the bottom-right corner: down and right are off the board,
    # up is its neck; left is its one move that is not certainly fatal
    start = board(*START3)
    player = IdaposPlayer(parse_idapos_options("depth=2"))
    player.start(MatchInfo("m", game, game.roles[2]))
    assert player.forced_move(start) == "left"
    assert player.search(start, float("inf")) == "left"  # what the search plays too
    assert player.last_nodes > 0
    assert player.board_move(start, float("inf")) == "left"
    assert player.last_nodes == 0 and player.depths == []  # no search, no depth counted
    player = IdaposPlayer(parse_idapos_options("depth=2"))
    player.start(MatchInfo("m", game, game.roles[0]))
    assert player.forced_move(start) is None  # snake1 has three
    assert player.board_move(start, float("inf")) in ("down", "right", "up")
    assert player.last_nodes > 0 and player.depths == [2]
    unpruned = IdaposPlayer(parse_idapos_options("depth=2,prune=no"))
    unpruned.start(MatchInfo("m", game, game.roles[2]))
    assert unpruned.forced_move(start) is None  # prune=no searches every move


def test_reflex_prefers_food_and_fears_longer_heads() -> None:
    me = SnakeBody(((3, 3), (3, 2), (3, 1)), 90)  # heading up
    assert reflex_move(board(me, None, food=((2, 3),)), 0) == "left"  # 3 for food > 1 for hold
    big = SnakeBody(((3, 5), (4, 5), (5, 5), (6, 5)), 90)  # longer, head next to (3, 4)
    assert reflex_move(board(me, big), 0) != "up"


def test_greedy_takes_a_shortest_path_round_a_body() -> None:
    me = SnakeBody(((1, 1), (0, 1), (0, 0)), 90)
    wall = SnakeBody(((3, 0), (3, 1), (3, 2), (3, 3)), 90)
    assert greedy_move(board(me, wall, food=((1, 4),)), 0) == "up"
    assert greedy_move(board(me, wall, food=((5, 1),)), 0) == "up"  # round the top of it


def test_aggressive_hunts_a_shorter_head_and_otherwise_eats() -> None:
    me = SnakeBody(((1, 1), (0, 1), (0, 0), (0, 0)), 90)
    prey = SnakeBody(((4, 1), (5, 1), (6, 1)), 90)
    assert aggressive_move(board(me, prey, food=((1, 5),)), 0) == "right"
    big = SnakeBody(((4, 1), (5, 1), (6, 1), (6, 2), (6, 3)), 90)
    assert aggressive_move(board(me, big, food=((1, 5),)), 0) == "up"


def test_tail_chaser_follows_its_tail_until_hungry() -> None:
    me = SnakeBody(((2, 2), (2, 3), (3, 3), (3, 2)), HUNGRY + 1)  # tail at (3, 2), next to head
    food = ((0, 2),)
    assert tail_chaser_move(board(me, None, food=food), 0) == "right"
    hungry = SnakeBody(me.body, HUNGRY)
    assert tail_chaser_move(board(hungry, None, food=food), 0) == "left"


@pytest.mark.parametrize("policy", sorted(POLICIES))
def test_snake_players_play_whole_matches(policy: str) -> None:
    game = duel()
    rng = np.random.default_rng(0)
    roles = [r for r in game.roles if r != game.random_role]
    players = {
        roles[0]: make_player(f"snake:{policy}", rng, game),
        roles[1]: make_player("snake:greedy", rng, game),
    }
    for seed in range(3):
        record = run_match(game, players, np.random.default_rng(seed), play_clock_s=5.0)
        assert record.replacements == ()
        assert sorted(record.goals[:2]) in ([0, 100], [50, 50])


def test_greedy_outlives_random_play() -> None:
    game = duel()
    roles = [r for r in game.roles if r != game.random_role]
    score = 0
    for seed in range(10):
        rng = np.random.default_rng(seed)
        players = {roles[0]: make_player("snake:greedy", rng), roles[1]: make_player("random", rng)}
        score += run_match(game, players, rng, play_clock_s=5.0).goals[0]
    assert score >= 800


def test_unknown_policy_and_wrong_game_are_refused() -> None:
    with pytest.raises(GameError, match="no snake policy 'lazy'"):
        make_player("snake:lazy", np.random.default_rng(0))
    tictactoe = Game.from_file(GAMES.parent / "tictactoe.gdl")
    player = make_player("snake", np.random.default_rng(0))
    with pytest.raises(GameError, match="games/battlesnake"):
        player.start(MatchInfo("m", tictactoe, tictactoe.roles[0]))


def test_played_out_selects_the_snakes_within_reach() -> None:
    me = SnakeBody(((1, 1), (1, 0), (0, 0)), 90)
    near = SnakeBody(((4, 1), (5, 1), (6, 1)), 90)  # head 3 away
    body_near = SnakeBody(((6, 6), (6, 5), (6, 4), (5, 4), (4, 4), (3, 4), (2, 4), (1, 4)), 90)
    b = board(me, near, body_near)
    assert played_out(b, 0, 1) == {0}
    assert played_out(b, 0, 2) == {0, 1}
    assert played_out(b, 0, 3) == {0, 1, 2}  # its body cell (1, 4) is 3 away


def test_a_frozen_snake_stays_an_obstacle_in_the_search_model() -> None:
    game = search_game(7, 3)
    moving = SnakeBody(((2, 3), (1, 3), (0, 3)), 50)
    frozen = SnakeBody(((3, 4), (3, 3), (3, 2)), 50)
    other = SnakeBody(((6, 6), (6, 5), (6, 4)), 50)
    state = board_state(game, board(moving, frozen, other), frozen={1})
    assert [str(m) for m in game.legal_moves(state, "snake2")] == ["noop"]
    noop, roll = game.term("noop"), game.legal_moves(state, "random")[0]
    after = read_board(game, game.next_state(state, [game.term("up"), noop, game.term("up"), roll]))
    assert after.snakes[1] == frozen  # same body and health
    into = read_board(
        game, game.next_state(state, [game.term("right"), noop, game.term("up"), roll])
    )
    assert into.snakes[0] is None  # moved into the frozen body


def capped(size: int, snakes: int, turns: int) -> Game:
    """The official rules on a board of ``size`` with ``snakes`` snakes, ended after
    ``turns`` turns: a whole match has at most ``turns`` steps, however long the snakes
    survive (IDAPOS against the simple snakes often outlives a short step limit)."""
    return Game.from_text(battlesnake_gdl(Variant(size, snakes, max_turns=turns)))


@pytest.mark.parametrize(("size", "snakes"), [(7, 2), (11, 4)])
def test_idapos_plays_whole_matches_in_time(size: int, snakes: int) -> None:
    game = capped(size, snakes, 40)
    rng = np.random.default_rng(1)
    roles = [r for r in game.roles if r != game.random_role]
    players = {r: make_player("snake:greedy", rng, game) for r in roles}
    players[roles[0]] = make_player("idapos:margin=0.05", rng, game)
    record = run_match(
        game, players, rng, play_clock_s=0.3, start_clock_s=30, max_steps=60, grace_s=0.5
    )
    assert record.replacements == ()


def test_a_fixed_policy_holds_a_role_to_one_move_in_the_search() -> None:
    game = search_game(7, 3)
    view = SequentialGame(game, "snake1")
    state = board_state(game, board(*START3))
    view.policy = lambda state, legal: {1: [m.name for m in legal[1]].index("down")}
    info = view.info(state)
    expansion = view.expand(info)
    assert [m.name for m in expansion.legal[1]] == ["down"]
    assert len(expansion.joints) == 4 * 1 * 4  # snake2 adds no choice
    assert all(joint[1].name == "down" for joint in expansion.joints)
    full = game.expand(state)
    for joint, child in zip(expansion.joints, expansion.states, strict=True):
        assert child == full.states[full.joints.index(joint)]


def test_idapos_leads_the_frozen_snakes_only_with_its_own_heuristics() -> None:
    assert parse_idapos_options("mask=lead").mask == "lead"
    with pytest.raises(GameError, match="mask=lead needs"):
        parse_idapos_options("mask=lead,eval=greedy")
    game = search_game(11, 2)
    # the 11x11 duel's start: heads 16 apart, food by each and in the centre
    start = Board(
        11,
        0,
        (SnakeBody(((9, 9),) * 3, 100), SnakeBody(((1, 1),) * 3, 100)),
        frozenset({(0, 2), (5, 5), (10, 8)}),
    )
    moves = {}
    for mask in ("freeze", "lead"):
        player = IdaposPlayer(parse_idapos_options(f"mask={mask},depth=4,weights=tuned"))
        player.start(MatchInfo("m", game, game.roles[0]))
        moves[mask] = player.search(start, float("inf"))
        assert player.last_played_out == [1, 1, 1, 1]  # the enemy out of reach: masked
    # frozen in its corner, the enemy leaves us the centre; led by the rounds we play,
    # it contests the centre's food, and we take the food by our side
    assert moves == {"freeze": "left", "lead": "right"}


def test_idapos_with_reflex_masking_plays_a_four_snake_match() -> None:
    game = capped(11, 4, 30)
    rng = np.random.default_rng(2)
    roles = [r for r in game.roles if r != game.random_role]
    players = {r: make_player("snake:greedy", rng, game) for r in roles}
    players[roles[0]] = make_player("idapos:mask=reflex,margin=0.05", rng, game)
    record = run_match(
        game, players, rng, play_clock_s=0.3, start_clock_s=30, max_steps=40, grace_s=0.5
    )
    assert record.replacements == ()
