"""Every public game in ../shared parses and validates; the invalid ones are refused.

The corpus and its known defects are described in ``shared/gdl/README.md``: two files
use one name with two arities, and four contain unsafe rules. Both are warnings naming
the rule (and, for arities, both positions), errors with ``strict``: the README lists the
two-arity files as invalid, and so they are under ``--strict``, but managers play such
games (issue 18), and so does ggp. Without the corpus these tests skip.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from ggp.errors import GDLSemanticError
from ggp.game import Game
from ggp.gdl.parser import parse_file
from ggp.gdl.validate import check, summarize, validate

from conftest import SHARED, corpus_files, corpus_ids, requires_shared

CORPUS = corpus_files("gdl", "scale")
SCALE = corpus_files("scale")

#: Files with a symbol of two arities: ``(line, column, message)`` of each warning (an
#: error when strict).
TWO_ARITIES = {
    "gdl/ggp-base-tests/test_invalid_function_arities_differ.kif": [
        (9, 1, "function a used with arity 2 here and arity 1 at line 8, column 1"),
    ],
    "gdl/ggp-base-tests/test_invalid_sentence_arities_differ.kif": [
        (14, 1, "relation foo used with arity 2 here and arity 1 at line 13, column 1"),
    ],
}

#: Files with unsafe rules: ``(line, column, variable)`` of each warning. The README says
#: blind breakthrough's two sees rules leave ``?p`` unbound; in fact the second leaves
#: ``?player`` unbound (``(sees ?player (move ...))`` whose body binds ``?p``).
UNSAFE = {
    "gdl/gdl2/blind_breakthrough_5x5.kif": [(223, 1, "?p"), (240, 1, "?player")],
    "gdl/ggp-base-tests/test_case_3b.kif": [
        (14, 1, "?x"),
        (14, 1, "?y"),
        (14, 1, "?m"),
        (14, 1, "?n"),
        (15, 1, "?x"),
        (15, 1, "?y"),
        (15, 1, "?m"),
        (15, 1, "?n"),
    ],
    "gdl/ggp-base-tests/test_case_3e.kif": [(9, 1, "?p"), (10, 1, "?p")],
    "gdl/ggp-base-tests/test_case_3f.kif": [(12, 1, "?p"), (14, 1, "?p")],
}

_UNSAFE_MESSAGE = re.compile(
    r"unsafe rule: variable (\?\S+) in .+ does not occur in a positive literal of the body"
)


def _name(path: Path) -> str:
    return path.relative_to(SHARED).as_posix()


@requires_shared
def test_the_corpus_holds_the_files_these_tests_expect() -> None:
    names = {_name(path) for path in CORPUS}
    assert set(TWO_ARITIES) <= names
    assert set(UNSAFE) <= names
    assert len(SCALE) == 4  # three generated Battlesnake games and chess
    assert len(names) >= 42


@requires_shared
@pytest.mark.parametrize("path", CORPUS, ids=corpus_ids(CORPUS))
def test_corpus_file_validates(path: Path) -> None:
    name = _name(path)
    description = parse_file(path)
    problems = validate(description)
    assert [e for e in problems if not e.warning] == []
    unsafe = []
    arities = []
    for warning in problems:
        match = _UNSAFE_MESSAGE.fullmatch(warning.message)
        if match is None:
            arities.append((warning.line, warning.column, warning.message))
        else:
            unsafe.append((warning.line, warning.column, match.group(1)))
    assert unsafe == UNSAFE.get(name, [])
    assert arities == TWO_ARITIES.get(name, [])
    assert len(check(description)) == len(problems)


@requires_shared
@pytest.mark.parametrize("name", sorted(TWO_ARITIES))
def test_two_arities_are_refused_when_strict_and_played_otherwise(name: str) -> None:
    description = parse_file(SHARED / name)
    with pytest.raises(GDLSemanticError) as raised:
        check(description, strict=True)
    assert raised.value.message == TWO_ARITIES[name][0][2]
    assert raised.value.path == str(SHARED / name)
    game = Game.from_file(SHARED / name)
    state = game.initial_state()
    while not game.is_terminal(state):
        state = game.next_state(state, [game.legal_moves(state, r)[-1] for r in game.roles])
    assert game.goals(state) == (100,)


@requires_shared
@pytest.mark.parametrize("name", sorted(UNSAFE))
def test_unsafe_corpus_rules_are_errors_when_strict(name: str) -> None:
    problems = validate(parse_file(SHARED / name), strict=True)
    assert [(e.line, e.column) for e in problems] == [(line, col) for line, col, _ in UNSAFE[name]]
    assert not any(e.warning for e in problems)


@requires_shared
@pytest.mark.parametrize("path", SCALE, ids=corpus_ids(SCALE))
def test_scale_files_validate(path: Path) -> None:
    # How fast: benchmarks/bench_parser.py (speed is never asserted in a test).
    description = parse_file(path)
    assert validate(description) == []
    summary = summarize(description)
    if path.name.startswith("bsnake"):  # the generated Battlesnake games: food by chance
        assert summary.has_random and summary.roles[-1] == "random"
    else:  # chess.kif
        assert summary.roles == ("white", "black") and not summary.has_random


@requires_shared
@pytest.mark.slow
def test_chess_is_played_by_the_top_down_prover_after_the_grounding_budget() -> None:
    # The public chess rules cannot be grounded within the default limits (a million
    # derivations, the same on every machine): the game falls back, with the reason
    # (the limit and the relation being evaluated), to the top-down prover, which plays
    # it at hundreds of states a second (tests/reasoning/test_topdown.py checks it
    # against the bottom-up prover).
    game = Game.from_file(SHARED / "scale" / "chess.kif")
    assert game.reasoner == "topdown"
    assert game.grounding_failure is not None
    assert "GroundingLimits.max_derivations) while evaluating" in game.grounding_failure
    state = game.initial_state()
    assert len(game.legal_moves(state, "white")) == 20  # 16 pawn moves, 4 knight moves
    assert [str(m) for m in game.legal_moves(state, "black")] == ["noop"]


@requires_shared
def test_corpus_summaries() -> None:
    gdl2 = summarize(parse_file(SHARED / "gdl/gdl2/meier.kif"))
    assert gdl2.roles == ("random", "p1", "p2")
    assert (gdl2.has_random, gdl2.has_sees) == (True, True)
    tic_tac_toe = summarize(parse_file(SHARED / "gdl/gdl/ticTacToe.kif"))
    assert tic_tac_toe.roles == ("xplayer", "oplayer")
    assert (tic_tac_toe.has_random, tic_tac_toe.has_sees) == (False, False)
    assert dict(tic_tac_toe.rule_counts)["init"] == 10
