"""Unit tests of ggp.gdl.validate: one small KIF snippet per check, positions included."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from ggp.errors import GDLSemanticError
from ggp.game import Game
from ggp.gdl import keywords
from ggp.gdl.parser import parse_text
from ggp.gdl.terms import Const, Description, Func, Rule, Span
from ggp.gdl.validate import (
    KEYWORD_ARITIES,
    DescriptionSummary,
    check,
    summarize,
    validate,
)
from ggp.match import run_match
from ggp.players.random_player import RandomPlayer

#: One line that declares what every game needs, so snippets below start on line 2.
BASE = "(role a) (legal a x) (goal a 100) terminal\n"


def problems(snippet: str, *, strict: bool = False) -> list[tuple[int, int, str, bool]]:
    """``(line, column, message, warning)`` of each problem of ``BASE + snippet``."""
    description = parse_text(BASE + snippet, "snippet.kif")
    return [(e.line, e.column, e.message, e.warning) for e in validate(description, strict=strict)]


TIC_TAC_TOE = """
; tic-tac-toe, as in the GDL specification
(role xplayer)
(role oplayer)
(index 1) (index 2) (index 3)
(<= (base (cell ?x ?y b)) (index ?x) (index ?y))
(<= (base (cell ?x ?y x)) (index ?x) (index ?y))
(<= (base (cell ?x ?y o)) (index ?x) (index ?y))
(<= (base (control ?p)) (role ?p))
(<= (input ?p (mark ?x ?y)) (index ?x) (index ?y) (role ?p))
(<= (input ?p noop) (role ?p))
(init (cell 1 1 b)) (init (cell 1 2 b)) (init (cell 1 3 b))
(init (cell 2 1 b)) (init (cell 2 2 b)) (init (cell 2 3 b))
(init (cell 3 1 b)) (init (cell 3 2 b)) (init (cell 3 3 b))
(init (control xplayer))
(<= (next (cell ?m ?n x)) (does xplayer (mark ?m ?n)) (true (cell ?m ?n b)))
(<= (next (cell ?m ?n o)) (does oplayer (mark ?m ?n)) (true (cell ?m ?n b)))
(<= (next (cell ?m ?n ?w)) (true (cell ?m ?n ?w)) (distinct ?w b))
(<= (next (cell ?m ?n b)) (does ?w (mark ?j ?k)) (true (cell ?m ?n b))
    (or (distinct ?m ?j) (distinct ?n ?k)))
(<= (next (control xplayer)) (true (control oplayer)))
(<= (next (control oplayer)) (true (control xplayer)))
(<= (row ?m ?x) (true (cell ?m 1 ?x)) (true (cell ?m 2 ?x)) (true (cell ?m 3 ?x)))
(<= (column ?n ?x) (true (cell 1 ?n ?x)) (true (cell 2 ?n ?x)) (true (cell 3 ?n ?x)))
(<= (diagonal ?x) (true (cell 1 1 ?x)) (true (cell 2 2 ?x)) (true (cell 3 3 ?x)))
(<= (diagonal ?x) (true (cell 1 3 ?x)) (true (cell 2 2 ?x)) (true (cell 3 1 ?x)))
(<= (line ?x) (row ?m ?x))
(<= (line ?x) (column ?m ?x))
(<= (line ?x) (diagonal ?x))
(<= open (true (cell ?m ?n b)))
(<= (legal ?w (mark ?x ?y)) (true (cell ?x ?y b)) (true (control ?w)))
(<= (legal xplayer noop) (true (control oplayer)))
(<= (legal oplayer noop) (true (control xplayer)))
(<= (goal xplayer 100) (line x))
(<= (goal xplayer 50) (not (line x)) (not (line o)) (not open))
(<= (goal xplayer 0) (line o))
(<= (goal oplayer 100) (line o))
(<= (goal oplayer 50) (not (line x)) (not (line o)) (not open))
(<= (goal oplayer 0) (line x))
(<= terminal (line x))
(<= terminal (line o))
(<= terminal (not open))
"""

MONTY_HALL = """
(role candidate)
(role random)
(door 1) (door 2) (door 3)
(init (closed 1)) (init (closed 2)) (init (closed 3)) (init (step 1))
(<= (legal random (hide_car ?d)) (true (step 1)) (door ?d))
(<= (legal random (open_door ?d)) (true (step 2)) (door ?d) (not (true (car ?d)))
    (not (true (chosen ?d))))
(<= (legal random noop) (true (step 3)))
(<= (legal candidate (choose ?d)) (true (step 1)) (door ?d))
(<= (legal candidate noop) (true (step 2)))
(<= (legal candidate noop) (true (step 3)))
(<= (legal candidate switch) (true (step 3)))
(<= (sees candidate (open_door ?d)) (does random (open_door ?d)))
(<= (next (car ?d)) (does random (hide_car ?d)))
(<= (next (car ?d)) (true (car ?d)))
(<= (next (closed ?d)) (true (closed ?d)) (not (does random (open_door ?d))))
(<= (next (chosen ?d)) (does candidate (choose ?d)))
(<= (next (chosen ?d)) (true (chosen ?d)) (not (does candidate switch)))
(<= (next (chosen ?d)) (does candidate switch) (true (closed ?d)) (not (true (chosen ?d))))
(<= (next (step 2)) (true (step 1)))
(<= (next (step 3)) (true (step 2)))
(<= (next (step 4)) (true (step 3)))
(<= terminal (true (step 4)))
(<= (goal candidate 100) (true (chosen ?d)) (true (car ?d)))
(<= (goal candidate 0) (true (chosen ?d)) (not (true (car ?d))))
(goal random 100)
"""


# -- valid games ---------------------------------------------------------------------


def test_tic_tac_toe_is_valid() -> None:
    assert validate(parse_text(TIC_TAC_TOE)) == []
    assert validate(parse_text(TIC_TAC_TOE), strict=True) == []


def test_gdl2_game_with_chance_and_percepts_is_valid() -> None:
    assert validate(parse_text(MONTY_HALL)) == []


def test_check_returns_no_warnings_for_a_valid_game() -> None:
    assert check(parse_text(TIC_TAC_TOE)) == []


def test_recursion_within_the_restriction_is_valid() -> None:
    # ggp-base test_case_5e: ?z is bound by succ, outside the recursion through smaller.
    snippet = (
        "(succ 0 1) (succ 1 2)\n"
        "(<= (smaller ?x ?y) (succ ?x ?y))\n"
        "(<= (smaller ?x ?y) (smaller ?z ?y) (succ ?x ?z))\n"
        "(<= (reach ?x) (edge start ?x))\n"
        "(<= (reach (f ?y)) (reach ?x) (edge ?x ?y))\n"
        "(edge start 1)\n"
    )
    assert problems(snippet) == []


def test_negation_outside_a_cycle_is_stratified() -> None:
    assert problems("(<= p (not q)) (<= q r) r\n") == []


# -- 1. arities ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("snippet", "message"),
    [
        (
            "(cell 1 2)\n(<= (p ?x) (cell ?x 1 2))\n",
            (3, 12, "relation cell used with arity 3 here and arity 2 at line 2, column 1"),
        ),
        (
            "open\n(open 1)\n",
            (3, 1, "relation open used with arity 1 here and arity 0 at line 2, column 1"),
        ),
        (
            "(init (cell 1 1))\n(<= (next (cell ?x)) (true (cell ?x 1)))\n",
            (3, 1, "function cell used with arity 1 here and arity 2 at line 2, column 1"),
        ),
        (  # inside distinct too
            "(p (f 1))\n(<= (q ?x) (p ?x) (distinct ?x (f 1 2)))\n",
            (3, 19, "function f used with arity 2 here and arity 1 at line 2, column 1"),
        ),
    ],
    ids=["relation", "proposition and relation", "function", "function in distinct"],
)
def test_a_symbol_with_two_arities_is_a_warning_naming_both_positions(
    snippet: str, message: tuple[int, int, str]
) -> None:
    assert problems(snippet) == [(*message, True)]
    assert problems(snippet, strict=True) == [(*message, False)]


#: A GDL-II game in the style of a public Mastermind: the function set with two arities,
#: (set 1 ?c) for one peg and (set ?a ?b ?c ?d) for the secret.
MASTERMIND = """(role random) (role guesser)
(color red) (color blue)
(init (phase hide))
(<= (legal random (set ?a ?b ?c ?d))
    (true (phase hide)) (color ?a) (color ?b) (color ?c) (color ?d))
(<= (legal random noop) (not (true (phase hide))))
(<= (legal guesser noop) (true (phase hide)))
(<= (legal guesser (set 1 ?c)) (true (phase guess)) (color ?c))
(<= (next (secret ?a ?b ?c ?d)) (does random (set ?a ?b ?c ?d)))
(<= (next (secret ?a ?b ?c ?d)) (true (secret ?a ?b ?c ?d)))
(<= (next (phase guess)) (true (phase hide)))
(<= (next (phase over)) (true (phase guess)))
(<= (next (guessed ?c)) (does guesser (set 1 ?c)))
(<= (sees guesser (peg 1 ?c)) (true (secret ?c ?b ?x ?d)) (does guesser (set 1 ?c)))
(<= terminal (true (phase over)))
(<= (first ?c) (true (secret ?c ?b ?x ?d)))
(<= (goal guesser 100) (true (guessed ?c)) (first ?c))
(<= (goal guesser 0) (true (guessed ?c)) (not (first ?c)))
(goal random 0)
"""


def test_a_game_with_a_function_of_two_arities_plays() -> None:
    description = parse_text(MASTERMIND, "mastermind.kif")
    found = validate(description)
    assert [(e.line, e.column, e.message, e.warning) for e in found] == [
        (8, 1, "function set used with arity 2 here and arity 4 at line 4, column 1", True)
    ]
    assert str(found[0]).startswith("mastermind.kif:8:1: warning: function set used")
    with pytest.raises(GDLSemanticError, match="function set used with arity 2"):
        check(description, strict=True)
    for reasoner in ("propnet", "prover"):
        game = Game.from_text(MASTERMIND, "mastermind.kif", reasoner=reasoner)  # type: ignore[arg-type]
        assert [str(w) for w in game.warnings] == [str(found[0])]
        record = run_match(
            game,
            {game.role("guesser"): RandomPlayer(np.random.default_rng(0))},
            np.random.default_rng(0),
        )
        assert record.replacements == () and len(record.joint_moves) == 2


def test_relation_and_function_names_are_separate_namespaces() -> None:
    # (cell ...) is a relation of arity 1 and a function of arity 3: common in real games.
    assert problems("(init (cell 1 1 b))\n(<= (cell ?x) (true (cell ?x ?y b)))\n") == []


def test_a_constant_is_not_compared_with_a_function() -> None:
    assert problems("(init (step 1))\n(<= (next step) (true (step 1)))\n") == []


@pytest.mark.parametrize(
    ("snippet", "message"),
    [
        ("(legal a x y)\n", "relation legal used with arity 3 here, but legal always has arity 2"),
        (
            "(<= (terminal 1) (p 1))\n",
            "relation terminal used with arity 1 here, but terminal always has arity 0",
        ),
        (
            "(<= (sees a) (p 1))\n",
            "relation sees used with arity 1 here, but sees always has arity 2",
        ),
        (
            "(<= (p 1) (true 1 2))\n",
            "relation true used with arity 2 here, but true always has arity 1",
        ),
    ],
)
def test_keyword_with_the_wrong_arity(snippet: str, message: str) -> None:
    found = problems(snippet)
    assert [m for _, _, m, _ in found] == [message]
    assert found[0][0] == 2


def test_keyword_arities_table() -> None:
    assert dict(KEYWORD_ARITIES) == {
        "role": 1, "init": 1, "true": 1, "next": 1, "legal": 2, "does": 2,
        "goal": 2, "sees": 2, "terminal": 0, "base": 1, "input": 2,
    }  # fmt: skip
    # One table: the validator checks against ggp.gdl.keywords, and no module of ggp.gdl
    # spells out a keyword's arity of its own.
    assert KEYWORD_ARITIES is keywords.KEYWORD_ARITIES
    gdl = Path(keywords.__file__).parent
    for module in gdl.glob("*.py"):
        if module.name != "keywords.py":
            assert '"legal": 2' not in module.read_text(), module


@pytest.mark.parametrize(
    ("literal", "message"),
    [
        ("(not (p 1) (p 2))", "not takes exactly 1 argument, got 2 in (not (p 1) (p 2))"),
        ("(distinct 1)", "distinct takes exactly 2 arguments, got 1 in (distinct 1)"),
        ("(distinct 1 2 3)", "distinct takes exactly 2 arguments, got 3 in (distinct 1 2 3)"),
        ("(or)", "or takes at least 1 argument, got 0 in or"),
    ],
)
def test_builtin_with_the_wrong_arity(literal: str, message: str) -> None:
    assert problems(f"(p 1) (p 2)\n(<= (q 1) (p 1) {literal})\n") == [(3, 17, message, False)]


def test_builtin_cannot_be_a_rule_head() -> None:
    assert problems("(<= (not (p 1)) (q 1))\n") == [
        (2, 1, "not is a built-in and cannot be the head of a rule", False)
    ]


# -- 2. safety -------------------------------------------------------------------------


def test_unsafe_head_variable_is_a_warning() -> None:
    assert problems("(p 1)\n(<= (q ?x ?y) (p ?x))\n") == [
        (
            3,
            1,
            "unsafe rule: variable ?y in the head does not occur in a positive literal of the body",
            True,
        )
    ]


def test_unsafe_fact_with_a_variable() -> None:
    assert problems("(q ?x)\n") == [
        (
            2,
            1,
            "unsafe rule: variable ?x in the head does not occur in a positive literal of the body",
            True,
        )
    ]


def test_unsafe_variable_in_negation_is_positioned_at_the_literal() -> None:
    assert problems("(p 1)\n(<= (q ?x) (p ?x)\n    (not (r ?y)))\n") == [
        (
            4,
            5,
            "unsafe rule: variable ?y in (not (r ?y)) does not occur in a positive literal "
            "of the body",
            True,
        )
    ]


def test_unsafe_variable_in_distinct() -> None:
    assert problems("(p 1)\n(<= (q ?x) (p ?x) (distinct ?x ?z))\n") == [
        (
            3,
            19,
            "unsafe rule: variable ?z in (distinct ?x ?z) does not occur in a positive "
            "literal of the body",
            True,
        )
    ]


def test_each_unsafe_variable_is_reported_once_per_rule() -> None:
    found = problems("(<= (q ?x) (not (r ?x)) (distinct ?x 1))\n")
    assert [(line, column, message[:30]) for line, column, message, _ in found] == [
        (2, 1, "unsafe rule: variable ?x in th")
    ]


def test_variables_bound_in_every_disjunct_are_safe() -> None:
    assert problems("(p 1) (r 1)\n(<= (q ?x) (or (p ?x) (r ?x)))\n") == []


def test_variables_bound_in_one_disjunct_only_are_unsafe() -> None:
    assert problems("(p 1) (r 1)\n(<= (q ?x) (or (p ?x) (r 1)))\n") == [
        (
            3,
            1,
            "unsafe rule: variable ?x in the head does not occur in a positive literal of the body",
            True,
        )
    ]


def test_negation_inside_or_needs_a_binding_outside_the_disjunct() -> None:
    assert problems("(p 1) (r 1)\n(<= q (or (p ?x) (not (r ?x))))\n") == [
        (
            3,
            7,
            "unsafe rule: variable ?x in (not (r ?x)) does not occur in a positive literal "
            "of the body",
            True,
        )
    ]
    assert problems("(p 1) (r 1)\n(<= q (p ?x) (or (r 1) (not (r ?x))))\n") == []


def test_strict_makes_unsafe_rules_errors() -> None:
    assert problems("(<= (q ?x) (p 1))\n(p 1)\n", strict=True) == [
        (
            2,
            1,
            "unsafe rule: variable ?x in the head does not occur in a positive literal of the body",
            False,
        )
    ]


def test_check_returns_warnings_and_raises_errors() -> None:
    description = parse_text(BASE + "(<= (q ?x) (p 1))\n(p 1)\n", "game.kif")
    warnings = check(description)
    assert [(w.line, w.warning) for w in warnings] == [(2, True)]
    assert str(warnings[0]).startswith("game.kif:2:1: warning: unsafe rule: variable ?x")
    with pytest.raises(GDLSemanticError) as raised:
        check(description, strict=True)
    assert (raised.value.line, raised.value.column) == (2, 1)
    assert "?x" in raised.value.message


def test_check_raises_the_first_error_in_file_order() -> None:
    description = parse_text(BASE + "(<= (q ?x) (p 1))\n(p 1)\n(p 1 2)\n(does a x)\n")
    with pytest.raises(GDLSemanticError) as raised:
        check(description)
    # (p 1 2) on line 4 is only a warning; the first error is the head (does a x).
    assert raised.value.message == "does may appear only in rule bodies, not as the head (does a x)"
    assert (raised.value.line, raised.value.column) == (5, 1)


# -- 3. stratification -----------------------------------------------------------------


def test_negation_of_itself_is_not_stratified() -> None:
    assert problems("(<= p (q 1) (not p))\n(q 1)\n") == [
        (2, 13, "negation is not stratified: p depends on (not p), itself", False)
    ]


def test_negation_through_a_cycle_names_the_cycle() -> None:
    snippet = "(s 1)\n(<= (p ?x) (s ?x) (not (q ?x)))\n(<= (q ?x) (r ?x))\n(<= (r ?x) (p ?x))\n"
    assert problems(snippet) == [
        (
            3,
            19,
            "negation is not stratified: p depends on (not q) and q depends on p "
            "(cycle p -> q -> r -> p)",
            False,
        )
    ]


def test_negation_inside_or_counts() -> None:
    found = problems("(s 1)\n(<= (p ?x) (s ?x) (or (s 2) (not (p ?x))))\n")
    assert found == [(3, 19, "negation is not stratified: p depends on (not p), itself", False)]


# -- 4. the recursion restriction ------------------------------------------------------


def test_recursion_that_grows_a_term_breaks_the_restriction() -> None:
    snippet = "(num 0)\n(<= (num (s ?x)) (num ?x))\n"
    assert problems(snippet) == [
        (
            3,
            18,
            "recursion restriction violated: in a rule for num, argument ?x of (num ?x) "
            "(num is recursive with num) is neither ground, nor an argument of the head, "
            "nor bound by a positive literal outside the recursion",
            False,
        )
    ]


def test_mutual_recursion_breaking_the_restriction() -> None:
    snippet = (
        "(e 1 2)\n(<= (p ?x) (e ?x ?y))\n(<= (p ?x) (q ?x ?y))\n(<= (q ?x ?y) (p ?y) (e ?x ?z))\n"
    )
    found = problems(snippet)
    assert [(line, column) for line, column, _, _ in found] == [(4, 12)]
    assert "argument ?y of (q ?x ?y) (q is recursive with p)" in found[0][2]


def test_variable_bound_only_inside_a_recursive_literal_is_not_enough() -> None:
    # ?y occurs in the non-recursive literal, but only in a disjunct: ggp-base refuses it.
    snippet = "(e 1 2)\n(<= (p ?x) (e ?x 1))\n(<= (p ?x) (p ?y) (or (e ?x ?y) (e ?y ?x)))\n"
    assert [(line, column) for line, column, _, _ in problems(snippet)] == [(4, 12)]


# -- 5. keywords -----------------------------------------------------------------------


@pytest.mark.parametrize("keyword", ["true", "does"])
def test_true_and_does_are_never_heads(keyword: str) -> None:
    head = "(true (cell 1))" if keyword == "true" else "(does a x)"
    assert problems(f"(p 1)\n  (<= {head} (p 1))\n") == [
        (3, 3, f"{keyword} may appear only in rule bodies, not as the head {head}", False)
    ]


def test_init_is_never_in_a_body() -> None:
    assert problems("(init (c 1))\n(<= (p 1) (init (c 1)))\n") == [
        (3, 11, "init may appear only in rule heads, not in the body literal (init (c 1))", False)
    ]


def test_init_must_not_depend_on_the_state() -> None:
    snippet = "(<= (init (c ?x)) (h ?x))\n(<= (h ?x) (g ?x))\n(<= (g ?x) (true (c ?x)))\n"
    assert problems(snippet) == [
        (2, 19, "init must not depend on true: init -> h -> g -> true", False)
    ]


def test_init_must_not_depend_on_legal() -> None:
    assert problems("(<= (init (c ?m)) (legal a ?m))\n") == [
        (2, 19, "init must not depend on legal: init -> legal", False)
    ]


@pytest.mark.parametrize("keyword", ["legal a (m ?x)", "goal a 50", "terminal"])
def test_legal_goal_terminal_must_not_depend_on_does(keyword: str) -> None:
    name = keyword.split()[0]
    snippet = f"(<= ({keyword}) (p ?x) (not (moved ?x)))\n(<= (moved ?x) (does a (m ?x)))\n(p 1)\n"
    assert problems(snippet) == [
        (2, len(keyword) + 15, f"{name} must not depend on does: {name} -> moved -> does", False)
    ]


def test_sees_and_next_may_depend_on_does() -> None:
    assert problems("(<= (sees a ?m) (does a ?m))\n(<= (next (c ?m)) (does a ?m))\n") == []


def test_role_must_be_a_fact() -> None:
    assert problems("(p b)\n(<= (role ?r) (p ?r))\n") == [
        (3, 1, "role must be declared by facts, not by a rule with a body: (<= (role ?r) (p ?r))",
         False),
        (3, 1, "role declaration (role ?r) has variables; a role is a constant", False),
    ]  # fmt: skip


def test_role_declared_twice() -> None:
    assert problems("(role a)\n") == [(2, 1, "role a declared twice (first at line 1)", False)]


def test_unknown_role_in_legal_does_goal_and_sees() -> None:
    snippet = "(<= (legal b x) (true (c 1)))\n(<= (next (c 1)) (does b x))\n(goal b 0)\n"
    assert problems(snippet) == [
        (2, 1, "b in (legal b x) is not a role (roles: a)", False),
        (3, 18, "b in (does b x) is not a role (roles: a)", False),
        (4, 1, "b in (goal b 0) is not a role (roles: a)", False),
    ]


def test_random_is_a_role_not_a_relation() -> None:
    assert problems("(role random)\n(legal random x)\n(goal random 0)\n") == []
    assert problems("(random 1)\n(<= (p 1) (random 2))\n") == [
        (2, 1, "random is reserved for the chance player, (role random); it cannot name a "
         "relation, as in (random 1)", False),
        (3, 11, "random is reserved for the chance player, (role random); it cannot name a "
         "relation, as in (random 2)", False),
    ]  # fmt: skip


@pytest.mark.parametrize("value", ["101", "win", "-1", "(f 1)"])
def test_goal_values_are_integers_from_0_to_100(value: str) -> None:
    assert problems(f"(goal a {value})\n") == [
        (2, 1, f"goal value {value} is not an integer from 0 to 100", False)
    ]


def test_sees_takes_a_role_and_a_percept() -> None:
    assert [m for _, _, m, _ in problems("(<= (sees a x y) (true (c 1)))\n")] == [
        "relation sees used with arity 3 here, but sees always has arity 2"
    ]


def test_missing_keywords_are_reported_at_the_end_of_the_file() -> None:
    description = parse_text("(p 1 2)\n(p 1)\n", "empty.kif")
    found = validate(description)
    assert [(e.line, e.column, e.message) for e in found] == [
        (2, 1, "relation p used with arity 1 here and arity 2 at line 1, column 1"),
        (3, 1, "no role rule or fact: every game needs role"),
        (3, 1, "no legal rule or fact: every game needs legal"),
        (3, 1, "no goal rule or fact: every game needs goal"),
        (3, 1, "no terminal rule or fact: every game needs terminal"),
    ]
    assert str(found[-1]) == "empty.kif:3:1: no terminal rule or fact: every game needs terminal"
    unterminated = validate(parse_text("(role a)\n(legal a x) terminal", "t.kif"))
    assert [(e.line, e.column, e.message) for e in unterminated] == [
        (2, 21, "no goal rule or fact: every game needs goal")
    ]
    assert str(unterminated[0]).endswith("(legal a x) terminal\n                    ^")
    assert [(e.line, e.column) for e in validate(parse_text(""))] == [(1, 1)] * 4


# -- results and robustness ------------------------------------------------------------


def test_errors_carry_path_and_caret_context() -> None:
    description = parse_text(BASE + "(p 1)\n   (p 1 2)\n", "games/x.kif")
    (error,) = validate(description)
    assert str(error) == (
        "games/x.kif:3:4: warning: relation p used with arity 2 here and arity 1 at line 2, "
        "column 1\n   (p 1 2)\n   ^"
    )


def test_problems_come_in_file_order() -> None:
    found = problems("(<= (q ?z) (true (c 1)))\n(does a x)\n(p 1)\n(p 1 2)\n")
    assert [(line, column) for line, column, _, _ in found] == [(2, 1), (3, 1), (5, 1)]


def test_long_dependency_chains_need_no_deep_recursion() -> None:
    # 5,000 relations in one cycle with one negation: recursive Tarjan would overflow.
    n = 5000
    rules = [
        Rule(Const(f"p{i}"), (Const(f"p{i + 1}"),), Span(i + 1, 1), (Span(i + 1, 5),))
        for i in range(n - 1)
    ]
    negated = Func("not", (Const("p0"),))
    rules.append(Rule(Const(f"p{n - 1}"), (negated,), Span(n, 1), (Span(n, 9),)))
    description = Description(tuple(rules), "chain.kif")
    found = [e for e in validate(description) if not e.message.startswith("no ")]
    assert len(found) == 1
    assert (found[0].line, found[0].column) == (n, 9)
    assert found[0].message.startswith(f"negation is not stratified: p{n - 1} depends on (not p0)")
    assert found[0].message.endswith(f"p{n - 2} -> p{n - 1})")


def test_summary_of_a_gdl2_game() -> None:
    summary = summarize(parse_text(MONTY_HALL))
    assert summary == DescriptionSummary(
        roles=("candidate", "random"),
        has_random=True,
        has_sees=True,
        rule_counts=(
            ("role", 2), ("init", 4), ("legal", 7), ("next", 9), ("sees", 1),
            ("goal", 3), ("terminal", 1), ("base", 0), ("input", 0), ("other", 3),
        ),
    )  # fmt: skip


def test_summary_of_a_gdl_game() -> None:
    summary = summarize(parse_text(TIC_TAC_TOE))
    assert summary.roles == ("xplayer", "oplayer")
    assert not summary.has_random
    assert not summary.has_sees
    counts = dict(summary.rule_counts)
    assert [name for name, _ in summary.rule_counts] == [
        "role", "init", "legal", "next", "sees", "goal", "terminal", "base", "input", "other",
    ]  # fmt: skip
    assert (counts["init"], counts["base"], counts["input"], counts["other"]) == (10, 4, 2, 11)


def test_summary_repr_evaluates_back() -> None:
    summary = summarize(parse_text(MONTY_HALL))
    assert eval(repr(summary)) == summary
    with pytest.raises(AttributeError):
        summary.roles = ()  # type: ignore[misc]
