"""How often two Battlesnake searches choose the same move on the same duel positions
(issue 15 point 5): IDAPOS against the variant without locality costs ~200 core-seconds a
game at 0.5 s a move, so before playing a table this says how far apart the two players
are, cheaply.

Positions come from games of the 11x11 duel where both snakes play the reflex policy
(:func:`~ggp.battlesnake.reflex.reflex_move`) with a random move one time in five and
food spawns at random (seeded); every fourth position where snake 1 has a choice and both
snakes live is searched by both specs for snake 1, each with the same time (margin 0),
one after the other. Two runs of one spec give the timing noise (the depth finished by a
deadline varies).

Which of two different moves is better: with ``--oracle-depth D``, where the two specs
choose differently, each move is valued by alpha-beta over both snakes to D rounds with
the root restricted to it (the paper's heuristics, ``--oracle-weights``), a deeper search
than either spec finishes in its time: a judge that shares their heuristics, so read its
verdict as "which move survives a deeper look", not as the game's value.

    python benchmarks/bench_duel_agreement.py [--positions 120] [--seconds 0.43] [--seed 1]
        [--a idapos:weights=tuned] [--b idapos:search=alphabeta,weights=tuned]
        [--oracle-depth 0] [--oracle-weights tuned]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from ggp.battlesnake.board import Board, board_state, read_board, search_game
from ggp.battlesnake.heuristics import SnakeHeuristicEvaluator
from ggp.battlesnake.reflex import REFLEX_ORDER, reflex_move
from ggp.battlesnake.weights import snake_weights
from ggp.game import Game
from ggp.gdl.terms import Term
from ggp.players.base import MatchInfo
from ggp.players.idapos_player import IdaposPlayer, parse_idapos_options
from ggp.reasoning.state_machine import State
from ggp.search.classic.alphabeta import AlphaBeta
from ggp.search.classic.sequential import MovePruning

ROOT = Path(__file__).resolve().parents[1]


def positions(game: Game, count: int, rng: np.random.Generator) -> list[Board]:
    """``count`` duel boards from seeded reflex games (module docstring)."""
    snakes = [r for r in game.roles if r != game.random_role]
    first = game.roles.index(snakes[0])
    boards: list[Board] = []
    while len(boards) < count:
        state = game.initial_state()
        decisions = 0
        while not game.is_terminal(state) and len(boards) < count:
            legal = [game.legal_moves(state, r) for r in game.roles]
            board = read_board(game, state)
            if len(legal[first]) > 1:
                if all(s is not None for s in board.snakes) and decisions % 4 == 0:
                    boards.append(board)
                decisions += 1
            joint = []
            for role, moves in zip(game.roles, legal, strict=True):
                if len(moves) > 1 and role != game.random_role:
                    name = reflex_move(board, snakes.index(role))
                    if rng.random() < 0.2:
                        name = REFLEX_ORDER[int(rng.integers(len(REFLEX_ORDER)))]
                    move = game.term(name)
                    joint.append(move if move in moves else moves[int(rng.integers(len(moves)))])
                else:
                    joint.append(moves[int(rng.integers(len(moves)))])
            state = game.next_state(state, tuple(joint))
    return boards


def only_at_root(root: State, me: int, name: str) -> MovePruning:
    """Our snake (role ``me``) may play only ``name`` in ``root``; nothing else pruned."""

    def kept(state: State, legal: Sequence[Sequence[Term]]) -> dict[int, list[int]]:
        if state != root:
            return {}
        return {me: [k for k, move in enumerate(legal[me]) if move.name == name]}

    return kept


def oracle_values(
    board: Board, me: int, moves: Sequence[str], depth: int, evaluator: SnakeHeuristicEvaluator
) -> list[float]:
    """Each of ``moves`` valued by alpha-beta over every snake to ``depth`` rounds with
    the root restricted to it (goal points of snake ``me``)."""
    model = search_game(board.size, len(board.snakes))
    root = board_state(model, board)
    values = []
    for name in moves:
        search = AlphaBeta(model, model.roles[me], evaluator)
        search.view.prune = only_at_root(root, me, name)
        search.new_move()
        values.append(search.search_depth(root, depth, None).value)
    return values


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--positions", type=int, default=120)
    parser.add_argument("--seconds", type=float, default=0.43, help="each search's time")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--a", default="idapos:weights=tuned")
    parser.add_argument("--b", default="idapos:search=alphabeta,weights=tuned")
    parser.add_argument("--oracle-depth", type=int, default=0, help="0: no judge")
    parser.add_argument("--oracle-weights", default="tuned")
    args = parser.parse_args()
    game = Game.from_file(ROOT / "games/battlesnake/duel_11x11.gdl")
    snakes = [r for r in game.roles if r != game.random_role]
    players = []
    for spec in (args.a, args.b):
        name, _, options = spec.partition(":")
        if name != "idapos":
            parser.error(f"{spec!r}: the specs are idapos[:OPTIONS]")
        player = IdaposPlayer(parse_idapos_options(",".join(filter(None, [options, "margin=0"]))))
        player.start(MatchInfo("agreement", game, snakes[0], 10.0, 10.0))
        players.append(player)
    boards = [
        b
        for b in positions(game, 4 * args.positions, np.random.default_rng(args.seed))
        if players[0].forced_move(b) is None
    ][: args.positions]
    moves: list[list[str]] = [[], []]
    depths: list[list[int]] = [[], []]
    local: list[bool] = []  # a's last finished depth simulated our snake only
    for board in boards:
        for k, player in enumerate(players):
            moves[k].append(player.search(board, time.monotonic() + args.seconds))
            depths[k].append(len(player.last_played_out))
            if k == 0:
                local.append(bool(player.last_played_out) and player.last_played_out[-1] == 1)
    same = [a == b for a, b in zip(moves[0], moves[1], strict=True)]
    print(f"{len(boards)} positions, {args.seconds} s a search, seed {args.seed}")
    print(f"same move: {sum(same)} ({100 * sum(same) / max(len(same), 1):.0f}%)")
    for k, spec in enumerate((args.a, args.b)):
        print(f"{spec}: depth finished, mean {np.mean(depths[k]):.2f}, max {max(depths[k])}")
    differ = [loc for loc, s in zip(local, same, strict=True) if not s]
    print(
        f"{args.a}'s last depth had the enemy masked: {sum(local)} positions, "
        f"{sum(differ)} of the {len(differ)} different moves"
    )
    if args.oracle_depth > 0:
        judge(args, boards, moves, local)


def judge(
    args: argparse.Namespace, boards: list[Board], moves: list[list[str]], local: list[bool]
) -> None:
    """Print the oracle's verdict on the positions where the two moves differ."""
    evaluator = SnakeHeuristicEvaluator(snake_weights(args.oracle_weights))
    verdicts: dict[bool, list[float]] = {True: [], False: []}  # by "a's enemy masked"
    started = time.monotonic()
    for board, a, b, loc in zip(boards, moves[0], moves[1], local, strict=True):
        if a != b:
            va, vb = oracle_values(board, 0, (a, b), args.oracle_depth, evaluator)
            verdicts[loc].append(va - vb)
    print(
        f"oracle: alpha-beta over both snakes, depth {args.oracle_depth}, "
        f"{time.monotonic() - started:.0f} s"
    )
    for loc, diffs in verdicts.items():
        if diffs:
            better = sum(d > 0 for d in diffs)
            worse = sum(d < 0 for d in diffs)
            print(
                f"  a's last depth {'masked' if loc else 'simulated'} the enemy: "
                f"{len(diffs)} different moves; the oracle prefers a's {better}, b's {worse}, "
                f"ties {len(diffs) - better - worse}; mean a - b {np.mean(diffs):+.2f} points"
            )


if __name__ == "__main__":
    main()
