"""A player's policy at an information set: answered by a PolicyPlayer (random, cfr),
estimated from plays for any other player."""

from __future__ import annotations

import math

import numpy as np
import pytest

from ggp.errors import GameError
from ggp.game import Game
from ggp.gdl.parser import parse_term
from ggp.gdl.terms import Term
from ggp.players.base import MatchInfo, MovePolicy, Observation, Player, PolicyPlayer
from ggp.players.cfr_player import CFRPlayer, CFRSettings
from ggp.players.history_tracker import HistoryTracker
from ggp.players.policy import estimate_policy, policy_of
from ggp.players.random_player import RandomPlayer

from conftest import GAMES


@pytest.fixture(scope="module")
def monty() -> Game:
    return Game.from_file(GAMES / "montyhall.gdl")


def decision_observations(game: Game) -> list[Observation]:
    """The candidate's observations at its switch-or-stay decision: it chose door 1 and
    saw door 3 opened."""
    return [
        Observation(0, None, frozenset()),
        Observation(1, parse_term("(choose 1)"), frozenset()),
        Observation(2, parse_term("noop"), frozenset({parse_term("(open_door 3)")})),
    ]


class FirstMovePlayer:
    """Plays its first legal move, and cannot say its policy (not a PolicyPlayer)."""

    name = "first"

    def __init__(self, rng: np.random.Generator) -> None:
        self.rng = rng
        self._tracker: HistoryTracker | None = None

    def start(self, match: MatchInfo) -> None:
        self._tracker = HistoryTracker(match, self.rng)

    def play(self, observation: Observation, deadline: float) -> Term:
        assert self._tracker is not None
        self._tracker.observe(observation)
        move = self._tracker.legal_moves(deadline)[0]
        self._tracker.replied(move)
        return move

    def stop(self, observation: Observation) -> None:
        self._tracker = None

    def abort(self) -> None:
        self._tracker = None


class PlayOnly:
    """Plays as ``inner`` does, hiding its policy method."""

    name = "play-only"

    def __init__(self, inner: Player) -> None:
        self.inner = inner

    def start(self, match: MatchInfo) -> None:
        self.inner.start(match)

    def play(self, observation: Observation, deadline: float) -> Term:
        return self.inner.play(observation, deadline)

    def stop(self, observation: Observation) -> None:
        self.inner.stop(observation)

    def abort(self) -> None:
        self.inner.abort()


def test_which_players_can_say_their_policy() -> None:
    rng = np.random.default_rng(0)
    assert isinstance(RandomPlayer(rng), PolicyPlayer)
    assert isinstance(CFRPlayer(rng=rng), PolicyPlayer)
    assert not isinstance(FirstMovePlayer(rng), PolicyPlayer)
    assert not isinstance(PlayOnly(RandomPlayer(rng)), PolicyPlayer)


def test_random_player_is_uniform_over_its_legal_moves(monty: Game) -> None:
    match = MatchInfo("m", monty, monty.role("candidate"))
    answer = policy_of(
        RandomPlayer(np.random.default_rng(0)), match, decision_observations(monty), math.inf
    )
    assert not answer.estimated and answer.samples == 0
    assert [str(m) for m in answer.policy.moves] == ["noop", "switch"]
    assert answer.policy.probabilities == (0.5, 0.5)


def test_cfr_player_says_it_always_switches(monty: Game) -> None:
    # The distribution play() draws from: the search's policy at the information set.
    player = CFRPlayer(CFRSettings(min_time_s=0.05, max_time_s=0.5), rng=np.random.default_rng(0))
    match = MatchInfo("m", monty, monty.role("candidate"))
    policy = player.policy(match, decision_observations(monty), math.inf)
    chosen = dict(zip(map(str, policy.moves), policy.probabilities, strict=True))
    assert chosen["switch"] >= 0.99
    assert player.last_search is not None and player.last_search.complete
    # The one legal move is answered without a search.
    one = player.policy(match, decision_observations(monty)[:2], math.inf)
    assert [str(m) for m in one.moves] == ["noop"] and one.probabilities == (1.0,)


def test_a_player_that_only_plays_is_estimated(monty: Game) -> None:
    match = MatchInfo("m", monty, monty.role("candidate"))
    observations = decision_observations(monty)
    first = policy_of(FirstMovePlayer(np.random.default_rng(0)), match, observations, 0.0, 7)
    assert first.estimated and first.samples == 7
    assert first.policy == MovePolicy((parse_term("noop"),), (1.0,))
    # A random player hidden behind play(): frequencies near uniform.
    hidden = PlayOnly(RandomPlayer(np.random.default_rng(1)))
    estimate = estimate_policy(hidden, match, observations, 400)
    frequencies = dict(zip(map(str, estimate.moves), estimate.probabilities, strict=True))
    assert set(frequencies) == {"noop", "switch"}
    assert frequencies["switch"] == pytest.approx(0.5, abs=0.1)
    assert math.fsum(estimate.probabilities) == pytest.approx(1.0)


@pytest.mark.parametrize(
    ("turns", "samples", "message"),
    [
        (0, 10, "a policy needs the observations of turn 0"),
        (3, 0, "samples must be positive, not 0"),
    ],
)
def test_bad_questions_are_refused(monty: Game, turns: int, samples: int, message: str) -> None:
    match = MatchInfo("m", monty, monty.role("candidate"))
    observations = decision_observations(monty)[:turns]
    with pytest.raises(GameError, match=message):
        policy_of(FirstMovePlayer(np.random.default_rng(0)), match, observations, 0.0, samples)
