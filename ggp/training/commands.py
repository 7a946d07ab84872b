"""The training sub-commands of ``ggp`` (``train``, ``eval``, ``tournament``, ``exploit``,
``tune``), registered by cli.py."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from dataclasses import fields
from datetime import datetime, timedelta
from datetime import time as dt_time
from pathlib import Path
from typing import Any, TypeVar

from ggp.training.config import TrainConfig

__all__ = ["add_commands", "cmd_train", "cmd_eval", "cmd_tournament", "cmd_exploit", "cmd_tune"]


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {text}")
    return value


#: The exit status of ``eval`` / ``tournament`` stopped by ``--stop-at`` before their
#: games were all played (sysexits.h's EX_TEMPFAIL: run again later to go on).
EXIT_STOPPED = 75
T = TypeVar("T")


def _unless_stopped(play: Callable[[], T], left: Callable[[], str]) -> T | None:
    """``play()``; or, when it stops at its ``--stop-at`` time
    (:class:`~ggp.errors.OutOfTime`), None after printing why and the games left."""
    from ggp.errors import OutOfTime

    try:
        return play()
    except OutOfTime as e:
        print(f"{e}\n{left()}")
        return None


def _wall_time(text: str, now: datetime | None = None) -> float:
    """A moment given on the command line, as seconds since the epoch: ``@SECONDS`` (since
    the epoch), an ISO date and time (local time unless it names its offset) or a time of
    day (``15:30``: the next one, today or tomorrow).

    Example:
        >>> _wall_time("@1795966200")
        1795966200.0
        >>> _wall_time("2026-11-29T15:30+00:00")
        1795966200.0
        >>> now = datetime(2026, 11, 29, 23, 0)
        >>> _wall_time("07:00", now) - now.timestamp()  # tomorrow morning
        28800.0
    """
    try:
        if text.startswith("@"):
            return float(text[1:])
        if ":" in text and "-" not in text and "T" not in text:
            now = now or datetime.now()
            moment = datetime.combine(now.date(), dt_time.fromisoformat(text))
            if moment <= now:
                moment += timedelta(days=1)
            return moment.timestamp()
        return datetime.fromisoformat(text).timestamp()
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"not a time: {text!r} (15:30, 2026-11-29T15:30 or @SECONDS since the epoch)"
        ) from None


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


#: The settings with a fixed set of values.
_CHOICES = {"backend": ["process", "ray", "inline"], "search": ["auto", "cfr", "mcts"]}


def _add_setting_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per :class:`TrainConfig` field (default None: not given)."""
    group = parser.add_argument_group(
        "settings", "every training setting (defaults, then training/GAME.toml, then --config)"
    )
    defaults = TrainConfig()
    docs = _field_docs()
    for f in fields(TrainConfig):
        default = getattr(defaults, f.name)
        help_text = f"{docs.get(f.name, '')} (default {default})"
        if f.name in _CHOICES:
            group.add_argument(
                _flag(f.name),
                dest=f.name,
                choices=_CHOICES[f.name],
                default=None,
                help=help_text,
            )
            continue
        group.add_argument(
            _flag(f.name),
            dest=f.name,
            type=type(default),
            default=None,
            metavar=f.name.upper().split("_")[0],
            help=help_text.replace("%", "%%"),
        )


def _field_docs() -> dict[str, str]:
    """The first sentence of each attribute's docstring entry in :class:`TrainConfig`."""
    doc = TrainConfig.__doc__ or ""
    docs: dict[str, str] = {}
    current: str | None = None
    for line in doc.splitlines():
        stripped = line.strip()
        if line.startswith("        ") and ":" in stripped and not line.startswith("          "):
            name, _, text = stripped.partition(":")
            if name.isidentifier():
                current = name
                docs[current] = text.strip()
                continue
        if current is not None and line.startswith("            "):
            docs[current] += " " + stripped
    return {k: v.split(". ")[0].rstrip(".") for k, v in docs.items()}


def _overrides(args: argparse.Namespace) -> dict[str, Any]:
    return {
        f.name: getattr(args, f.name)
        for f in fields(TrainConfig)
        if getattr(args, f.name, None) is not None
    }


def cmd_train(args: argparse.Namespace) -> int:
    """Train a network by self-play and write checkpoints."""
    from ggp.training.config import load_config
    from ggp.training.trainer import Trainer

    game_path = Path(args.game)
    overrides = _overrides(args)
    config_file = Path(args.config) if args.config else None
    if args.resume:
        extra = {}
        if config_file is not None:
            from ggp.training.config import load_toml

            extra = load_toml(config_file)
        trainer = Trainer(
            game_path,
            TrainConfig(),
            Path(args.out) if args.out else None,
            resume=True,
            overrides={**extra, **overrides},
            progress=not args.no_progress,
        )
    else:
        from ggp.training.config import settings_files

        config = load_config(game_path, config_file, overrides)
        read = [str(path) for path in settings_files(game_path, config_file)]
        flags = " + command line" if overrides else ""
        print(
            f"settings: defaults + {' + '.join(read)}{flags}"
            if read
            else f"settings: defaults{flags}",
            flush=True,
        )
        trainer = Trainer(
            game_path,
            config,
            Path(args.out) if args.out else None,
            fresh=args.fresh,
            progress=not args.no_progress,
        )
    config = trainer.config
    budget = []
    if config.minutes:
        budget.append(f"{config.minutes:g} min")
    if config.games:
        budget.append(f"{config.games:,} games")
    workers = 1 if config.backend == "inline" else config.worker_count()
    what = "resuming" if args.resume else "training"
    print(
        f"{game_path}: {what} in {trainer.folder} ({' or '.join(budget)}; {workers} "
        f"{config.backend} worker(s); network {trainer.shape.inputs} inputs, "
        f"{trainer.shape.hidden} wide, {trainer.shape.blocks} blocks)",
        flush=True,
    )
    if trainer.resumed_from is not None:
        print(f"resumed from step {trainer.resumed_from:,} ({trainer.games:,} games)", flush=True)
    summary = trainer.run()
    scores = ", ".join(f"as {role} {score:.1f}" for role, score in summary.last_scores)
    print(
        f"done: {summary.steps:,} steps, {summary.games:,} games, {summary.positions:,} "
        f"positions in {summary.elapsed_s / 60:.1f} min"
        + (f"; last snapshot vs random: {scores}" if scores else "")
    )
    print(f"checkpoints: {summary.folder / 'latest.pt'}, {summary.folder / 'best.pt'}")
    print(f"log: {trainer.log_path}; curves: {summary.folder / 'curves.png'}")
    return 0


def cmd_eval(args: argparse.Namespace) -> int:
    """Print a score table: the player against opponents, role by role."""
    from tqdm import tqdm

    from ggp.errors import GameError
    from ggp.game import Game
    from ggp.players.handcrafted import handcrafted_kind
    from ggp.players.net_player import NetCFRPlayer
    from ggp.players.registry import make_player, split_specs
    from ggp.training.evaluate import (
        default_roles,
        evaluate,
        evaluate_left,
        format_left,
        format_table,
    )

    game_path = Path(args.game)
    game = Game.from_file(game_path)
    if args.vs:
        opponents = [spec for text in args.vs for spec in split_specs(text)]
    else:
        opponents = ["random"] + (["handcrafted"] if handcrafted_kind(game) else [])
    roles = (
        [game.role(r).name for part in args.as_roles for r in part.split(",") if r]
        if args.as_roles
        else list(default_roles(game))
    )
    for role in roles:
        if game.role(role) == game.random_role:
            raise GameError("random is chance, played by the referee: choose another role")
    import numpy as np

    # Fail early on a bad spec or a missing checkpoint; a network that does not fit the
    # game is played as the search-only cfr player, with one warning.
    resolved: dict[str, str] = {}

    def checked(spec: str) -> str:
        if spec not in resolved:
            resolved[spec] = spec
            player = make_player(spec, np.random.default_rng(0), game)
            if isinstance(player, NetCFRPlayer) and player.search_only is not None:
                print(
                    f"warning: {spec}: {player.search_only}; playing the search-only cfr "
                    "player instead",
                    file=sys.stderr,
                )
                resolved[spec] = "cfr"
        return resolved[spec]

    opponents = [checked(spec) for spec in opponents]
    player_spec = checked(args.player)
    player = make_player(player_spec, np.random.default_rng(0), game)
    described = args.player if player_spec == args.player else f"{args.player} as {player_spec}"
    if isinstance(player, NetCFRPlayer):
        from ggp.nn.checkpoint import default_checkpoint, load_checkpoint

        path = player.checkpoint if player.checkpoint is not None else default_checkpoint(game)
        meta = load_checkpoint(path).metadata
        search = "PUCT" if player.puct_player(game) is not None else "CFR-D"
        described = (
            f"{args.player} ({path}: {meta.steps:,} steps, {meta.games:,} self-play games, "
            f"{meta.elapsed_s / 60:.0f} min of training; searching with {search})"
        )
    workers = args.workers if args.workers > 0 else None
    from ggp.training.config import TrainConfig

    count = workers or TrainConfig().worker_count()
    where = "one at a time in this process" if args.backend == "inline" else f"{count} worker(s)"
    print(
        f"{game_path}: {described}; {args.games} games per cell, {where}, "
        f"{args.play_clock:g} s per move"
    )
    log = Path(args.log) if args.log else None

    def left() -> str:
        return format_left(
            evaluate_left(
                game_path,
                player_spec,
                opponents,
                roles,
                args.games,
                seed=args.seed,
                play_clock_s=args.play_clock,
                log=log,
            )
        )

    if args.dry_run:
        print(left())
        return 0
    total = len(roles) * len(opponents) * args.games
    with tqdm(total=total, unit="game", disable=args.no_progress, file=sys.stderr) as bar:
        table = _unless_stopped(
            lambda: evaluate(
                game_path,
                player_spec,
                opponents,
                roles,
                args.games,
                seed=args.seed,
                workers=count,
                backend=args.backend,
                play_clock_s=args.play_clock,
                on_match=lambda: bar.update(1),
                log=log,
                stop_at=args.stop_at,
            ),
            left,
        )
    if table is None:
        return EXIT_STOPPED
    if args.wdl:
        print("wins-draws-losses: score out of 100 (win 1, draw 0.5) [95% interval]")
    else:
        print("score out of 100 (win 1, draw 0.5) [95% interval]")
    print(format_table(table, wdl=args.wdl))
    replaced = sum(c.replaced for c in table.cells)
    slowest = max(c.max_move_s for c in table.cells)
    theirs = [c.opponent_replaced for c in table.cells if c.opponent_replaced is not None]
    print(
        f"{table.seconds:.0f} s; longest move {slowest:.2f} s; "
        f"{replaced} move(s) of {player_spec} replaced by the referee (late or illegal)"
        + (f", {sum(theirs)} of the opponents'" if theirs else "")
    )
    return 0


def cmd_tournament(args: argparse.Namespace) -> int:
    """Print a tournament's table: a field of players ranked by mean placement."""
    import numpy as np
    from tqdm import tqdm

    from ggp.errors import GameError
    from ggp.game import Game
    from ggp.players.registry import make_player, split_specs
    from ggp.training.config import TrainConfig
    from ggp.training.evaluate import format_left
    from ggp.training.tournament import format_tournament, tournament, tournament_left

    game_path = Path(args.game)
    game = Game.from_file(game_path)
    specs = [spec for text in args.field for spec in split_specs(text)]
    seats = len(game.player_roles)
    copies = args.copies
    if copies is None:
        copies = seats // len(specs) if seats % len(specs) == 0 else 1
    field = [spec for spec in specs for _ in range(copies)]
    if len(field) != seats:
        raise GameError(
            f"{game_path} has {seats} player roles; the field has {len(field)} players "
            f"({len(specs)} spec(s) x {copies}): give one spec per role, or --copies"
        )
    for spec in specs:  # fail early on a bad spec
        make_player(spec, np.random.default_rng(0), game)
    workers = args.workers if args.workers > 0 else TrainConfig().worker_count()
    print(
        f"{game_path}: {args.games} games of {', '.join(field)}; {workers} worker(s), "
        f"{args.play_clock:g} s per move, seed {args.seed}"
    )
    log = Path(args.log) if args.log else None

    def left() -> str:
        return format_left(
            tournament_left(
                game_path, field, args.games, seed=args.seed, play_clock_s=args.play_clock, log=log
            )
        )

    if args.dry_run:
        print(left())
        return 0
    with tqdm(total=args.games, unit="game", disable=args.no_progress, file=sys.stderr) as bar:
        table = _unless_stopped(
            lambda: tournament(
                game_path,
                field,
                args.games,
                seed=args.seed,
                workers=workers,
                backend=args.backend,
                play_clock_s=args.play_clock,
                on_game=lambda: bar.update(1),
                log=log,
                stop_at=args.stop_at,
            ),
            left,
        )
    if table is None:
        return EXIT_STOPPED
    print(format_tournament(table))
    print(f"{table.seconds:.0f} s")
    return 0


def cmd_exploit(args: argparse.Namespace) -> int:
    """Print a player's exact exploitability, its policy asked at every information set."""
    import numpy as np
    from tqdm import tqdm

    from ggp.game import Game
    from ggp.players.net_player import NetCFRPlayer
    from ggp.players.registry import make_player
    from ggp.search.tree import GameTree
    from ggp.training.config import TrainConfig
    from ggp.training.exploit import exploit

    game = Game.from_file(args.game)
    spec = args.player
    probe = make_player(spec, np.random.default_rng(0), game)  # a bad spec fails now
    if isinstance(probe, NetCFRPlayer) and probe.search_only is not None:
        print(
            f"warning: {spec}: {probe.search_only}; playing the search-only cfr player instead",
            file=sys.stderr,
        )
        spec = "cfr"
    workers = args.workers if args.workers > 0 else TrainConfig().worker_count()
    bar: tqdm[None] | None = None

    def on_tree(tree: GameTree) -> None:
        per_role = ", ".join(
            f"{role} {int((tree.infoset_role == r).sum()):,}"
            for r, role in enumerate(game.roles)
            if (tree.infoset_role == r).any()
        )
        print(
            f"{args.game}: full game tree of {len(tree.node_state):,} nodes; asking "
            f"{spec} for its policy at {tree.num_infosets:,} information sets ({per_role}), "
            f"{args.clock:g} s per decision, {workers} worker(s)",
            flush=True,
        )

    def progress(done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            bar = tqdm(total=total, unit="infoset", disable=args.no_progress, file=sys.stderr)
        bar.update(done - bar.n)

    try:
        result = exploit(
            args.game,
            spec,
            clock_s=args.clock,
            max_nodes=args.max_nodes,
            samples=args.samples,
            seed=args.seed,
            workers=workers,
            on_tree=on_tree,
            progress=progress,
        )
    finally:
        if bar is not None:
            bar.close()
    notes = []
    if result.late:
        notes.append(f"{result.late:,} after the clock")
    if result.unanswered:
        notes.append(f"{result.unanswered:,} unanswered in time, played uniformly")
    if result.estimated:
        notes.append(
            f"{result.estimated:,} estimated from {result.samples} plays each (sampling noise)"
        )
    print(
        f"{sum(result.infosets):,} answers, the slowest in {result.slowest_s:.2f} s"
        + (f" ({'; '.join(notes)})" if notes else "")
        + f"; {result.seconds:.1f} s in all"
    )
    print("goal points (0..100), the player in every role:")
    for r, role in enumerate(result.roles):
        if not result.infosets[r]:
            continue
        print(
            f"  {role}: value {result.values[r]:.4f}, best response "
            f"{result.best_response_values[r]:.4f}, gain {result.gains[r]:.6g}"
        )
    deciding = sum(1 for n in result.infosets if n)
    print(
        f"exploitability: {result.exploitability:.6g} goal points "
        f"(NashConv {result.nash_conv:.6g} / {deciding} deciding role(s))"
    )
    return 0


#: ``ggp tune`` flags that only a new run takes (a resumed run keeps its own).
_TUNE_RUN_FLAGS = (
    "population",
    "games",
    "depth",
    "elite",
    "mutation",
    "finalists",
    "final_games",
    "seed",
    "base",
)


def cmd_tune(args: argparse.Namespace) -> int:
    """Tune the Battlesnake heuristic weights by a genetic algorithm."""
    from tqdm import tqdm

    from ggp.battlesnake.weights import PAPER_WEIGHTS, snake_weights
    from ggp.errors import SettingError
    from ggp.training.tune import FinalStats, GenerationStats, Tuner, TuneSettings

    out = Path(args.out) if args.out else Path("runs") / "tune" / Path(args.game).stem
    if args.resume:
        given = [_flag(name) for name in _TUNE_RUN_FLAGS if getattr(args, name) is not None]
        if given:
            raise SettingError(
                f"--resume goes on with the run's own settings; drop {', '.join(given)} "
                "(only --generations and --workers may change)"
            )
        tuner = Tuner.resume(out, args.generations, game_path=args.game)
    else:
        options = {
            name: getattr(args, name)
            for name in ("generations", *_TUNE_RUN_FLAGS[:-2])
            if getattr(args, name) is not None
        }
        base = snake_weights(args.base) if args.base is not None else PAPER_WEIGHTS
        seed = args.seed if args.seed is not None else 0
        tuner = Tuner.start(
            args.game, TuneSettings(**options), out, seed, base=base, fresh=args.fresh
        )
    settings = tuner.settings
    what = "resuming" if args.resume else "tuning"
    print(
        f"{tuner.game_path}: {what} the {tuner.family} weights ({tuner.seats} snakes) by a "
        f"genetic algorithm: {settings.population} genomes, {settings.games} games each per "
        f"generation ({tuner.games_per_generation} games), IDAPOS to depth {settings.depth}, "
        f"against each other and {', '.join(settings.opponents)}; then a final round of "
        f"{settings.finalists} genomes, {settings.final_games} games each; seed {tuner.seed}, "
        f"{args.workers} worker(s); run folder {out}",
        flush=True,
    )
    if tuner.generation:
        print(f"generations {tuner.generation} of {settings.generations} done", flush=True)
    with tqdm(
        total=tuner.games_left,
        unit="game",
        disable=args.no_progress,
        file=sys.stderr,
    ) as bar:

        def on_generation(stats: GenerationStats) -> None:
            base = "" if stats.base_fitness is None else f", base {stats.base_fitness:.3f}"
            bar.write(
                f"generation {stats.generation}: best {stats.best_fitness:.3f} "
                f"({stats.best_games} games), mean {stats.mean_fitness:.3f}{base}; "
                f"{stats.seconds:.0f} s",
                file=sys.stdout,
            )

        def on_final(final: FinalStats) -> None:
            bar.write("final round (mean placement, fitness over the run before it):", sys.stdout)
            for genome, placement, fitness in zip(
                final.genomes, final.placements, final.fitness, strict=True
            ):
                mark = " <- base" if genome == tuner.base_genome else ""
                mark += " <- best" if genome == final.best_genome else ""
                bar.write(f"  {genome} {placement:.3f} ({fitness:.3f}){mark}", sys.stdout)

        result = tuner.run(
            args.workers,
            progress=lambda: bar.update(1),
            on_generation=on_generation,
            on_final=on_final,
        )
    family = getattr(result.best, result.family)
    values = ", ".join(f"{name} {value:g}" for name, value in vars(family).items())
    how = "in the final round" if result.final is not None else "shrunk, in the run"
    print(
        f"best {result.family} weights: {values} (mean placement {result.best_placement:.3f} "
        f"{how}, {result.best_games} games; 1 = best); {result.seconds / 60:.1f} min"
    )
    print(
        f"weights: {result.weights_file} (idapos:weights=FILE, alphabeta:eval=snake,"
        f"weights=FILE); log: {out / 'log.jsonl'}"
    )
    return 0


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``train``, ``eval``, ``exploit`` and ``tune``."""
    train = commands.add_parser(
        "train",
        help="train a network by self-play (CFR-D + network), write checkpoints",
        description="Self-play training: worker processes play the game against "
        "themselves with CFR-D guided by the network (sampled histories for each role, "
        "leaves valued by the network); the positions with their CFR policies and "
        "outcomes train the network. Writes checkpoints/GAME/latest.pt and best.pt "
        "(with .json metadata), a JSON-lines log and curves.png. Settings: defaults, "
        "then GAME.toml from ./training or else the shipped training/ folder, then "
        "--config, then flags (the files read are printed).",
    )
    train.add_argument("game", metavar="GAME", help="game description file")
    train.add_argument("--config", metavar="FILE", help="a TOML file of settings")
    train.add_argument("--out", metavar="DIR", help="the run folder (default checkpoints/GAME)")
    train.add_argument(
        "--resume",
        action="store_true",
        help="continue the run in the folder from its latest checkpoint (flags replace "
        "the saved settings; the budget counts the time and games already spent)",
    )
    train.add_argument(
        "--fresh", action="store_true", help="start over even if the folder holds a run"
    )
    train.add_argument("--no-progress", action="store_true", help="no progress bar")
    _add_setting_flags(train)
    train.set_defaults(handler=cmd_train)

    ev = commands.add_parser(
        "eval",
        help="score a player against random and handcrafted players (a table)",
        description="Play a player against opponents, role by role, in parallel, and "
        "print the table the published paper printed: score out of 100 (win 1, draw "
        "0.5) with its 95% interval. Players: random, cfr, handcrafted (Meier and Blind "
        "Tic-Tac-Toe), best-response[:random|handcrafted] (the exact best response: the "
        "ceiling of a column), cfr+nn[:CHECKPOINT][,mix=M][,model=W][,search=S]"
        "[,rollout=L] (default checkpoints/GAME/latest.pt; search: auto, PUCT where the "
        "game's moves are public, else CFR-D, or cfr or mcts; rollout: weight of a random "
        "playout in PUCT's leaf values, default 0.5; mix: uniform weight in CFR-D's "
        "opponent model, default 0.8; model: restricted Nash response weight, default "
        "0.5), and the classic searches alphabeta, pvs, mtdf, "
        "paranoid, maxn, mcts[:depth=N,time=S,eval=heuristic|goal|rollout|nn,...] (see "
        "the README).",
    )
    ev.add_argument("game", metavar="GAME", help="game description file")
    ev.add_argument(
        "--player", default="cfr+nn", metavar="SPEC", help="the player (default cfr+nn)"
    )
    ev.add_argument(
        "--vs",
        action="append",
        metavar="SPECS",
        help="comma-separated opponents, each a player spec with its options "
        "(cfr+nn:PATH,mix=0.5); repeatable (default random,handcrafted; random where "
        "there is no handcrafted player)",
    )
    ev.add_argument(
        "--games", type=int, default=100, metavar="N", help="games per cell (default 100)"
    )
    ev.add_argument(
        "--as",
        dest="as_roles",
        action="append",
        metavar="ROLE",
        help="the player's role (repeatable or comma-separated; default every role)",
    )
    ev.add_argument(
        "--wdl", action="store_true", help="print each cell's wins-draws-losses as well"
    )
    _add_games_options(ev, "table")
    ev.set_defaults(handler=cmd_eval)

    tour = commands.add_parser(
        "tournament",
        help="rank a field of players by mean placement (games of any number of players)",
        description="Play games in which every player role is taken by a player of the "
        "field, the seating drawn anew each game, in parallel, and print each player's "
        "mean placement (1 = best; ties share) with its standard deviation and standard "
        "error, the share of games it placed first, and Welch's t of the best against the "
        "runner-up: the IDAPOS paper's Table 1 (two of each of four snakes on an 8-snake "
        "board).",
    )
    tour.add_argument("game", metavar="GAME", help="game description file")
    tour.add_argument(
        "--field",
        action="append",
        required=True,
        metavar="SPECS",
        help="comma-separated player specs (repeatable), each taking --copies seats",
    )
    tour.add_argument(
        "--copies",
        type=_positive_int,
        metavar="N",
        help="seats per spec (default: the player roles over the specs, where that divides)",
    )
    tour.add_argument(
        "--games", type=_positive_int, default=100, metavar="N", help="games (default 100)"
    )
    _add_games_options(tour, "tournament")
    tour.set_defaults(handler=cmd_tournament)

    ex = commands.add_parser(
        "exploit",
        help="a player's exact exploitability: its policy at every information set, "
        "best responses over the whole tree",
        description="Build the whole game tree, ask the player for its policy at every "
        "information set of every role (a fresh player as if a match had reached it, its "
        "own search under the clock, in parallel), then compute best responses over the "
        "whole tree. Prints each role's value with the player in every role, its "
        "best-response value and gain, and the exploitability (NashConv divided by the "
        "number of deciding roles), in goal points (0..100). Players that cannot say "
        "their policy (handcrafted, best-response) are estimated from --samples plays. "
        "Figures of players that do not search are the same for the same seed; a search "
        "player stops at the clock, so its figures vary a little from run to run.",
    )
    ex.add_argument("game", metavar="GAME", help="game description file")
    ex.add_argument(
        "--player",
        required=True,
        metavar="SPEC",
        help="the player: random, cfr, handcrafted, best-response[:OPPONENT], "
        "cfr+nn[:CHECKPOINT][,mix=M][,model=W], alphabeta, pvs, mtdf, paranoid, maxn, mcts",
    )
    ex.add_argument(
        "--clock",
        type=_positive_float,
        default=1.0,
        metavar="S",
        help="seconds per decision, as a play clock (default 1)",
    )
    ex.add_argument(
        "--max-nodes",
        type=_positive_int,
        default=2_000_000,
        metavar="N",
        help="refuse larger game trees (default 2,000,000)",
    )
    ex.add_argument(
        "--samples",
        type=_positive_int,
        default=100,
        metavar="N",
        help="plays per information set for a player whose policy is estimated (default 100)",
    )
    ex.add_argument("--seed", type=int, default=0, help="seed of the questions (default 0)")
    ex.add_argument(
        "--workers", type=int, default=0, metavar="W", help="parallel workers (default: cores)"
    )
    ex.add_argument("--no-progress", action="store_true", help="no progress bar")
    ex.set_defaults(handler=cmd_exploit)
    _add_tune_parser(commands)


def _probability(text: str) -> float:
    value = float(text)
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"must be in 0..1, not {text}")
    return value


def _count(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be at least 0, not {value}")
    return value


def _add_games_options(parser: argparse.ArgumentParser, what: str) -> None:
    """The options of commands that play many games in parallel into a resumable log
    (``eval``, ``tournament``)."""
    parser.add_argument(
        "--workers", type=int, default=0, metavar="N", help="parallel games (default: cores)"
    )
    parser.add_argument(
        "--backend",
        choices=["process", "ray", "inline"],
        default="process",
        help="where games run (default process)",
    )
    parser.add_argument(
        "--play-clock",
        type=_positive_float,
        default=1.0,
        metavar="S",
        help="seconds per move; later moves are replaced by random ones (default 1)",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the games (default 0)")
    parser.add_argument(
        "--log",
        metavar="FILE",
        help="append each finished game to FILE (JSON lines) and skip the games already "
        f"there: a long {what} can be stopped and resumed by running the command again",
    )
    parser.add_argument(
        "--dry-run",
        action="store_true",
        help=f"play nothing: print how many of the {what}'s games the log holds, cell by "
        "cell, and what is left, with the core-hours it takes at the logged games' mean "
        "length (a cell with none: of its player's games against its opponent in the "
        "other seat, else the median of other players' in its seat; the log is only "
        "read: a run may be appending to it)",
    )
    parser.add_argument(
        "--stop-at",
        type=_wall_time,
        metavar="WHEN",
        help=f"start no game from WHEN on (15:30, 2026-11-29T15:30 or @SECONDS since the "
        f"epoch); the games running then are played out and logged, then the {what}'s "
        f"games left are printed as by --dry-run, and the exit status is {EXIT_STOPPED} if "
        "any are (needs --log; run the command again to go on)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar")


def _add_tune_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    from ggp.training.tune import TuneSettings

    defaults = TuneSettings()
    tune = commands.add_parser(
        "tune",
        help="tune the Battlesnake heuristic weights by a genetic algorithm",
        description="Tune the weights of the IDAPOS Battlesnake heuristics (the duel "
        "weights on a two-snake game, the multi-snake weights otherwise) by a genetic "
        "algorithm, as the paper did: each weight a 6-bit code on a range from 0 to twice "
        "the paper's value, fitness the mean placement (1 = best) in seeded games of IDAPOS "
        "to a fixed depth against the other genomes and the reflex snakes greedy, "
        "aggressive and tail chaser; tournament selection, uniform crossover, bit-flip "
        "mutation, elitism; the answer is the winner of a final round of fresh games among "
        "the best genomes of the run and the base weights. Writes DIR/weights.json (the "
        "best weights so far, for idapos:weights=FILE and alphabeta:eval=snake,weights="
        "FILE), DIR/log.jsonl (a line per generation and one for the final round) and "
        "DIR/tune.json (the run's state after each generation: --resume goes on from it "
        "exactly as an uninterrupted run).",
    )
    tune.add_argument("game", metavar="GAME", help="a Battlesnake game (games/battlesnake/)")
    tune.add_argument(
        "--generations",
        type=_positive_int,
        metavar="N",
        help=f"generations in all (default {defaults.generations})",
    )
    tune.add_argument(
        "--population",
        type=_positive_int,
        metavar="P",
        help=f"genomes per generation (default {defaults.population})",
    )
    tune.add_argument(
        "--games",
        type=_positive_int,
        metavar="G",
        help=f"games each genome plays per generation (default {defaults.games})",
    )
    tune.add_argument(
        "--depth",
        type=_positive_int,
        metavar="D",
        help=f"IDAPOS's search depth in the games, in rounds (default {defaults.depth})",
    )
    tune.add_argument(
        "--elite",
        type=_count,
        metavar="E",
        help=f"best genomes kept unchanged (default {defaults.elite})",
    )
    tune.add_argument(
        "--mutation",
        type=_probability,
        metavar="M",
        help=f"probability of flipping each bit of a child (default {defaults.mutation})",
    )
    tune.add_argument(
        "--finalists",
        type=_positive_int,
        metavar="F",
        help=f"genomes in the final round, the base among them (default {defaults.finalists})",
    )
    tune.add_argument(
        "--final-games",
        dest="final_games",
        type=_count,
        metavar="N",
        help=f"games each finalist plays (0: no final round; default {defaults.final_games})",
    )
    tune.add_argument(
        "--base",
        metavar="W",
        help="weights the run starts from: one genome of the first generation, and the "
        "family not tuned (paper, tuned or a weights file; default paper)",
    )
    tune.add_argument("--seed", type=_count, metavar="S", help="seed of the run (default 0)")
    tune.add_argument(
        "--workers",
        type=_positive_int,
        default=1,
        metavar="W",
        help="parallel game processes (default 1: in this process)",
    )
    tune.add_argument("--out", metavar="DIR", help="the run folder (default runs/tune/GAME)")
    tune.add_argument(
        "--resume",
        action="store_true",
        help="go on with the run in the folder (--generations may raise its length)",
    )
    tune.add_argument(
        "--fresh", action="store_true", help="start over even if the folder holds a run"
    )
    tune.add_argument("--no-progress", action="store_true", help="no progress bar")
    tune.set_defaults(handler=cmd_tune)
