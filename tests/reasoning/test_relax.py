"""Static relaxations (ggp.reasoning.relax) and the top-down prover's filters built on them.

A relaxation must hold every answer of its relation in every state: the top-down prover
with its filters is checked against the bottom-up prover on every game (test_topdown.py)
and here against itself without filters on chess, the game whose filters matter. The
relaxations of chess's line-walking relations are checked against their known sizes.
"""

from __future__ import annotations

import numpy as np
import pytest

from ggp.gdl.parser import parse_file, parse_text
from ggp.gdl.terms import Const, Func
from ggp.reasoning.prover import ProverStateMachine
from ggp.reasoning.relax import Budget, BudgetExceeded, projection
from ggp.reasoning.topdown import TopDownStateMachine

from conftest import SHARED, crosscheck_playouts, requires_shared

CHESS = SHARED / "scale" / "chess.kif"


@pytest.fixture(scope="module")
def chess() -> ProverStateMachine:
    return ProverStateMachine(parse_file(CHESS))


@requires_shared
@pytest.mark.parametrize(
    ("relation", "positions", "facts"),
    [
        # north-east diagonal pairs of squares: sum over squares of min(8-file, 8-rank)
        (("clear_diagonal_ne", 4), (0, 1, 2, 3), 140),
        (("bishop_move", 4), (0, 1, 2, 3), 4 * 140),
        # the square to ignore is dropped (two one-place literals, 64 times the facts)
        (("clear_diagonal_ne_ig", 6), (0, 1, 2, 3), 140),
        (("bishop_move_ig", 6), (0, 1, 2, 3), 4 * 140),
        # a file and a later one, on any `coordinate` (the 16 files and ranks: the
        # relaxation keeps what the rules say, not what the board allows)
        (("clear_row", 3), (0, 1, 2), 28 * 16),
        (("rook_move_ig", 6), (0, 1, 2, 3), 4 * 28 * 16),
        # a bishop of either side on a diagonal with its target
        (("bishop_threatens", 7), (0, 1, 2, 3, 4), 2 * 4 * 140),
    ],
)
def test_chess_relaxations_have_their_known_sizes(
    chess: ProverStateMachine, relation: tuple[str, int], positions: tuple[int, ...], facts: int
) -> None:
    relaxation = chess.relaxations([relation], max_bindings=200_000)[relation]
    assert relaxation.positions == positions
    assert len(relaxation.table.rows) == facts


@requires_shared
def test_a_relaxation_over_its_budget_is_not_made(chess: ProverStateMachine) -> None:
    found = chess.relaxations([("bishop_move_ig", 6)], max_bindings=100)
    assert ("clear_diagonal_ne_ig", 6) not in found  # over the budget
    assert ("clear_diagonal_ne", 4) not in found  # not asked for, not read by it
    # Without the diagonals nothing binds bishop_move_ig's positions: it keeps none.
    assert found[("bishop_move_ig", 6)].positions == ()


def test_state_only_positions_are_dropped_and_state_free_relations_kept() -> None:
    machine = ProverStateMachine(
        parse_text("""
        (role r) (succ 1 2) (succ 2 3) (init (at 1))
        (<= (step ?x ?y ?who) (succ ?x ?y) (true (turn ?who)))
        (<= (blocked ?x) (true (wall ?x)))
        (<= (free ?x ?y) (step ?x ?y ?w) (not (blocked ?y)))
        (<= (never ?x) (true (at ?x)) (nothing ?x))
        (<= (legal r (go ?y)) (true (at ?x)) (free ?x ?y) (not (never ?y)))
        (<= (next (at ?y)) (does r (go ?y)))
        (<= terminal (true (at 3)))
    """)
    )
    found = machine.relaxations([("free", 2), ("blocked", 1), ("never", 1)], max_bindings=1000)
    assert found[("step", 3)].positions == (0, 1)  # the turn comes from the state alone
    assert found[("free", 2)].positions == (0, 1)
    assert sorted((str(x), str(y)) for x, y in found[("free", 2)].table.rows) == [
        ("1", "2"),
        ("2", "3"),
    ]
    assert found[("blocked", 1)].positions == ()  # the state alone binds it
    assert found[("never", 1)].table.rows == []  # nothing: it never holds


def test_a_relation_that_never_holds_is_refused_at_once() -> None:
    text = """
        (role r) (init (at 1)) (cell 1) (cell 2)
        (<= (open ?x) (cell ?x) (true (at ?x)) (missing ?x))
        (<= (legal r (go ?x)) (cell ?x) (not (open ?x)))
        (<= (next (at ?x)) (does r (go ?x)))
        (<= terminal (true (at 2)))
    """
    machine = TopDownStateMachine(parse_text(text))
    assert "not in X" in machine.source  # open/1 is filtered: its relaxation is empty
    state = machine.initial_state()
    assert [str(m) for m in machine.legal_moves(state, Const("r"))] == ["(go 1)", "(go 2)"]


def test_projection_reads_paths_and_skips_filters_that_reject_little() -> None:
    from ggp.reasoning.fact_tables import Table

    a, b, c = Const("a"), Const("b"), Const("c")
    table = Table([(a, b), (a, c), (b, c)])
    assert projection(table, [(0,), (1,)]) is None  # 3 of 2 x 2 combinations
    wide = Table([(x, y) for x in (a, b, c) for y in (a, b, c) if x is a or y is a])
    assert projection(wide, [(0,), (1,)]) is None
    diagonal = Table([(x, x) for x in (a, b, c)])
    assert projection(diagonal, [(0,), (1,)]) == {(a, a), (b, b), (c, c)}
    pairs = Table([(Func("p", (x, x)), Func("p", (x, y))) for x in (a, b, c) for y in (b, c)])
    pairs.add([(a, a)])  # no sub-terms at those paths: left out
    assert projection(pairs, [(0, 1), (1, 0)]) == {(a, a), (b, b), (c, c)}
    assert projection(Table(), [(0,)]) == set()  # nothing holds: every call fails


def test_the_budget_counts_bindings() -> None:
    budget = Budget(3)
    assert list(budget([(), ()])) == [(), ()]
    with pytest.raises(BudgetExceeded):
        budget([(), ()])


#: A bishop on a 6 x 6 board walking diagonals through squares the state leaves empty,
#: the square to ignore passed along as in chess (six coordinates each: dropped), called
#: with every argument ground and with some free, and through a compound argument.
BISHOP_KIF = """
(role p)
(coord 1) (coord 2) (coord 3) (coord 4) (coord 5) (coord 6)
(succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5) (succ 5 6)
(init (at 1 3)) (init (block 3 5)) (init (block 4 2)) (init (target 6 6)) (init (step 0))
(tick 0 1) (tick 1 2) (tick 2 3) (tick 3 4) (tick 4 5) (tick 5 6) (tick 6 7) (tick 7 8)
; diagonal walks through empty squares, the square to ignore passed along
(<= (ne ?x ?y ?u ?v ?ix ?iy) (succ ?x ?u) (succ ?y ?v) (coord ?ix) (coord ?iy))
(<= (ne ?x ?y ?u ?v ?ix ?iy)
    (succ ?x ?a) (succ ?y ?b) (empty ?a ?b ?ix ?iy) (ne ?a ?b ?u ?v ?ix ?iy))
(<= (se ?x ?y ?u ?v ?ix ?iy) (succ ?x ?u) (succ ?v ?y) (coord ?ix) (coord ?iy))
(<= (se ?x ?y ?u ?v ?ix ?iy)
    (succ ?x ?a) (succ ?b ?y) (empty ?a ?b ?ix ?iy) (se ?a ?b ?u ?v ?ix ?iy))
(<= (empty ?a ?b ?ix ?iy) (coord ?a) (coord ?b) (coord ?ix) (coord ?iy) (not (true (block ?a ?b))))
(<= (empty ?ix ?iy ?ix ?iy) (coord ?ix) (coord ?iy))
(<= (line ?x ?y ?u ?v ?ix ?iy) (se ?x ?y ?u ?v ?ix ?iy))
(<= (line ?x ?y ?u ?v ?ix ?iy) (se ?u ?v ?x ?y ?ix ?iy))
(<= (line ?x ?y ?u ?v ?ix ?iy) (ne ?x ?y ?u ?v ?ix ?iy))
(<= (line ?x ?y ?u ?v ?ix ?iy) (ne ?u ?v ?x ?y ?ix ?iy))
(<= (hit ?ix ?iy) (true (at ?x ?y)) (true (target ?u ?v)) (line ?x ?y ?u ?v ?ix ?iy))
(<= (can (go (sq ?x ?y) (sq ?u ?v))) (line ?x ?y ?u ?v 1 1) (not (true (block ?u ?v))))
(<= (legal p (move ?u ?v)) (true (at ?x ?y)) (can (go (sq ?x ?y) (sq ?u ?v))))
(<= (legal p (lift ?a ?b)) (true (block ?a ?b)) (not (hit ?a ?b)))
(legal p wait)
(<= (legal p (slide ?u)) (true (at ?x ?y)) (coord ?u) (can (go (sq ?x ?y) (sq ?u ?v))))
(<= (next (at ?u ?v)) (does p (slide ?u)) (true (at ?x ?y)) (can (go (sq ?x ?y) (sq ?u ?v))))
(<= (moved) (does p (slide ?u)))
(<= (next (at ?u ?v)) (does p (move ?u ?v)))
(<= (next (at ?x ?y)) (true (at ?x ?y)) (not (moved)))
(<= (moved) (does p (move ?u ?v)))
(<= (next (block ?a ?b)) (true (block ?a ?b)) (not (does p (lift ?a ?b))))
(<= (next (block ?x ?y)) (does p (lift ?a ?b)) (true (at ?x ?y)))
(<= (next (target ?u ?v)) (true (target ?u ?v)))
(<= (next (step ?n)) (true (step ?m)) (tick ?m ?n))
(<= terminal (true (step 8)))
(<= terminal (true (at ?x ?y)) (true (target ?x ?y)))
(<= (goal p 100) (true (at ?x ?y)) (true (target ?x ?y)))
(<= (goal p 0) (not (hit 1 1)))
(<= (goal p 50) (hit 1 1))
"""


def test_filters_answer_as_the_prover_in_every_mode() -> None:
    description = parse_text(BISHOP_KIF)
    machine = TopDownStateMachine(description)
    filters = [line.strip() for line in machine.source.split("\n") if " not in X" in line]
    assert "if (a0, a1, a2, a3, ) not in X" in " ".join(filters)  # the ignored square dropped
    assert "if (a0, a1, a2, ) not in X" in " ".join(filters)  # a call with a value free
    prover = ProverStateMachine(description)
    steps = crosscheck_playouts(prover, machine, 12, np.random.default_rng(0), cap=10)
    squares = {str(f) for s in steps for f in machine.state_facts(s.other) if f.name == "at"}
    assert len(squares) > 3  # the bishop went places


@requires_shared
@pytest.mark.slow
def test_chess_with_filters_plays_as_without() -> None:
    description = parse_file(CHESS)
    plain = TopDownStateMachine(description, relax_bindings=0)
    filtered = TopDownStateMachine(description)
    assert " not in X" in filtered.source and " not in X" not in plain.source
    crosscheck_playouts(plain, filtered, 6, np.random.default_rng(5), cap=120)
