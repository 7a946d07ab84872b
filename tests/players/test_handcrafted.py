"""The handcrafted Meier and Blind Tic-Tac-Toe players (REFERENCE.md's definitions)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import cache

import numpy as np
import pytest

from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.match import run_match
from ggp.players.base import MatchInfo, Observation, Player
from ggp.players.handcrafted import (
    MEIER_RANKS,
    BlindTicTacToePlayer,
    HandcraftedPlayer,
    MeierPlayer,
    handcrafted_player,
    meier_rank,
)
from ggp.players.random_player import RandomPlayer
from ggp.players.registry import make_player

from conftest import GAMES


@cache
def load(name: str) -> Game:
    return Game.from_file(GAMES / name)


def drive(game: Game, player: Player, role: str, joints: Sequence[Sequence[str]]) -> Observation:
    """Start ``player`` as ``role`` and feed it the observations of ``joints`` (KIF moves,
    one per role); returns the observation for its next move (not yet played)."""
    me = game.role(role)
    player.start(MatchInfo("test", game, me))
    state = game.initial_state()
    last: Term | None = None
    seen: frozenset[Term] = frozenset()
    for step, moves in enumerate(joints):
        joint = game.joint_move(list(moves))
        if step:
            # The player is asked at every step; its answer is replaced by the scripted move.
            player.play(Observation(step, last, seen), float("inf"))
        else:
            player.play(Observation(0, None, frozenset()), float("inf"))
        seen = game.percepts(state, joint, me)
        last = joint[game.role_index(me)]
        state = game.next_state(state, joint)
    return Observation(len(joints), last, seen)


def claim_counts(dice: tuple[int, int], trials: int, seed: int = 0) -> Counter[str]:
    """What a fresh MeierPlayer as p1 claims, ``trials`` times, after rolling ``dice``."""
    game = load("meier.gdl")
    counts: Counter[str] = Counter()
    rng = np.random.default_rng(seed)
    for _ in range(trials):
        player = MeierPlayer(rng)
        obs = drive(game, player, "p1", [[f"(roll p1 {dice[0]} {dice[1]})", "noop", "noop"]])
        counts[str(player.play(obs, float("inf")))] += 1
    return counts


def call_rate(claim: str, trials: int, seed: int = 0) -> float:
    """How often a MeierPlayer as p2 calls ``claim`` made by p1."""
    game = load("meier.gdl")
    rng = np.random.default_rng(seed)
    calls = 0
    for _ in range(trials):
        player = MeierPlayer(rng)
        obs = drive(
            game,
            player,
            "p2",
            [["(roll p1 3 1)", "noop", "noop"], ["noop", claim, "noop"]],
        )
        move = player.play(obs, float("inf"))
        calls += str(move) == "you_bluff"
    return calls / trials


def test_meier_ranks() -> None:
    assert len(MEIER_RANKS) == 21
    assert MEIER_RANKS[0] == (3, 1) and MEIER_RANKS[13] == (6, 5)
    assert MEIER_RANKS[14] == (1, 1) and MEIER_RANKS[19] == (6, 6)
    assert MEIER_RANKS[-1] == (2, 1)
    game = load("meier.gdl")
    assert meier_rank(game.term("(claim 2 1)")) == 20
    assert meier_rank(game.term("ask_roll")) is None


def test_meier_claims_truth_with_probability_rank_plus_one_over_21() -> None:
    # Meier (21) is claimed truthfully always: (20 + 1) / 21 = 1.
    assert claim_counts((1, 2), 20) == Counter({"(claim 2 1)": 20})
    # 31 (rank 0): the truth with probability 1/21, else a random higher claim.
    counts = claim_counts((1, 3), 2000)
    assert counts["(claim 3 1)"] / 2000 == pytest.approx(1 / 21, abs=0.015)
    # 66 (rank 19): truth 20/21; otherwise it moves up to 21 and stops there.
    counts = claim_counts((6, 6), 1000, seed=1)
    assert set(counts) == {"(claim 6 6)", "(claim 2 1)"}
    assert counts["(claim 6 6)"] / 1000 == pytest.approx(20 / 21, abs=0.02)
    # Never a claim below its own roll when the roll may be claimed.
    counts = claim_counts((5, 5), 500, seed=2)
    assert all(meier_rank(load("meier.gdl").term(c)) >= 18 for c in counts)  # type: ignore[operator]


def test_meier_calls_with_probability_rank_plus_one_over_21() -> None:
    assert call_rate("(claim 3 1)", 2000) == pytest.approx(1 / 21, abs=0.015)
    assert call_rate("(claim 6 5)", 2000, seed=1) == pytest.approx(14 / 21, abs=0.03)
    assert call_rate("(claim 2 1)", 50) == 1.0  # only you_bluff is legal


def test_meier_random_claim_when_the_roll_cannot_be_claimed() -> None:
    game = load("meier.gdl")
    rng = np.random.default_rng(3)
    seen: Counter[str] = Counter()
    for _ in range(300):
        player = MeierPlayer(rng)
        obs = drive(
            game,
            player,
            "p2",
            [
                ["(roll p1 6 6)", "noop", "noop"],
                ["noop", "(claim 6 6)", "noop"],
                ["noop", "noop", "ask_roll"],
                ["(roll p2 3 1)", "noop", "noop"],  # 31 cannot beat 66
            ],
        )
        seen[str(player.play(obs, float("inf")))] += 1
    assert set(seen) == {"(claim 2 1)"}  # the only claim above 66


def test_blind_tictactoe_rules() -> None:
    game = load("blindtictactoe.gdl")
    legal = {(r, c): game.term(f"(mark {r} {c})") for r in (1, 2, 3) for c in (1, 2, 3)}

    def choose(tried: Sequence[tuple[tuple[int, int], bool]], seed: int = 0) -> tuple[int, int]:
        player = BlindTicTacToePlayer(np.random.default_rng(seed))
        player.tried = list(tried)
        free = {cell: m for cell, m in legal.items() if cell not in {t for t, _ in tried}}
        choice = player._choose(free)
        assert choice is not None
        return choice

    assert choose([]) == (2, 2)
    corners = {(1, 1), (1, 3), (3, 1), (3, 3)}
    assert {choose([((2, 2), True)], s) for s in range(40)} == corners
    # Both succeeded: the opposite corner.
    assert choose([((2, 2), True), ((1, 1), True)]) == (3, 3)
    # Otherwise an adjacent corner.
    assert {choose([((2, 2), False), ((1, 1), True)], s) for s in range(40)} == {(1, 3), (3, 1)}
    assert {choose([((2, 2), True), ((1, 3), False)], s) for s in range(40)} == {(1, 1), (3, 3)}
    # Then complete a line it knows it holds: (1,1) and (1,3) held -> (1,2).
    tried = [((2, 2), False), ((1, 1), True), ((1, 3), True)]
    assert choose(tried) == (1, 2)
    # No line to complete: an untried corner.
    tried = [((2, 2), False), ((1, 1), False), ((1, 3), False)]
    assert {choose(tried, s) for s in range(40)} == {(3, 1), (3, 3)}
    # No corner left: any untried cell.
    tried = [((r, c), False) for r, c in [(2, 2), (1, 1), (1, 3), (3, 1), (3, 3)]]
    assert {choose(tried, s) for s in range(60)} == {(1, 2), (2, 1), (2, 3), (3, 2)}


@pytest.mark.parametrize("name", ["meier.gdl", "blindtictactoe.gdl", "blindtictactoe_biased.gdl"])
def test_handcrafted_plays_legal_moves(name: str) -> None:
    game = load(name)
    for seed in range(15):
        streams = np.random.SeedSequence(seed).spawn(3)
        roles = game.player_roles
        players: dict[object, Player] = {
            roles[0]: HandcraftedPlayer(np.random.default_rng(streams[0])),
            roles[1]: RandomPlayer(np.random.default_rng(streams[1])),
        }
        if seed % 2:
            players = {
                roles[0]: RandomPlayer(np.random.default_rng(streams[1])),
                roles[1]: HandcraftedPlayer(np.random.default_rng(streams[0])),
            }
        record = run_match(
            game,
            players,  # type: ignore[arg-type]
            np.random.default_rng(streams[2]),
            play_clock_s=30.0,
        )
        assert record.replacements == ()


def test_bttt_handcrafted_opens_in_the_centre() -> None:
    game = load("blindtictactoe.gdl")
    player = handcrafted_player(game, np.random.default_rng(0))
    player.start(MatchInfo("m", game, game.role("o")))
    assert str(player.play(Observation(0, None, frozenset()), float("inf"))) == "(mark 2 2)"


def test_no_handcrafted_player_for_other_games() -> None:
    game = load("tictactoe.gdl")
    with pytest.raises(GameError, match="no handcrafted player"):
        handcrafted_player(game)
    with pytest.raises(GameError, match="no handcrafted player"):
        make_player("handcrafted", np.random.default_rng(0), game)
    lazy = make_player("handcrafted", np.random.default_rng(0))
    with pytest.raises(GameError, match="no handcrafted player"):
        lazy.start(MatchInfo("m", game, game.player_roles[0]))


def test_best_response_specs() -> None:
    from ggp.players import blindtictactoe_values, meier_values

    rng = np.random.default_rng(0)
    meier = Game.from_file(GAMES / "meier.gdl")
    bttt = Game.from_file(GAMES / "blindtictactoe.gdl")
    player = make_player("best-response:handcrafted", rng, meier)
    assert isinstance(player, meier_values.BestResponsePlayer)
    player = make_player("best-response", rng, bttt)
    assert isinstance(player, blindtictactoe_values.BestResponsePlayer)
    for spec, game, message in [
        ("best-response:handcrafted", bttt, "no exact best response to the handcrafted player"),
        ("best-response", Game.from_file(GAMES / "blindtictactoe_biased.gdl"), "fair"),
        ("best-response", Game.from_file(GAMES / "montyhall.gdl"), "montyhall.gdl"),
        ("best-response:cfr", meier, "not 'cfr'"),
    ]:
        with pytest.raises(GameError, match=message):
            make_player(spec, rng, game)
    with pytest.raises(GameError, match="made for one game"):
        make_player("best-response", rng)
