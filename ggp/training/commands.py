"""The training sub-commands of ``ggp`` (``train``, ``eval``, ``exploit``), registered by
cli.py."""

from __future__ import annotations

import argparse
import sys
from dataclasses import fields
from pathlib import Path
from typing import Any

from ggp.training.config import TrainConfig

__all__ = ["add_commands", "cmd_train", "cmd_eval", "cmd_exploit"]


def _positive_float(text: str) -> float:
    value = float(text)
    if not value > 0:
        raise argparse.ArgumentTypeError(f"must be positive, not {text}")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be at least 1, not {value}")
    return value


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


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
        if f.name == "backend":
            group.add_argument(
                _flag(f.name),
                dest=f.name,
                choices=["process", "ray", "inline"],
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
    from ggp.training.evaluate import default_roles, evaluate, format_table

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
        described = (
            f"{args.player} ({path}: {meta.steps:,} steps, {meta.games:,} self-play games, "
            f"{meta.elapsed_s / 60:.0f} min of training)"
        )
    workers = args.workers if args.workers > 0 else None
    from ggp.training.config import TrainConfig

    count = workers or TrainConfig().worker_count()
    print(
        f"{game_path}: {described}; {args.games} games per cell, {count} worker(s), "
        f"{args.play_clock:g} s per move"
    )
    total = len(roles) * len(opponents) * args.games
    with tqdm(total=total, unit="game", disable=args.no_progress, file=sys.stderr) as bar:
        table = evaluate(
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
        )
    if args.wdl:
        print("wins-draws-losses: score out of 100 (win 1, draw 0.5) [95% interval]")
    else:
        print("score out of 100 (win 1, draw 0.5) [95% interval]")
    print(format_table(table, wdl=args.wdl))
    replaced = sum(c.replaced for c in table.cells)
    slowest = max(c.max_move_s for c in table.cells)
    print(
        f"{table.seconds:.0f} s; longest move {slowest:.2f} s; "
        f"{replaced} move(s) of {player_spec} replaced by the referee (late or illegal)"
    )
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


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register ``train``, ``eval`` and ``exploit``."""
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
        "ceiling of a column), cfr+nn[:CHECKPOINT][,mix=M][,model=W] (default "
        "checkpoints/GAME/latest.pt; "
        "mix: uniform weight in the opponent model, default 0.8; model: restricted Nash "
        "response weight, default 0.5), and the classic searches alphabeta, pvs, mtdf, "
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
        "--workers", type=int, default=0, metavar="N", help="parallel games (default: cores)"
    )
    ev.add_argument(
        "--backend",
        choices=["process", "ray", "inline"],
        default="process",
        help="where games run (default process)",
    )
    ev.add_argument(
        "--play-clock",
        type=float,
        default=1.0,
        metavar="S",
        help="seconds per move; later moves are replaced by random ones (default 1)",
    )
    ev.add_argument("--seed", type=int, default=0, help="seed of the matches (default 0)")
    ev.add_argument(
        "--wdl", action="store_true", help="print each cell's wins-draws-losses as well"
    )
    ev.add_argument("--no-progress", action="store_true", help="no progress bar")
    ev.set_defaults(handler=cmd_eval)

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
