"""The GDL microRTS equals an independent model of its rules text, state by state.

``microrts_model`` is written from the English rules block of ``games/rts/rts_8x8_*.gdl``,
not from the GDL rules. Seeded games are played on both at once, each side under a policy
drawn per game (uniformly random; aggressive: attacks when it can, else heads for the
nearest enemy, buildings training fighters; economic: harvests, returns, builds barracks
and bases, trains workers, lights and heavies, and sends the fighters in), so that every
rule fires. At every step both sides' legal moves must be the model's, and after it the
GDL's state facts must be the model's facts; at the end the goals must be the model's.

Scenarios of our own keep the games short (``rts_gdl`` writes the GDL of any scenario;
each grounds once per test run, the full one in about 5 s): RTS-Melee and RTS-Full with
small tick caps, so that some games reach the cap; a duel of two lights two cells apart,
which the aggressive policy makes clash; a 6x6 economy with mines of 2 resources and gold
for a base, so that mines run dry and every type is made; a 5x5 crowd where both workers
stand by one mine and both bases by one cell (harvest and production clashes); a bank
where five workers return to five bases in one tick (more deposits than a tick counts).
The state facts are read from the propnet's state bits (``state_facts`` costs 4 ms a
state on RTS-Full); ``state_facts`` itself is compared at every game's end. A last test
checks that the replayed games made every event of the rules happen.
"""

from __future__ import annotations

import dataclasses
import functools
from collections import Counter
from pathlib import Path

import microrts_model as model
import numpy as np
import pytest

from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.reasoning.ground import GroundingLimits
from ggp.reasoning.state_machine import State
from ggp.rts.microrts import ROLES, Scenario, rts_gdl, scenario

GAMES = Path(__file__).resolve().parents[2] / "games" / "rts"

#: The scenarios played: shipped starts with short caps, and four of our own.
SCENARIOS = {
    s.name: s
    for s in (
        dataclasses.replace(scenario("melee"), max_ticks=150, name="melee150"),
        dataclasses.replace(scenario("full"), max_ticks=300, name="full300"),
        Scenario(
            "duel",
            units=((1, 2, 0, "light"), (3, 2, 1, "light"), (0, 4, 0, "heavy"), (4, 0, 1, "heavy")),
            size=5,
            max_ticks=60,
        ),
        Scenario(
            "economy",
            units=((1, 1, 0, "base"), (2, 1, 0, "worker"), (4, 4, 1, "base"), (3, 4, 1, "worker")),
            mines=((0, 0, 2), (5, 5, 2), (0, 5, 2), (5, 0, 2)),
            gold=12,
            size=6,
            max_ticks=260,
        ),
        Scenario(
            "crowd",
            units=((1, 1, 0, "worker"), (3, 1, 1, "worker"), (1, 2, 0, "base"), (3, 2, 1, "base")),
            mines=((2, 1, 3), (0, 0, 1), (4, 0, 1), (0, 4, 1), (4, 4, 1)),
            gold=6,
            size=5,
            max_ticks=150,
        ),
        Scenario(
            "bank",
            units=(
                *((x, 1, 0, "worker") for x in range(5)),
                *((x, 2, 0, "base") for x in range(5)),
                (4, 5, 1, "base"),
                (5, 5, 1, "worker"),
            ),
            mines=(*((x, 0, 2) for x in range(5)), (5, 4, 2)),
            size=6,
            max_ticks=40,
        ),
    )
}
#: Games played per scenario (600 in all).
PLAYS = {"melee150": 250, "duel": 120, "economy": 60, "crowd": 60, "full300": 80, "bank": 30}
#: The move policies blue and red may get in a game of each scenario (drawn per game).
ECONOMY = ("random", "aggressive", "economic", "economic")
POLICIES = {
    "melee150": (("random", "aggressive", "aggressive"),) * 2,
    "duel": (("random", "aggressive", "aggressive"),) * 2,
    "economy": (ECONOMY, ECONOMY),
    "crowd": (ECONOMY, ECONOMY),
    "full300": (ECONOMY, ECONOMY),
    # five blue workers harvest five mines at once, then return to five bases at once
    "bank": (("economic",), ECONOMY),
}
#: The events of the rules, each of which must happen in the replayed games.
EVENTS = (
    *(f"clash {kinds}" for kinds in ("move/move", "move/produce", "produce/produce")),
    "clash harvest/harvest",
    "move",
    "death",
    "several attackers",
    "attack finds no enemy",
    "death while producing",
    "death while doing harvest",
    "death while doing return",
    *(f"removed as its {a} lands" for a in ("move", "harvest", "return", "production")),
    "harvest",
    "mine exhausted",
    "deposit",
    "deposit as the base is removed",
    "return without base",
    "more deposits in a tick than counted",
    *(f"produced {t}" for t in ("base", "barracks", "worker", "light", "heavy")),
    "cap draw",
    "elimination win",
    "both eliminated",
)


@functools.cache
def load(name: str) -> tuple[Game, tuple[str, ...]]:
    """The game of scenario ``name`` as a propositional network, and the text of each of
    its base propositions (in :meth:`Game.state_bits` order). No grounding time budget:
    the full scenario takes about 5 s, and the tests should not depend on the machine's
    speed."""
    limits = GroundingLimits(max_seconds=None)
    game = Game.from_text(rts_gdl(SCENARIOS[name]), reasoner="propnet", limits=limits)
    base = game.base_propositions
    assert base is not None
    return game, tuple(str(p) for p in base)


def gdl_facts(game: Game, names: tuple[str, ...], state: State) -> set[str]:
    """``{str(f) for f in game.state_facts(state)}``, read from the state's bits (the same
    set, checked at every game's end, twenty times faster on the full scenario)."""
    return {names[i] for i in np.flatnonzero(game.state_bits([state])[0])}


def distance(a: model.Cell, cells: list[model.Cell]) -> int:
    return min(abs(a[0] - b[0]) + abs(a[1] - b[1]) for b in cells)


def toward(moves: list[str], goals: list[model.Cell], rng: np.random.Generator) -> str | None:
    """A move order that brings the unit nearer to one of ``goals`` (None: none does)."""
    steps = [m for m in moves if m.split()[3] == "move"]
    if not goals or not steps:
        return None
    here = model.parse(steps[0])
    assert here is not None
    now = distance(here[0], goals)
    after = {m: distance(model.neighbour(here[0], m.split()[4].rstrip(")")), goals) for m in steps}
    best = min(after.values())
    if best >= now:
        return None
    picks = [m for m in steps if after[m] == best]
    return picks[rng.integers(len(picks))]


def choose(state: model.State, role: str, policy: str, rng: np.random.Generator) -> str:
    """The move of ``role`` under ``policy`` (a random one now and then, whatever it is)."""
    moves = model.legal(state, role)
    if moves == ["noop"] or policy == "random" or rng.random() < 0.08:
        return moves[rng.integers(len(moves))]
    cell = model.first_ready(state, role)
    assert cell is not None
    unit = state.units[cell]
    by: dict[str, list[str]] = {}
    for m in moves:
        by.setdefault(m.split()[3], []).append(m)

    def pick(*actions: str) -> str | None:
        found = [m for a in actions for m in by.get(a, [])]
        return found[rng.integers(len(found))] if found else None

    own = [(c, u) for c, u in state.units.items() if u.owner == role]
    enemies = [c for c, u in state.units.items() if u.owner != role]
    # the role's units of each type, with those being produced
    count = Counter(u.kind for _, u in own)
    count.update(u.action for _, u in own if u.action in ("base", "barracks", "worker"))
    if policy == "economic" and unit.kind == "worker":
        if unit.carry:
            bases = [c for c, u in own if u.kind == "base"]
            choice = pick("return") or toward(moves, bases, rng)
        elif count["barracks"] == 0 and "barracks" in by:
            choice = pick("barracks")
        elif count["base"] < 2 and rng.random() < 0.5:
            choice = pick("base")
        else:
            rest = [c for c in state.mines if c not in model.being_harvested(state)]
            choice = pick("harvest") or toward(moves, rest, rng)
        choice = choice or (pick("attack") if rng.random() < 0.5 else None)
    elif policy == "economic" and unit.kind == "base":
        choice = pick("worker") if count["worker"] < 3 else None
    else:  # aggressive, and the economic policy's fighters and barracks
        choice = pick("attack") or pick("light", "heavy", "worker") or toward(moves, enemies, rng)
    if choice is None and rng.random() < 0.3:
        choice = pick("move")
    return choice or moves[0]


def play_one(name: str, seed: int, events: Counter[str]) -> int:
    """Play one game of scenario ``name`` on the GDL and the model at once; the number of
    steps played."""
    game, names = load(name)
    rng = np.random.default_rng(seed)
    policies = {
        role: kinds[rng.integers(len(kinds))]
        for role, kinds in zip(ROLES, POLICIES[name], strict=True)
    }
    state = game.initial_state()
    sim = model.initial(SCENARIOS[name])
    where = f"{name} seed {seed} {policies} start"
    assert gdl_facts(game, names, state) == model.facts(sim), where
    steps = 0
    while not game.is_terminal(state):
        assert not model.terminal(sim), where
        moves: dict[str, str] = {}
        joint: list[Term] = []
        for role in ROLES:
            offered = {str(m): m for m in game.legal_moves(state, role)}
            legal = set(model.legal(sim, role))
            assert set(offered) == legal, (
                f"{where}: legal moves of {role}: GDL only {sorted(set(offered) - legal)},"
                f" model only {sorted(legal - set(offered))}"
            )
            moves[role] = choose(sim, role, policies[role], rng)
            joint.append(offered[moves[role]])
        before = sim
        state = game.next_state(state, joint)
        sim = model.step(sim, moves, events)
        steps += 1
        where = f"{name} seed {seed} {policies} step {steps} time {before.time} moves {moves}"
        got, expected = gdl_facts(game, names, state), model.facts(sim)
        assert got == expected, (
            f"{where}: GDL only {sorted(got - expected)}, model only {sorted(expected - got)};"
            f" before: {sorted(model.facts(before))}"
        )
    assert model.terminal(sim), where
    assert {str(f) for f in game.state_facts(state)} == model.facts(sim), where
    goals = model.goals(sim)
    assert game.goals(state) == goals, where
    if goals == (50, 50):
        events["cap draw" if all(model.alive(sim, r) for r in ROLES) else "both eliminated"] += 1
    else:
        events["elimination win"] += 1
    return steps


@functools.cache
def replay(name: str) -> tuple[Counter[str], int]:
    """Every game of scenario ``name``: the events counted, and the steps played."""
    events: Counter[str] = Counter()
    steps = sum(play_one(name, seed, events) for seed in range(PLAYS[name]))
    return events, steps


@pytest.mark.slow
@pytest.mark.parametrize("name", list(PLAYS))
def test_gdl_equals_model(name: str) -> None:
    _, steps = replay(name)
    assert steps > PLAYS[name] * 20


@pytest.mark.slow
def test_replayed_games_make_every_rule_fire() -> None:
    events: Counter[str] = Counter()
    for name in PLAYS:
        events += replay(name)[0]
    missing = [e for e in EVENTS if events[e] == 0]
    assert not missing, f"never happened: {missing} (counts: {dict(events)})"


def test_model_start_is_the_scenario() -> None:
    """The model's start and first orders, worked out by hand from the rules text: blue's
    first ready unit is its worker (row 1: (1,1) before the base in (2,1)), which may
    move or build barracks (5 gold) into three free cells, never a base (10); red's is
    its base (row 6: (5,6) before the worker in (6,6)), which trains workers."""
    sim = model.initial(scenario("full"))
    assert model.facts(sim) == {
        "(unit 2 1 blue base)",
        "(hp 2 1 10)",
        "(unit 1 1 blue worker)",
        "(hp 1 1 1)",
        "(unit 5 6 red base)",
        "(hp 5 6 10)",
        "(unit 6 6 red worker)",
        "(hp 6 6 1)",
        "(mine 0 0 20)",
        "(mine 7 7 20)",
        "(gold blue 5)",
        "(gold red 5)",
        "(time 0)",
    }
    assert set(model.legal(sim, "blue")) == {
        "(order 1 1 idle here)",
        *(f"(order 1 1 {a} {d})" for a in ("move", "barracks") for d in ("up", "down", "left")),
    }
    assert set(model.legal(sim, "red")) == {
        "(order 5 6 idle here)",
        *(f"(order 5 6 worker {d})" for d in ("up", "down", "left")),
    }
    sim = model.step(sim, {"blue": "(order 1 1 barracks left)", "red": "(order 5 6 idle here)"})
    assert sim.gold == {"blue": 0, "red": 5}
    assert {"(doing 1 1 barracks left)", "(left 1 1 100)", "(doing 5 6 idle here)"} <= (
        model.facts(sim)
    )
