"""RTMM's search statistics per game, as the RTMM paper's Table 2 gives them (issue 16):
the time per search tree, the branching (the most orders one side had at a node of a
tree), the most leaves a tree valued, and the lookahead in game time.

RTMM (``--spec``; by default the tables' ``rtmm:time=0.05`` on BattleCity and
``rtmm:time=0.1`` on the 8x8 RTS) plays ``--games`` games on
each game against the paper's bot for it (BattleCity: the follower; the 8x8 RTS: the
stochastic bot), seats alternating; every searched decision's
:class:`~ggp.search.classic.rtmm.RTMMResult` is kept. Game time: a BattleCity step is 8
microRTS cycles and an 8x8 RTS tick 2 (the rules halve every duration), a cycle 20 ms
(the paper's 50 cycles a second), so the paper's 1.44 s of lookahead is 9 BattleCity
steps, and its 7.2 s and 4.9 s are 180 and 122 ticks.

    python benchmarks/bench_rtmm.py [--games 2] [--spec SPEC] [--seed 0] [GAME ...]
        (default games: games/rts/battlecity_small.gdl, battlecity_maze18.gdl,
        rts_8x8_melee.gdl, rts_8x8_full.gdl)
"""

from __future__ import annotations

import argparse
import math
import statistics
from pathlib import Path

import numpy as np

from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.match import run_match
from ggp.players.base import Player
from ggp.players.registry import make_player
from ggp.players.rts_players import RtmmPlayer
from ggp.reasoning.state_machine import State
from ggp.rts.state import is_battlecity
from ggp.search.classic.rtmm import RTMMResult

ROOT = Path(__file__).resolve().parents[1]
GAMES = ["battlecity_small.gdl", "battlecity_maze18.gdl", "rts_8x8_melee.gdl", "rts_8x8_full.gdl"]
#: Seconds of game time per clock unit: 8 cycles of 20 ms (BattleCity), 2 (the 8x8 RTS).
SECONDS_PER_UNIT = {True: 8 * 0.02, False: 2 * 0.02}


class _Recording(RtmmPlayer):
    """An RTMM player that keeps every search's result."""

    def __init__(self, player: RtmmPlayer) -> None:
        super().__init__(player.settings, player.rng)
        self.results: list[RTMMResult] = []

    def choose_move(self, state: State, deadline: float = math.inf) -> Term:
        move = super().choose_move(state, deadline)
        assert self.last_search is not None
        if self.last_search.nodes:
            self.results.append(self.last_search)
        return move


def statistics_row(game_path: Path, spec: str | None, games: int, seed: int) -> str:
    """One column of the paper's Table 2, as a Markdown table row."""
    game = Game.from_file(game_path)
    rng = np.random.default_rng(seed)
    battlecity = is_battlecity(game)
    bot = "rtsbot:follower" if battlecity else "rtsbot:stochastic"
    if spec is None:
        spec = "rtmm:time=0.05" if battlecity else "rtmm:time=0.1"
    results: list[RTMMResult] = []
    outcomes = []
    for g in range(games):
        search = make_player(spec, rng, game)
        if not isinstance(search, RtmmPlayer):
            raise SystemExit(f"--spec {spec!r} is not an RTMM player")
        recording = _Recording(search)
        seats: list[Player] = [recording, make_player(bot, rng, game)]
        if g % 2:
            seats.reverse()
        roles = game.player_roles
        record = run_match(game, dict(zip(roles, seats, strict=True)), rng, play_clock_s=5.0)
        results += recording.results
        outcomes.append(record.goals[g % 2])
    unit = SECONDS_PER_UNIT[battlecity]
    times = [r.seconds * 1000 for r in results]
    lookahead = [r.lookahead for r in results]
    return (
        f"| {game_path.name} | `{spec}` | {len(results)} | {min(times):.0f}-{max(times):.0f} "
        f"(median {statistics.median(times):.0f}) "
        f"| {min(r.max_branching for r in results)}-{max(r.max_branching for r in results)} "
        f"| {max(r.leaves for r in results):,} "
        f"| {statistics.median(lookahead):g} / {max(lookahead)} "
        f"({max(lookahead) * unit:.2f} s) | {' '.join(map(str, outcomes))} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("games", nargs="*", help="game files (default: four of games/rts)")
    parser.add_argument("--games", dest="count", type=int, default=2, help="games per game")
    parser.add_argument("--spec", help="the RTMM spec (default: the tables', per game)")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    paths = [Path(p) for p in args.games] or [ROOT / "games" / "rts" / g for g in GAMES]
    print(f"RTMM against the paper's bot, {args.count} games a game, seats alternating")
    print()
    print(
        "| game | spec | searched decisions | ms per tree | branching | max leaves "
        "| lookahead median / max, clock units (game time) | RTMM's goals |"
    )
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for path in paths:
        print(statistics_row(path, args.spec, args.count, args.seed), flush=True)


if __name__ == "__main__":
    main()
