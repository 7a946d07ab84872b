"""The ``ggp`` command line (also ``python -m ggp``).

Each sub-command lives in a function ``cmd_<name>`` registered in :func:`build_parser`;
only implemented commands are registered.
"""

from __future__ import annotations

import argparse
import logging
import signal
import sys
import threading
import time
from collections.abc import Sequence

import numpy as np

from ggp import __version__
from ggp.errors import GDLError, GGPError
from ggp.gdl.parser import parse_file
from ggp.gdl.validate import summarize, validate
from ggp.options import add_reasoner_option
from ggp.protocol.commands import add_commands as add_protocol_commands
from ggp.training.commands import add_commands as add_training_commands

__all__ = ["main", "build_parser"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_INVALID = 2


def _yes_no(flag: bool) -> str:
    return "yes" if flag else "no"


def cmd_check(args: argparse.Namespace) -> int:
    """Parse and validate each game; print a summary or the errors."""
    status = EXIT_OK
    for path in args.games:
        try:
            description = parse_file(path)
        except GDLError as e:
            print(e, file=sys.stderr)
            status = EXIT_INVALID
            continue
        problems = validate(description, strict=args.strict)
        errors = [p for p in problems if not p.warning]
        warnings = [p for p in problems if p.warning]
        for problem in problems:
            print(problem, file=sys.stderr)
        if errors:
            print(f"{path}: {len(errors)} error(s), {len(warnings)} warning(s)", file=sys.stderr)
            status = EXIT_INVALID
            continue
        summary = summarize(description)
        dialect = "GDL-II" if summary.has_random or summary.has_sees else "GDL"
        print(f"{path}: valid {dialect}, {len(description.rules)} rules")
        print(f"  roles: {' '.join(summary.roles)}")
        print(f"  chance: {_yes_no(summary.has_random)}")
        print(f"  hidden information: {_yes_no(summary.has_sees)}")
        if args.playouts > 0:
            print(f"  simultaneous moves: {_simultaneous(description, args)}")
        counts = ", ".join(f"{name} {count}" for name, count in summary.rule_counts)
        print(f"  rules per keyword: {counts}")
        print(f"  warnings: {len(warnings)}")
    return status


def _simultaneous(description: object, args: argparse.Namespace) -> str:
    from ggp.game import Game
    from ggp.gdl.terms import Description
    from ggp.info import sample_playouts

    assert isinstance(description, Description)
    try:
        game = Game.from_description(description, reasoner=args.reasoner)
        stats = sample_playouts(game, args.playouts, np.random.default_rng(args.seed))
    except GGPError as e:
        return f"unknown (the game could not be played: {e})"
    verdict = _yes_no(stats.simultaneous)
    return (
        f"{verdict} (seen in {stats.playouts} seeded random playouts, {game.reasoner};"
        f" two or more roles {'had' if stats.simultaneous else 'never had'} a choice at once)"
    )


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def cmd_info(args: argparse.Namespace) -> int:
    """Print a game's roles, chance, hidden information, propnet size and playout figures."""
    from ggp.game import Game
    from ggp.info import game_info

    try:
        game = Game.from_file(args.game, reasoner=args.reasoner)
    except GDLError as e:
        print(e, file=sys.stderr)
        return EXIT_INVALID
    info = game_info(game, args.playouts, np.random.default_rng(args.seed), seconds=args.seconds)
    stats = info.playouts
    playouts = f"{stats.playouts} random playouts, seed {args.seed}"
    print(info.path)
    print(f"  roles: {' '.join(info.roles)}")
    print(f"  chance: {_yes_no(info.has_chance)}")
    print(f"  hidden information: {_yes_no(info.has_hidden_information)}")
    print(f"  simultaneous moves: {_yes_no(info.simultaneous)} (seen in {playouts})")
    if info.propnet is not None:
        net = info.propnet
        print(
            f"  reasoner: propnet, {net.components} components ({net.base} base, "
            f"{net.inputs} input, {net.gates} gates)"
        )
    elif game.grounding_failure is None:
        print(f"  reasoner: {game.reasoner} (as asked; no propnet)")
    else:
        print(f"  reasoner: {game.reasoner} (no propnet: {game.grounding_failure})")
    cut = f"; {stats.unfinished} cut off" if stats.unfinished else ""
    if stats.playouts < args.playouts:
        cut += f"; {args.playouts} asked, the {args.seconds:g} s ran out"
    print(
        f"  game length: mean {stats.mean_length:.2f}, max {stats.max_length} joint moves "
        f"({playouts}{cut})"
    )
    branching = ", ".join(
        f"{role} {value:.2f}" for role, value in zip(info.roles, stats.mean_branching, strict=True)
    )
    print(f"  branching factor (mean legal moves per step): {branching}")
    return EXIT_OK


def cmd_play(args: argparse.Namespace) -> int:
    """Let a person play one role against players from the registry."""
    import math
    import secrets

    from ggp.errors import GameError
    from ggp.game import Game
    from ggp.gdl.terms import Const
    from ggp.match import run_match
    from ggp.players.base import Player
    from ggp.players.human import HumanPlayer, PlayerQuit
    from ggp.players.registry import make_player

    try:
        game = Game.from_file(args.game)
        # Classic GDL: every role sees every move (Game makes that a percept), so the
        # person knows the true state and may see the board.
        public = game.moves_public
    except GDLError as e:
        print(e, file=sys.stderr)
        return EXIT_INVALID
    role = game.role(args.as_role) if args.as_role else game.player_roles[0]
    if role == game.random_role:
        raise GameError("random is chance, played by the referee: choose another role")
    seed: int = args.seed if args.seed is not None else secrets.randbits(32)
    streams = np.random.SeedSequence(seed).spawn(len(game.player_roles) + 1)
    players: dict[Const, Player] = {}
    warned = False
    for player_role, stream in zip(game.player_roles, streams[1:], strict=True):
        rng = np.random.default_rng(stream)
        if player_role == role:
            players[player_role] = HumanPlayer(sys.stdin, sys.stdout, show_board=public, rng=rng)
            continue
        player = make_player(args.vs, rng, game)
        reason = getattr(player, "search_only", None)  # cfr+nn without a fitting network
        if reason is not None and not warned:
            print(
                f"warning: {args.vs}: {reason}; playing the search-only cfr player instead",
                file=sys.stderr,
            )
            warned = True
        players[player_role] = player
    opponents = [r.name for r in game.player_roles if r != role]
    against = f"{args.vs} as {' '.join(opponents)}" if opponents else "nobody but chance"
    print(f"{args.game}: you play {role} against {against} (seed {seed}).")
    if not public:
        print("You see only your own moves and percepts, never the true state.")
    try:
        record = run_match(
            game,
            players,
            np.random.default_rng(streams[0]),
            start_clock_s=math.inf,
            play_clock_s=math.inf,
        )
    except PlayerQuit:
        for player in players.values():
            player.abort()
        return EXIT_ERROR
    for replaced in record.replacements:
        print(
            f"Note: at step {replaced.step + 1} the referee replaced the move of "
            f"{replaced.role} ({replaced.reason}) with {replaced.move}."
        )
    scores = zip(record.roles, record.goals, strict=True)
    goals = ", ".join(f"{name} {goal}" for name, goal in scores)
    print(f"Goals: {goals}")
    print(f"You ({role}) scored {record.goals[game.role_index(role)]}.")
    return EXIT_OK


def cmd_bench(args: argparse.Namespace) -> int:
    """Random playouts to the end: states/s and playouts/s, single-state and batched."""
    from ggp.bench import human, run_bench

    report = run_bench(
        args.game, args.seconds, args.batch, not args.no_cache, args.seed, args.reasoner
    )
    print(f"{report.game}: random playouts to the end, {report.reasoner}")
    print("| mode | states/s | playouts/s |")
    print("| --- | --- | --- |")
    rows = [("single-state, cache off", report.single)]
    if report.cached is not None:
        rows.append(("single-state, cache on", report.cached))
    if report.batched is not None:
        rows.append((f"batched, {report.batch:,} states per call", report.batched))
    for name, rate in rows:
        print(f"| {name} | {human(rate.states_per_s)} | {human(rate.playouts_per_s)} |")
    if report.cache is not None:
        print(
            f"cache: {report.cache.hit_rate:.1%} hits ({report.cache.hits:,} hits, "
            f"{report.cache.misses:,} misses, {report.cache.size:,} of "
            f"{report.cache.maxsize:,} entries)"
        )
    if report.batched is None:
        print(f"batched: not available (the game runs on the {report.reasoner}, no propnet)")
    return EXIT_OK


def cmd_solve(args: argparse.Namespace) -> int:
    """CFR over the whole game tree: policies, value and exploitability."""
    from ggp.game import Game
    from ggp.search.solve import solve

    game = Game.from_file(args.game)
    result = solve(
        game, args.iterations, algorithm=args.algorithm, max_nodes=args.max_nodes, show=args.show
    )
    print(
        f"{args.game}: full game tree of {result.nodes:,} nodes, {result.infosets:,} "
        f"information sets; {args.algorithm} {result.iterations:,} iterations in "
        f"{result.seconds:.2f} s"
    )
    values = ", ".join(f"{r} {v:.3f}" for r, v in zip(result.roles, result.values, strict=True))
    print(f"value (expected goal under the average strategy): {values}")
    print(
        f"exploitability: {result.exploitability:.6g} goal points "
        f"(NashConv {result.nash_conv:.6g}; best-response values "
        + ", ".join(
            f"{r} {v:.3f}" for r, v in zip(result.roles, result.best_response_values, strict=True)
        )
        + ")"
    )
    print("policy at each role's first information sets (what the role has seen: move / percepts):")
    for policy in result.policies:
        seen = "; ".join(
            f"{move} / {' '.join(percepts) or '-'}" for move, percepts in policy.observations
        )
        moves = ", ".join(
            f"{m} {p:.3f}" for m, p in zip(policy.moves, policy.probabilities, strict=True)
        )
        print(f"  {policy.role} [{seen or 'start'}]: {moves}")
    return EXIT_OK


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="ggp",
        description="ggp: a general game player for GDL-II (games with chance and hidden "
        "information).",
    )
    parser.add_argument("--version", action="version", version=f"ggp {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    check = commands.add_parser(
        "check",
        help="parse and validate game descriptions, print a summary",
        description="Parse and validate GDL / GDL-II game descriptions. For a valid game, "
        "print its roles, whether it has chance (a random role), hidden information (sees "
        "rules) and simultaneous moves (from seeded random playouts), and the number of rules "
        "per keyword. For an invalid one, print every problem as file:line:col: message and "
        "exit with status 2. Unsafe rules are warnings unless --strict.",
    )
    check.add_argument("games", nargs="+", metavar="GAME", help="game description file(s)")
    check.add_argument("--strict", action="store_true", help="treat unsafe rules as errors")
    check.add_argument(
        "--playouts",
        type=int,
        default=20,
        metavar="N",
        help="random playouts used to detect simultaneous moves (0 skips them; default 20)",
    )
    check.add_argument("--seed", type=int, default=0, help="seed of the playouts (default 0)")
    add_reasoner_option(check, "for the playouts")
    check.set_defaults(handler=cmd_check)
    _add_info_parser(commands)
    _add_play_parser(commands)
    _add_bench_parser(commands)
    _add_solve_parser(commands)
    add_training_commands(commands)
    add_protocol_commands(commands)
    return parser


def _add_bench_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    bench = commands.add_parser(
        "bench",
        help="measure the reasoner: random playouts per second",
        description="Play uniformly random games to the end and print states/s and "
        "playouts/s: one state at a time through the Game interface with the transition "
        "cache off (the propnet itself) and on (with its hit rate), and batched (many "
        "states per call, one bit per state). A state is one step: every role's legal "
        "moves, the next state and the terminal check.",
    )
    bench.add_argument("game", metavar="GAME", help="game description file")
    bench.add_argument(
        "--seconds", type=float, default=3.0, metavar="N", help="per measurement (default 3)"
    )
    bench.add_argument(
        "--batch",
        type=_positive_int,
        default=16384,
        metavar="K",
        help="states per batched call (default 16384)",
    )
    bench.add_argument("--no-cache", action="store_true", help="skip the cached measurement")
    bench.add_argument("--seed", type=int, default=0, help="seed of the playouts (default 0)")
    add_reasoner_option(bench, "to measure")
    bench.set_defaults(handler=cmd_bench)


def _add_solve_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    solve = commands.add_parser(
        "solve",
        help="solve a small game with CFR: policies, value, exploitability",
        description="Build the whole game tree from the initial state (information sets "
        "keyed by each role's observations; random as chance) and run CFR on it. Prints "
        "each role's policy at its first information sets, the game value under the "
        "average strategy and its exact exploitability (NashConv divided by the number of "
        "deciding roles, by best response over the whole tree), in goal points (0..100).",
    )
    solve.add_argument("game", metavar="GAME", help="game description file")
    solve.add_argument(
        "--iterations",
        type=_positive_int,
        default=1000,
        metavar="N",
        help="CFR iterations (default 1000)",
    )
    solve.add_argument(
        "--algorithm",
        choices=["cfr+", "dcfr"],
        default="cfr+",
        help="CFR+ (default) or discounted CFR",
    )
    solve.add_argument(
        "--max-nodes",
        type=_positive_int,
        default=2_000_000,
        metavar="N",
        help="refuse larger game trees (default 2,000,000)",
    )
    solve.add_argument(
        "--show",
        type=_positive_int,
        default=6,
        metavar="N",
        help="information sets shown per role (default 6)",
    )
    solve.set_defaults(handler=cmd_solve)


def _add_info_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    info = commands.add_parser(
        "info",
        help="summarise a game: roles, chance, hidden info, sizes, lengths",
        description="Print a game's roles, whether it has chance (a random role), hidden "
        "information (sees rules) and simultaneous moves, the size of its propositional "
        "network (components, base and input propositions, gates; or that it uses the "
        "prover), and from seeded uniformly random playouts the mean and maximum game "
        "length and each role's branching factor (mean number of legal moves per step).",
    )
    info.add_argument("game", metavar="GAME", help="game description file")
    info.add_argument(
        "--playouts",
        type=_positive_int,
        default=100,
        metavar="N",
        help="random playouts (default 100)",
    )
    info.add_argument(
        "--seconds",
        type=float,
        default=60.0,
        metavar="S",
        help="time for the playouts: when it runs out, the playout under way is cut off and "
        "no other starts (default 60)",
    )
    info.add_argument("--seed", type=int, default=0, help="seed of the playouts (default 0)")
    add_reasoner_option(info)
    info.set_defaults(handler=cmd_info)


def _player_spec(text: str) -> str:
    """``text`` if it is a player spec (``NAME`` or ``NAME:ARGUMENT``), for argparse."""
    from ggp.players.registry import parse_spec

    try:
        parse_spec(text)
    except GGPError as e:
        raise argparse.ArgumentTypeError(str(e)) from None
    return text


def _add_play_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from ggp.players.registry import PLAYER_SPECS

    players = "; ".join(f"{spec.name}: {spec.summary}" for spec in PLAYER_SPECS)
    play = commands.add_parser(
        "play",
        help="play a game in the terminal against a computer player",
        description="Play one role of a game against computer players. You see only what "
        "your role sees: your own moves and your percepts (for a classic GDL game, every "
        "move, and the board is drawn; for a GDL-II game, never the true state). Choose "
        "each move by its number or type it in KIF. At the end the goals are printed. "
        "End of input abandons the match (exit status 1).",
    )
    play.add_argument("game", metavar="GAME", help="game description file")
    play.add_argument(
        "--as",
        dest="as_role",
        metavar="ROLE",
        help="your role (default: the first role other than random)",
    )
    play.add_argument(
        "--vs",
        type=_player_spec,
        default="random",
        metavar="SPEC",
        help=f"who plays the other roles, a player spec with its options (default random; "
        f"{players})",
    )
    play.add_argument(
        "--seed", type=int, default=None, help="seed of the match (default: a fresh one, printed)"
    )
    play.set_defaults(handler=cmd_play)


def _interrupt(signum: int, frame: object) -> None:
    raise KeyboardInterrupt


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ggp`` command line; returns the exit status.

    A SIGTERM (``kill``) stops a command as Ctrl-C does: logs keep what finished, worker
    processes are stopped, a server shuts down. It also works where Ctrl-C's SIGINT is
    ignored, as in a command started with ``&`` from a script.
    """
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.ERROR,
        format="%(levelname)s %(name)s: %(message)s",
    )
    started = time.monotonic()
    on_main_thread = threading.current_thread() is threading.main_thread()
    before = signal.signal(signal.SIGTERM, _interrupt) if on_main_thread else None
    try:
        status: int = args.handler(args)
    except GGPError as e:
        print(e, file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    finally:
        if on_main_thread:
            signal.signal(signal.SIGTERM, before)
    logging.getLogger(__name__).info("done in %.2f s", time.monotonic() - started)
    return status


if __name__ == "__main__":
    sys.exit(main())
