"""The KIF parser: terms, rules, positions, normalisation and syntax errors."""

from __future__ import annotations

import pickle

import pytest

from ggp.errors import GDLError, GDLSyntaxError
from ggp.gdl.parser import MAX_DEPTH, format_term, parse_file, parse_term, parse_text
from ggp.gdl.terms import Const, Func, Rule, Span, Var


def test_facts_and_rules() -> None:
    d = parse_text("(role xplayer)\n(<= (legal ?p noop) (role ?p) (not (true (control ?p))))")
    assert [str(r) for r in d.rules] == [
        "(role xplayer)",
        "(<= (legal ?p noop) (role ?p) (not (true (control ?p))))",
    ]
    fact, rule = d.rules
    assert fact == Rule(Func("role", (Const("xplayer"),)))
    assert rule.head is Func("legal", (Var("?p"), Const("noop")))
    assert rule.body[1] is Func("not", (Func("true", (Func("control", (Var("?p"),)),)),))


def test_positions_of_rules_and_literals() -> None:
    text = "; comment\n(role x)\n  (<= terminal\n      (true (done)) (over))\n"
    d = parse_text(text)
    assert d.rules[0].span == Span(2, 1)
    assert d.rules[1].span == Span(3, 3)
    assert d.rules[1].body_spans == (Span(4, 7), Span(4, 21))


def test_zero_arity_with_or_without_parentheses() -> None:
    d = parse_text("(<= terminal (true done))\n(<= (terminal) (true (done)))")
    assert d.rules[0] == d.rules[1]
    assert d.rules[0].head is Const("terminal")


def test_case_is_normalised_and_crlf_accepted() -> None:
    d = parse_text("(ROLE XPlayer)\r\n(<= (LEGAL ?P NOOP) (ROLE ?p))\r\n")
    assert [str(r) for r in d.rules] == ["(role xplayer)", "(<= (legal ?p noop) (role ?p))"]
    assert d.rules[1].head.args[0] is Var("?p")


def test_symbols_and_numbers_are_atoms() -> None:
    d = parse_text("(succ 1 2) (<= (next (count ?n++)) (true (count ?n)) (++ ?n ?n++)) (-- a)")
    assert str(d.rules[1]) == "(<= (next (count ?n++)) (true (count ?n)) (++ ?n ?n++))"
    assert d.rules[1].head.args[0].args[0] is Var("?n++")
    assert d.rules[2].head is Func("--", (Const("a"),))


def test_comments_everywhere() -> None:
    d = parse_text("(role ; who plays\n x) ; trailing\n;; last line without newline")
    assert [str(r) for r in d.rules] == ["(role x)"]


def test_empty_input_is_an_empty_description() -> None:
    assert parse_text("").rules == ()
    assert parse_text("  ; only a comment\n").rules == ()


def test_terms_are_interned_and_reprs_evaluate_back() -> None:
    term = parse_term("(cell 1 (f ?x) b)")
    assert term is parse_term("(CELL 1 (F ?X) B)")
    assert eval(repr(term)) is term
    assert pickle.loads(pickle.dumps(term)) is term
    rule = parse_text("(<= (p ?x) (q ?x))").rules[0]
    assert eval(repr(rule)) == rule


def test_format_and_parse_term_are_inverse() -> None:
    for text in ["(mark 1 1)", "noop", "?x", "(a (b (c d)) e)"]:
        assert format_term(parse_term(text)) == text


def test_terms_are_immutable() -> None:
    term = parse_term("(mark 1 1)")
    with pytest.raises(AttributeError):
        term.name = "other"  # type: ignore[misc]


@pytest.mark.parametrize(
    ("text", "line", "column", "fragment"),
    [
        ("(role x)\n(<= (legal x noop)\n  (true (s 1))", 2, 1, "never closed"),
        ("(role x))", 1, 9, "no matching '('"),
        ("(role x)\n()", 2, 1, "empty"),
        ("(role x)\n(<= (p ?x) (?q ?x))", 2, 13, "variable ?q"),
        ("((a b) c)", 1, 1, "expected a name"),
        ("(<=)", 1, 1, "no head"),
        ("(<= ?x (p ?x))", 1, 1, "variable ?x"),
        ("(role\x00x)", 1, 6, "unexpected character"),
        ("(p ?)", 1, 4, "has no name"),
    ],
)
def test_syntax_errors_name_line_and_column(
    text: str, line: int, column: int, fragment: str
) -> None:
    with pytest.raises(GDLSyntaxError) as info:
        parse_text(text, "game.gdl")
    error = info.value
    assert (error.path, error.line, error.column) == ("game.gdl", line, column)
    assert fragment in error.message
    assert str(error).startswith(f"game.gdl:{line}:{column}: ")


def test_error_shows_the_line_with_a_caret() -> None:
    with pytest.raises(GDLSyntaxError) as info:
        parse_text("(role x)\n(legal x (?m))\n", "g.kif")
    assert str(info.value).splitlines() == [
        "g.kif:2:11: expected a relation or function name after '(', found the variable ?m",
        "(legal x (?m))",
        "          ^",
    ]


def test_nesting_deeper_than_the_limit_is_refused() -> None:
    ok = "(p " * (MAX_DEPTH - 1) + "a" + ")" * (MAX_DEPTH - 1)
    assert parse_text(ok).rules[0].head.depth == MAX_DEPTH - 1
    with pytest.raises(GDLSyntaxError, match="nested deeper"):
        parse_text("(p " * 10_000 + "a" + ")" * 10_000)


def test_bytes_must_be_utf8() -> None:
    assert parse_text(b"(role x)").rules[0].head is Func("role", (Const("x"),))
    with pytest.raises(GDLSyntaxError, match="not UTF-8") as info:
        parse_text(b"(role x)\n(role \xff)", "bin.kif")
    assert (info.value.line, info.value.column) == (2, 7)


def test_missing_file_is_a_gdl_error(tmp_path: object) -> None:
    with pytest.raises(GDLError, match="cannot read file"):
        parse_file("/nonexistent/game.gdl")
