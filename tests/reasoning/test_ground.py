"""Grounding: relevance, static folding, unsafe rules, recursion, limits, the corpus."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from ggp.errors import GDLSemanticError, GroundingError
from ggp.gdl.parser import parse_file, parse_term, parse_text
from ggp.gdl.terms import Const, Term
from ggp.reasoning.ground import GroundingLimits, GroundProgram, game_constants, ground

from conftest import SHARED, corpus_files, corpus_ids, requires_shared

CORPUS = corpus_files("gdl")
SCALE = SHARED / "scale"


def ground_text(text: str, limits: GroundingLimits | None = None) -> GroundProgram:
    return ground(parse_text(text), limits)


def texts(items: tuple[Term, ...] | frozenset[Term]) -> list[str]:
    return sorted(str(item) for item in items)


def rules_of(program: GroundProgram, relation: str) -> list[str]:
    return sorted(str(rule) for rule in program.rules if rule.head.name == relation)


COUNTER = """
    (role robot)
    (init (count 0))
    (succ 0 1) (succ 1 2) (succ 2 3)
    (<= (legal robot inc) (true (count ?n)) (succ ?n ?m))
    (legal robot stay)
    (<= (next (count ?m)) (does robot inc) (true (count ?n)) (succ ?n ?m))
    (<= (next (count ?n)) (does robot stay) (true (count ?n)))
    (<= terminal (true (count 3)))
    (<= (goal robot 100) (true (count 3)))
    (<= (base (count ?n)) (succ ?n ?m))
    (<= (unused ?x) (succ ?x ?y) (not (succ ?y ?x)))
"""


def test_static_relations_are_folded_away() -> None:
    program = ground_text(COUNTER)
    assert texts(program.base) == ["(count 0)", "(count 1)", "(count 2)", "(count 3)"]
    # succ is static: it is gone from every instance, which exists only where it held.
    # (legal robot stay) is a fact of a dynamic relation: an instance with no body.
    assert rules_of(program, "legal") == [
        "(<= (legal robot inc) (true (count 0)))",
        "(<= (legal robot inc) (true (count 1)))",
        "(<= (legal robot inc) (true (count 2)))",
        "(legal robot stay)",
    ]
    assert ("succ", 2) in program.static_relations
    assert parse_term("(succ 0 1)") in program.static_atoms


def test_irrelevant_relations_are_not_evaluated() -> None:
    program = ground_text(COUNTER)
    relations = {atom.name for atom in program.static_atoms | program.possible}
    assert "base" not in relations
    assert "unused" not in relations


def test_domain_is_reachable_over_approximation() -> None:
    program = ground_text(COUNTER)
    assert texts(program.moves[0]) == ["inc", "stay"]
    possible_next = {str(a) for a in program.possible if a.name == "next"}
    assert possible_next == {
        "(next (count 0))",
        "(next (count 1))",
        "(next (count 2))",
        "(next (count 3))",
    }


def test_or_and_negation_forms() -> None:
    program = ground_text(
        """
        (role r) (init a) (cell 1) (cell 2)
        (legal r go)
        (<= (next b) (or (true a) (true c)))
        (<= (next c) (not (or (true a) (true b))))
        (<= (next d) (cell ?x) (not (distinct ?x 2)) (true a))
        (<= (next e) (not (not (true a))))
        (<= terminal (true b))
        """
    )
    assert rules_of(program, "next") == [
        "(<= (next b) (true a))",
        "(<= (next b) (true c))",
        "(<= (next c) (not (true a)) (not (true b)))",
        "(<= (next d) (true a))",
        "(<= (next e) (true a))",
    ]


def test_unsafe_head_variable_ranges_over_constants() -> None:
    # ggp-base test_case_3e: (<= (legal ?p ?p) (cell 1 1)) gives xplayer the move xplayer.
    program = ground_text("(role xplayer) (cell 1 1) (<= (legal ?p ?p) (cell 1 1))")
    assert texts(program.moves[0]) == ["xplayer"]
    description = parse_text("(role xplayer) (cell 1 1) (<= (legal ?p ?p) (cell 1 1))")
    assert texts(game_constants(description)) == ["1", "xplayer"]


def test_variable_only_in_not_is_existential() -> None:
    program = ground_text(
        """
        (role r) (init (cell 1 b)) (init (cell 2 x))
        (legal r go)
        (<= (next full) (not (true (cell ?n b))))
        (<= (next (cell ?n x)) (true (cell ?n ?m)))
        """
    )
    (rule,) = [r for r in program.rules if str(r.head) == "(next full)"]
    # one negated auxiliary atom: "some cell is blank"
    assert len(rule.negative) == 1 and not rule.positive
    (aux,) = rule.negative
    assert texts(tuple(a for r in program.rules if r.head is aux for a in r.positive)) == [
        "(true (cell 1 b))"
    ]


def test_static_recursion() -> None:
    # ggp-base test_case_5e: the robot has seven legal moves, through recursive smaller.
    program = ground_text(
        """
        (role robot)
        (<= (legal robot (reduce ?x ?n)) (heap ?x ?m) (smaller ?n ?m))
        (heap a 2) (heap b 0) (heap c 5)
        (<= (smaller ?x ?y) (succ ?x ?y))
        (<= (smaller ?x ?y) (smaller ?z ?y) (succ ?x ?z))
        (succ 0 1) (succ 1 2) (succ 2 3) (succ 3 4) (succ 4 5)
        (next done) (<= terminal (true done)) (goal robot 100)
        """
    )
    assert len(program.moves[0]) == 7


PATHS = """
    (role r) (init (edge 1 2)) (init (edge 2 3)) (init (edge 3 1))
    (legal r go)
    (<= (path ?x ?y) (true (edge ?x ?y)))
    (<= (path ?x ?z) (path ?x ?y) (true (edge ?y ?z)))
    (<= (next (edge ?x ?y)) (true (edge ?x ?y)))
    (<= terminal (path 1 1))
"""


def test_dynamic_recursion_is_kept_as_rules() -> None:
    program = ground(parse_text(PATHS), GroundingLimits(demand=False))
    paths = {str(rule.head) for rule in program.rules if rule.head.name == "path"}
    assert len(paths) == 9  # every pair of the three nodes


def test_demand_grounds_only_what_the_outputs_ask_for() -> None:
    program = ground(parse_text(PATHS), GroundingLimits(demand=True))
    paths = {str(rule.head) for rule in program.rules if rule.head.name == "path"}
    # terminal asks for (path 1 1), which asks for the paths from 1 only
    assert paths == {"(path 1 1)", "(path 1 2)", "(path 1 3)"}
    assert all(" " not in rule.head.name for rule in program.rules)  # no adorned names
    assert all(" " not in atom.name for atom in program.possible)


def test_unstratified_static_negation_is_refused() -> None:
    with pytest.raises(GDLSemanticError, match="unstratified"):
        ground_text("(role r) (<= p (not q)) (<= q (not p)) (<= (legal r go) p)")


def test_growing_game_stops_with_grounding_error() -> None:
    text = """
        (role r) (init (count 0)) (legal r go)
        (<= (next (count (s ?n))) (true (count ?n)))
        (<= terminal (true (count 9)))
    """
    with pytest.raises(GroundingError, match=r"max_atoms.*count/1"):
        ground_text(text, GroundingLimits(max_atoms=2_000, max_term_depth=10_000))
    # with the default limits the depth limit stops it at once
    with pytest.raises(GroundingError, match=r"deeper than 100 levels.*\(count \(s \(s"):
        ground_text(text)


def test_rule_instance_limit() -> None:
    facts = " ".join(f"(n {i})" for i in range(30))
    text = f"""
        (role r) {facts} (init (cell 0 0)) (legal r go)
        (<= (next (cell ?x ?y)) (n ?x) (n ?y))
        (<= (pair ?x ?y) (true (cell ?x ?y)))
        (<= terminal (pair 1 1))
    """
    everything = GroundingLimits(demand=False)  # terminal asks for one pair only
    assert len(ground_text(text, everything).rules) > 900
    with pytest.raises(GroundingError, match=r"rule instances.*(pair/2|next/1)"):
        ground_text(text, GroundingLimits(max_rule_instances=500, demand=False))


def test_roles_in_file_order() -> None:
    program = ground_text("(role b) (role a) (role random) (legal a x)")
    assert program.roles == (Const("b"), Const("a"), Const("random"))


@requires_shared
@pytest.mark.parametrize("path", CORPUS, ids=corpus_ids(CORPUS))
def test_corpus_grounds(path: Path) -> None:
    program = ground(parse_file(path))
    assert program.roles
    assert all(isinstance(role, Const) for role in program.roles)
    assert program.stats.rule_instances == len(program.rules)


@requires_shared
def test_tictactoe_ground_sizes() -> None:
    program = ground(parse_file(SHARED / "gdl" / "gdl" / "ticTacToe.kif"))
    assert len(program.base) == 29  # 9 cells x {x, o, b} + 2 control
    assert [len(moves) for moves in program.moves] == [10, 10]  # 9 marks + noop


@requires_shared
@pytest.mark.parametrize(
    ("name", "base"),
    [
        ("bsnake_n7_k2_H100_L20_T100.kif", 1_082),
        pytest.param("bsnake_n11_k4_H100_L20_T100.kif", 4_102, marks=pytest.mark.slow),
        pytest.param("bsnake_n11_k4_H100_L121_T300.kif", 4_706, marks=pytest.mark.slow),
    ],
)
def test_scale_games_ground(name: str, base: int) -> None:
    start = time.perf_counter()
    program = ground(parse_file(SCALE / name))
    assert len(program.base) == base
    assert time.perf_counter() - start < 60  # a generous bound, not a speed test
