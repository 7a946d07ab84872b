"""The reference prover: known game values, the ggp-base edge cases, misuse, the corpus.

Known values: tic-tac-toe's 5,478 positions (by depth, and its 958 terminal positions),
Monty Hall's 2/3 for always switching, Meier's 34.84% for player 1 when both players
play uniformly at random. The ggp-base test games say in their comments what a correct
state machine must do; each test below quotes the point.
"""

from __future__ import annotations

import itertools
import sys
import threading
import time
from collections import Counter
from fractions import Fraction
from pathlib import Path

import numpy as np
import pytest

from ggp.errors import GameError, GDLSemanticError, OutOfTime
from ggp.gdl.parser import parse_file, parse_term, parse_text
from ggp.gdl.terms import Const, Term
from ggp.reasoning.prover import ProverStateMachine
from ggp.reasoning.state_machine import State, StateMachine

from conftest import GAMES, SHARED, corpus_files, corpus_ids, requires_shared

BASE_TESTS = SHARED / "gdl" / "ggp-base-tests"


def machine_for(path: Path) -> ProverStateMachine:
    return ProverStateMachine.from_file(path)


def machine_from(text: str) -> ProverStateMachine:
    return ProverStateMachine(parse_text(text))


def terms(*texts: str) -> tuple[Term, ...]:
    return tuple(parse_term(text) for text in texts)


def first_legal_playout(
    machine: ProverStateMachine, cap: int = 100
) -> tuple[State, list[tuple[Term, ...]]]:
    """Play the first legal move of every role until terminal; return the end and moves."""
    state = machine.initial_state()
    history: list[tuple[Term, ...]] = []
    while not machine.is_terminal(state):
        assert len(history) < cap, "no terminal state within the cap"
        joint = tuple(machine.legal_moves(state, role)[0] for role in machine.roles)
        history.append(joint)
        state = machine.next_state(state, joint)
    return state, history


def random_playout(
    machine: ProverStateMachine,
    rng: np.random.Generator,
    cap: int = 300,
    *,
    percepts: bool = True,
) -> tuple[State, int]:
    """Uniformly random legal moves for every role (``random`` included)."""
    state = machine.initial_state()
    steps = 0
    while not machine.is_terminal(state) and steps < cap:
        joint = []
        for role in machine.roles:
            moves = machine.legal_moves(state, role)
            assert moves, f"role {role} has no legal move in a non-terminal state"
            joint.append(moves[rng.integers(len(moves))])
        if percepts:
            for role in machine.roles:
                assert all(p.is_ground for p in machine.percepts(state, joint, role))
        state = machine.next_state(state, joint)
        steps += 1
    return state, steps


# --------------------------------------------------------------------------------------
# Semantics on small inline games


SMALL = """
(role a) (role b)
(init (at 0))
(succ 0 1) (succ 1 2) (succ 2 3)
(<= (legal ?r (go ?n)) (role ?r) (true (at ?c)) (succ ?c ?n))
(<= (legal ?r stay) (role ?r))
(<= (next (at ?n)) (does a (go ?n)))
(<= (next (at ?c)) (does a stay) (true (at ?c)))
(<= (sees ?r (moved ?m)) (role ?r) (does a ?m) (distinct ?m stay))
(<= terminal (true (at 3)))
(<= (goal a 100) (true (at 3)))
(<= (goal a 30) (true (at 3)))
(<= (goal a 0) (not (true (at 3))))
"""


def test_implements_the_protocol() -> None:
    machine = machine_from(SMALL)
    assert isinstance(machine, StateMachine)
    assert machine.roles == (Const("a"), Const("b"))


def test_state_queries_and_canonical_order() -> None:
    machine = machine_from(SMALL)
    a, b = machine.roles
    state = machine.initial_state()
    assert machine.state_facts(state) == frozenset(terms("(at 0)"))
    assert machine.legal_moves(state, a) == terms("(go 1)", "stay")
    assert machine.legal_moves(state, b) == terms("(go 1)", "stay")
    assert not machine.is_terminal(state)
    assert machine.goals(state) == (0, 0)  # b has no goal rule: 0


def test_next_state_percepts_and_goal_maximum() -> None:
    machine = machine_from(SMALL)
    b = machine.roles[1]
    state = machine.initial_state()
    joint = terms("(go 1)", "stay")
    assert machine.percepts(state, joint, b) == frozenset(terms("(moved (go 1))"))
    assert machine.percepts(state, terms("stay", "stay"), b) == frozenset()
    for n in (1, 2, 3):
        state = machine.next_state(state, terms(f"(go {n})", "stay"))
    assert machine.state_facts(state) == frozenset(terms("(at 3)"))
    assert machine.is_terminal(state)
    assert machine.goals(state) == (100, 0)  # goals 100 and 30: the largest


def test_states_are_values() -> None:
    machine = machine_from(SMALL)
    state = machine.initial_state()
    again = machine.next_state(state, terms("stay", "stay"))
    assert again == state and hash(again) == hash(state)
    assert machine.state_from_facts(frozenset(terms("(at 0)"))) == state
    assert machine.state_from_facts(frozenset()) != state


def test_or_not_and_equality() -> None:
    machine = machine_from("""
        (role r) (num 1) (num 2) (num 3) (pick 2)
        (<= (legal r (n ?x)) (num ?x) (or (pick ?x) (not (distinct ?x 3))))
        (<= (legal r (m ?x)) (num ?x) (not (or (pick ?x) (distinct ?x 1))))
        (<= (legal r (e ?y)) (pick ?x) (not (distinct ?y ?x)))
        (<= terminal (not (not (pick 2))))
    """)
    state = machine.initial_state()
    role = machine.roles[0]
    assert machine.legal_moves(state, role) == terms("(e 2)", "(m 1)", "(n 2)", "(n 3)")
    assert machine.is_terminal(state)


def test_recursion_and_stratified_negation() -> None:
    machine = machine_from("""
        (role r) (edge a b) (edge b c) (edge c a) (edge d e)
        (<= (path ?x ?y) (edge ?x ?y))
        (<= (path ?x ?z) (path ?x ?y) (edge ?y ?z))
        (<= (cut ?x ?y) (node ?x) (node ?y) (not (path ?x ?y)))
        (<= (node ?x) (edge ?x ?y))
        (<= (node ?y) (edge ?x ?y))
        (<= (legal r (p ?x ?y)) (path ?x ?y) (distinct ?x ?y))
        (<= (legal r (c ?y)) (cut d ?y))
    """)
    moves = {str(m) for m in machine.legal_moves(machine.initial_state(), machine.roles[0])}
    cycle = {f"(p {x} {y})" for x in "abc" for y in "abc" if x != y}
    assert moves == cycle | {"(p d e)"} | {f"(c {y})" for y in "abcd"}


def test_recursion_over_the_state() -> None:
    """A recursive relation of the state layer, and a move relation built on it."""
    machine = machine_from("""
        (role r)
        (init (edge a b)) (init (edge b c)) (init (edge c d))
        (<= (reach ?x ?y) (true (edge ?x ?y)))
        (<= (reach ?x ?z) (reach ?x ?y) (true (edge ?y ?z)))
        (<= (legal r (cut ?x ?y)) (true (edge ?x ?y)))
        (<= (next (edge ?x ?y)) (true (edge ?x ?y)) (not (does r (cut ?x ?y))))
        (<= (sees r (reached ?y)) (does r ?m) (reach a ?y))
        (<= terminal (not (reach a d)))
        (<= (goal r 100) (not (reach a d)))
    """)
    (role,) = machine.roles
    state = machine.initial_state()
    assert not machine.is_terminal(state)
    joint = terms("(cut c d)")
    reached = machine.percepts(state, joint, role)
    assert reached == frozenset(terms("(reached b)", "(reached c)", "(reached d)"))
    state = machine.next_state(state, joint)
    assert machine.state_facts(state) == frozenset(terms("(edge a b)", "(edge b c)"))
    assert machine.is_terminal(state) and machine.goals(state) == (100,)


@requires_shared
def test_results_do_not_depend_on_the_caches() -> None:
    """Random Meier games of two machines, one with the smallest caches, agree."""
    description = parse_file(SHARED / "gdl" / "gdl2" / "meier.kif")
    cached = ProverStateMachine(description)
    uncached = ProverStateMachine(description, cache_size=1)
    for seed in range(40):
        end, steps = random_playout(cached, np.random.default_rng(seed))
        other_end, other_steps = random_playout(uncached, np.random.default_rng(seed))
        assert steps == other_steps
        assert cached.state_facts(end) == uncached.state_facts(other_end)
        assert cached.goals(end) == uncached.goals(other_end)
    with pytest.raises(ValueError, match="cache_size"):
        ProverStateMachine(description, cache_size=0)


def test_unsafe_variables_range_over_the_constants() -> None:
    machine = machine_from("""
        (role x) (role y) (ok x)
        (<= (legal ?p ?p) (ok x))
        (<= (goal ?p 100) (ok ?p))
        (<= (goal ?p 10) (not (ok ?p)))
        (<= terminal (not (true (blank ?a ?b))))
    """)
    state = machine.initial_state()
    x, y = machine.roles
    assert machine.legal_moves(state, x) == (x,)
    assert machine.legal_moves(state, y) == (y,)
    assert machine.goals(state) == (100, 10)
    assert set(machine.constants) >= {x, y, Const("100"), Const("terminal")}
    # ?a and ?b occur only inside the `not`: "no blank cell", not "some pair not blank".
    assert machine.is_terminal(state)
    assert not machine.is_terminal(machine.state_from_facts(frozenset(terms("(blank 1 2)"))))


def test_rules_it_refuses() -> None:
    with pytest.raises(GDLSemanticError, match="unstratified negation"):
        machine_from("(role r) (<= p (not q)) (<= q (not p))")
    with pytest.raises(GDLSemanticError, match="legal must not depend on does"):
        machine_from("(role r) (<= (legal r a) (does r a))")
    with pytest.raises(GDLSemanticError, match="init must not depend on true"):
        machine_from("(role r) (<= (init p) (true p))")
    with pytest.raises(GDLSemanticError, match="cannot define 'true'"):
        machine_from("(role r) (<= (true p) (q))")
    with pytest.raises(GDLSemanticError, match="no \\(role"):
        machine_from("(init p)")
    with pytest.raises(GDLSemanticError, match="'distinct' takes two terms") as info:
        machine_from("(role r)\n(<= p (distinct a b c))")
    assert (info.value.line, info.value.column) == (2, 7)


# --------------------------------------------------------------------------------------
# Misuse


def test_foreign_states_are_refused() -> None:
    machine, other = machine_from(SMALL), machine_from(SMALL)
    foreign = other.initial_state()
    a = machine.roles[0]
    for call in (
        lambda: machine.legal_moves(foreign, a),
        lambda: machine.next_state(foreign, terms("stay", "stay")),
        lambda: machine.percepts(foreign, terms("stay", "stay"), a),
        lambda: machine.is_terminal(foreign),
        lambda: machine.goals(foreign),
        lambda: machine.state_facts(foreign),
    ):
        with pytest.raises(GameError, match="not made by this state machine"):
            call()
    with pytest.raises(GameError, match="not made by this state machine"):
        machine.is_terminal("(at 0)")  # type: ignore[arg-type]


def test_bad_roles_and_joint_moves_are_refused() -> None:
    machine = machine_from(SMALL)
    state = machine.initial_state()
    with pytest.raises(GameError, match="unknown role c: the roles are a b"):
        machine.legal_moves(state, Const("c"))
    with pytest.raises(GameError, match="unknown role"):
        machine.percepts(state, terms("stay", "stay"), Const("c"))
    with pytest.raises(GameError, match=r"needs 2 moves .* got 1"):
        machine.next_state(state, terms("stay"))
    with pytest.raises(GameError, match=r"needs 2 moves .* got 3"):
        machine.next_state(state, terms("stay", "stay", "stay"))
    with pytest.raises(GameError, match="missing move for role b"):
        machine.next_state(state, (Const("stay"), None))  # type: ignore[arg-type]
    with pytest.raises(GameError, match=r"illegal move \(go 2\) for role a"):
        machine.next_state(state, terms("(go 2)", "stay"))
    with pytest.raises(GameError, match="illegal move"):
        machine.percepts(state, terms("stay", "(go 3)"), Const("b"))
    with pytest.raises(GameError, match="ground term"):
        machine.state_from_facts(frozenset(terms("(at ?x)")))


# --------------------------------------------------------------------------------------
# Known values


@requires_shared
def test_tictactoe_positions() -> None:
    """5,478 reachable positions (by depth 1, 9, 72, ... 78); 958 end, 626 / 316 / 16."""
    machine = machine_for(SHARED / "gdl" / "gdl" / "ticTacToe.kif")
    start = machine.initial_state()
    depth = {machine.state_facts(start): 0}
    frontier = [start]
    terminal: Counter[tuple[int, ...]] = Counter()
    while frontier:
        following = []
        for state in frontier:
            if machine.is_terminal(state):
                terminal[machine.goals(state)] += 1
                continue
            moves = [machine.legal_moves(state, role) for role in machine.roles]
            for joint in itertools.product(*moves):
                after = machine.next_state(state, joint)
                facts = machine.state_facts(after)
                if facts not in depth:
                    depth[facts] = depth[machine.state_facts(state)] + 1
                    following.append(after)
        frontier = following
    assert len(depth) == 5478
    by_depth = Counter(depth.values())
    assert [by_depth[d] for d in range(10)] == [1, 9, 72, 252, 756, 1260, 1520, 1140, 390, 78]
    assert terminal == {(100, 0): 626, (0, 100): 316, (50, 50): 16}


def monty_value(
    machine: ProverStateMachine,
    state: State,
    switch: bool,
) -> Fraction:
    """The candidate's exact expected goal: random uniform, the candidate choosing door 1
    and then switching always or never."""
    candidate, chance = machine.roles
    if machine.is_terminal(state):
        return Fraction(machine.goals(state)[0])
    options = machine.legal_moves(state, candidate)
    wanted = Const("switch") if switch else Const("noop")
    move = wanted if wanted in options else options[0]
    chances = machine.legal_moves(state, chance)
    return sum(
        (monty_value(machine, machine.next_state(state, (move, c)), switch) for c in chances),
        Fraction(0),
    ) / len(chances)


@requires_shared
def test_montyhall_percepts_and_values() -> None:
    machine = machine_for(SHARED / "gdl" / "gdl2" / "montyhall.kif")
    candidate, chance = machine.roles
    assert (candidate, chance) == (Const("candidate"), Const("random"))
    state = machine.initial_state()
    assert machine.legal_moves(state, chance) == terms(
        "(hide_car 1)", "(hide_car 2)", "(hide_car 3)"
    )
    joint = terms("(choose 1)", "(hide_car 3)")
    assert machine.percepts(state, joint, candidate) == frozenset()
    state = machine.next_state(state, joint)
    # The host may open neither the chosen door nor the car's.
    assert machine.legal_moves(state, chance) == terms("(open_door 2)")
    joint = terms("noop", "(open_door 2)")
    assert machine.percepts(state, joint, candidate) == frozenset(terms("(open_door 2)"))
    assert machine.percepts(state, joint, chance) == frozenset()
    state = machine.next_state(state, joint)
    assert machine.legal_moves(state, candidate) == terms("noop", "switch")
    seen = machine.percepts(state, terms("switch", "noop"), candidate)
    assert seen == frozenset(terms("(car 3)"))
    assert machine.percepts(state, terms("noop", "noop"), candidate) == frozenset()
    end = machine.next_state(state, terms("switch", "noop"))
    assert machine.is_terminal(end) and machine.goals(end) == (100, 100)

    start = machine.initial_state()
    assert monty_value(machine, start, switch=True) == Fraction(200, 3)  # 66.7
    assert monty_value(machine, start, switch=False) == Fraction(100, 3)  # 33.3


@requires_shared
def test_meier_exact_value_of_random_play() -> None:
    """Exact expectation over the whole game tree (3,382 states): P1 wins 0.348423."""
    machine = machine_for(SHARED / "gdl" / "gdl2" / "meier.kif")
    values: dict[State, Fraction] = {}

    def p1_wins(state: State) -> Fraction:
        value = values.get(state)
        if value is None:
            if machine.is_terminal(state):
                value = Fraction(machine.goals(state)[1] == 100)
            else:
                moves = [machine.legal_moves(state, role) for role in machine.roles]
                joints = list(itertools.product(*moves))
                total = sum(
                    (p1_wins(machine.next_state(state, joint)) for joint in joints), Fraction(0)
                )
                value = total / len(joints)
            values[state] = value
        return value

    assert round(float(p1_wins(machine.initial_state())), 6) == 0.348423
    assert len(values) == 3382


@requires_shared
def test_meier_random_against_random() -> None:
    """Player 1 wins 34.8423% when all roles (random included) play uniformly."""
    machine = machine_for(SHARED / "gdl" / "gdl2" / "meier.kif")
    assert machine.roles == (Const("random"), Const("p1"), Const("p2"))
    rng = np.random.default_rng(20240601)
    games = 4000
    wins = 0
    for _ in range(games):
        state, _steps = random_playout(machine, rng, percepts=False)
        assert machine.is_terminal(state)
        goals = machine.goals(state)
        assert sorted(goals[1:]) == [0, 100]
        wins += goals[1] == 100
    exact = 0.348423
    standard_error = (exact * (1 - exact) / games) ** 0.5
    assert abs(wins / games - exact) < 3 * standard_error


# --------------------------------------------------------------------------------------
# The ggp-base edge cases (shared/gdl/ggp-base-tests): each file's comment says the point.


def base_test(name: str) -> ProverStateMachine:
    return machine_for(BASE_TESTS / f"{name}.kif")


def only_role(machine: ProverStateMachine) -> Const:
    (role,) = machine.roles
    return role


@requires_shared
@pytest.mark.parametrize("name", ["test_case_1a", "test_case_1b"])
def test_time_invariant_goal(name: str) -> None:
    """1a, 1b: a goal rule with no body (1a), a proposition defined from legal (1b)."""
    machine = base_test(name)
    state, history = first_legal_playout(machine)
    if name == "test_case_1a":
        assert machine.goals(machine.initial_state()) == (100,)
        assert history == [terms("proceed")] and machine.goals(state) == (100,)
    else:
        you = only_role(machine)
        assert machine.legal_moves(machine.initial_state(), you) == terms("lose", "win")
        # lose leads to (state 2): no legal move, hence terminal, and goal 0.
        assert history == [terms("lose")] and machine.goals(state) == (0,)
        won = machine.next_state(machine.initial_state(), terms("win"))
        assert machine.is_terminal(won) and machine.goals(won) == (100,)


@requires_shared
def test_case_2a_derived_time_invariant_relations() -> None:
    machine = base_test("test_case_2a")
    state, history = first_legal_playout(machine)
    assert [str(joint[0]) for joint in history] == [
        f"(move move_next {n} {n + 1})" for n in range(4)
    ]
    assert machine.state_facts(state) == frozenset(terms("(state 4)"))
    assert machine.goals(state) == (100,)


@requires_shared
def test_case_2b_snake() -> None:
    machine = base_test("test_case_2b")
    snake = only_role(machine)
    start = machine.initial_state()
    assert machine.legal_moves(start, snake) == terms("mov_left", "mov_right")
    # Left first: the snake is then boxed in between the wall and its own trail.
    state, history = first_legal_playout(machine)
    assert history == [terms("mov_left")] and machine.goals(state) == (0,)
    # Always right: it wraps around the board and survives six steps.
    state = start
    for _ in range(6):
        assert not machine.is_terminal(state)
        state = machine.next_state(state, terms("mov_right"))
    assert parse_term("(step 6)") in machine.state_facts(state)
    assert machine.is_terminal(state) and machine.goals(state) == (100,)


@requires_shared
def test_case_2c_snake() -> None:
    machine = base_test("test_case_2c")
    state, history = first_legal_playout(machine)
    assert len(history) == 10 and parse_term("(step 10)") in machine.state_facts(state)
    assert machine.goals(state) == (100,)


@requires_shared
def test_case_3a_zero_arity_with_parentheses() -> None:
    """``open1`` and ``(open2)`` are the same kind of proposition; both hold."""
    machine = base_test("test_case_3a")
    start = machine.initial_state()
    assert machine.legal_moves(start, only_role(machine)) == terms("(move correct_correct)")
    state, _ = first_legal_playout(machine)
    assert machine.state_facts(state) == frozenset(terms("correct_correct"))
    assert machine.goals(state) == (100,)


@requires_shared
def test_case_3b_broad_distinct_definitions() -> None:
    machine = base_test("test_case_3b")
    start = machine.initial_state()
    assert machine.state_facts(start) == frozenset()
    assert machine.is_terminal(start)
    assert machine.legal_moves(start, only_role(machine)) == terms("noop")
    assert machine.goals(start) == (100,)


@requires_shared
@pytest.mark.parametrize("name", ["test_case_3c", "test_case_3d"])
def test_case_3c_3d_undefined_proposition_and_init(name: str) -> None:
    """3c: ``squee`` is defined nowhere (so false); 3d: the initial state is right."""
    machine = base_test(name)
    start = machine.initial_state()
    expected_start = frozenset() if name == "test_case_3c" else frozenset(terms("(cell alpha)"))
    assert machine.state_facts(start) == expected_start
    assert machine.legal_moves(start, only_role(machine)) == terms("win")
    state, history = first_legal_playout(machine)
    assert history == [terms("win")]
    assert machine.state_facts(state) == frozenset(terms("winner"))
    assert machine.goals(state) == (100,)


@requires_shared
def test_case_3e_3f_role_variables_in_legal_and_goal() -> None:
    machine = base_test("test_case_3e")
    start = machine.initial_state()
    you = only_role(machine)
    assert machine.is_terminal(start)
    assert machine.legal_moves(start, you) == (you,)
    assert machine.goals(start) == (100,)

    machine = base_test("test_case_3f")
    start = machine.initial_state()
    assert machine.is_terminal(start)
    for role in machine.roles:
        assert machine.legal_moves(start, role) == (role,)
    assert machine.goals(start) == (100, 0, 100)  # yplayer is not on_list


@requires_shared
def test_case_4a_base_and_input() -> None:
    machine = base_test("test_case_4a")
    start = machine.initial_state()
    assert machine.state_facts(start) == frozenset(terms("p"))
    state, history = first_legal_playout(machine)
    assert history == [terms("a")]
    assert machine.state_facts(state) == frozenset(terms("q"))
    assert machine.goals(state) == (100,)


@requires_shared
@pytest.mark.parametrize("name", ["test_case_5a", "test_case_5c", "test_case_5d"])
def test_case_5_recursion(name: str) -> None:
    """Complex (yet legal) recursion: ``proceed`` is legal only if it is evaluated right."""
    machine = base_test(name)
    start = machine.initial_state()
    assert machine.legal_moves(start, only_role(machine)) == terms("proceed")
    state, history = first_legal_playout(machine)
    assert history == [terms("proceed")]
    assert machine.goals(state) == (100,)
    if name == "test_case_5d":
        expected = {f"({rel} {x} {y})" for rel in ("rtrue", "strue") for x, y in ("12", "21")}
        assert {str(fact) for fact in machine.state_facts(start)} == expected


@requires_shared
def test_case_5b_doubled_up_variables() -> None:
    machine = base_test("test_case_5b")
    state, history = first_legal_playout(machine)
    assert history == [terms("(draw 1 1 1 2)")]
    # (h_drawn ?x1 ?y ?x2 ?y) does not match a draw from y 1 to y 2: no box.
    assert machine.state_facts(state) == frozenset(terms("(line 1 1 1 2)", "done"))
    assert machine.goals(state) == (100,)


@requires_shared
def test_case_5e_seven_legal_moves() -> None:
    """'The robot role should have seven legal moves.'"""
    machine = base_test("test_case_5e")
    moves = machine.legal_moves(machine.initial_state(), only_role(machine))
    assert moves == terms(
        *(f"(reduce a {n})" for n in range(2)), *(f"(reduce c {n})" for n in range(5))
    )


@requires_shared
def test_simple_mutex() -> None:
    machine = base_test("simpleMutex")
    start = machine.initial_state()
    robot = only_role(machine)
    assert machine.legal_moves(start, robot) == terms("a", "b", "c")
    state, history = first_legal_playout(machine)
    assert [str(joint[0]) for joint in history] == ["a", "d", "a", "a"]
    assert parse_term("h8") in machine.state_facts(state)
    assert machine.goals(state) == (0,)
    won = machine.next_state(start, terms("b"))
    assert machine.is_terminal(won) and machine.goals(won) == (100,)


@requires_shared
def test_clean_not_distinct() -> None:
    """``success`` needs every (not (distinct ...)) read right; its goal is then 100."""
    machine = base_test("test_clean_not_distinct")
    assert machine.goals(machine.initial_state()) == (100,)
    state, _ = first_legal_playout(machine)
    assert machine.goals(state) == (100,)


@requires_shared
def test_distinct_beginning_rule() -> None:
    """'There should be 2 legal moves, not 4.'"""
    machine = base_test("test_distinct_beginning_rule")
    moves = machine.legal_moves(machine.initial_state(), only_role(machine))
    assert moves == terms("(do a b)", "(do b a)")
    state, _ = first_legal_playout(machine)
    assert machine.goals(state) == (100,)


# --------------------------------------------------------------------------------------
# The whole corpus plays


PLAYABLE = [f for f in corpus_files("gdl") if "test_invalid_" not in f.name]


@requires_shared
@pytest.mark.parametrize("path", PLAYABLE, ids=corpus_ids(PLAYABLE))
def test_corpus_random_playouts(path: Path) -> None:
    machine = machine_for(path)
    rng = np.random.default_rng(7)
    for _ in range(5):
        state, steps = random_playout(machine, rng, cap=300)
        assert machine.is_terminal(state), f"not terminal after {steps} steps"
        goals = machine.goals(state)
        assert len(goals) == len(machine.roles)
        assert all(0 <= goal <= 100 for goal in goals)


def test_the_caches_are_bounded_by_facts_as_well_as_by_states() -> None:
    description = parse_file(GAMES / "tictactoe.gdl")
    rng = np.random.default_rng(0)
    for cache_size, cache_facts in ((256, 200), (3, 1_000_000)):
        machine = ProverStateMachine(description, cache_size=cache_size, cache_facts=cache_facts)
        state = machine.initial_state()
        while not machine.is_terminal(state):
            moves = [machine.legal_moves(state, role) for role in machine.roles]
            state = machine.next_state(state, [m[rng.integers(len(m))] for m in moves])
            machine.goals(state)
            assert len(machine._states) <= cache_size
            assert machine._states.facts <= cache_facts
        assert machine._states.facts > 0


def test_a_model_larger_than_the_cache_is_not_kept() -> None:
    machine = ProverStateMachine(parse_file(GAMES / "tictactoe.gdl"), cache_facts=1)
    state = machine.initial_state()
    assert len(machine.legal_moves(state, machine.roles[0])) == 9
    assert len(machine._states) == 0  # the latest state's model is still reused
    assert machine.legal_moves(state, machine.roles[0]) == machine.legal_moves(
        state, machine.roles[0]
    )


@pytest.mark.parametrize("stop_after", [0, 1, 3, 7, 15, 23])
def test_a_query_stopped_at_its_deadline_leaves_the_prover_sound(
    monkeypatch: pytest.MonkeyPatch, stop_after: int
) -> None:
    # The clock runs out after ``stop_after`` joins of the first step (mid-component);
    # every later answer is the one a fresh prover gives.
    description = parse_file(GAMES / "connect_four.gdl")
    fresh = ProverStateMachine(description)
    machine = ProverStateMachine(description)
    checks = itertools.count()
    original = ProverStateMachine._check_deadline

    def runs_out(self: ProverStateMachine) -> None:
        if next(checks) >= stop_after:
            raise OutOfTime("the prover's query stopped at the deadline")

    state = machine.initial_state()

    def one_step() -> None:  # 24 joins in all
        legal = [machine.legal_moves(state, r) for r in machine.roles]
        after = machine.next_state(state, [moves[0] for moves in legal])
        machine.is_terminal(after)
        machine.goals(after)

    monkeypatch.setattr(ProverStateMachine, "_check_deadline", runs_out)
    with pytest.raises(OutOfTime):
        one_step()
    monkeypatch.setattr(ProverStateMachine, "_check_deadline", original)
    rng = np.random.default_rng(stop_after)
    a, b = state, fresh.initial_state()
    while not fresh.is_terminal(b):
        assert not machine.is_terminal(a)
        legal = [fresh.legal_moves(b, r) for r in fresh.roles]
        assert [machine.legal_moves(a, r) for r in machine.roles] == legal
        joint = [m[int(rng.integers(len(m)))] for m in legal]
        a, b = machine.next_state(a, joint), fresh.next_state(b, joint)
        assert machine.state_facts(a) == fresh.state_facts(b)
    assert machine.goals(a) == fresh.goals(b)


def test_until_is_per_thread_and_nests() -> None:
    machine = ProverStateMachine(parse_file(GAMES / "tictactoe.gdl"))
    state = machine.initial_state()
    with machine.until(None), machine.until(time.monotonic() - 1):
        with pytest.raises(OutOfTime):
            machine.goals(state)
        answers: list[object] = []
        worker = threading.Thread(target=lambda: answers.append(machine.goals(state)))
        worker.start()
        worker.join()
        assert answers == [(0, 0)]  # another thread has no deadline
    assert machine.goals(state) == (0, 0)


def test_a_long_join_is_stopped_inside_at_its_deadline(monkeypatch: pytest.MonkeyPatch) -> None:
    # (triple ...) joins 40 x 40 x 40 bindings in one rule: the deadline is looked at
    # inside that join, every so many bindings, not only before it; afterwards the
    # prover answers as a fresh one does.
    numbers = " ".join(f"(num {i})" for i in range(40))
    text = f"""
        (role p) (init (on)) {numbers}
        (<= (triple ?x ?y ?z) (true (on)) (num ?x) (num ?y) (num ?z))
        (<= (legal p (pick ?x)) (triple ?x 1 ?x))
        (<= (next (picked ?x)) (does p (pick ?x)))
        (<= terminal (true (picked ?x)))
        (<= (goal p 100) (true (picked ?x)))
        (<= (goal p 0) (true (on)))
    """
    machine, fresh = machine_from(text), machine_from(text)
    callers: list[str] = []
    original = ProverStateMachine._check_deadline

    def runs_out_inside(self: ProverStateMachine) -> None:
        caller = sys._getframe(1).f_code.co_name
        callers.append(caller)
        if caller == "_watched":
            raise OutOfTime("the prover's query stopped at the deadline")

    state = machine.initial_state()
    monkeypatch.setattr(ProverStateMachine, "_check_deadline", runs_out_inside)
    with machine.until(time.monotonic() + 3600), pytest.raises(OutOfTime):
        machine.legal_moves(state, Const("p"))
    assert callers[-1] == "_watched"
    monkeypatch.setattr(ProverStateMachine, "_check_deadline", original)
    with machine.until(time.monotonic() + 3600):
        legal = machine.legal_moves(state, Const("p"))
    assert legal == fresh.legal_moves(fresh.initial_state(), Const("p"))
    assert len(legal) == 40
