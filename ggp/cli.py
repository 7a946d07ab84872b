"""The ``ggp`` command line (also ``python -m ggp``).

Each sub-command lives in a function ``cmd_<name>`` registered in :func:`build_parser`;
only implemented commands are registered.
"""

from __future__ import annotations

import argparse
import logging
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ggp import __version__
from ggp.errors import GDLError, GGPError
from ggp.gdl.parser import parse_file
from ggp.gdl.validate import summarize, validate

__all__ = ["main", "build_parser"]

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_INVALID = 2


@dataclass(frozen=True)
class PlayoutStats:
    """What seeded random playouts showed about a game."""

    playouts: int
    simultaneous: bool  # some state gave two or more non-random roles a choice at once
    mean_length: float
    max_length: int


def sample_playouts(
    game: object, playouts: int, rng: np.random.Generator, max_steps: int = 1000
) -> PlayoutStats:
    """Play ``playouts`` uniformly random games and record length and simultaneity."""
    from ggp.game import Game

    assert isinstance(game, Game)
    simultaneous = False
    lengths: list[int] = []
    for _ in range(playouts):
        state = game.initial_state()
        steps = 0
        while not game.is_terminal(state) and steps < max_steps:
            legal = [game.legal_moves(state, role) for role in game.roles]
            choosers = sum(
                1
                for role, moves in zip(game.roles, legal, strict=True)
                if len(moves) > 1 and role != game.random_role
            )
            simultaneous = simultaneous or choosers >= 2
            joint = tuple(moves[int(rng.integers(len(moves)))] for moves in legal)
            state = game.next_state(state, joint)
            steps += 1
        lengths.append(steps)
    return PlayoutStats(playouts, simultaneous, float(np.mean(lengths)), max(lengths))


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
    check.add_argument(
        "--reasoner",
        choices=["auto", "propnet", "prover"],
        default="auto",
        help="reasoner for the playouts (default auto: propnet, prover if too large)",
    )
    check.set_defaults(handler=cmd_check)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``ggp`` command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.ERROR,
        format="%(levelname)s %(name)s: %(message)s",
    )
    started = time.monotonic()
    try:
        status: int = args.handler(args)
    except GGPError as e:
        print(e, file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    logging.getLogger(__name__).info("done in %.2f s", time.monotonic() - started)
    return status


if __name__ == "__main__":
    sys.exit(main())
