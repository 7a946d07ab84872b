"""The compiled propnet reasoner, cross-checked against the reference prover.

For every game of the corpus, seeded random playouts must give exactly the same legal
moves, next states, percepts, terminal flags and goals from the propnet (single-state
and batched) as from :class:`~ggp.reasoning.prover.ProverStateMachine`. Every test runs
once per backend: the native C kernel and the generated Python. The number of
playouts per game is 50 by default; set ``GGP_CROSSCHECK_PLAYOUTS`` for more.
Known values: tic-tac-toe has 5,478 reachable positions (958 terminal); random play in
Meier wins 34.84% for player 1.
"""

from __future__ import annotations

import os
import time
from collections import deque
from pathlib import Path

import numpy as np
import pytest

from ggp.errors import GameError, GDLSemanticError
from ggp.gdl.parser import parse_file, parse_term, parse_text
from ggp.gdl.terms import Const
from ggp.reasoning.compile import compile_batch, compile_single, generate_single_source
from ggp.reasoning.ground import GroundingLimits, ground
from ggp.reasoning.kernel import load_kernel
from ggp.reasoning.propnet import Op, build_propnet
from ggp.reasoning.propnet_machine import (
    WORD_SCAN_BITS,
    PropnetStateMachine,
    StateBatch,
    set_bits,
)
from ggp.reasoning.prover import ProverStateMachine
from ggp.reasoning.state_machine import StateMachine

from conftest import SHARED, Step, corpus_files, corpus_ids, crosscheck_playouts, requires_shared

PLAYOUTS = int(os.environ.get("GGP_CROSSCHECK_PLAYOUTS", "50"))
CORPUS = [p for p in corpus_files("gdl") if "test_invalid_" not in p.name]
GAMES = SHARED / "gdl"
OWN_GAMES = sorted((Path(__file__).resolve().parents[2] / "games").glob("*.gdl"))
#: Games whose playouts are long enough that the default run plays fewer of them.
SLOW_GAMES = {"breakthrough.kif": 10, "3pConnectFour.kif": 20}


@pytest.fixture(autouse=True, params=["native", "python"])
def backend(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every PropnetStateMachine of a test uses this backend (``GGP_NATIVE=0``: Python)."""
    if request.param == "python":
        monkeypatch.setenv("GGP_NATIVE", "0")
    elif load_kernel() is None:
        pytest.skip("the native kernel cannot be built here (no C compiler)")
    name: str = request.param
    return name


def test_the_backend_in_use(backend: str) -> None:
    machine = propnet_from("(role r) (init a) (legal r go) (<= terminal (true a))")
    assert machine.backend == backend


def machines(
    path: Path, limits: GroundingLimits | None = None
) -> tuple[ProverStateMachine, PropnetStateMachine]:
    description = parse_file(path)
    return ProverStateMachine(description), PropnetStateMachine(description, limits=limits)


def propnet_from(text: str) -> PropnetStateMachine:
    return PropnetStateMachine(parse_text(text))


def crosscheck_batched(
    prover: ProverStateMachine, propnet: PropnetStateMachine, steps: list[Step]
) -> None:
    """The batched queries over all visited states agree with the prover."""
    batch = propnet.batch_from_states([step.other for step in steps])
    assert [propnet.state_facts(s) for s in propnet.states_from_batch(batch)] == [
        prover.state_facts(step.reference) for step in steps
    ]
    terminal = propnet.terminal_batch(batch)
    assert terminal.tolist() == [prover.is_terminal(step.reference) for step in steps]
    goals = propnet.goals_batch(batch)
    assert [tuple(row) for row in goals.tolist()] == [prover.goals(s.reference) for s in steps]
    bits = propnet.legal_bits([step.other for step in steps])  # the same, one call for all roles
    for role, role_bits in zip(prover.roles, bits, strict=True):
        all_moves = propnet.all_moves(role)
        legal = propnet.legal_batch(batch, role)
        assert legal.shape == (len(steps), len(all_moves))
        assert np.array_equal(role_bits, legal)
        for row, step in zip(legal, steps, strict=True):
            found = tuple(move for move, ok in zip(all_moves, row, strict=True) if ok)
            assert found == prover.legal_moves(step.reference, role)
    moving = [step for step in steps if step.joint is not None]
    if not moving:
        return
    assert all(step.joint is not None for step in moving)
    batch = propnet.batch_from_states([step.other for step in moving])
    indices = np.array(
        [
            [
                propnet.all_moves(role).index(move)
                for role, move in zip(prover.roles, step.joint, strict=True)
            ]
            for step in moving
            if step.joint is not None
        ]
    )
    successors = propnet.states_from_batch(propnet.next_batch(batch, indices))
    for state, step in zip(successors, moving, strict=True):
        assert step.joint is not None
        expected = prover.state_facts(prover.next_state(step.reference, step.joint))
        assert propnet.state_facts(state) == expected
    for role in prover.roles:
        percepts = propnet.all_percepts(role)
        seen = propnet.percepts_batch(batch, indices, role)
        for row, step in zip(seen, moving, strict=True):
            assert step.joint is not None
            sees = frozenset(p for p, ok in zip(percepts, row, strict=True) if ok)
            assert sees == prover.percepts(step.reference, step.joint, role)


@requires_shared
@pytest.mark.parametrize("path", CORPUS, ids=corpus_ids(CORPUS))
def test_crosscheck_with_prover(path: Path) -> None:
    prover, propnet = machines(path)
    assert propnet.roles == prover.roles
    playouts = min(PLAYOUTS, SLOW_GAMES.get(path.name, PLAYOUTS))
    if "GGP_CROSSCHECK_PLAYOUTS" in os.environ:
        playouts = PLAYOUTS
    steps = crosscheck_playouts(prover, propnet, playouts, np.random.default_rng(1234))
    crosscheck_batched(prover, propnet, steps)


@pytest.mark.parametrize("path", OWN_GAMES, ids=[p.name for p in OWN_GAMES])
def test_crosscheck_own_games(path: Path) -> None:
    prover, propnet = machines(path)
    steps = crosscheck_playouts(prover, propnet, PLAYOUTS, np.random.default_rng(99))
    crosscheck_batched(prover, propnet, steps)


@pytest.mark.parametrize("path", OWN_GAMES, ids=[p.name for p in OWN_GAMES])
def test_crosscheck_own_games_grounded_on_demand(path: Path) -> None:
    description = parse_file(path)
    prover = ProverStateMachine(description)
    propnet = PropnetStateMachine(description, limits=GroundingLimits(demand=True))
    steps = crosscheck_playouts(prover, propnet, PLAYOUTS, np.random.default_rng(5))
    crosscheck_batched(prover, propnet, steps)


#: Our generated games (Battlesnake, RTS): large, so a few capped playouts each.
GENERATED_GAMES = sorted(
    p for folder in ("battlesnake", "rts") for p in (OWN_GAMES[0].parent / folder).glob("*.gdl")
)


@pytest.mark.slow
@pytest.mark.parametrize("path", GENERATED_GAMES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_crosscheck_generated_games(path: Path) -> None:
    # No time budget (a safety net of 60 CPU s by default; sizes decide): this test is
    # about the answers, on a machine of any speed.
    prover, propnet = machines(path, GroundingLimits(max_seconds=None))
    steps = crosscheck_playouts(prover, propnet, 2, np.random.default_rng(3), cap=40)
    crosscheck_batched(prover, propnet, steps)


@requires_shared
@pytest.mark.slow
@pytest.mark.parametrize(
    "path", sorted((SHARED / "scale").glob("bsnake*.kif")), ids=lambda p: p.name
)
def test_crosscheck_scale_games(path: Path) -> None:
    prover, propnet = machines(path)
    steps = crosscheck_playouts(prover, propnet, 3, np.random.default_rng(7))
    crosscheck_batched(prover, propnet, steps)


@requires_shared
def test_tictactoe_reachable_positions() -> None:
    machine = PropnetStateMachine(parse_file(GAMES / "gdl" / "ticTacToe.kif"))
    assert isinstance(machine, StateMachine)
    start = machine.initial_state()
    seen = {start}
    terminal = 0
    queue = deque([start])
    while queue:
        state = queue.popleft()
        if machine.is_terminal(state):
            terminal += 1
            continue
        for _, child in machine.children(state):  # batched expansion
            if child not in seen:
                seen.add(child)
                queue.append(child)
    assert len(seen) == 5_478
    assert terminal == 958


@requires_shared
def test_children_match_single_state_successors() -> None:
    machine = PropnetStateMachine(parse_file(GAMES / "gdl2" / "meier.kif"))
    state = machine.initial_state()
    for _ in range(3):
        children = machine.children(state)
        assert children
        for joint, child in children:
            assert child == machine.next_state(state, joint)
        state = children[len(children) // 2][1]


@requires_shared
def test_random_playouts_meier_player_one_wins_a_third() -> None:
    machine = PropnetStateMachine(parse_file(GAMES / "gdl2" / "meier.kif"))
    result = machine.random_playouts(machine.initial_state(), 20_000, np.random.default_rng(5))
    assert result.finished.all()
    p1 = machine.roles.index(Const("p1"))
    # exact value 34.84%; the standard error over 20,000 games is 0.34 points
    assert abs((result.goals[:, p1] == 100).mean() - 0.3484) < 0.015


@requires_shared
def test_random_playouts_are_reproducible_and_match_the_rules() -> None:
    machine = PropnetStateMachine(parse_file(GAMES / "gdl" / "ticTacToe.kif"))
    first = machine.random_playouts(machine.initial_state(), 300, np.random.default_rng(3))
    again = machine.random_playouts(machine.initial_state(), 300, np.random.default_rng(3))
    assert (first.goals == again.goals).all() and (first.lengths == again.lengths).all()
    assert first.goals.shape == (300, 2) and first.lengths.shape == (300,)
    assert first.finished.all()
    assert ((first.lengths >= 5) & (first.lengths <= 9)).all()
    outcomes = {tuple(row) for row in first.goals.tolist()}
    assert outcomes <= {(100, 0), (0, 100), (50, 50)}


def test_random_playouts_from_a_batch_and_with_a_step_cap() -> None:
    machine = propnet_from(
        """
        (role r) (init (count 0)) (succ 0 1) (succ 1 2) (succ 2 3)
        (<= (legal r inc) (true (count ?n)) (succ ?n ?m))
        (<= (legal r stay) (true (count ?n)))
        (<= (next (count ?m)) (does r inc) (true (count ?n)) (succ ?n ?m))
        (<= (next (count ?n)) (does r stay) (true (count ?n)))
        (<= terminal (true (count 3))) (<= (goal r 100) (true (count 3)))
        """
    )
    state = machine.initial_state()
    batch = machine.batch_from_states([state] * 5)
    capped = machine.random_playouts(batch, 5, np.random.default_rng(0), max_steps=2)
    assert not capped.finished.any() and (capped.goals == 0).all()
    assert (capped.lengths == 2).all()
    done = machine.random_playouts(batch, 5, np.random.default_rng(0))
    assert done.finished.all() and (done.goals == 100).all() and (done.lengths >= 3).all()


def test_random_playouts_stop_at_the_deadline() -> None:
    # A game without an end: only the deadline stops its playouts (both backends check it
    # before every joint move; Game.random_playouts passes it on to this batched call).
    machine = propnet_from(
        """
        (role r) (init (at 0)) (legal r flip)
        (<= (next (at 1)) (true (at 0))) (<= (next (at 0)) (true (at 1)))
        (<= terminal (true (at 2))) (<= (goal r 0) (true (at 0))) (<= (goal r 0) (true (at 1)))
        """
    )
    state = machine.initial_state()
    past = machine.random_playouts(state, 5, np.random.default_rng(0), deadline=time.monotonic())
    assert not past.finished.any() and (past.lengths == 0).all()
    soon = time.monotonic() + 0.05
    cut = machine.random_playouts(state, 5, np.random.default_rng(0), 10**8, deadline=soon)
    assert not cut.finished.any() and (cut.goals == 0).all()
    assert ((cut.lengths > 0) & (cut.lengths < 10**8)).all()


def test_positive_cycles_reach_the_least_fixpoint() -> None:
    text = """
        (role r) (init (edge 1 2)) (init (edge 2 1)) (init (edge 3 4))
        (node 1) (node 2) (node 3) (node 4)
        (<= (legal r (cut ?x ?y)) (true (edge ?x ?y)))
        (legal r wait)
        (<= (path ?x ?y) (true (edge ?x ?y)))
        (<= (path ?x ?z) (path ?x ?y) (path ?y ?z))
        (<= (next (edge ?x ?y)) (true (edge ?x ?y)) (not (does r (cut ?x ?y))))
        (<= (next (edge 4 3)) (true (edge 3 4)) (does r wait))
        (<= (goal r 100) (path 3 3))
        (<= (goal r 50) (path 1 1) (not (path 3 3)))
        (<= terminal (not (path 1 1)))
    """
    description = parse_text(text)
    propnet = PropnetStateMachine(description)
    assert any(op == Op.LOOP for op in propnet.propnet.ops)
    prover = ProverStateMachine(description)
    steps = crosscheck_playouts(prover, propnet, 30, np.random.default_rng(0), cap=10)
    crosscheck_batched(prover, propnet, steps)


def test_unstratified_ground_negation_is_refused() -> None:
    with pytest.raises(GDLSemanticError, match="unstratified"):
        propnet_from(
            """
            (role r) (init a) (legal r go)
            (<= p (true a) (not q)) (<= q (true a) (not p))
            (<= terminal p)
            """
        )


def test_huge_disjunction_compiles() -> None:
    # thousands of operands in one gate and one result: the generated code must stay
    # within the nesting CPython's compiler accepts
    facts = " ".join(f"(n {i})" for i in range(3000))
    machine = propnet_from(
        f"""
        (role r) {facts} (init (cell 0)) (legal r go)
        (<= (next (cell ?i)) (n ?i) (true (cell 0)))
        (<= any (true (cell ?i)))
        (<= (next (cell 1)) (does r go) any)
        (<= terminal (true (cell 2999)))
        """
    )
    state = machine.next_state(machine.initial_state(), [Const("go")])
    assert len(machine.state_facts(state)) == 3000
    assert machine.is_terminal(state)
    result = machine.random_playouts(machine.initial_state(), 4, np.random.default_rng(0))
    assert result.finished.all() and (result.lengths == 1).all()


def test_structure_is_topological_and_small() -> None:
    net = build_propnet(
        ground(
            parse_text(
                """
                (role r) (index 1) (index 2) (index 3)
                (<= (init (cell ?i b)) (index ?i))
                (<= (legal r (mark ?i)) (true (cell ?i b)))
                (<= (next (cell ?i x)) (does r (mark ?i)) (true (cell ?i b)))
                (<= (next (cell ?i b)) (true (cell ?i b)) (does r (mark ?j)) (distinct ?i ?j))
                (<= (next (cell ?i x)) (true (cell ?i x)))
                (<= terminal (not (true (cell 1 b))))
                """
            )
        )
    )
    for node, (op, args) in enumerate(zip(net.ops, net.args, strict=True)):
        if op in (Op.AND, Op.OR, Op.NOT):
            assert all(child < node for child in args)
    # (next (cell 1 b)) = b1 AND (mark 2 OR mark 3): the shared literal is factored out
    text = net.describe(net.next[net.base.index(parse_term("(cell 1 b)"))])
    assert text.count("BASE") == 1 and text.count("INPUT") == 2, text
    single = compile_single(net)
    batch = compile_batch(net)
    assert "def terminal" in single.source and "def next_state" in batch.source
    # the terminal query reads no input
    source = generate_single_source(net)
    terminal_code = source.split("def terminal(x):")[1].split("def ")[0]
    assert str(1 << len(net.base)) not in terminal_code


@requires_shared
def test_misuse_raises_game_error() -> None:
    machine = PropnetStateMachine(parse_file(GAMES / "gdl" / "ticTacToe.kif"))
    other = PropnetStateMachine(parse_file(GAMES / "gdl" / "ticTacToe.kif"))
    xplayer, oplayer = machine.roles
    state = machine.initial_state()
    foreign = other.initial_state()
    assert foreign != state and foreign.key == state.key
    noop, mark = Const("noop"), parse_term("(mark 1 1)")
    with pytest.raises(GameError, match="not made by this machine"):
        machine.legal_moves(foreign, xplayer)
    with pytest.raises(GameError, match="not made by this machine"):
        machine.next_state(foreign, [mark, noop])
    with pytest.raises(GameError, match="not made by this machine"):
        machine.is_terminal(foreign)
    with pytest.raises(GameError, match="not made by this machine"):
        machine.goals(foreign)
    with pytest.raises(GameError, match="unknown role"):
        machine.legal_moves(state, Const("nobody"))
    with pytest.raises(GameError, match="unknown role"):
        machine.percepts(state, [mark, noop], Const("nobody"))
    with pytest.raises(GameError, match="2 moves"):
        machine.next_state(state, [mark])
    with pytest.raises(GameError, match=r"illegal move noop for role xplayer"):
        machine.next_state(state, [noop, noop])
    with pytest.raises(GameError, match=r"illegal move \(jump\) for role oplayer|illegal move"):
        machine.next_state(state, [mark, parse_term("(jump 1)")])
    with pytest.raises(GameError, match="illegal"):
        machine.percepts(state, [noop, mark], oplayer)
    with pytest.raises(GameError, match="illegal"):
        machine.next_states(state, [(mark, noop), (noop, noop)])
    batch = machine.batch_from_states([state])
    with pytest.raises(GameError, match="batch"):
        other.terminal_batch(batch)
    with pytest.raises(GameError, match="illegal move"):
        machine.next_batch(batch, np.array([[machine.all_moves(xplayer).index(noop), 0]]))
    with pytest.raises(GameError, match="shape"):
        machine.next_batch(batch, np.array([0, 0]))
    with pytest.raises(GameError, match="not a base proposition"):
        machine.state_from_facts(frozenset({parse_term("(cell 9 9 b)")}))


@requires_shared
def test_states_are_values() -> None:
    machine = PropnetStateMachine(parse_file(GAMES / "gdl" / "ticTacToe.kif"))
    state = machine.initial_state()
    again = machine.state_from_facts(machine.state_facts(state))
    assert again == state and hash(again) == hash(state) and again is not state
    assert isinstance(state.key, int)
    assert machine.state_facts(state) == frozenset(
        parse_term(f"(cell {x} {y} b)") for x in (1, 2, 3) for y in (1, 2, 3)
    ) | {parse_term("(control xplayer)")}
    batch = machine.batch_from_states([state, again])
    assert isinstance(batch, StateBatch) and len(batch) == 2
    assert machine.states_from_batch(batch) == [state, state]
    empty = machine.batch_from_states([])
    assert machine.states_from_batch(empty) == []
    assert machine.goals(state) == (0, 0)


def test_set_bits_finds_every_set_bit_of_short_and_long_keys() -> None:
    """A state's true propositions from its key: the word scan of long keys (large
    games) and the bit loop of short ones agree with a plain scan."""
    rng = np.random.default_rng(7)
    for n in (1, 63, 64, 65, 1000, WORD_SCAN_BITS, WORD_SCAN_BITS + 1, 13_000):
        for k in (0, 1, 3, 50):
            bits = sorted({int(b) for b in rng.integers(0, n, size=k)})
            key = sum(1 << b for b in bits)
            assert set_bits(key) == bits == [i for i in range(n) if key >> i & 1]
