"""games/leduc_poker.gdl: Leduc hold'em as OpenSpiel plays it. Every history is checked
against the rules written out independently here (legal moves, chips won), the tree's
size against OpenSpiel's (936 information sets), and the game value against the known
-0.0856 chip for p1."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache

import pytest

from ggp.game import Game
from ggp.reasoning.state_machine import JointMove, State
from ggp.search.cfr import CFRSolver, exploitability
from ggp.search.tree import build_tree

from conftest import GAMES

LEDUC = GAMES / "leduc_poker.gdl"
GOAL_PER_CHIP = 3  # goal = 50 + 3 * chips
RANK = {"j": 0, "q": 1, "k": 2}
CARDS = [rank + suit for rank in RANK for suit in "12"]
#: p1's value in chips (OpenSpiel's leduc_poker, CFR+ converged).
VALUE_OF_P1 = -0.0856


@cache
def load() -> Game:
    return Game.from_file(LEDUC)


@dataclass(frozen=True)
class Leduc:
    """The rules, independently of the GDL: where a hand stands after some moves.

    Attributes:
        card1, card2: The private cards.
        public: The public card (None before it is dealt).
        rounds: ``[1 or 2][moves]`` the betting of each round so far.
    """

    card1: str
    card2: str
    public: str | None
    rounds: tuple[tuple[str, ...], ...]

    def paid(self) -> tuple[list[int], bool, str | None]:
        """(chips each player put in, whether a bet is outstanding, who folded)."""
        paid = [1, 1]
        outstanding = False
        for size, line in zip((2, 4), self.rounds, strict=False):
            outstanding = False
            for index, move in enumerate(line):
                player = index % 2
                if move == "fold":
                    return paid, outstanding, ("p1", "p2")[player]
                if move == "raise":
                    paid[player] = max(paid) + size
                    outstanding = True
                elif move == "call":
                    paid[player] = max(paid)
                    outstanding = False
        return paid, outstanding, None

    def legal(self) -> set[str]:
        """The moves of the player to act."""
        _, outstanding, _ = self.paid()
        line = self.rounds[-1]
        raises = line.count("raise")
        moves = {"call", "fold"} if outstanding else {"check"}
        if raises < 2:
            moves.add("raise")
        return moves

    def round_over(self) -> bool:
        line = self.rounds[-1]
        return line in (("check", "check"),) or (bool(line) and line[-1] in ("call", "fold"))

    def chips_of_p1(self) -> int:
        paid, _, folded = self.paid()
        if folded is not None:
            return -paid[0] if folded == "p1" else paid[1]
        assert self.public is not None
        pairs = [card[0] == self.public[0] for card in (self.card1, self.card2)]
        if pairs[0] != pairs[1]:
            return paid[1] if pairs[0] else -paid[0]
        r1, r2 = RANK[self.card1[0]], RANK[self.card2[0]]
        return 0 if r1 == r2 else paid[1] if r1 > r2 else -paid[0]


def histories(game: Game) -> Iterator[tuple[Leduc | None, State, tuple[JointMove, ...]]]:
    """Every history, depth first, with where the hand stands by the rules above."""
    stack: list[tuple[State, tuple[JointMove, ...]]] = [(game.initial_state(), ())]
    while stack:
        state, joints = stack.pop()
        hand: Leduc | None = None
        if joints:
            deal = joints[0][0]
            hand = Leduc(str(deal.args[0]), str(deal.args[1]), None, ((),))
            for joint in joints[1:]:
                chance = joint[0]
                if chance.name == "deal_public":
                    hand = Leduc(hand.card1, hand.card2, str(chance.args[0]), (*hand.rounds, ()))
                    continue
                move = next(str(m) for m in joint[1:] if str(m) != "noop")
                rounds = (*hand.rounds[:-1], (*hand.rounds[-1], move))
                hand = Leduc(hand.card1, hand.card2, hand.public, rounds)
        yield hand, state, joints
        if game.is_terminal(state):
            continue
        legal = [game.legal_moves(state, role) for role in game.roles]
        for joint in itertools.product(*legal):
            stack.append((game.next_state(state, joint), (*joints, joint)))


def test_every_history_follows_the_rules_and_pays_the_chips() -> None:
    game = load()
    assert [r.name for r in game.roles] == ["random", "p1", "p2"]
    terminal = 0
    deals = set()
    for hand, state, joints in histories(game):
        if hand is None:  # the deal: 30 ordered pairs of different cards
            (moves,) = {game.legal_moves(state, "random")}
            assert sorted(str(m) for m in moves) == sorted(
                f"(deal {a} {b})" for a in CARDS for b in CARDS if a != b
            )
            continue
        deals.add((hand.card1, hand.card2))
        where = (hand, len(joints))
        if game.is_terminal(state):
            terminal += 1
            assert hand.round_over() and (len(hand.rounds) == 2 or "fold" in hand.rounds[0])
            chips = hand.chips_of_p1()
            assert game.goals(state) == (0, 50 + 3 * chips, 50 - 3 * chips), where
            continue
        if hand.round_over():  # round 1 is over: the public card, one of the 4 left
            assert len(hand.rounds) == 1
            moves = {str(m) for m in game.legal_moves(state, "random")}
            left = set(CARDS) - {hand.card1, hand.card2}
            assert moves == {f"(deal_public {c})" for c in left}, where
            continue
        to_act = ("p1", "p2")[len(hand.rounds[-1]) % 2]
        waiting = "p2" if to_act == "p1" else "p1"
        assert {str(m) for m in game.legal_moves(state, to_act)} == hand.legal(), where
        assert [str(m) for m in game.legal_moves(state, waiting)] == ["noop"]
        assert [str(m) for m in game.legal_moves(state, "random")] == ["noop"]
    assert len(deals) == 30
    # 30 deals x (4 folds in round 1 + 5 lines going on x 4 public cards x 9 endings).
    assert terminal == 30 * (4 + 5 * 4 * 9) == 5520


def test_tree_has_open_spiels_information_sets() -> None:
    tree = build_tree(load())
    assert len(tree.node_state) == 9451
    assert len(tree.leaf_node) == 5520
    # OpenSpiel: 936 information sets, 468 per player (6 private cards x 3 decisions in
    # round 1; 6 x 5 public cards x 5 round-1 lines x 3 decisions in round 2).
    assert tree.num_infosets == 936
    p1, p2 = load().role_index("p1"), load().role_index("p2")
    assert (tree.infoset_role == p1).sum() == (tree.infoset_role == p2).sum() == 468


def test_game_value_is_minus_0_0856_chip() -> None:
    tree = build_tree(load())
    solver = CFRSolver(tree)
    solver.iterate(300)  # about 1.5 s; OpenSpiel's CFR+: exploitability 0.0134 at 100
    result = exploitability(tree, solver.average_strategy())
    p1 = load().role_index("p1")
    assert (result.values[p1] - 50) / GOAL_PER_CHIP == pytest.approx(VALUE_OF_P1, abs=1e-3)
    assert result.exploitability / GOAL_PER_CHIP < 5e-3
    assert result.values.sum() == pytest.approx(100.0)  # constant sum: p1 + p2 = 100
