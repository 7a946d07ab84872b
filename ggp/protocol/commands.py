"""The protocol sub-commands of ``ggp`` (``serve``, ``match``), registered by cli.py."""

from __future__ import annotations

import argparse
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ggp.options import add_reasoner_option

EXIT_OK = 0
EXIT_ERROR = 1
EXIT_INVALID = 2


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be more than 0, not {text}")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _role_spec(text: str) -> tuple[str, str]:
    role, equals, spec = text.partition("=")
    if not equals or not role or not spec:
        raise argparse.ArgumentTypeError(f"expected ROLE=SPEC, not {text!r}")
    return role, spec


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve one player over HTTP until interrupted."""
    from ggp.players.registry import parse_spec
    from ggp.protocol.http_handler import make_server
    from ggp.protocol.session import ServeSettings

    parse_spec(args.player)  # a bad spec fails now, not at the first START
    settings = ServeSettings(
        player=args.player,
        name=args.name,
        margin_s=args.margin,
        log_dir=None if args.no_log else Path(args.log_dir),
        seed=args.seed,
        reasoner=args.reasoner,
    )
    return _serve_until_interrupted(
        args,
        lambda: make_server(settings, args.host, args.port),
        lambda url: f"ggp serve: {args.player} as {args.name!r} on {url}",
    )


def _serve_until_interrupted(
    args: argparse.Namespace,
    make: Callable[[], Any],
    banner: Callable[[str], str],
    ready: Callable[[Any], None] | None = None,
) -> int:
    """Listen (``make()``: a server with ``url``, ``serve_forever``, ``server_close``),
    print ``banner(url)``, call ``ready(server)``, and serve until interrupted."""
    try:
        server = make()
    except OSError as e:
        print(f"cannot listen on {args.host}:{args.port}: {e.strerror or e}", file=sys.stderr)
        return EXIT_ERROR
    print(banner(server.url), flush=True)
    if ready is not None:
        ready(server)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        print("stopped", file=sys.stderr)
    finally:
        server.server_close()
    return EXIT_OK


def cmd_battlesnake_serve(args: argparse.Namespace) -> int:
    """Serve a snake on the official Battlesnake API until interrupted."""
    from ggp.players.registry import parse_spec
    from ggp.protocol.battlesnake_api import SnakeServerSettings, make_snake_server

    parse_spec(args.player)  # a bad spec fails now, not at the first game
    settings = SnakeServerSettings(
        player=args.player,
        game=Path(args.game) if args.game else None,
        margin_ms=args.margin_ms,
        seed=args.seed,
    )

    def preload(server: Any) -> None:  # the standard boards' games, grounded while we wait
        if settings.game is None:
            threading.Thread(target=server.service.preload, daemon=True).start()

    return _serve_until_interrupted(
        args,
        lambda: make_snake_server(settings, args.host, args.port),
        lambda url: f"ggp battlesnake serve: {args.player} on {url}",
        preload,
    )


def cmd_match(args: argparse.Namespace) -> int:
    """Play matches between local and remote players; print results and a score table."""
    from ggp.errors import GameError, GDLError
    from ggp.game import Game
    from ggp.protocol.game_manager import MatchReport, PlayerEntry, play_matches, score_table

    try:
        game = Game.from_file(args.game)
    except GDLError as e:
        print(e, file=sys.stderr)
        return EXIT_INVALID
    given = {game.role(role): spec for role, spec in args.player or []}
    gdl1 = {game.role(role) for role in args.gdl1 or []}
    for role in gdl1:
        if role not in given:
            raise GameError(f"--gdl1 {role}: the role has no --player")
    entries: list[PlayerEntry] = []
    for role in game.player_roles:
        spec = given.get(role, "random")
        entries.append(PlayerEntry(role.name, spec, role in gdl1))
    if game.random_role is not None and game.random_role in given:
        raise GameError("random is chance, played by the game manager: give it no --player")
    names = ", ".join(f"{e.role} {e.spec}{' (GDL-I)' if e.gdl1 else ''}" for e in entries)
    print(
        f"{args.game}: {args.games} match(es), start clock {args.startclock:g} s, "
        f"play clock {args.playclock:g} s; {names}",
        flush=True,
    )
    out_dir = None if args.no_record else Path(args.out)

    def show(report: MatchReport, path: Path | None) -> None:
        record = report.record
        goals = ", ".join(f"{r} {g}" for r, g in zip(record.roles, record.goals, strict=True))
        where = f"; record {path}" if path is not None else ""
        print(
            f"match {record.match_id}: {goals} ({len(record.joint_moves)} steps, "
            f"{report.seconds:.1f} s, {len(record.replacements)} replaced){where}",
            flush=True,
        )
        for replaced in record.replacements:
            print(
                f"  step {replaced.step}: {replaced.role}'s move replaced by {replaced.move} "
                f"({replaced.reason})"
            )

    reports = play_matches(
        game,
        args.game,
        entries,
        games=args.games,
        start_clock_s=args.startclock,
        play_clock_s=args.playclock,
        seed=args.seed,
        out_dir=out_dir,
        on_match=show,
    )
    if args.games > 1:
        print("| role | player | games | mean goal | ± s.e. | min | max | replaced | slowest s |")
        print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
        for row in score_table(reports):
            print(
                f"| {row.role} | {row.spec} | {row.games} | {row.mean_goal:.1f} | "
                f"{row.stderr:.1f} | {row.min_goal} | {row.max_goal} | "
                f"{row.replaced}/{row.moves} | {row.max_reply_s:.2f} |"
            )
    return EXIT_OK


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``serve``, ``battlesnake serve`` and ``match``."""
    serve = commands.add_parser(
        "serve",
        help="play over HTTP for a GGP game manager (GDL-II and GDL-I)",
        description="Answer a game manager's messages (INFO, PREVIEW, START, PLAY, STOP, "
        "ABORT) over HTTP, one match at a time (busy to others): GDL-II with and without "
        "turn and last move, and GDL-I, in any letter case, replying in the manager's case. "
        "The start clock is used for set-up (grounding, loading a checkpoint); every move "
        "comes by the play clock less --margin however slow the search (a random legal move "
        "when it is late). Each match is logged as JSON lines in --log-dir.",
    )
    serve.add_argument(
        "--port", type=int, default=9147, help="port to listen on (default 9147; 0: any free)"
    )
    serve.add_argument(
        "--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)"
    )
    serve.add_argument(
        "--player",
        default="random",
        metavar="SPEC",
        help="the player: random, cfr, handcrafted, cfr+nn:CHECKPOINT, pvs, mcts, ... "
        "(default random)",
    )
    serve.add_argument("--name", default="ggp", help="the name INFO gives (default ggp)")
    serve.add_argument(
        "--margin",
        type=float,
        default=0.5,
        metavar="S",
        help="reply this many seconds before each clock runs out (default 0.5)",
    )
    serve.add_argument(
        "--log-dir",
        default="runs/serve",
        metavar="DIR",
        help="per-match JSON-lines logs (default runs/serve)",
    )
    serve.add_argument("--no-log", action="store_true", help="write no match logs")
    serve.add_argument("--seed", type=int, default=None, help="seed of the matches' randomness")
    add_reasoner_option(serve)
    serve.set_defaults(handler=cmd_serve)

    battlesnake = commands.add_parser(
        "battlesnake",
        help="Battlesnake: serve a snake on the official HTTP API",
        description="Battlesnake on ggp's engine (games/battlesnake/).",
    )
    snake_commands = battlesnake.add_subparsers(dest="battlesnake_command", required=True)
    snake_serve = snake_commands.add_parser(
        "serve",
        help="serve a snake on the official Battlesnake API (v1)",
        description="Answer GET / and POST /start, /move, /end of the official Battlesnake "
        "API: each board is mapped onto a state of the GDL game for its size and snake count "
        "(games/battlesnake/, or generated; --game fixes one), the player chooses there, and "
        "the move goes back before the game's timeout less --margin-ms. Bad JSON or an "
        "impossible board gets HTTP 400 with the reason.",
    )
    snake_serve.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    snake_serve.add_argument("--host", default="127.0.0.1", help="address (default 127.0.0.1)")
    snake_serve.add_argument(
        "--player",
        default="idapos",
        metavar="SPEC",
        help="a player that chooses from states: idapos, snake:greedy, snake:aggressive, "
        "snake:tailchaser, snake:reflex, alphabeta:eval=snake, maxn:eval=snake, ... "
        "(default idapos)",
    )
    snake_serve.add_argument("--game", default=None, metavar="GDL", help="one game for all boards")
    snake_serve.add_argument(
        "--margin-ms",
        type=int,
        default=100,
        metavar="MS",
        help="reply this long before the game's timeout (default 100)",
    )
    snake_serve.add_argument("--seed", type=int, default=None, help="seed of the players")
    snake_serve.set_defaults(handler=cmd_battlesnake_serve)

    match = commands.add_parser(
        "match",
        help="run matches as a game manager (local and remote players)",
        description="Run matches of GAME as a GGP game manager: each role is played by a "
        "local player (random, cfr, handcrafted, cfr+nn:CHECKPOINT, ...) or by a remote "
        "one (http://host:port), which is sent GDL-II messages with percepts, or GDL-I "
        "messages with --gdl1. The manager plays random itself, allows each reply the play "
        "clock plus 1 s, replaces a late, failed or illegal reply by a random legal move "
        "and records that. Each match is written as JSON (moves, percepts per role, goals, "
        "timings) to --out; the goals are printed, and with --games N a score table.",
    )
    match.add_argument("game", metavar="GAME", help="game description file")
    match.add_argument(
        "--player",
        action="append",
        type=_role_spec,
        metavar="ROLE=SPEC",
        help="who plays ROLE (repeat per role; default random)",
    )
    match.add_argument(
        "--gdl1",
        action="append",
        metavar="ROLE",
        help="send GDL-I messages to the remote player of ROLE (classic GDL games only)",
    )
    match.add_argument(
        "--startclock", type=_positive_float, default=10.0, metavar="S", help="default 10"
    )
    match.add_argument(
        "--playclock", type=_positive_float, default=5.0, metavar="P", help="default 5"
    )
    match.add_argument(
        "--games", type=_positive_int, default=1, metavar="N", help="matches (default 1)"
    )
    match.add_argument("--seed", type=int, default=None, help="seed of the matches")
    match.add_argument(
        "--out",
        default="runs/match",
        metavar="DIR",
        help="where the match records go (default runs/match)",
    )
    match.add_argument("--no-record", action="store_true", help="write no match records")
    match.set_defaults(handler=cmd_match)
