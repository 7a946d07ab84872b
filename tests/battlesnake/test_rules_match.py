"""The GDL Battlesnake equals an independent simulator of the official rules, step by step.

Seeded games are played on both at once: the snakes' moves come from mixed policies
(random, cautious, greedy, food-shy) so that every way to die occurs; ``random``'s move is
drawn among the GDL's legal moves and handed to the simulator as the outcome it means,
after checking that the GDL offers exactly the simulator's outcomes (start points, first
food, spawn odds, free cells). After every step the bodies, health, food, turn and the
set of live snakes must be equal; at the end the goals must be the simulator's ranking.
"""

from __future__ import annotations

import functools
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest
from official_rules import (
    MOVES,
    Board,
    Point,
    first_food_options,
    free_cells,
    game_over,
    needs_food,
    new_board,
    place_food,
    placements,
    start_outcomes,
    step,
)

from ggp.battlesnake.board import read_board
from ggp.battlesnake.generate import VARIANTS, Variant, battlesnake_gdl
from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.reasoning.ground import GroundingLimits

GAMES = Path(__file__).resolve().parents[2] / "games" / "battlesnake"

#: Shipped files and the number of games each plays (1,000 in all with the small variant).
PLAYS = {"duel_7x7": 350, "duel_11x11": 200, "standard_11x11": 250, "eight_11x11": 40}
#: A variant of our own with three snakes and a short turn cap, so that the cap is reached.
CAPPED = Variant(size=7, snakes=3, max_turns=25, name="capped")
CAPS = {v.name: v.max_turns for v in (*VARIANTS, CAPPED)}


@functools.cache
def load(name: str) -> Game:
    """The game as a propositional network, with no grounding time budget: the eight-snake
    board takes 5-10 CPU s, near the default budget, in a test process that has grown."""
    limits = GroundingLimits(max_seconds=None)
    if name == CAPPED.name:
        return Game.from_text(battlesnake_gdl(CAPPED), reasoner="propnet", limits=limits)
    return Game.from_file(GAMES / f"{name}.gdl", reasoner="propnet", limits=limits)


def _ints(term: Term) -> list[int]:
    return [int(a.name) for a in term.args if a.name.lstrip("-").isdigit()]


def _pick_moves(board: Board, policies: list[str], rng: np.random.Generator) -> list[str | None]:
    """Each live snake's move: ``random``; ``cautious`` (stays on the board, off bodies,
    away from other heads and dead ends when it can); ``greedy`` / ``shy`` (cautious, and
    nearest to / furthest from food). Any snake blunders now and then."""
    n = board.size
    blocked = {p for s in board.snakes if s.alive for p in s.body[:-1]}
    heads = [s.body[0] for s in board.snakes if s.alive]
    names = sorted(MOVES)

    def open_cell(x: int, y: int) -> bool:
        return 0 <= x < n and 0 <= y < n and (x, y) not in blocked

    def quality(cell: Point, own: Point) -> tuple[bool, bool]:
        x, y = cell
        calm = all(abs(x - a) + abs(y - b) > 1 for a, b in heads if (a, b) != own)
        exits = sum(open_cell(x + dx, y + dy) for dx, dy in MOVES.values())
        return calm, exits > 1

    def food_distance(cell: Point) -> int:
        return min(abs(cell[0] - fx) + abs(cell[1] - fy) for fx, fy in board.food)

    moves: list[str | None] = []
    for s, policy in zip(board.snakes, policies, strict=True):
        if not s.alive:
            moves.append(None)
            continue
        hx, hy = s.body[0]
        target = {m: (hx + MOVES[m][0], hy + MOVES[m][1]) for m in names}
        safe = [m for m in names if open_cell(*target[m])]
        if policy == "random" or not safe or rng.random() < 0.03:
            moves.append(names[rng.integers(4)])
            continue
        top = max(quality(target[m], s.body[0]) for m in safe)
        safe = [m for m in safe if quality(target[m], s.body[0]) == top]
        if policy in ("greedy", "shy") and board.food:
            pick = min if policy == "greedy" else max
            best = pick(food_distance(target[m]) for m in safe)
            safe = [m for m in safe if food_distance(target[m]) == best]
        moves.append(safe[rng.integers(len(safe))])
    return moves


def _assert_same(game: Game, state: object, sim: Board, where: str) -> None:
    board = read_board(game, state)  # type: ignore[arg-type]
    assert board.turn == sim.turn, where
    assert board.food == sim.food, where
    for i, (mine, theirs) in enumerate(zip(board.snakes, sim.snakes, strict=True)):
        assert (mine is not None) == theirs.alive, f"{where}: snake {i + 1} alive"
        if mine is not None:
            assert mine.body == theirs.body, f"{where}: snake {i + 1} body"
            assert mine.health == theirs.health, f"{where}: snake {i + 1} health"


def play_one(name: str, seed: int, causes: Counter[str]) -> int:
    game = load(name)
    roles = [r for r in game.roles if r.name != "random"]
    k = len(roles)
    rng = np.random.default_rng(seed)
    noop = [game.term("noop")] * k

    def chance(state: object) -> tuple[list[Term], Term]:
        legal = list(game.legal_moves(state, "random"))  # type: ignore[arg-type]
        return legal, legal[rng.integers(len(legal))]

    state = game.initial_state()
    size = read_size(game)
    # setup 1: the start points
    legal, pick = chance(state)
    starts = [tuple(zip(m[::2], m[1::2], strict=True)) for m in map(_ints, legal)]
    assert sorted(starts) == start_outcomes(size, k)
    heads = tuple(zip(_ints(pick)[::2], _ints(pick)[1::2], strict=True))
    state = game.next_state(state, [*noop, pick])
    # setup 2: the first food; every outcome once, as the product of each snake's options
    legal, pick = chance(state)
    options = [first_food_options(size, k, h) for h in heads]
    expected = sorted(
        tuple(sorted(o[b] for o, b in zip(options, bits, strict=True)))
        for bits in np.ndindex(*[len(o) for o in options])
    )
    outcomes = {}
    centre = ((size - 1) // 2,) * 2
    for move in legal if seed % 5 == 0 else [pick]:
        after = read_board(game, game.next_state(state, [*noop, move]))
        outcomes[move] = tuple(sorted(after.food - {centre}))
    if seed % 5 == 0:
        assert sorted(outcomes.values()) == expected
    state = game.next_state(state, [*noop, pick])
    sim = new_board(size, heads, list(outcomes[pick]))
    _assert_same(game, state, sim, f"{name} seed {seed} setup")
    kinds = ["random", "cautious", "greedy", "shy", "shy"]
    policies = [kinds[rng.integers(len(kinds))] for _ in range(k)]
    spawn_tokens = [m for m in game.legal_moves(state, "random") if m.args[0].name == "spawn"]
    odds = Fraction(len(spawn_tokens), len(game.legal_moves(state, "random")))
    assert odds == Fraction(sum(100 - r < 15 for r in range(100)), 100)
    steps = 0
    while not game.is_terminal(state):
        moves = _pick_moves(sim, policies, rng)
        legal, roll = chance(state)
        spawned = roll.args[0].name == "spawn"
        hits = [r for r in range(100) if (100 - r < 15) == spawned]
        joint = [game.term(m) if m else game.term("noop") for m in moves]
        state = game.next_state(state, [*joint, roll])
        sim = step(sim, moves)
        steps += 1
        where = f"{name} seed {seed} turn {sim.turn} moves {moves}"
        _assert_same(game, state, sim, where)
        causes.update(s.cause for s in sim.snakes if s.out_turn == sim.turn)
        if game_over(sim) or sim.turn == CAPS[name]:
            break
        if needs_food(sim, hits[rng.integers(len(hits))]):
            assert not game.is_terminal(state), where
            legal, pick = chance(state)
            cells = sorted(tuple(_ints(m)) for m in legal if m.name == "spawn")
            assert cells == sorted(free_cells(sim)), where
            if cells:
                x, y = cells[rng.integers(len(cells))]
                sim = place_food(sim, (x, y))
                pick = game.term(f"(spawn {x} {y})")
            else:
                assert [str(m) for m in legal] == ["nospawn"], where
            state = game.next_state(state, [*noop, pick])
            _assert_same(game, state, sim, where + " spawn")
    assert game.is_terminal(state)
    assert game_over(sim) or sim.turn == CAPS[name]
    top = 2 * (k - 1)
    goals = [(200 * v + top) // (2 * top) for v in placements(sim)]
    assert list(game.goals(state)[:k]) == goals, f"{name} seed {seed}"
    return steps


def read_size(game: Game) -> int:
    props = game.base_propositions
    assert props is not None
    return max(int(p.args[1].name) for p in props if p.name == "head") + 1


@pytest.mark.slow
@pytest.mark.parametrize("name", [*PLAYS, CAPPED.name])
def test_gdl_equals_official_simulator(name: str) -> None:
    causes: Counter[str] = Counter()
    games = PLAYS.get(name, 160)
    steps = sum(play_one(name, seed, causes) for seed in range(games))
    assert steps > games * 5
    if name in ("duel_7x7", "standard_11x11"):
        # every way to be eliminated happened somewhere in these games
        expected = {"wall", "self-collision", "snake-collision", "head-collision", "out-of-health"}
        assert expected <= set(causes), causes


@pytest.mark.parametrize("variant", VARIANTS, ids=[v.name for v in VARIANTS])
def test_shipped_files_are_the_generators_output(variant: Variant) -> None:
    text = (GAMES / f"{variant.name}.gdl").read_text()
    assert text == battlesnake_gdl(variant), "run: python -m ggp.battlesnake.generate"


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"size": 8, "snakes": 2}, "odd sizes"),
        ({"size": 11, "snakes": 9}, "2..8"),
        ({"size": 11, "snakes": 2, "minimum_food": 2}, "only 0 and 1"),
    ],
)
def test_variant_refuses_what_is_not_encoded(kwargs: dict[str, int], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        Variant(**kwargs)
