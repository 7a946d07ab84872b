"""History samplers: consistency in every mode, and the posterior they draw from.

Known values: in Monty Hall, after the candidate chose door 1 and saw door 3 opened, the
car is behind door 2 with probability 2/3. In Meier, under a known claim policy for p1,
the posterior of p1's dice given its claims is computed here by brute force over the
dice rolls and compared with the posterior sampler's belief (exactly) and its samples
(total variation and chi-square).
"""

from __future__ import annotations

import itertools
import logging
import math
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import pytest

from ggp.errors import GameError, NoConsistentHistoryError
from ggp.game import Game
from ggp.gdl.terms import Const, Term
from ggp.reasoning.state_machine import State
from ggp.search import clock
from ggp.search import posterior as posterior_module
from ggp.search.history import ObservationHistory
from ggp.search.sampler import (
    BacktrackingSampler,
    BiasedBacktrackingSampler,
    HistorySampler,
    OutOfTime,
    PolicyModel,
    PosteriorSampler,
    RejectionSampler,
    SampledHistory,
    UniformPolicy,
    check_consistent,
    live_roots,
    make_sampler,
)
from ggp.search.tree import build_tree

GAMES = Path(__file__).resolve().parents[2] / "games"
FloatArray = npt.NDArray[np.float64]

# --------------------------------------------------------------------------- helpers


_GAME_CACHE: dict[str, Game] = {}


def load(name: str) -> Game:
    if name not in _GAME_CACHE:
        _GAME_CACHE[name] = Game.from_file(GAMES / f"{name}.gdl")
    return _GAME_CACHE[name]


def observe(game: Game, role: str, joints: Sequence[Sequence[str]]) -> ObservationHistory:
    """``role``'s observations along the given joint moves (KIF text, role order)."""
    history = ObservationHistory(game.role(role))
    state = game.initial_state()
    me = game.role_index(role)
    for joint in joints:
        moves = game.joint_move(joint)
        history = history.extend(moves[me], game.percepts(state, moves, role))
        state = game.next_state(state, moves)
    return history


def random_history(game: Game, role: str, steps: int, seed: int) -> ObservationHistory:
    """``role``'s observations of up to ``steps`` uniformly random steps."""
    rng = np.random.default_rng(seed)
    history = ObservationHistory(game.role(role))
    state = game.initial_state()
    me = game.role_index(role)
    for _ in range(steps):
        if game.is_terminal(state):
            break
        legal = [game.legal_moves(state, r) for r in game.roles]
        joint = tuple(m[int(rng.integers(len(m)))] for m in legal)
        history = history.extend(joint[me], game.percepts(state, joint, role))
        state = game.next_state(state, joint)
    return history


def montyhall_history(game: Game, opened: int) -> ObservationHistory:
    """The candidate chose door 1 and saw door ``opened`` opened."""
    return (
        ObservationHistory(game.role("candidate"))
        .extend(game.term("(choose 1)"), frozenset())
        .extend(Const("noop"), frozenset({game.term(f"(open_door {opened})")}))
    )


def fact_args(game: Game, state: State, name: str) -> list[tuple[str, ...]]:
    return [tuple(str(a) for a in f.args) for f in game.state_facts(state) if f.name == name]


def make(mode: str, game: Game) -> HistorySampler:
    if mode == "biased":
        return BiasedBacktrackingSampler(game, UniformPolicy())
    return make_sampler(game, mode)  # type: ignore[arg-type]


MODES = ["rejection", "backtracking", "biased", "posterior"]

# --------------------------------------------------------------------------- consistency

#: (game, observer, steps, seed): histories short enough for naive rejection.
HISTORIES = [
    ("montyhall", "candidate", 3, 0),
    ("montyhall", "candidate", 2, 1),
    ("meier", "p1", 4, 2),
    ("meier", "p2", 4, 3),
    ("meier", "p2", 2, 4),
    ("blindtictactoe", "x", 3, 5),
    ("blindtictactoe", "o", 2, 6),
]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("name", "role", "steps", "seed"), HISTORIES)
def test_every_sample_is_consistent(mode: str, name: str, role: str, steps: int, seed: int) -> None:
    game = load(name)
    history = random_history(game, role, steps, seed)
    sampler = make(mode, game)
    assert isinstance(sampler, HistorySampler)
    rng = np.random.default_rng(seed)
    drawn = sampler.sample_many(history, 20, rng)
    assert len(drawn) == 20
    assert sum(w for _, w in drawn) == pytest.approx(1.0)
    for sampled, _ in drawn:
        check_consistent(game, history, sampled)


def test_check_consistent_catches_a_wrong_history() -> None:
    game = load("montyhall")
    history = montyhall_history(game, 3)
    good = PosteriorSampler(game).sample(history, np.random.default_rng(0))
    check_consistent(game, history, good)
    # Had the host opened door 2, the candidate would have seen (open_door 2).
    with pytest.raises(GameError, match="step 2"):
        check_consistent(game, montyhall_history(game, 2), good)
    with pytest.raises(GameError, match="joint moves"):
        check_consistent(game, history, SampledHistory(good.states[:2], good.joint_moves[:1]))
    # Another own move: the candidate chose door 2 in this history.
    swapped = (good.joint_moves[0][1],)
    chose_2 = (game.term("(choose 2)"), *swapped)
    tampered = SampledHistory(good.states, (chose_2, *good.joint_moves[1:]))
    with pytest.raises(GameError, match="step 1"):
        check_consistent(game, history, tampered)


# --------------------------------------------------------------------------- Monty Hall


def car_fraction(game: Game, drawn: Sequence[tuple[SampledHistory, float]], door: int) -> float:
    hits = sum(w for s, w in drawn if fact_args(game, s.state, "car") == [(str(door),)])
    return float(hits)


@pytest.mark.parametrize("opened", [2, 3])
@pytest.mark.parametrize("mode", ["posterior", "rejection"])
def test_montyhall_car_behind_the_other_door_two_thirds(mode: str, opened: int) -> None:
    game = load("montyhall")
    history = montyhall_history(game, opened)
    sampler = make(mode, game)
    drawn = sampler.sample_many(history, 5000, np.random.default_rng(opened))
    other = 5 - opened  # doors 2 and 3: the closed one not picked
    assert car_fraction(game, drawn, other) == pytest.approx(2 / 3, abs=0.02)
    assert car_fraction(game, drawn, 1) == pytest.approx(1 / 3, abs=0.02)


def test_montyhall_exact_belief() -> None:
    game = load("montyhall")
    belief = PosteriorSampler(game).belief(montyhall_history(game, 3), np.random.default_rng(0))
    assert belief.exact
    by_car = {
        fact_args(game, s, "car")[0][0]: p
        for s, p in zip(belief.states, belief.probabilities, strict=True)
    }
    assert by_car == pytest.approx({"1": 1 / 3, "2": 2 / 3}, abs=1e-12)


@pytest.mark.parametrize("mode", ["backtracking", "biased"])
def test_montyhall_backtracking_is_biased(mode: str) -> None:
    # Uniform among consistent joint moves, with the car-behind-3 branch dead: the car is
    # behind door 2 with probability 1/3 + 1/3 * 1/2 = 1/2, not 2/3.
    game = load("montyhall")
    drawn = make(mode, game).sample_many(montyhall_history(game, 3), 5000, np.random.default_rng(7))
    assert car_fraction(game, drawn, 2) == pytest.approx(1 / 2, abs=0.02)


def test_particle_fallback_montyhall() -> None:
    game = load("montyhall")
    sampler = PosteriorSampler(game, max_states=2, num_particles=5000)
    rng = np.random.default_rng(11)
    history = montyhall_history(game, 3)
    belief = sampler.belief(history, rng)
    assert not belief.exact
    drawn = sampler.sample_many(history, 5000, rng)
    for sampled, _ in drawn[:50]:
        check_consistent(game, history, sampled)
    assert car_fraction(game, drawn, 2) == pytest.approx(2 / 3, abs=0.03)


def test_dead_particles_are_redrawn_by_backtracking(caplog: pytest.LogCaptureFixture) -> None:
    # One particle: it hides the car behind door 3 a third of the time, then dies when
    # the host opens door 3.
    game = load("montyhall")
    history = montyhall_history(game, 3)
    with caplog.at_level(logging.INFO, logger="ggp.search.posterior"):
        for seed in range(12):
            sampler = PosteriorSampler(game, max_states=1, num_particles=1)
            drawn = sampler.sample_many(history, 3, np.random.default_rng(seed))
            for sampled, _ in drawn:
                check_consistent(game, history, sampled)
    assert "every particle died at step 2" in caplog.text


def test_posterior_roots_build_a_tree() -> None:
    game = load("montyhall")
    roots = PosteriorSampler(game).sample_many(
        montyhall_history(game, 3), 200, np.random.default_rng(0)
    )
    tree = build_tree(game, roots)
    assert tree.root_weight.sum() == pytest.approx(1.0)
    assert len(tree.root_nodes) == 2  # car behind door 1 or door 2


# --------------------------------------------------------------------------- Meier

#: Claim values, lowest first; index = rank. (0, 0) is the start value.
VALUES = [(0, 0), (3, 1), (3, 2), (4, 1), (4, 2), (4, 3), (5, 1), (5, 2), (5, 3), (5, 4)]
VALUES += [(6, 1), (6, 2), (6, 3), (6, 4), (6, 5), (1, 1), (2, 2), (3, 3), (4, 4), (5, 5)]
VALUES += [(6, 6), (2, 1)]
RANK = {v: r for r, v in enumerate(VALUES)}
TRUTH = 0.6  # probability of claiming the dice when that is legal


def as_value(a: int, b: int) -> tuple[int, int]:
    """The value of the roll ``a b``, high die first."""
    return (max(a, b), min(a, b))


def claim_probability(
    dice: tuple[int, int], last: tuple[int, int], claim: tuple[int, int]
) -> float:
    """The known claim policy: the truth with probability TRUTH when it beats the last
    claim (the rest spread evenly over the other legal claims), else uniform."""
    legal = [v for v in VALUES[1:] if RANK[v] > RANK[last]]
    assert claim in legal
    if RANK[dice] > RANK[last] and len(legal) > 1:
        return TRUTH if claim == dice else (1 - TRUTH) / (len(legal) - 1)
    return 1 / len(legal)


def bluff_probability(last: tuple[int, int]) -> float:
    """The known call policy: you_bluff with probability (rank + 1) / 22."""
    return (RANK[last] + 1) / 22


class MeierModel:
    """The known policy of p1 and p2, read from the true state (their dice, last claim)."""

    def __call__(
        self, game: Game, state: State, role: int, legal_moves: tuple[Term, ...], /
    ) -> FloatArray:
        name = str(game.roles[role])
        (last,) = [(int(h), int(lo)) for h, lo in fact_args(game, state, "last_claim")]
        if all(m.name == "claim" for m in legal_moves):
            (dice,) = [
                (int(h), int(lo)) for p, h, lo in fact_args(game, state, "dice") if p == name
            ]
            claims = [(int(str(m.args[0])), int(str(m.args[1]))) for m in legal_moves]
            return np.array([claim_probability(dice, last, c) for c in claims])
        p = bluff_probability(last)
        return np.array([p if m == Const("you_bluff") else 1 - p for m in legal_moves])


NOOP = "noop"
#: p1 rolls 4 3 and claims 43; p2 rolls 2 5 and claims 52; p1 rolls 1 6 and bluffs 64.
MEIER_GAME = [
    ("(roll p1 4 3)", NOOP, NOOP),
    (NOOP, "(claim 4 3)", NOOP),
    (NOOP, NOOP, "ask_roll"),
    ("(roll p2 2 5)", NOOP, NOOP),
    (NOOP, NOOP, "(claim 5 2)"),
    (NOOP, "ask_roll", NOOP),
    ("(roll p1 1 6)", NOOP, NOOP),
    (NOOP, "(claim 6 4)", NOOP),
]
ROLLS = list(itertools.product(range(1, 7), repeat=2))


def brute_force_meier() -> tuple[dict[tuple[int, int], float], dict[tuple[int, int], float]]:
    """P(p1's first dice value), P(p1's current dice value) given p2's 8 observations.

    Enumerates both of p1's rolls (36 x 36, each 1/36): the weight of a pair is the
    product of chance and p1's policy factors (claim 43 from the first roll, ask_roll
    after claim 52, claim 64 from the second roll).
    """
    first: defaultdict[tuple[int, int], float] = defaultdict(float)
    current: defaultdict[tuple[int, int], float] = defaultdict(float)
    for (a, b), (c, d) in itertools.product(ROLLS, ROLLS):
        weight = (
            (1 / 36)
            * claim_probability(as_value(a, b), (0, 0), (4, 3))
            * (1 - bluff_probability((5, 2)))
            * (1 / 36)
            * claim_probability(as_value(c, d), (5, 2), (6, 4))
        )
        first[as_value(a, b)] += weight
        current[as_value(c, d)] += weight
    total = sum(first.values())
    return (
        {v: w / total for v, w in first.items()},
        {v: w / total for v, w in current.items()},
    )


def dice_value_of(move: Term) -> tuple[int, int]:
    assert move.name == "roll"
    return as_value(int(str(move.args[1])), int(str(move.args[2])))


def chi_square_critical(df: int, z: float = 3.09) -> float:
    """The 0.999 quantile of chi-square with ``df`` degrees (Wilson–Hilferty)."""
    return df * (1 - 2 / (9 * df) + z * math.sqrt(2 / (9 * df))) ** 3


def assert_matches(
    samples: Sequence[tuple[int, int]], exact: dict[tuple[int, int], float], tv_max: float
) -> None:
    counts = Counter(samples)
    n = len(samples)
    assert set(counts) <= {v for v, p in exact.items() if p > 0}
    tv = 0.5 * sum(abs(counts[v] / n - p) for v, p in exact.items())
    chi2 = sum((counts[v] - n * p) ** 2 / (n * p) for v, p in exact.items() if p > 0)
    df = sum(p > 0 for p in exact.values()) - 1
    assert tv < tv_max, f"total variation {tv:.4f}"
    assert chi2 < chi_square_critical(df), f"chi-square {chi2:.1f} with {df} degrees"


def test_meier_exact_belief_matches_brute_force() -> None:
    game = load("meier")
    history = observe(game, "p2", MEIER_GAME)
    _, current = brute_force_meier()
    belief = PosteriorSampler(game, MeierModel()).belief(history, np.random.default_rng(0))
    assert belief.exact
    got: defaultdict[tuple[int, int], float] = defaultdict(float)
    for state, p in zip(belief.states, belief.probabilities, strict=True):
        ((h, lo),) = [(int(h), int(lo)) for r, h, lo in fact_args(game, state, "dice") if r == "p1"]
        got[(h, lo)] += float(p)
    assert dict(got) == pytest.approx(current, abs=1e-12)
    assert current[(6, 4)] > 0.3  # the claim is informative, not uniform


def test_meier_samples_follow_the_posterior() -> None:
    game = load("meier")
    history = observe(game, "p2", MEIER_GAME)
    first, current = brute_force_meier()
    drawn = PosteriorSampler(game, MeierModel()).sample_many(
        history, 5000, np.random.default_rng(2022)
    )
    for sampled, _ in drawn[:20]:
        check_consistent(game, history, sampled)
    assert_matches([dice_value_of(s.joint_moves[0][0]) for s, _ in drawn], first, 0.04)
    assert_matches([dice_value_of(s.joint_moves[6][0]) for s, _ in drawn], current, 0.04)


def test_meier_rejection_follows_the_posterior() -> None:
    game = load("meier")
    history = observe(game, "p2", MEIER_GAME[:2])
    exact: defaultdict[tuple[int, int], float] = defaultdict(float)
    for a, b in ROLLS:
        exact[as_value(a, b)] += claim_probability(as_value(a, b), (0, 0), (4, 3)) / 36
    total = sum(exact.values())
    posterior = {v: w / total for v, w in exact.items()}
    drawn = RejectionSampler(game, MeierModel()).sample_many(
        history, 2000, np.random.default_rng(3)
    )
    assert_matches([dice_value_of(s.joint_moves[0][0]) for s, _ in drawn], posterior, 0.05)


def test_posterior_reuses_the_filter_of_a_prefix() -> None:
    game = load("meier")
    full = observe(game, "p2", MEIER_GAME)
    sampler = PosteriorSampler(game, MeierModel())
    rng = np.random.default_rng(0)
    for steps in range(len(full) + 1):
        sampler.belief(full.prefix(steps), rng)
    grown = sampler.belief(full, rng)
    fresh = PosteriorSampler(game, MeierModel()).belief(full, rng)
    assert dict(zip(grown.states, grown.probabilities.tolist(), strict=True)) == pytest.approx(
        dict(zip(fresh.states, fresh.probabilities.tolist(), strict=True)), abs=1e-12
    )
    # a different branch after a common prefix
    other = observe(game, "p2", [*MEIER_GAME[:7], (NOOP, "(claim 6 5)", NOOP)])
    branched = sampler.belief(other, rng)
    again = PosteriorSampler(game, MeierModel()).belief(other, rng)
    assert dict(
        zip(branched.states, branched.probabilities.tolist(), strict=True)
    ) == pytest.approx(
        dict(zip(again.states, again.probabilities.tolist(), strict=True)), abs=1e-12
    )


# --------------------------------------------------------------------------- the clock


class ExpiringClock:
    """Stands in for the ``time`` module of :mod:`ggp.search.clock`, where the samplers
    read the clock: ``monotonic()`` reads 0.0 for ``readings`` calls, then 2.0 (after a
    deadline of 1.0)."""

    def __init__(self, readings: int) -> None:
        self.readings = readings

    def monotonic(self) -> float:
        self.readings -= 1
        return 0.0 if self.readings >= 0 else 2.0


def same_belief(a: PosteriorSampler, b: PosteriorSampler, history: ObservationHistory) -> None:
    rng = np.random.default_rng(0)
    one, two = a.belief(history, rng), b.belief(history, rng)
    assert dict(zip(one.states, one.probabilities.tolist(), strict=True)) == pytest.approx(
        dict(zip(two.states, two.probabilities.tolist(), strict=True)), abs=1e-12
    )


@pytest.mark.parametrize("mode", MODES)
def test_a_passed_deadline_stops_every_sampler(mode: str) -> None:
    game = load("blindtictactoe")
    history = random_history(game, "x", 3, 5)
    sampler = make(mode, game)
    with pytest.raises(OutOfTime):
        sampler.sample_many(history, 4, np.random.default_rng(0), deadline=time.monotonic() - 1)
    with pytest.raises(OutOfTime):
        live_roots(game, sampler, history, 4, np.random.default_rng(0), deadline=0.0)
    drawn = sampler.sample_many(history, 4, np.random.default_rng(0), deadline=None)
    assert len(drawn) == 4


def test_posterior_keeps_the_steps_filtered_before_its_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    game = load("meier")
    full = observe(game, "p2", MEIER_GAME)
    sampler = PosteriorSampler(game, MeierModel())
    monkeypatch.setattr(clock, "time", ExpiringClock(3))
    with pytest.raises(OutOfTime, match="exact filter stopped at step 4"):
        sampler.belief(full, np.random.default_rng(0), deadline=1.0)
    monkeypatch.undo()
    assert len(sampler._layers) == 4  # the initial state and three steps, kept
    same_belief(sampler, PosteriorSampler(game, MeierModel()), full)


def test_a_layer_stopped_at_its_deadline_goes_on_where_it_stopped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    game = load("meier")
    full = observe(game, "p2", MEIER_GAME)
    calls = Counter[str]()
    consistent = posterior_module.consistent_joint_moves

    def counted(*args: object) -> object:
        calls["now"] += 1
        return consistent(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(posterior_module, "consistent_joint_moves", counted)
    PosteriorSampler(game, MeierModel()).belief(full, np.random.default_rng(0))
    fresh_calls = calls.pop("now")
    sampler = PosteriorSampler(game, MeierModel())
    monkeypatch.setattr(clock, "CHECK_EVERY", 1)  # a look per state
    monkeypatch.setattr(posterior_module, "EXACT_STOPS", fresh_calls)  # never particles
    stopped_within_a_layer = 0
    for _ in range(fresh_calls):  # ten looks at the clock per call, until it is done
        monkeypatch.setattr(clock, "time", ExpiringClock(10))
        try:
            sampler.belief(full, np.random.default_rng(0), deadline=1.0)
            break
        except OutOfTime:
            partial = sampler._partial
            stopped_within_a_layer += partial is not None and partial.next_parent > 0
    else:
        pytest.fail("the filter never got past a layer of more than ten states")
    assert stopped_within_a_layer >= 3
    monkeypatch.setattr(clock, "time", time)
    same_belief(sampler, PosteriorSampler(game, MeierModel()), full)
    # No state was expanded twice (the second sampler above counts as well).
    assert calls["now"] == 2 * fresh_calls


def test_a_step_stopped_at_too_many_deadlines_goes_on_with_particles(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    game = load("meier")
    full = observe(game, "p2", MEIER_GAME)
    sampler = PosteriorSampler(game, MeierModel(), num_particles=300)
    monkeypatch.setattr(clock, "CHECK_EVERY", 1)
    stops = 0
    while sampler._particles is None:
        monkeypatch.setattr(clock, "time", ExpiringClock(10))
        with pytest.raises(OutOfTime):
            sampler.belief(full, np.random.default_rng(stops), deadline=1.0)
        stops += 1
        assert stops <= 50
    particles = sampler._particles
    assert particles.steps < len(full) and len(particles.histories) <= 300
    monkeypatch.setattr(clock, "time", time)
    belief = sampler.belief(full, np.random.default_rng(0))
    assert not belief.exact
    for sampled, _ in sampler.sample_many(full, 50, np.random.default_rng(1)):
        check_consistent(game, full, sampled)


def test_particles_are_thinned_by_a_step_stopped_at_its_deadline(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    game = load("meier")
    full = observe(game, "p2", MEIER_GAME)
    rng = np.random.default_rng(3)
    sampler = PosteriorSampler(game, MeierModel(), max_states=2, num_particles=500)
    sampler.belief(full.prefix(3), rng)  # particles from the second step on
    particles = sampler._particles
    assert particles is not None and particles.steps == 3
    before = list(particles.histories)
    monkeypatch.setattr(clock, "CHECK_EVERY", 1)  # a look per distinct state
    monkeypatch.setattr(clock, "time", ExpiringClock(2))  # stops in mid-step
    with pytest.raises(OutOfTime, match="particle filter stopped at step 4"):
        sampler.belief(full, rng, deadline=1.0)
    monkeypatch.undo()
    thinned = sampler._particles
    assert thinned is not None and thinned.steps == 3
    assert len(thinned.histories) == 250 and set(thinned.histories) <= set(before)
    for sampled, _ in sampler.sample_many(full, 50, rng):
        check_consistent(game, full, sampled)


# --------------------------------------------------------------------------- the published bias


class PrefersCorner:
    """A policy function f: o plays (mark 3 3) with probability 1."""

    def __call__(
        self, game: Game, state: State, role: int, legal_moves: tuple[Term, ...], /
    ) -> FloatArray:
        target = game.term("(mark 3 3)")
        return np.array([1.0 if m == target else 0.0 for m in legal_moves])


def test_biased_sampler_follows_the_published_bias() -> None:
    # x marked (1 1) and saw ok. Consistent joint moves: o on one of the 8 other cells with
    # either tiebreak (16), or o on (1 1) with tiebreak x (1). With f one-hot on (3 3),
    # o's weights are f + 1/9: 10/9 for (3 3), 1/9 otherwise; chance 1/2 each. So
    # P(o = (3 3)) = 2 * 10/9 / (2 * 10/9 + 15 * 1/9) = 20/35 = 4/7.
    game = load("blindtictactoe")
    history = observe(game, "x", [("(mark 1 1)", "(mark 2 2)", "(tiebreak x)")])
    policy: PolicyModel = PrefersCorner()
    drawn = BiasedBacktrackingSampler(game, policy).sample_many(
        history, 4000, np.random.default_rng(5)
    )
    target = game.term("(mark 3 3)")
    fraction = sum(s.joint_moves[0][1] == target for s, _ in drawn) / len(drawn)
    assert fraction == pytest.approx(4 / 7, abs=0.03)
    plain = BacktrackingSampler(game).sample_many(history, 4000, np.random.default_rng(5))
    fraction = sum(s.joint_moves[0][1] == target for s, _ in plain) / len(plain)
    assert fraction == pytest.approx(2 / 17, abs=0.03)


# --------------------------------------------------------------------------- errors


def impossible_montyhall(game: Game) -> ObservationHistory:
    """The candidate chose door 1 and then saw door 1 opened: the host never does that."""
    return montyhall_history(game, 1)


@pytest.mark.parametrize("mode", MODES)
def test_inconsistent_observations_raise(mode: str) -> None:
    game = load("montyhall")
    sampler = make(mode, game)
    if isinstance(sampler, RejectionSampler):
        sampler.max_attempts = 200
    with pytest.raises(
        NoConsistentHistoryError, match=r"candidate|inconsistent|no history"
    ) as info:
        sampler.sample(impossible_montyhall(game), np.random.default_rng(0))
    assert "step 2" in str(info.value) or "attempts" in str(info.value)


@pytest.mark.parametrize("mode", MODES)
def test_illegal_own_move_raises(mode: str) -> None:
    game = load("montyhall")
    history = ObservationHistory(game.role("candidate")).extend(
        game.term("(choose 4)"), frozenset()
    )
    sampler = make(mode, game)
    if isinstance(sampler, RejectionSampler):
        sampler.max_attempts = 200
    with pytest.raises(NoConsistentHistoryError):
        sampler.sample(history, np.random.default_rng(0))


def test_zero_probability_under_the_model_raises() -> None:
    game = load("meier")
    history = observe(game, "p2", MEIER_GAME[:2])

    def never_43(
        game: Game, state: State, role: int, legal_moves: tuple[Term, ...], /
    ) -> FloatArray:
        return np.array([0.0 if str(m) == "(claim 4 3)" else 1.0 for m in legal_moves])

    with pytest.raises(NoConsistentHistoryError, match="probability 0"):
        PosteriorSampler(game, never_43).sample(history, np.random.default_rng(0))


@pytest.mark.parametrize(
    ("model", "message"),
    [
        (lambda g, s, r, m: np.ones(len(m) + 1), "one weight per legal move"),
        (lambda g, s, r, m: -np.ones(len(m)), "negative"),
        (lambda g, s, r, m: np.zeros(len(m)), "weight 0"),
    ],
)
def test_bad_policy_models_raise(
    model: Callable[[Game, State, int, tuple[Term, ...]], FloatArray], message: str
) -> None:
    game = load("blindtictactoe")
    history = observe(game, "x", [("(mark 1 1)", "(mark 2 2)", "(tiebreak x)")])
    with pytest.raises(GameError, match=message):
        PosteriorSampler(game, model).sample(history, np.random.default_rng(0))


def test_argument_errors() -> None:
    game = load("montyhall")
    history = montyhall_history(game, 3)
    with pytest.raises(ValueError, match="n >= 1"):
        PosteriorSampler(game).sample_many(history, 0, np.random.default_rng(0))
    with pytest.raises(ValueError, match="policy function"):
        make_sampler(game, "biased")
    with pytest.raises(ValueError, match="unknown sampler mode"):
        make_sampler(game, "magic")  # type: ignore[arg-type]
    with pytest.raises(GameError, match="no role"):
        PosteriorSampler(game).sample(ObservationHistory(Const("host")), np.random.default_rng(0))


def test_empty_history_is_the_initial_state() -> None:
    game = load("meier")
    empty = ObservationHistory(game.role("p1"))
    for mode in MODES:
        sampled = make(mode, game).sample(empty, np.random.default_rng(0))
        assert sampled.states == (game.initial_state(),)
        assert sampled.joint_moves == ()
