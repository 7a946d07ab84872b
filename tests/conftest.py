"""Shared fixtures: where the public game corpus (../shared) is, and skipping without it."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.match import run_match
from ggp.players.base import Player
from ggp.reasoning.state_machine import State, StateMachine
from ggp.training.workers import match_score

ROOT = Path(__file__).resolve().parents[1]
GAMES = ROOT / "games"
SHARED = Path(os.environ.get("GGP_SHARED", ROOT.parent / "shared"))
HAVE_SHARED = (SHARED / "gdl").is_dir()

requires_shared = pytest.mark.skipif(
    not HAVE_SHARED, reason=f"the public game corpus is absent (looked in {SHARED})"
)


def corpus_files(*subdirs: str) -> list[Path]:
    """All .kif files below SHARED/<subdir> for each subdir ([] without the corpus)."""
    if not HAVE_SHARED:
        return []
    files: list[Path] = []
    for sub in subdirs:
        files.extend(sorted((SHARED / sub).rglob("*.kif")))
    return files


def corpus_ids(files: list[Path]) -> list[str]:
    return [str(f.relative_to(SHARED)) for f in files]


def mean_score(
    game: Game,
    role: str,
    player: Callable[[int], Player],
    opponent: Callable[[int], Player],
    games: int,
    match_seed: int,
) -> float:
    """The mean match score (win 1, draw 0.5) of ``player(i)`` as ``role`` against
    ``opponent(i)`` (the other player role) over matches i = 0..games-1, the referee's
    randomness seeded ``match_seed + i``."""
    me = game.role(role)
    (other,) = (r for r in game.player_roles if r != me)
    total = 0.0
    for i in range(games):
        players = {me: player(i), other: opponent(i)}
        record = run_match(game, players, np.random.default_rng(match_seed + i))
        total += match_score(record.goals, game, me)
    return total / games


#: A game whose rules hide a role's legal moves from it (as Blind Breakthrough does):
#: chance hides a coin showing 0, 1 or 2, then the player may always play ``safe`` (50)
#: or ``wait`` (25), and may play ``bold`` (100) only when the coin shows 1 or 2, which
#: it does not see; ``left`` (100) is legal on 0 only and ``right`` (100) on 1 or 2 only.
#: The player sees ``started`` whatever the coin (a game without ``sees`` rules would
#: show it the joint moves, as in GDL).
HIDDEN_LEGAL_KIF = """
(role player) (role random)
(coin 0) (coin 1) (coin 2)
(init (step 0))
(<= (legal random (hide ?c)) (true (step 0)) (coin ?c))
(<= (legal random noop) (true (step 1)))
(<= (legal player noop) (true (step 0)))
(<= (legal player safe) (true (step 1)))
(<= (legal player wait) (true (step 1)))
(<= (legal player bold) (true (step 1)) (true (hidden ?c)) (distinct ?c 0))
(<= (legal player left) (true (step 1)) (true (hidden 0)))
(<= (legal player right) (true (step 1)) (true (hidden ?c)) (distinct ?c 0))
(<= (next (hidden ?c)) (does random (hide ?c)))
(<= (next (hidden ?c)) (true (hidden ?c)))
(<= (next (step 1)) (true (step 0)))
(<= (next (step 2)) (true (step 1)))
(<= (next (chose ?m)) (does player ?m))
(<= (sees player started) (true (step 0)))
(<= terminal (true (step 2)))
(<= (goal player 50) (true (chose safe)))
(<= (goal player 25) (true (chose wait)))
(<= (goal player 100) (true (chose bold)))
(<= (goal player 100) (true (chose left)))
(<= (goal player 100) (true (chose right)))
(<= (goal random 0) (true (step 2)))
"""


@dataclass
class Step:
    """One visited state of a cross-checked playout, in both machines, with the joint
    move played from it."""

    reference: State
    other: State
    joint: tuple[Term, ...] | None  # None at a terminal state


def crosscheck_playouts(
    reference: StateMachine,
    other: StateMachine,
    playouts: int,
    rng: np.random.Generator,
    cap: int = 400,
) -> list[Step]:
    """Play seeded random games in both machines, asserting at every step that they
    agree on the state, terminal, goals, every role's legal moves and percepts."""
    steps: list[Step] = []
    for _ in range(playouts):
        a, b = reference.initial_state(), other.initial_state()
        for _ in range(cap):
            assert other.state_facts(b) == reference.state_facts(a)
            terminal = reference.is_terminal(a)
            assert other.is_terminal(b) == terminal
            assert other.goals(b) == reference.goals(a)
            if terminal:
                steps.append(Step(a, b, None))
                break
            joint = []
            for role in reference.roles:
                legal = reference.legal_moves(a, role)
                assert other.legal_moves(b, role) == legal, role
                assert legal, f"{role} has no legal move in a non-terminal state"
                joint.append(legal[rng.integers(len(legal))])
            for role in reference.roles:
                assert other.percepts(b, joint, role) == reference.percepts(a, joint, role)
            steps.append(Step(a, b, tuple(joint)))
            a, b = reference.next_state(a, joint), other.next_state(b, joint)
    return steps
