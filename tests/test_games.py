"""Our game library (games/*.gdl): the same rules as the literature's descriptions, and the
known figures of each game (win rates, values, payoff tables), computed exactly where the
game is small enough."""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from pathlib import Path

import numpy as np
import pytest

from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.reasoning.state_machine import JointMove, State

from conftest import GAMES, SHARED, requires_shared


@cache
def load(path: Path) -> Game:
    """The game at ``path`` on the default (propnet) reasoner, loaded once per session."""
    return Game.from_file(path)


def header(path: Path) -> str:
    """The comment block that opens a game file, without the semicolons."""
    lines = []
    for line in path.read_text().splitlines():
        if not line.startswith(";"):
            break
        lines.append(line.lstrip(";").strip())
    return "\n".join(lines)


# --------------------------------------------------------------------------------------
# Point 2: the same rules as the counterpart in shared/gdl.
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Counterpart:
    """One of our games and its counterpart in shared/gdl.

    Attributes:
        ours: File name in games/.
        theirs: Path below shared/gdl.
        renamed: (our KIF, their KIF) for moves and percepts whose names differ.
        moves_we_lack: Their moves (KIF) that our description does not have; random play
            never chooses them (connectFour.kif's eighth column).
        documented_difference: Whether the header lists a deliberate difference.
    """

    ours: str
    theirs: str
    renamed: tuple[tuple[str, str], ...] = ()
    moves_we_lack: frozenset[str] = frozenset()
    documented_difference: bool = False

    def translate(self, text: str) -> str:
        for mine, other in self.renamed:
            text = text.replace(mine, other)
        return text


COUNTERPARTS = (
    Counterpart("meier.gdl", "gdl2/meier.kif"),
    Counterpart("blindtictactoe.gdl", "gdl2/blindtictactoe.kif"),
    Counterpart("blindtictactoe_biased.gdl", "gdl2/blindtictactoeXwins.kif"),
    Counterpart("montyhall.gdl", "gdl2/montyhall.kif"),
    Counterpart("scissors_paper_rock.gdl", "gdl2/scissor_paper_rock.kif"),
    Counterpart("tictactoe.gdl", "gdl/ticTacToe.kif"),
    Counterpart(
        "connect_four.gdl",
        "gdl/connectFour.kif",
        moves_we_lack=frozenset({"(drop 8)"}),
        documented_difference=True,
    ),
)

#: Seeded random joint-move sequences played on both descriptions of each game.
PLAYOUTS = 300


def test_every_game_with_a_counterpart_is_compared() -> None:
    ours = {p.name for p in GAMES.glob("*.gdl")}
    compared = {c.ours for c in COUNTERPARTS}
    uncompared = {"kuhn_poker.gdl", "leduc_poker.gdl"}  # poker games have no counterpart
    assert ours - compared == uncompared
    for name in uncompared:
        assert "no counterpart" in header(GAMES / name)


@pytest.mark.parametrize("pair", COUNTERPARTS, ids=lambda c: c.ours)
def test_header_names_the_counterpart_and_its_differences(pair: Counterpart) -> None:
    text = header(GAMES / pair.ours)
    assert f"shared/gdl/{pair.theirs}" in text.replace("\n", " ")
    assert ("Deliberate difference" in text) == pair.documented_difference


def connect_four_board_full(ours: Game, state: State, theirs: Game, their_state: State) -> bool:
    """The one documented difference: columns 1..7 are full, a draw here, not there.

    Our state is terminal with 50 / 50; theirs is not terminal, and the player in control
    can only drop into the eighth column.
    """
    if not ours.is_terminal(state) or theirs.is_terminal(their_state):
        return False
    drops = {str(m) for role in theirs.roles for m in theirs.legal_moves(their_state, role)} - {
        "noop"
    }
    return ours.goals(state) == (50, 50) and drops == {"(drop 8)"}


def play_both(pair: Counterpart, rng: np.random.Generator) -> int:
    """Play one random joint-move sequence on both descriptions, checking every step.

    Returns:
        The number of joint moves played.
    """
    ours = load(GAMES / pair.ours)
    theirs = load(SHARED / "gdl" / pair.theirs)
    state, their_state = ours.initial_state(), theirs.initial_state()
    step = 0
    while True:
        where = f"{pair.ours} step {step}"
        assert ours.goals(state) == theirs.goals(their_state), where
        if ours.is_terminal(state) != theirs.is_terminal(their_state):
            assert pair.documented_difference, where
            assert connect_four_board_full(ours, state, theirs, their_state), where
            return step
        if ours.is_terminal(state):
            return step
        legal = [ours.legal_moves(state, role) for role in ours.roles]
        for role, moves in zip(ours.roles, legal, strict=True):
            their_moves = {str(m) for m in theirs.legal_moves(their_state, role.name)}
            assert {pair.translate(str(m)) for m in moves} == their_moves - pair.moves_we_lack, (
                f"{where}: legal moves of {role}"
            )
        joint: JointMove = tuple(moves[int(rng.integers(len(moves)))] for moves in legal)
        their_joint = tuple(theirs.term(pair.translate(str(m))) for m in joint)
        for role in ours.roles:
            mine = {pair.translate(str(p)) for p in ours.percepts(state, joint, role)}
            other = {str(p) for p in theirs.percepts(their_state, their_joint, role.name)}
            assert mine == other, f"{where}: percepts of {role} after {joint}"
        state = ours.next_state(state, joint)
        their_state = theirs.next_state(their_state, their_joint)
        step += 1


@requires_shared
@pytest.mark.parametrize("pair", COUNTERPARTS, ids=lambda c: c.ours)
def test_random_play_agrees_with_the_counterpart(pair: Counterpart) -> None:
    ours = load(GAMES / pair.ours)
    theirs = load(SHARED / "gdl" / pair.theirs)
    assert [r.name for r in ours.roles] == [r.name for r in theirs.roles]
    rng = np.random.default_rng(2024)
    lengths = [play_both(pair, rng) for _ in range(PLAYOUTS)]
    assert min(lengths) >= 1


#: Columns of a Connect Four game (red first) that fills columns 1..7 without four in a
#: row; found by a depth-first search.
FULL_BOARD_DRAW = (
    5, 2, 7, 3, 2, 1, 2, 5, 5, 3, 5, 2, 4, 7, 4, 4, 2, 1, 5, 7, 7,
    2, 3, 4, 3, 4, 3, 3, 7, 6, 6, 1, 6, 5, 7, 6, 6, 6, 1, 1, 4, 1,
)  # fmt: skip


@requires_shared
def test_connect_four_differs_only_when_seven_columns_are_full() -> None:
    pair = COUNTERPARTS[-1]
    ours = load(GAMES / pair.ours)
    theirs = load(SHARED / "gdl" / pair.theirs)
    state, their_state = ours.initial_state(), theirs.initial_state()
    for step, column in enumerate(FULL_BOARD_DRAW):
        assert not ours.is_terminal(state) and not theirs.is_terminal(their_state)
        drop, noop = f"(drop {column})", "noop"
        joint = (drop, noop) if step % 2 == 0 else (noop, drop)
        state = ours.next_state(state, joint)
        their_state = theirs.next_state(their_state, joint)
    assert ours.is_terminal(state) and ours.goals(state) == (50, 50)
    assert not theirs.is_terminal(their_state) and theirs.goals(their_state) == (0, 0)
    assert connect_four_board_full(ours, state, theirs, their_state)


# --------------------------------------------------------------------------------------
# Point 3: known figures.
# --------------------------------------------------------------------------------------

MEIER = GAMES / "meier.gdl"
#: P(p1 wins) when every role, random included, moves uniformly at random (games/README.md).
MEIER_P1_WINS = Fraction(3447855623059, 9895604649984)
MEIER_GAMES = 10_000


def random_game(game: Game, rng: np.random.Generator) -> tuple[int, ...]:
    """Goals at the end of one game in which every role moves uniformly at random."""
    state = game.initial_state()
    while not game.is_terminal(state):
        joint = []
        for role in game.roles:
            moves = game.legal_moves(state, role)
            joint.append(moves[int(rng.integers(len(moves)))])
        state = game.next_state(state, joint)
    return game.goals(state)


def test_meier_random_vs_random_p1_wins_34_8_percent() -> None:
    game = load(MEIER)
    p1 = game.role_index("p1")
    rng = np.random.default_rng(0)
    wins = sum(random_game(game, rng)[p1] == 100 for _ in range(MEIER_GAMES))
    assert wins == 3451  # with this seed, 34.51%
    assert abs(wins / MEIER_GAMES - 0.348) <= 0.015


Policy = Callable[[Game, State, int], dict[Term, Fraction]]


def uniform(game: Game, state: State, role: int) -> dict[Term, Fraction]:
    moves = game.legal_moves(state, game.roles[role])
    return {move: Fraction(1, len(moves)) for move in moves}


def expected_goals(
    game: Game, policies: Sequence[Policy], state: State | None = None
) -> tuple[Fraction, ...]:
    """Exact expected goals, each role drawing its move from its policy (memoised)."""
    memo: dict[State, tuple[Fraction, ...]] = {}

    def value(state: State) -> tuple[Fraction, ...]:
        known = memo.get(state)
        if known is not None:
            return known
        if game.is_terminal(state):
            result = tuple(Fraction(g) for g in game.goals(state))
        else:
            per_role = [list(policy(game, state, r).items()) for r, policy in enumerate(policies)]
            totals = [Fraction(0)] * len(game.roles)
            for combination in itertools.product(*per_role):
                probability = Fraction(1)
                for _, p in combination:
                    probability *= p
                if probability:
                    child = value(game.next_state(state, tuple(m for m, _ in combination)))
                    totals = [t + probability * v for t, v in zip(totals, child, strict=True)]
            result = tuple(totals)
        memo[state] = result
        return result

    return value(state if state is not None else game.initial_state())


def test_meier_random_vs_random_exact_value() -> None:
    game = load(MEIER)
    memo: dict[State, Fraction] = {}
    p1 = game.role_index("p1")

    def p1_wins(state: State) -> Fraction:
        if state not in memo:
            if game.is_terminal(state):
                memo[state] = Fraction(game.goals(state)[p1] == 100)
            else:
                legal = [game.legal_moves(state, role) for role in game.roles]
                children = [game.next_state(state, j) for j in itertools.product(*legal)]
                memo[state] = sum(map(p1_wins, children), Fraction(0)) / len(children)
        return memo[state]

    value = p1_wins(game.initial_state())
    assert value == MEIER_P1_WINS
    assert round(float(value), 6) == 0.348423
    assert len(memo) == 3382  # reachable states (games/README.md)


def monty_hall_candidate(first_door: int, switch: bool) -> Policy:
    """Pick ``first_door``, then always (or never) switch; the host is uniform."""

    def policy(game: Game, state: State, role: int) -> dict[Term, Fraction]:
        moves = {str(m): m for m in game.legal_moves(state, game.roles[role])}
        for wanted in (f"(choose {first_door})", "switch" if switch else "noop"):
            if wanted in moves:
                return {moves[wanted]: Fraction(1)}
        assert len(moves) == 1, moves
        return {next(iter(moves.values())): Fraction(1)}

    return policy


@pytest.mark.parametrize("first_door", [1, 2, 3])
@pytest.mark.parametrize(("switch", "value"), [(True, Fraction(200, 3)), (False, Fraction(100, 3))])
def test_monty_hall_switching_wins_two_thirds(
    first_door: int, switch: bool, value: Fraction
) -> None:
    game = load(GAMES / "montyhall.gdl")
    assert [r.name for r in game.roles] == ["candidate", "random"]
    goals = expected_goals(game, [monty_hall_candidate(first_door, switch), uniform])
    assert goals == (value, Fraction(100))
    assert round(float(goals[0]), 1) == (66.7 if switch else 33.3)


def test_monty_hall_random_candidate_scores_50() -> None:
    game = load(GAMES / "montyhall.gdl")
    assert expected_goals(game, [uniform, uniform]) == (Fraction(50), Fraction(100))


def payoff_table_from_header(path: Path) -> dict[tuple[str, str], int]:
    """The row player's goal for each (own move, opponent's move), as the header states."""
    lines = header(path).splitlines()
    start = next(
        i for i, line in enumerate(lines) if re.fullmatch(r"rock\s+paper\s+scissors", line)
    )
    columns = lines[start].split()
    table = {}
    for line in lines[start + 1 : start + 4]:
        row, *values = line.split()
        table.update({(row, column): int(v) for column, v in zip(columns, values, strict=True)})
    return table


def test_scissors_paper_rock_payoffs_are_the_header_table() -> None:
    path = GAMES / "scissors_paper_rock.gdl"
    table = payoff_table_from_header(path)
    assert len(table) == 9
    assert table[("rock", "scissors")] == 100 and table[("paper", "rock")] == 75
    game = load(path)
    state = game.initial_state()
    for mine, theirs in itertools.product(["rock", "paper", "scissors"], repeat=2):
        after = game.next_state(state, [mine, theirs])
        assert game.is_terminal(after)
        assert game.goals(after) == (table[mine, theirs], table[theirs, mine])
        assert table[mine, theirs] + table[theirs, mine] == 100


KUHN = GAMES / "kuhn_poker.gdl"
RANK = {"j": 0, "q": 1, "k": 2}


def kuhn_chips_of_p1(card1: str, card2: str, line: Sequence[str]) -> int:
    """Kuhn's rules, independently: p1's chips won (+) or lost (-) after a betting line."""
    higher = 1 if RANK[card1] > RANK[card2] else -1
    outcomes = {
        ("check", "check"): higher,
        ("check", "bet", "fold"): -1,
        ("check", "bet", "call"): 2 * higher,
        ("bet", "fold"): 1,
        ("bet", "call"): 2 * higher,
    }
    return outcomes[tuple(line)]


def kuhn_histories(game: Game) -> Iterator[tuple[tuple[str, str], tuple[str, ...], State]]:
    """Every terminal history: (the deal, the betting line, the final state)."""
    stack: list[tuple[State, tuple[JointMove, ...]]] = [(game.initial_state(), ())]
    while stack:
        state, joints = stack.pop()
        if game.is_terminal(state):
            deal = joints[0][0]
            cards = (str(deal.args[0]), str(deal.args[1]))
            line = tuple(str(m) for joint in joints[1:] for m in joint[1:] if str(m) != "noop")
            yield cards, line, state
            continue
        legal = [game.legal_moves(state, role) for role in game.roles]
        for joint in itertools.product(*legal):
            stack.append((game.next_state(state, joint), (*joints, joint)))


def test_kuhn_poker_payoffs_for_every_deal_and_betting_line() -> None:
    game = load(KUHN)
    assert [r.name for r in game.roles] == ["random", "p1", "p2"]
    seen = set()
    for (card1, card2), line, state in kuhn_histories(game):
        chips = kuhn_chips_of_p1(card1, card2, line)
        assert game.goals(state) == (0, 50 + 25 * chips, 50 - 25 * chips), (card1, card2, line)
        seen.add((card1, card2, line))
    deals = {(c1, c2) for c1, c2, _ in seen}
    assert deals == {(a, b) for a in RANK for b in RANK if a != b}  # all 6 deals
    assert len(seen) == 30  # 6 deals x 5 betting lines


def kuhn_equilibrium(game: Game, state: State, role: int) -> dict[Term, Fraction]:
    """Kuhn's equilibrium with alpha = 0: p1 never bets first, calls with q at 1/3, with k;
    p2 bets k and bluffs j at 1/3 when checked to, calls with k, with q at 1/3."""
    name = game.roles[role].name
    moves = {str(m): m for m in game.legal_moves(state, game.roles[role])}
    if name == "random" or len(moves) == 1:
        return {m: Fraction(1, len(moves)) for m in moves.values()}
    card = next(
        str(f.args[1])
        for f in game.state_facts(state)
        if f.name == "holds" and str(f.args[0]) == name
    )
    if "check" in moves:
        bet = (
            Fraction(0)
            if name == "p1"
            else {"j": Fraction(1, 3), "q": Fraction(0), "k": Fraction(1)}[card]
        )
        return {moves["bet"]: bet, moves["check"]: 1 - bet}
    call = {"j": Fraction(0), "q": Fraction(1, 3), "k": Fraction(1)}[card]
    return {moves["call"]: call, moves["fold"]: 1 - call}


def test_kuhn_poker_equilibrium_value_is_minus_one_eighteenth() -> None:
    game = load(KUHN)
    goals = expected_goals(game, [kuhn_equilibrium] * 3)
    assert goals == (Fraction(0), 50 - Fraction(25, 18), 50 + Fraction(25, 18))
