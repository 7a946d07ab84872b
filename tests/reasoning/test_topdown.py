"""The top-down reasoner, cross-checked against the bottom-up reference prover.

Every game of the corpus, the scale games and our own games (Battlesnake and RTS
included) must give exactly the prover's legal moves, next states, percepts, terminal
flags and goals in seeded random playouts. Recursion gets its own checks: left, right
and mutual recursion over cyclic graphs held in the state, compared with the prover on
seeded random graphs. Chess, which no propnet can hold, is checked on known positions
(20 opening moves, fool's mate) and against the prover on its opening position.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from ggp.errors import GameError, OutOfTime
from ggp.gdl.parser import parse_file, parse_term, parse_text
from ggp.gdl.terms import Const
from ggp.reasoning import topdown
from ggp.reasoning.prover import ProverStateMachine
from ggp.reasoning.state_machine import State, StateMachine
from ggp.reasoning.topdown import TopDownStateMachine

from conftest import SHARED, corpus_files, corpus_ids, crosscheck_playouts, requires_shared

PLAYOUTS = int(os.environ.get("GGP_CROSSCHECK_PLAYOUTS", "20"))
CORPUS = [p for p in corpus_files("gdl") if "test_invalid_" not in p.name]
ROOT = Path(__file__).resolve().parents[2]
OWN_GAMES = sorted((ROOT / "games").rglob("*.gdl"))
#: Games whose playouts are long: fewer of them.
FEWER = {"breakthrough.kif": 4, "3pConnectFour.kif": 8, "rts_8x8_full.gdl": 2}
CHESS = SHARED / "scale" / "chess.kif"


def both(path: Path) -> tuple[ProverStateMachine, TopDownStateMachine]:
    description = parse_file(path)
    return ProverStateMachine(description), TopDownStateMachine(description)


def test_is_a_state_machine() -> None:
    machine = TopDownStateMachine.from_file(ROOT / "games" / "tictactoe.gdl")
    assert isinstance(machine, StateMachine)
    assert "TopDownStateMachine" in repr(machine)
    assert "def q" in machine.source


@requires_shared
@pytest.mark.parametrize("path", CORPUS, ids=corpus_ids(CORPUS))
def test_crosscheck_corpus(path: Path) -> None:
    prover, topdown_machine = both(path)
    playouts = min(PLAYOUTS, FEWER.get(path.name, PLAYOUTS))
    crosscheck_playouts(prover, topdown_machine, playouts, np.random.default_rng(2024))


@pytest.mark.parametrize("path", OWN_GAMES, ids=lambda p: str(p.relative_to(ROOT / "games")))
def test_crosscheck_own_games(path: Path) -> None:
    prover, topdown_machine = both(path)
    playouts = min(PLAYOUTS, FEWER.get(path.name, 5 if path.parent.name != "games" else PLAYOUTS))
    crosscheck_playouts(prover, topdown_machine, playouts, np.random.default_rng(11), cap=150)


@requires_shared
@pytest.mark.slow
@pytest.mark.parametrize(
    "path", sorted((SHARED / "scale").glob("bsnake*.kif")), ids=lambda p: p.name
)
def test_crosscheck_scale_games(path: Path) -> None:
    prover, topdown_machine = both(path)
    crosscheck_playouts(prover, topdown_machine, 2, np.random.default_rng(7), cap=60)


# ---- recursion --------------------------------------------------------------------------

#: A one-player game on a directed graph held in the state: the legal moves are the
#: nodes reachable from the current one, by three definitions of reachability (left,
#: right and doubly recursive), and ``even`` / ``odd`` path lengths by mutual recursion.
GRAPH_RULES = """
(role walker)
(<= (left ?x ?y) (true (edge ?x ?y)))
(<= (left ?x ?z) (left ?x ?y) (true (edge ?y ?z)))
(<= (right ?x ?y) (true (edge ?x ?y)))
(<= (right ?x ?z) (true (edge ?x ?y)) (right ?y ?z))
(<= (double ?x ?y) (true (edge ?x ?y)))
(<= (double ?x ?z) (double ?x ?y) (double ?y ?z))
(<= (even ?x ?x) (node ?x))
(<= (even ?x ?z) (odd ?x ?y) (true (edge ?y ?z)))
(<= (odd ?x ?z) (even ?x ?y) (true (edge ?y ?z)))
(<= (legal walker (left ?y)) (true (at ?x)) (left ?x ?y))
(<= (legal walker (right ?y)) (true (at ?x)) (right ?x ?y))
(<= (legal walker (double ?y)) (true (at ?x)) (double ?x ?y))
(<= (legal walker (even ?y)) (true (at ?x)) (even ?x ?y))
(<= (legal walker (odd ?y)) (true (at ?x)) (odd ?x ?y))
(legal walker stay)
(<= (next (at ?y)) (does walker (left ?y)))
(<= (next (at ?y)) (does walker (right ?y)))
(<= (next (at ?y)) (does walker (double ?y)))
(<= (next (at ?y)) (does walker (even ?y)))
(<= (next (at ?y)) (does walker (odd ?y)))
(<= (next (at ?x)) (does walker stay) (true (at ?x)))
(<= (next (edge ?x ?y)) (true (edge ?x ?y)))
(<= terminal (true (at n0)) (not (left n0 n0)))
(<= (goal walker 100) (true (at n0)))
(<= (goal walker 0) (not (true (at n0))))
"""


def graph_game(rng: np.random.Generator, nodes: int, edges: int) -> str:
    names = [f"n{i}" for i in range(nodes)]
    facts = [f"(node {n})" for n in names]
    pairs = {(int(rng.integers(nodes)), int(rng.integers(nodes))) for _ in range(edges)}
    facts += [f"(init (edge n{a} n{b}))" for a, b in sorted(pairs)]
    facts.append(f"(init (at n{int(rng.integers(nodes))}))")
    return GRAPH_RULES + "\n".join(facts)


def test_left_recursion_reaches_around_a_cycle() -> None:
    text = (
        GRAPH_RULES
        + """
        (node n0) (node n1) (node n2) (node n3)
        (init (edge n0 n1)) (init (edge n1 n2)) (init (edge n2 n0)) (init (edge n2 n3))
        (init (at n1))
    """
    )
    machine = TopDownStateMachine(parse_text(text))
    moves = {str(m) for m in machine.legal_moves(machine.initial_state(), Const("walker"))}
    for kind in ("left", "right", "double"):
        assert {f"({kind} n{i})" for i in range(4)} <= moves
    # Path lengths from n1: 1 n2, 2 n0 n3, 3 n1, 4 n2, 5 n0 n3, ...: every node both ways.
    assert {f"(even n{i})" for i in range(4)} | {f"(odd n{i})" for i in range(4)} <= moves


@pytest.mark.parametrize("seed", range(30))
def test_recursion_over_random_graphs_matches_the_prover(seed: int) -> None:
    rng = np.random.default_rng(seed)
    description = parse_text(graph_game(rng, nodes=int(rng.integers(2, 8)), edges=10))
    crosscheck_playouts(
        ProverStateMachine(description),
        TopDownStateMachine(description),
        playouts=3,
        rng=np.random.default_rng(seed),
        cap=8,
    )


def chain_game(links: int) -> str:
    """A state holding a chain of ``links`` links; the legal moves are every node
    reachable from the start, by right recursion along the chain."""
    facts = "\n".join(f"(init (link n{i} n{i + 1}))" for i in range(links))
    return f"""
        (role r) {facts} (init (at n0))
        (<= (reach ?x ?y) (true (link ?x ?y)))
        (<= (reach ?x ?z) (true (link ?x ?y)) (reach ?y ?z))
        (<= (legal r (go ?y)) (true (at ?x)) (reach ?x ?y))
        (<= (next (at ?y)) (does r (go ?y)))
        (<= terminal (true (at n{links})))
        (<= (goal r 100) (true (at n{links})))
    """


def test_recursion_deeper_than_pythons_default_limit() -> None:
    machine = TopDownStateMachine(parse_text(chain_game(1500)))  # about 3,000 frames deep
    assert len(machine.legal_moves(machine.initial_state(), Const("r"))) == 1500
    assert sys.getrecursionlimit() < topdown._RECURSION_LIMIT  # restored after the query


def test_recursion_too_deep_is_a_game_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(topdown, "_RECURSION_LIMIT", 1200)
    machine = TopDownStateMachine(parse_text(chain_game(1000), "chain.kif"))
    with pytest.raises(
        GameError, match=r"chain.kif: the rules recurse deeper .*\(1,200 nested calls\)"
    ):
        machine.legal_moves(machine.initial_state(), Const("r"))
    machine = TopDownStateMachine(parse_text(chain_game(100)))  # and nothing is left behind
    assert len(machine.legal_moves(machine.initial_state(), Const("r"))) == 100


# ---- deadlines ------------------------------------------------------------------------------


def test_a_query_after_the_deadline_stops() -> None:
    machine = TopDownStateMachine.from_file(ROOT / "games" / "tictactoe.gdl")
    state = machine.initial_state()
    with machine.until(time.monotonic() - 1), pytest.raises(OutOfTime):
        machine.legal_moves(state, Const("xplayer"))
    assert len(machine.legal_moves(state, Const("xplayer"))) == 9


def stopping_after(looks: int) -> Callable[[], None]:
    """A deadline check that passes ``looks`` times, then raises OutOfTime."""
    left = iter(range(looks))

    def check() -> None:
        if next(left, None) is None:
            raise OutOfTime("stopped")

    return check


def test_a_query_stopped_midway_leaves_the_tables_sound(monkeypatch: pytest.MonkeyPatch) -> None:
    # Recursion caught midway (the deadline looked at on every call that misses the
    # tables, and passing at the 5th look) must leave no half-done answers behind.
    monkeypatch.setattr(topdown, "_TICKS", 0)
    text = (
        GRAPH_RULES
        + """
        (node n0) (node n1) (node n2) (node n3) (node n4)
        (init (edge n0 n1)) (init (edge n1 n2)) (init (edge n2 n0)) (init (edge n2 n3))
        (init (edge n3 n4)) (init (edge n4 n2)) (init (at n0))
    """
    )
    description = parse_text(text)
    expected = ProverStateMachine(description)
    for stop_at in range(1, 40, 3):
        machine = TopDownStateMachine(description)
        monkeypatch.setattr(machine, "_check_deadline", stopping_after(stop_at))
        state = machine.initial_state()
        with contextlib.suppress(OutOfTime):
            machine.legal_moves(state, Const("walker"))
        monkeypatch.setattr(machine, "_check_deadline", lambda: None)
        assert machine.legal_moves(state, Const("walker")) == expected.legal_moves(
            expected.initial_state(), Const("walker")
        )


# ---- chess ---------------------------------------------------------------------------------


def play(machine: TopDownStateMachine, moves: list[str]) -> State:
    """The state after the white / black moves ``moves`` (the other side plays noop)."""
    state = machine.initial_state()
    noop = Const("noop")
    for i, text in enumerate(moves):
        move = parse_term(text)
        joint = (move, noop) if i % 2 == 0 else (noop, move)
        state = machine.next_state(state, joint)
    return state


@requires_shared
def test_chess_opening_moves_and_fools_mate() -> None:
    machine = TopDownStateMachine.from_file(CHESS)
    white, black = machine.roles
    state = machine.initial_state()
    opening = machine.legal_moves(state, white)
    assert len(opening) == 20  # 16 pawn moves, 4 knight moves
    assert [str(m) for m in machine.legal_moves(state, black)] == ["noop"]
    assert not machine.is_terminal(state)
    after_e4 = play(machine, ["(move wp e 2 e 4)"])
    assert len(machine.legal_moves(after_e4, black)) == 20
    mate = play(
        machine,
        ["(move wp f 2 f 3)", "(move bp e 7 e 5)", "(move wp g 2 g 4)", "(move bq d 8 h 4)"],
    )
    assert machine.is_terminal(mate)
    assert machine.goals(mate) == (0, 100)


@requires_shared
@pytest.mark.slow
def test_chess_opening_position_matches_the_prover() -> None:
    # The bottom-up prover takes 10-20 s for a chess state: one state is checked here.
    prover, topdown_machine = both(CHESS)
    a, b = prover.initial_state(), topdown_machine.initial_state()
    for role in prover.roles:
        assert topdown_machine.legal_moves(b, role) == prover.legal_moves(a, role)
    assert topdown_machine.is_terminal(b) == prover.is_terminal(a)
    assert topdown_machine.goals(b) == prover.goals(a)
