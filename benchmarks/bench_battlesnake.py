"""Battlesnake search speed (issue 15, point 6): depth reached and nodes/s per move.

For the 11x11 duel and the standard 11x11 four-snake game, each search spec chooses
snake 1's move under a clock (the API's 500 ms less its 100 ms margin: 0.4 s) in the
positions of seeded games of the greedy snake against itself (every ``--every``-th turn),
in the game the API searches (:func:`~ggp.battlesnake.generate.search_variant`: the
standard rules without food spawning) and, for comparison, in the shipped game with the
spawn roll. Prints one row per game, spec and model: mean / max depth, nodes/s, and the
slowest move.

    python benchmarks/bench_battlesnake.py [--clock 0.4] [--games 4] [--every 5] [--only-idapos]
        [--variants duel_11x11,standard_11x11] [--idapos SPEC;SPEC...]

``--variants eight_11x11`` measures the paper's 8-snake board (its classic specs: those of
the four-snake game); ``--idapos`` replaces the IDAPOS specs (semicolon-separated, as a spec
has commas), e.g. ``idapos:margin=0;idapos:margin=0,search=maxn`` for locality against a
search of every snake.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path

import numpy as np

from ggp.battlesnake.board import Board, board_state, read_board, search_game
from ggp.battlesnake.generate import VARIANTS
from ggp.game import Game
from ggp.match import run_match
from ggp.players.base import MatchInfo
from ggp.players.classic_player import ClassicPlayer
from ggp.players.idapos_player import IdaposPlayer
from ggp.players.registry import make_player

GAMES = Path(__file__).resolve().parents[1] / "games" / "battlesnake"
#: IDAPOS as it plays, and without its pruning of certainly fatal moves.
IDAPOS_SPECS = ("idapos:margin=0", "idapos:margin=0,prune=no")
SPECS = {
    2: ("alphabeta:eval=snake", "pvs:eval=snake"),
    4: ("maxn:eval=snake", "paranoid:eval=snake"),
    8: ("maxn:eval=snake", "paranoid:eval=snake"),
}


def positions(game: Game, games: int, every: int) -> list[Board]:
    """Boards from greedy self-play, every ``every``-th turn while snake 1 lives."""
    snakes = [r for r in game.roles if r != game.random_role]
    boards: list[Board] = []
    for seed in range(games):
        rng = np.random.default_rng(seed)
        players = {r: make_player("snake:greedy", rng) for r in snakes}
        record = run_match(game, players, rng, play_clock_s=5.0)
        state = game.initial_state()
        for joint in record.joint_moves:
            state = game.next_state(state, [game.term(m) for m in joint])
            if game.is_terminal(state):
                break
            board = read_board(game, state)
            wanted = board.turn % every == 0 and board.turn > 0 and board.snakes[0] is not None
            if wanted and (not boards or boards[-1] != board):
                boards.append(board)
    return boards


def classic_row(
    name: str, spec: str, label: str, game: Game, boards: list[Board], clock: float
) -> str:
    """A classic search's row: the depth it finishes and its nodes/s in ``game``."""
    player = make_player(spec, np.random.default_rng(0), game)
    assert isinstance(player, ClassicPlayer)
    player.start(MatchInfo("bench", game, game.roles[0]))
    depths, rates, slowest = [], [], 0.0
    for board in boards:
        state = board_state(game, board)
        started = time.monotonic()
        result = player.choose(state, started + clock)
        slowest = max(slowest, time.monotonic() - started)
        depths.append(result.depth)
        rates.append(result.nodes / max(result.seconds, 1e-9))
    return (
        f"| {name} | {spec} | {label} | {len(depths)} "
        f"| {statistics.mean(depths):.1f} / {max(depths)} "
        f"| {statistics.mean(rates):,.0f} | {slowest:.3f} |"
    )


def idapos_row(name: str, spec: str, game: Game, boards: list[Board], clock: float) -> str:
    """IDAPOS's row: the depth of its last finished round and its nodes/s."""
    player = make_player(spec, np.random.default_rng(0), game)
    assert isinstance(player, IdaposPlayer)
    player.start(MatchInfo("bench", game, game.roles[0]))
    depths, rates, simulated, slowest = [], [], [], 0.0
    for board in boards:
        started = time.monotonic()
        player.search(board, started + clock)
        seconds = time.monotonic() - started
        slowest = max(slowest, seconds)
        depths.append(len(player.last_played_out))
        simulated.append(player.last_played_out[-1] if player.last_played_out else 1)
        rates.append(player.last_nodes / seconds)
    model = "no spawns, rest frozen" if player.settings.search == "idapos" else "no spawns"
    return (
        f"| {name} | {spec} (simulated snakes at the last depth: mean "
        f"{statistics.mean(simulated):.1f}) | {model} | {len(depths)} "
        f"| {statistics.mean(depths):.1f} / {max(depths)} "
        f"| {statistics.mean(rates):,.0f} | {slowest:.3f} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clock", type=float, default=0.4)
    parser.add_argument("--games", type=int, default=4)
    parser.add_argument("--every", type=int, default=5)
    parser.add_argument("--only-idapos", action="store_true", help="skip the classic specs")
    parser.add_argument("--variants", default="duel_11x11,standard_11x11")
    parser.add_argument("--idapos", default=";".join(IDAPOS_SPECS), help="';'-separated specs")
    args = parser.parse_args()
    wanted = args.variants.split(",")
    print("| game | spec | model | moves | depth mean / max | nodes/s | slowest move s |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for variant in VARIANTS:
        if variant.name not in wanted:
            continue
        shipped = Game.from_file(GAMES / f"{variant.name}.gdl")
        boards = positions(shipped, args.games, args.every)
        models = {
            "no spawns": search_game(variant.size, variant.snakes),
            "shipped": shipped,
        }
        for spec in () if args.only_idapos else SPECS[variant.snakes]:
            for label, game in models.items():
                print(classic_row(variant.name, spec, label, game, boards, args.clock), flush=True)
        for spec in args.idapos.split(";"):
            print(idapos_row(variant.name, spec, shipped, boards, args.clock), flush=True)


if __name__ == "__main__":
    main()
