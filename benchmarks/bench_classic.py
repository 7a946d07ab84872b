"""Classic game-tree search (issue 14): node counts, passes, table hits, speed, depth.

1. Node counts per algorithm and depth from the start of tic-tac-toe, connect four and
   breakthrough (../shared/gdl/gdl): plain minimax and alpha-beta in the rules' move
   order at each fixed depth; alpha-beta, PVS, MTD(f) and max^n under iterative
   deepening (transposition table, history heuristic, aspiration windows), counted in
   the iteration of that depth, whose ordering comes from the earlier ones. Every
   algorithm's root value is checked against minimax's. Leaves are valued by the
   generic heuristic, and, for connect four again, by random playouts seeded by the
   state (the heuristic barely varies there: goals are 0 until the end, mobility 8).
2. Per algorithm and depth: MTD(f)'s passes, PVS's re-searches, transposition-table hit
   rates, nodes per second.
3. MCTS simulations per second.
4. The depth reached per move under a 1 s clock (0.85 s of search), over the first moves
   of a game against a random opponent.

    python benchmarks/bench_classic.py [--games tictactoe,connectfour,breakthrough]
        [--moves 6] [--clock 1.0] [--mcts-seconds 2] [--rollouts 8] [--no-tables]
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ggp.game import Game
from ggp.players.base import MatchInfo
from ggp.players.classic_player import ALGORITHMS, ClassicPlayer, parse_options
from ggp.reasoning.state_machine import State
from ggp.search.classic import (
    MCTS,
    MTDF,
    PVS,
    AlphaBeta,
    HeuristicEvaluator,
    MaxN,
    Minimax,
    TreeSearch,
    iterative_deepening,
)
from ggp.search.evaluator import Evaluator, LeafEstimate

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "gdl" / "gdl"


@dataclass(frozen=True)
class GameCase:
    """A game and how deep each kind of search goes in the benchmark."""

    name: str
    path: Path
    depth: int  # deepest iteration for the pruning searches
    minimax_depth: int  # deepest plain minimax / unordered alpha-beta
    maxn_depth: int


CASES = {
    "tictactoe": GameCase("tictactoe", ROOT / "games" / "tictactoe.gdl", 9, 9, 9),
    "connectfour": GameCase("connectfour", SHARED / "connectFour.kif", 8, 6, 6),
    "breakthrough": GameCase("breakthrough", SHARED / "breakthrough.kif", 5, 4, 4),
}


class StateSeededRollouts:
    """Mean goals of ``playouts`` random playouts per state, the generator seeded by the
    state's Zobrist key: every search sees the same value for a state, so all of them
    search one tree, whose leaf values vary as a real game's do."""

    def __init__(self, playouts: int = 8) -> None:
        self.playouts = playouts

    def evaluate(self, game: Game, states: Sequence[State]) -> LeafEstimate:
        rows = [
            game.random_playouts([s], self.playouts, np.random.default_rng(game.zobrist(s)))[0]
            for s in states
        ]
        return LeafEstimate(np.array(rows, dtype=np.float64).reshape(len(states), -1))


@dataclass(frozen=True)
class Row:
    """One algorithm at one depth."""

    nodes: int
    seconds: float
    value: float | None
    passes: int = 1
    researches: int = 0
    tt_hit_rate: float = 0.0


def fixed_depth(make: Callable[[], TreeSearch], game: Game, depth: int) -> Row:
    search = make()
    started = time.monotonic()
    outcome = search.search_depth(game.initial_state(), depth, None)
    return Row(search.nodes, time.monotonic() - started, outcome.value)


def deepening(make: Callable[[], TreeSearch], game: Game, depth: int) -> dict[int, Row]:
    result = iterative_deepening(make(), game.initial_state(), max_depth=depth)
    return {
        r.depth: Row(r.nodes, r.seconds, r.value, r.passes, r.researches, r.tt_hit_rate)
        for r in result.reports
    }


def node_tables(
    case: GameCase, evaluator: Callable[[], Evaluator] = HeuristicEvaluator, label: str = ""
) -> str:
    game = Game.from_file(case.path)
    role = game.player_roles[0]
    rows: dict[str, dict[int, Row]] = {"minimax": {}, "alphabeta (rules' order)": {}}
    for depth in range(1, case.minimax_depth + 1):
        rows["minimax"][depth] = fixed_depth(lambda: Minimax(game, role, evaluator()), game, depth)
        rows["alphabeta (rules' order)"][depth] = fixed_depth(
            lambda: AlphaBeta(
                game, role, evaluator(), use_tt=False, use_history=False, aspiration=None
            ),
            game,
            depth,
        )
    rows["alphabeta"] = deepening(lambda: AlphaBeta(game, role, evaluator()), game, case.depth)
    rows["pvs"] = deepening(lambda: PVS(game, role, evaluator()), game, case.depth)
    rows["mtdf"] = deepening(lambda: MTDF(game, role, evaluator()), game, case.depth)
    rows["maxn"] = deepening(lambda: MaxN(game, role, evaluator()), game, case.maxn_depth)
    depths = sorted({d for table in rows.values() for d in table})
    names = list(rows)
    lines = [
        f"**{case.name}** ({case.path.name}, {role} to move, from the start{label}): nodes visited",
        "",
        "| depth | " + " | ".join(names) + " | minimax >= AB >= PVS | value |",
        "| ---: |" + " ---: |" * len(names) + " :---: | ---: |",
    ]
    for depth in depths:
        cells = [f"{rows[n][depth].nodes:,}" if depth in rows[n] else "" for n in names]
        reference = rows["minimax"].get(depth)
        values = {round(rows[n][depth].value or 0.0, 2) for n in names if depth in rows[n]}
        alphabeta, pvs = rows["alphabeta"].get(depth), rows["pvs"].get(depth)
        order = ""
        if alphabeta and pvs:
            top = reference.nodes if reference else math.inf
            order = "yes" if top >= alphabeta.nodes >= pvs.nodes else "no"
        agree = "" if len(values) == 1 else " (DIFFER)"
        value = rows["pvs"][depth].value if depth in rows["pvs"] else None
        lines.append(
            f"| {depth} | " + " | ".join(cells) + f" | {order} | {value:.2f}{agree} |"
            if value is not None
            else f"| {depth} | " + " | ".join(cells) + f" | {order} | |"
        )
    lines += [
        "",
        f"**{case.name}**{label}: MTD(f) passes, PVS re-searches, TT hit rates, nodes/s",
        "",
        "| depth | mtdf passes | pvs re-searches | TT hits ab / pvs / mtdf / maxn | "
        + " | ".join(f"{n} nodes/s" for n in names)
        + " |",
        "| ---: | ---: | ---: | ---: |" + " ---: |" * len(names),
    ]
    for depth in depths:
        mtdf, pvs = rows["mtdf"].get(depth), rows["pvs"].get(depth)
        hits = " / ".join(
            f"{rows[n][depth].tt_hit_rate:.0%}" if depth in rows[n] else "-"
            for n in ("alphabeta", "pvs", "mtdf", "maxn")
        )
        speeds = [
            f"{rows[n][depth].nodes / max(rows[n][depth].seconds, 1e-9):,.0f}"
            if depth in rows[n]
            else ""
            for n in names
        ]
        lines.append(
            f"| {depth} | {mtdf.passes if mtdf else ''} | {pvs.researches if pvs else ''} | "
            f"{hits} | " + " | ".join(speeds) + " |"
        )
    totals = []
    for n in names:
        nodes = sum(r.nodes for r in rows[n].values())
        seconds = sum(r.seconds for r in rows[n].values())
        totals.append(f"**{nodes / max(seconds, 1e-9):,.0f}**")
    lines.append("| all | | | | " + " | ".join(totals) + " |")
    return "\n".join(lines)


def mcts_speed(case: GameCase, seconds: float) -> str:
    game = Game.from_file(case.path)
    role = game.player_roles[0]
    search = MCTS(game, role, rng=np.random.default_rng(0))
    result = search.search(game.initial_state(), time.monotonic() + seconds)
    return (
        f"| {case.name} | {result.simulations:,} | {result.simulations / result.seconds:,.0f} | "
        f"{result.depth} | {'yes' if result.solved else 'no'} |"
    )


def depth_reached(case: GameCase, moves: int, clock_s: float) -> str:
    """Play ``moves`` moves of each algorithm (first role) against random play and
    report the deepest finished iteration per move (MCTS: simulations per move; a root
    already proven in the kept tree takes none), and how many moves were solved (the
    search saw the end of the game everywhere)."""
    game = Game.from_file(case.path)
    role = game.player_roles[0]
    me = game.role_index(role)
    cells = []
    for name in ALGORITHMS:
        player = ClassicPlayer(parse_options(name, None), np.random.default_rng(0))
        player.start(MatchInfo("bench", game, role, play_clock_s=clock_s))
        rng = np.random.default_rng(1)
        state = game.initial_state()
        figures: list[int] = []
        solved = 0
        while len(figures) < moves and not game.is_terminal(state):
            expansion = game.expand(state)
            mine = expansion.legal[me]
            choice = 0
            if len(mine) > 1:
                result = player.choose(state, time.monotonic() + clock_s - 0.15)
                choice = mine.index(result.move)
                figures.append(result.simulations if name == "mcts" else result.depth)
                solved += result.solved
            picks = [int(rng.integers(len(legal))) for legal in expansion.legal]
            picks[me] = choice
            state = expansion.child(picks)
        if figures:
            low, mid, high = min(figures), statistics.median(figures), max(figures)
            unit = " sims" if name == "mcts" else ""
            cells.append(
                f"{low:,}-{high:,}{unit} (median {mid:,.0f}; solved {solved}/{len(figures)})"
            )
        else:
            cells.append("-")
    return f"| {case.name} | " + " | ".join(cells) + " |"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--games", default=",".join(CASES))
    parser.add_argument("--moves", type=int, default=6, help="moves per depth figure")
    parser.add_argument("--clock", type=float, default=1.0, help="play clock, seconds")
    parser.add_argument("--mcts-seconds", type=float, default=2.0)
    parser.add_argument(
        "--rollouts", type=int, default=8, help="playouts per leaf in the connect four table"
    )
    parser.add_argument(
        "--no-tables", action="store_true", help="only the MCTS speed and depth per move"
    )
    args = parser.parse_args()
    cases = [CASES[name] for name in args.games.split(",")]
    started = time.monotonic()
    for case in cases if not args.no_tables else ():
        print(node_tables(case))
        print()
    if "connectfour" in args.games and args.rollouts and not args.no_tables:
        case = CASES["connectfour"]
        rollouts = GameCase(case.name, case.path, 6, 5, 5)
        label = f"; leaves valued by {args.rollouts} random playouts seeded by the state"
        print(node_tables(rollouts, lambda: StateSeededRollouts(args.rollouts), label))
        print()
    print("MCTS from the start (random playouts, batches of 8)")
    print()
    print("| game | simulations | simulations/s | deepest node | solved |")
    print("| --- | ---: | ---: | ---: | :---: |")
    for case in cases:
        print(mcts_speed(case, args.mcts_seconds))
    print()
    print(
        f"Depth reached per move at {args.clock:g} s per move (first role, first "
        f"{args.moves} moves against random play; MCTS: simulations per move)"
    )
    print()
    print("| game | " + " | ".join(ALGORITHMS) + " |")
    print("| --- |" + " --- |" * len(ALGORITHMS))
    for case in cases:
        print(depth_reached(case, args.moves, args.clock))
    print()
    print(f"({time.monotonic() - started:.0f} s)")


if __name__ == "__main__":
    main()
