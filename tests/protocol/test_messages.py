"""Protocol messages: parsing every form, any case, round trips, and clear refusals."""

from __future__ import annotations

import pytest

from ggp.errors import ProtocolError
from ggp.gdl.parser import parse_term, parse_text
from ggp.gdl.terms import Const
from ggp.protocol.messages import (
    Abort,
    Info,
    InfoReply,
    Message,
    Play,
    Preview,
    Start,
    Stop,
    format_info_reply,
    format_message,
    format_move,
    parse_info_reply,
    parse_message,
    parse_move_reply,
    spelling_of,
    uses_upper_case,
)

RULES = "((ROLE X) (ROLE RANDOM) (INIT (STEP 1)) (<= (LEGAL X (MARK ?A)) (TRUE (STEP ?A))))"


def test_info_any_case_and_spacing() -> None:
    for text in ("(INFO)", "(info)", "( Info )", "\n(INFO)\n"):
        assert parse_message(text) == Info()


def test_start() -> None:
    message = parse_message(f"(START M1 X {RULES} 5 2.5)")
    assert isinstance(message, Start)
    assert message.match_id == "M1"
    assert message.role == Const("x")
    assert message.start_clock_s == 5.0 and message.play_clock_s == 2.5
    assert [str(r) for r in message.rules.rules][:2] == ["(role x)", "(role random)"]
    assert str(message.rules.rules[-1]) == "(<= (legal x (mark ?a)) (true (step ?a)))"


def test_preview() -> None:
    message = parse_message(f"(PREVIEW {RULES} 10)")
    assert isinstance(message, Preview)
    assert message.clock_s == 10.0 and len(message.rules.rules) == 4


def test_play_gdl2_turn_zero() -> None:
    assert parse_message("(PLAY BT1 0 NIL NIL)") == Play("BT1", 0, None, ())


def test_play_gdl2_percepts() -> None:
    message = parse_message("(PLAY ME1 1 NOOP ((MY_DICE 2 1) (DOES P1 NOOP) (DOES P2 NOOP) ))")
    assert message == Play(
        "ME1",
        1,
        Const("noop"),
        (
            parse_term("(my_dice 2 1)"),
            parse_term("(does p1 noop)"),
            parse_term("(does p2 noop)"),
        ),
    )


def test_play_gdl2_empty_and_atom_percepts() -> None:
    assert parse_message("(PLAY BT1 1 (MARK 1 1) ())") == Play(
        "BT1", 1, parse_term("(mark 1 1)"), ()
    )
    assert parse_message("(PLAY BT1 2 (MARK 1 2) (OK ))") == Play(
        "BT1", 2, parse_term("(mark 1 2)"), (Const("ok"),)
    )


def test_play_short_forms() -> None:
    assert parse_message("(PLAY M2 NIL)") == Play("M2", None, None, None)
    message = parse_message("( PLAY m17 (( mark 3 2 ) noop ) )")
    assert message == Play("m17", None, None, (parse_term("(mark 3 2)"), Const("noop")))
    assert isinstance(message, Play) and message.short_form


def test_stop_both_forms() -> None:
    stop = parse_message("(STOP M1 3 SWITCH ((CAR 3) ))")
    assert stop == Stop("M1", 3, Const("switch"), (parse_term("(car 3)"),))
    assert not isinstance(stop, Play)
    assert parse_message("(STOP M2 ((MARK 3 1) NOOP))") == Stop(
        "M2", None, None, (parse_term("(mark 3 1)"), Const("noop"))
    )


def test_abort() -> None:
    assert parse_message("(abort m1)") == Abort("m1")


@pytest.mark.parametrize(
    "message",
    [
        Info(),
        Start("m1", Const("x"), parse_text("(role x) (init (step 1))"), 10, 2.5),
        Play("m1", 0, None, ()),
        Play("m1", 2, parse_term("(mark 1 2)"), (Const("ok"), parse_term("(does x noop)"))),
        Play("m1", None, None, None),
        Play("m1", None, None, (parse_term("(mark 1 1)"), Const("noop"))),
        Stop("m1", 3, Const("switch"), ()),
        Stop("m1", None, None, (Const("noop"), Const("noop"))),
        Abort("m1"),
    ],
    ids=lambda m: format_message(m)[:30],
)
def test_format_parse_round_trip(message: Message) -> None:
    again = parse_message(format_message(message))
    if isinstance(message, Start):
        assert isinstance(again, Start)
        assert again.rules.rules == message.rules.rules
        assert (again.match_id, again.role, again.start_clock_s, again.play_clock_s) == (
            message.match_id,
            message.role,
            message.start_clock_s,
            message.play_clock_s,
        )
    else:
        assert again == message
        assert parse_message(format_message(message).upper()) == type(message)(
            *[
                (v.upper() if isinstance(v, str) else v)
                for v in vars(message).values()  # only the match id changes case
            ]
        )


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("", "empty message"),
        ("   ", "empty message"),
        ("(PLAY m1 0 NIL NIL", "never closed"),
        ("(PLAY m1 0 NIL NIL))", "unexpected ')'"),
        ("(INFO) (INFO)", "one s-expression"),
        ("INFO", "starts with a keyword"),
        ("()", "starts with a keyword"),
        ("((PLAY) m1)", "starts with a keyword"),
        ("(HELLO m1)", "unknown message 'HELLO'"),
        ("(INFO extra)", "INFO takes 0 argument(s), got 1"),
        ("(PLAY m1 0 NIL)", "PLAY takes 2 or 4 argument(s), got 3"),
        ("(STOP m1)", "STOP takes 2 or 4 argument(s), got 1"),
        ("(ABORT)", "ABORT takes 1 argument(s), got 0"),
        ("(START m1 x ((role x)) 5)", "START takes 5 argument(s), got 4"),
        ("(START m1 x ((role x)) five 2)", "the start clock must be a number"),
        ("(START m1 x ((role x)) 5 -1)", "the play clock must be a number"),
        ("(START m1 x ((role x)) 5 nan)", "the play clock must be a number"),
        ("(START m1 (x y) ((role x)) 5 1)", "the role must be an atom"),
        ("(START m1 x rules 5 1)", "the rules must be a list"),
        ("(START m1 x ((role x) (<= )) 5 1)", "not well-formed KIF"),
        ("(START (m1) x ((role x)) 5 1)", "the match id must be an atom"),
        ("(PLAY m1 one NIL NIL)", "the turn must be a whole number"),
        ("(PLAY m1 -1 NIL NIL)", "the turn must be a whole number"),
        ("(PLAY m1 2 NIL ())", "turn 2 has no last move"),
        ("(PLAY m1 1 (mark ?x) ())", "has variables"),
        ("(PLAY m1 1 ((mark) 1) ())", "is not a term"),
        ("(PLAY m1 1 noop ok)", "expected a list of percepts or NIL"),
        ("(PLAY m1 1 noop (()))", "is not a term"),
    ],
)
def test_malformed_messages_are_refused_clearly(text: str, expected: str) -> None:
    with pytest.raises(ProtocolError) as info:
        parse_message(text)
    assert expected in str(info.value)


def test_non_utf8_bytes_are_refused() -> None:
    with pytest.raises(ProtocolError, match="not UTF-8"):
        parse_message(b"(INFO \xff)")


def test_deep_nesting_is_refused_without_recursion_error() -> None:
    with pytest.raises(ProtocolError):
        parse_message("(PLAY m1 1 " + "(f " * 5000 + "a" + ")" * 5000 + " ())")


def test_case_detection_and_replies() -> None:
    assert uses_upper_case("(START M1 CANDIDATE ((ROLE CANDIDATE)) 5 3)")
    assert not uses_upper_case("( START m179 oplayer (( role xplayer )) 3 2)")
    assert not uses_upper_case("()")
    move = parse_term("(mark 1 2)")
    assert format_move(move) == "(mark 1 2)"
    assert format_move(move, upper=True) == "(MARK 1 2)"
    spelling = spelling_of(parse_text("(role xPlayer) (legal xPlayer (Mark 1 2))"))
    assert format_move(parse_term("(mark 1 2)"), spelling, upper=True) == "(Mark 1 2)"


def test_info_replies() -> None:
    assert format_info_reply("ggp", "available") == "((name ggp) (status available))"
    assert format_info_reply("ggp", "available", upper=True) == "((NAME ggp) (STATUS AVAILABLE))"
    assert format_info_reply("ggp", "busy", upper=True) == "BUSY"
    assert parse_info_reply("((name ggp) (status available))") == InfoReply("ggp", "available")
    assert parse_info_reply("BUSY") == InfoReply("", "busy")
    with pytest.raises(ProtocolError, match="no status"):
        parse_info_reply("((name ggp))")


def test_move_replies() -> None:
    assert parse_move_reply("(MARK 1 2)") == parse_term("(mark 1 2)")
    assert parse_move_reply(" noop\n") == Const("noop")
    with pytest.raises(ProtocolError):
        parse_move_reply("(mark 1 2) (mark 1 3)")
    with pytest.raises(ProtocolError):
        parse_move_reply("")
