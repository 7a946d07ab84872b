"""Robustness: bad input only ever raises GDLError with a position.

Seeded mutations of real game descriptions (dropped or added parentheses, truncation,
random bytes, spliced fragments) plus hand-picked extremes (empty input, 10,000-deep
nesting, binary data) and hypothesis-generated text. Any other exception — a lark error,
RecursionError, a traceback from the validator — or a hang fails the test.
"""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ggp.errors import GDLError
from ggp.gdl.parser import parse_text
from ggp.gdl.validate import check

from conftest import GAMES, corpus_files

FALLBACK_SEED = """
(role x) (role random) (init (step 0))
(<= (legal x (mark ?c)) (true (free ?c)) (not (true (step 3))))
(<= (legal random noop) (true (step ?n)))
(<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))
(<= (sees x (seen ?c)) (does x (mark ?c)) (distinct ?c 1))
(succ 0 1) (succ 1 2) (succ 2 3)
(<= terminal (true (step 3)))
(goal x 100) (goal random 0)
"""


def seed_texts() -> list[str]:
    files: list[Path] = sorted(GAMES.glob("*.gdl")) + corpus_files("gdl")
    texts = [f.read_text(encoding="utf-8", errors="replace") for f in files]
    return [FALLBACK_SEED, *(t for t in texts if len(t) < 20_000)]


@contextmanager
def no_hang(seconds: int) -> Iterator[None]:
    """Fail (instead of hanging forever) if the block runs longer than ``seconds``."""

    def on_alarm(signum: int, frame: object) -> None:
        raise TimeoutError(f"input took longer than {seconds} s: a hang")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


def load(data: str | bytes) -> None:
    """Parse and validate: succeed, or raise GDLError with a position."""
    try:
        check(parse_text(data, "fuzz.kif"))
    except GDLError as e:
        assert e.line >= 1 and e.column >= 1, f"error without a position: {e!r}"
        str(e)  # formatting the message with its context must not fail either


def mutate(text: str, rng: np.random.Generator) -> str | bytes:
    """One random corruption of ``text``."""
    n = max(len(text), 1)
    i = int(rng.integers(n))
    kind = int(rng.integers(8))
    if kind == 0:  # drop a parenthesis
        positions = [k for k, c in enumerate(text) if c in "()"]
        if positions:
            k = positions[int(rng.integers(len(positions)))]
            return text[:k] + text[k + 1 :]
    if kind == 1:  # add a parenthesis
        return text[:i] + "()"[int(rng.integers(2))] + text[i:]
    if kind == 2:  # truncate
        return text[:i]
    if kind == 3:  # random bytes spliced in (not necessarily UTF-8)
        junk = rng.integers(0, 256, size=int(rng.integers(1, 12)), dtype=np.uint8).tobytes()
        raw = text.encode("utf-8")
        return raw[:i] + junk + raw[i:]
    if kind == 4:  # random printable characters
        alphabet = list("()?;<=-+ \n\r\tabcxyz0129\"'#|")
        junk = "".join(alphabet[int(k)] for k in rng.integers(len(alphabet), size=8))
        return text[:i] + junk + text[i:]
    if kind == 5:  # splice a fragment from elsewhere
        j = int(rng.integers(n))
        return text[:i] + text[j : j + int(rng.integers(1, 80))] + text[i:]
    if kind == 6:  # swap two keywords or variables
        for a, b in (("<=", "not"), ("true", "does"), ("?", "("), ("role", "init")):
            if a in text:
                return text.replace(a, b, 1)
    return text[:i] + text[i + int(rng.integers(1, 40)) :]  # delete a stretch


def test_seeded_mutations_of_real_games() -> None:
    rng = np.random.default_rng(20261121)
    texts = seed_texts()
    with no_hang(300):
        for case in range(1500):
            text = texts[case % len(texts)]
            data = mutate(text, rng)
            if rng.random() < 0.3:  # mutate twice now and then
                base = data.decode("utf-8", "replace") if isinstance(data, bytes) else data
                data = mutate(base, rng)
            load(data)


EXTREMES: dict[str, Callable[[], str | bytes]] = {
    "empty": lambda: "",
    "only whitespace": lambda: " \r\n\t ",
    "deep nesting": lambda: "(" * 10_000 + ")" * 10_000,
    "deep unclosed": lambda: "(a " * 10_000,
    "deep rule": lambda: "(<= (p " + "(f " * 10_000 + "x" + ")" * 10_001 + " (q))",
    "many closers": lambda: ")" * 10_000,
    "binary": lambda: bytes(range(256)) * 8,
    "random bytes": lambda: np.random.default_rng(1).integers(0, 256, 4096, np.uint8).tobytes(),
    "nul in text": lambda: "(role x)\x00(role y)",
    "long atom": lambda: "(role " + "a" * 1_000_000 + ")",
    "many rules": lambda: "(p a)" * 50_000,
    "unicode": lambda: "(role ☃) (<= terminal (true (ünïcode ?x)))",
}


@pytest.mark.parametrize("name", sorted(EXTREMES))
def test_extreme_inputs(name: str) -> None:
    with no_hang(60):
        load(EXTREMES[name]())


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="()?;<=-+ \n\r\tabnotrudesgl01\x00é", max_size=200))
def test_generated_text(text: str) -> None:
    with no_hang(30):
        load(text)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=300))
def test_generated_bytes(data: bytes) -> None:
    with no_hang(30):
        load(data)
