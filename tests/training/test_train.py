"""Self-play training: settings, a tiny run with its checkpoints and records, --resume
(also after kill -9), the worker backends, and `ggp eval`'s table."""

from __future__ import annotations

import dataclasses
import json
import multiprocessing
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from ggp.cli import main
from ggp.errors import GameError
from ggp.game import Game
from ggp.nn.checkpoint import load_checkpoint, load_network
from ggp.nn.features import GameEncoding
from ggp.nn.model import NetShape, PolicyValueNet
from ggp.nn.net_evaluator import NetEvaluator, Prediction, bfloat16_is_fast
from ggp.reasoning.state_machine import State
from ggp.training.config import ConfigError, TrainConfig, game_settings_file, load_config
from ggp.training.replay import ReplayBuffer
from ggp.training.selfplay import (
    play_selfplay_game,
    play_selfplay_games,
    selfplay_precision,
    selfplay_search,
)
from ggp.training.trainer import Trainer, TrainingError
from ggp.training.workers import SelfPlayTask, WorkerPool, run_selfplay, weights_of

from conftest import GAMES, HIDDEN_LEGAL_KIF, ROOT, SHARED, requires_shared

MONTY = GAMES / "montyhall.gdl"
SPR = GAMES / "scissors_paper_rock.gdl"

#: Small, fast settings for tests.
TINY = TrainConfig(
    minutes=0,
    games=30,
    backend="inline",
    samples=4,
    iterations=10,
    max_nodes=500,
    min_buffer=16,
    batch_size=16,
    updates_per_game=2,
    eval_games=2,
    eval_every_games=10,
    eval_time_s=0.02,
    checkpoint_every_s=1000,
    simulations=16,
)


@cache
def load(path: Path) -> Game:
    return Game.from_file(path)


def records(folder: Path) -> list[dict[str, object]]:
    lines = []
    for log in sorted(folder.glob("log-*.jsonl")):
        lines.extend(json.loads(line) for line in log.read_text().splitlines())
    return lines


# --------------------------------------------------------------------------- settings


def test_settings_precedence(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "training").mkdir()
    (tmp_path / "training" / "montyhall.toml").write_text("samples = 3\nminutes = 2\n")
    extra = tmp_path / "extra.toml"
    extra.write_text("minutes = 5\nlearning-rate = 0.01\n")
    config = load_config(MONTY, extra, {"seed": 9})
    assert (config.samples, config.minutes, config.learning_rate, config.seed) == (3, 5.0, 0.01, 9)
    assert TrainConfig.from_dict(config.to_dict()) == config
    with pytest.raises(ConfigError, match="unknown setting 'sample'"):
        TrainConfig.from_dict({"sample": 3})
    with pytest.raises(ConfigError, match="must be an integer, not 'many'"):
        TrainConfig.from_dict({"samples": "many"})
    with pytest.raises(ConfigError, match="one of them must be > 0"):
        TrainConfig(minutes=0, games=0)
    with pytest.raises(ConfigError, match="final_lr_fraction must be in 0"):
        TrainConfig(final_lr_fraction=1.5)
    bad = tmp_path / "bad.toml"
    bad.write_text("samples = [")
    with pytest.raises(ConfigError, match=r"bad\.toml"):
        load_config(MONTY, bad)


def test_the_rts_settings_evaluate_without_playouts(tmp_path: Path) -> None:
    """training/rts_8x8_*.toml: few simulations and snapshots whose network player adds no
    random playouts (each runs to 2,400 steps there), passed on to the snapshot task."""
    for name in ("rts_8x8_melee.gdl", "rts_8x8_full.gdl"):
        config = load_config(GAMES / "rts" / name)
        assert (config.simulations, config.eval_rollout_weight) == (32, 0.0)
    trainer = Trainer(GAMES / "rts" / "rts_8x8_melee.gdl", config, tmp_path / "run")
    assert trainer._snapshot_task().rollout_weight == 0.0
    with pytest.raises(ConfigError, match="eval_rollout_weight must be in 0"):
        TrainConfig(eval_rollout_weight=1.5)


def test_per_game_settings_come_with_the_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)  # no training/ folder here: the shipped one is read
    shipped = ROOT / "training" / "meier.toml"
    assert game_settings_file(GAMES / "meier.gdl") == shipped
    assert load_config(GAMES / "meier.gdl").samples == 12  # from the shipped meier.toml
    code = main(
        ["train", str(GAMES / "meier.gdl"), "--out", str(tmp_path / "run"), "--backend",
         "inline", "--games", "1", "--eval-games", "0", "--samples", "2", "--iterations", "2",
         "--max-nodes", "300", "--no-progress"]
    )  # fmt: skip
    assert code == 0
    assert f"settings: defaults + {shipped} + command line" in capsys.readouterr().out


def test_replay_buffer_wraps_and_saves(tmp_path: Path) -> None:
    game = load(MONTY)
    encoding = GameEncoding(game)
    net = PolicyValueNet(NetShape.for_encoding(encoding), torch.Generator().manual_seed(0))
    evaluator = NetEvaluator(net, encoding)
    rng = np.random.default_rng(0)
    buffer = ReplayBuffer(7, encoding.num_inputs, encoding.policy_sizes, encoding.num_roles)
    for _ in range(4):
        result = play_selfplay_game(game, evaluator, TINY, rng)
        assert len(result.positions) == result.steps == 3
        # The candidate decides twice (choose, switch or stay); chance's steps have no target.
        assert result.positions.has_policy.sum() == 2
        np.testing.assert_allclose(
            result.positions.policy.sum(axis=1)[result.positions.has_policy[:, 0]], 1.0, rtol=1e-5
        )
        assert (result.positions.policy[~result.positions.legal] == 0).all()
        buffer.add(result.positions)
    assert len(buffer) == 7 and buffer.added == 12
    buffer.save(tmp_path / "replay.npz")
    again = ReplayBuffer(7, encoding.num_inputs, encoding.policy_sizes, encoding.num_roles)
    again.load(tmp_path / "replay.npz")
    assert again.added == 12
    np.testing.assert_array_equal(again.contents().features, buffer.contents().features)
    assert len(buffer.sample(5, rng)) == 5


# --------------------------------------------------------------------------- training


def test_tiny_training_run_writes_checkpoints_and_resumes(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    summary = Trainer(SPR, TINY, folder).run()
    assert summary.games == 30 and summary.steps > 0
    names = {p.name for p in folder.iterdir()}
    assert {"latest.pt", "latest.json", "best.pt", "best.json", "replay.npz", "curves.png"} <= names
    assert any(name.startswith("log-") and name.endswith(".jsonl") for name in names)
    meta = load_checkpoint(folder / "latest.pt").metadata
    game = load(SPR)
    assert meta.signature == GameEncoding(game).signature
    assert meta.steps == summary.steps and meta.games == 30 and meta.elapsed_s > 0
    assert meta.shape.inputs == GameEncoding(game).num_inputs
    assert TrainConfig.from_dict(meta.settings) == TINY
    assert json.loads((folder / "latest.json").read_text())["steps"] == summary.steps
    events = {r["event"] for r in records(folder)}
    assert {"start", "progress", "snapshot", "checkpoint", "end"} <= events
    progress = [r for r in records(folder) if r["event"] == "progress" and r["policy_ce"]]
    # the KL to the targets is the cross-entropy less the targets' entropy (>= 0)
    assert progress and all(0 <= r["policy_kl"] <= r["policy_ce"] for r in progress)  # type: ignore[operator]
    snapshot = next(r for r in records(folder) if r["event"] == "snapshot")
    assert set(snapshot["scores"]) == {"player1", "player2"}  # type: ignore[arg-type]
    load_network(folder / "best.pt", game)

    # Without --resume or --fresh the run is not overwritten.
    with pytest.raises(TrainingError, match="--resume continues it"):
        Trainer(SPR, TINY, folder)
    # --resume continues the counters and the budget (here: 20 more games).
    resumed = Trainer(SPR, TINY, folder, resume=True, overrides={"games": 50})
    assert resumed.steps == summary.steps and resumed.games == 30
    later = resumed.run()
    assert later.games == 50 and later.steps > summary.steps
    start = [r for r in records(folder) if r["event"] == "start"]
    assert [r["resumed_from_steps"] for r in start] == [None, summary.steps]
    # A run of another game is refused.
    with pytest.raises(GameError, match="was trained for"):
        Trainer(MONTY, TINY, folder, resume=True)
    with pytest.raises(TrainingError, match="no run to continue"):
        Trainer(SPR, TINY, tmp_path / "nothing", resume=True)


def test_kill_minus_nine_loses_at_most_the_work_since_the_last_checkpoint(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "run"
    command = [
        sys.executable, "-m", "ggp", "train", str(MONTY), "--out", str(folder),
        "--backend", "inline", "--games", "100000", "--minutes", "0", "--samples", "2",
        "--iterations", "5", "--min-buffer", "8", "--batch-size", "8",
        "--checkpoint-every-s", "0.5", "--eval-games", "0", "--no-progress",
    ]  # fmt: skip
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        latest = folder / "latest.pt"
        deadline = time.monotonic() + 60
        first = None
        while time.monotonic() < deadline:
            if latest.is_file():
                meta = load_checkpoint(latest).metadata
                first = first if first is not None else meta.steps
                if meta.steps > first:  # a second checkpoint: training is under way
                    break
            time.sleep(0.1)
        assert first is not None, "no checkpoint within 60 s"
        os.kill(process.pid, signal.SIGKILL)
    finally:
        if process.poll() is None:  # the test failed before its kill: leave no run behind
            process.kill()
        process.wait(timeout=30)
    assert process.returncode == -signal.SIGKILL
    saved = load_checkpoint(folder / "latest.pt").metadata  # intact after the kill
    assert not list(folder.glob(".*.tmp"))  # (a torn temporary file would be harmless)
    target = saved.games + 5
    code = main(
        ["train", str(MONTY), "--out", str(folder), "--resume", "--games", str(target),
         "--no-progress"]
    )  # fmt: skip
    assert code == 0
    after = load_checkpoint(folder / "latest.pt").metadata
    assert after.games == target
    assert after.steps > saved.steps
    starts = [r for r in records(folder) if r["event"] == "start"]
    assert starts[-1]["resumed_from_steps"] == saved.steps


def test_process_pool_runs_selfplay(tmp_path: Path) -> None:
    game = load(SPR)
    encoding = GameEncoding(game)
    shape = NetShape.for_encoding(encoding)
    net = PolicyValueNet(shape, torch.Generator().manual_seed(0))
    task = SelfPlayTask(str(SPR), TINY, shape, weights_of(net), 0, (0, 1))
    with WorkerPool("process", 2) as pool:
        remote = pool.submit(run_selfplay, task).result(timeout=120)
    local = run_selfplay(task)
    assert remote.games == 2 and len(remote.positions) == 2
    # Same seeds, same weights: the same games wherever they run.
    assert remote.goals == local.goals
    np.testing.assert_array_equal(remote.positions.policy, local.positions.policy)


def test_the_time_budget_stops_the_self_play_games_still_running(tmp_path: Path) -> None:
    """Games that run past the budget are dropped, so their workers are stopped at once,
    not waited for (an RTS-Melee self-play task runs for minutes): the run ends with no
    worker left."""
    config = dataclasses.replace(
        TINY, minutes=0.02, games=0, backend="process", workers=1, eval_games=0
    )
    summary = Trainer(GAMES / "rts" / "rts_8x8_melee.gdl", config, tmp_path / "run").run()
    assert summary.games == 0 and "end" in {r["event"] for r in records(tmp_path / "run")}
    assert not multiprocessing.active_children()


@pytest.mark.slow  # starting a local Ray instance takes 10-30 s
def test_ray_backend(tmp_path: Path) -> None:
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install ray)")
    game = load(SPR)
    encoding = GameEncoding(game)
    shape = NetShape.for_encoding(encoding)
    net = PolicyValueNet(shape, torch.Generator().manual_seed(0))
    task = SelfPlayTask(str(SPR), TINY, shape, weights_of(net), 0, (0,))
    try:
        with WorkerPool("ray", 1) as pool:
            output = pool.submit(run_selfplay, task).result(timeout=180)
        assert output.games == 1
        assert output.goals == run_selfplay(task).goals
    finally:
        ray.shutdown()


def test_ray_backend_missing_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)
    with pytest.raises(GameError, match="pip install"):
        WorkerPool("ray", 1)


# --------------------------------------------------------------------------- ggp eval


def test_eval_prints_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    code = main(
        ["eval", str(GAMES / "meier.gdl"), "--player", "random", "--vs", "random,handcrafted",
         "--games", "3", "--as", "p1", "--backend", "inline", "--no-progress"]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "| game, agent | vs random | vs handcrafted |" in out
    row = next(line for line in out.splitlines() if line.startswith("| meier, random as p1"))
    assert row.count("[") == 2


def test_eval_log_resumes_a_stopped_table(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ggp.training import evaluate as evaluate_module

    played: list[int] = []
    run = evaluate_module.run_match_task
    monkeypatch.setattr(
        evaluate_module, "run_match_task", lambda task: played.append(task.seed) or run(task)
    )
    log = tmp_path / "matches.jsonl"
    args = ["eval", str(GAMES / "meier.gdl"), "--player", "random", "--vs", "random",
            "--games", "4", "--as", "p1", "--backend", "inline", "--no-progress",
            "--log", str(log)]  # fmt: skip
    assert main(args) == 0
    table = capsys.readouterr().out.splitlines()[2:4]  # the header and the row
    lines = log.read_text().splitlines()
    assert len(played) == len(lines) == 4
    record = json.loads(lines[0])
    assert record["role"] == "p1" and record["opponent"] == "random" and "score" in record
    finished = datetime.fromisoformat(record["finished"])  # when the game ended, UTC
    assert record["finished"].endswith("Z") and finished.tzinfo is not None
    assert abs((datetime.now(UTC) - finished).total_seconds()) < 3600
    assert isinstance(record["speed"], float) and record["speed"] > 0  # the worker's probe
    # Stopped while writing the fourth record: three are kept, one match is played again.
    log.write_text("\n".join(lines[:3]) + "\n" + lines[3][:25])
    played.clear()
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines()[2:4] == table  # the same matches, seeded
    assert played == [json.loads(lines[3])["seed"]]
    assert len(log.read_text().splitlines()) == 4
    log.write_text(lines[0] + "\n" + "{not json}\n")
    assert main(args) == 1
    assert f"{log}:2: not a match record" in capsys.readouterr().err


def test_eval_dry_run_counts_each_cell_in_the_log_and_plays_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ggp.training import evaluate as evaluate_module

    log = tmp_path / "matches.jsonl"
    common = ["eval", str(GAMES / "meier.gdl"), "--player", "random", "--backend", "inline",
              "--no-progress", "--log", str(log)]  # fmt: skip
    assert main([*common, "--vs", "random", "--as", "p1", "--games", "2"]) == 0
    assert main([*common, "--vs", "handcrafted", "--as", "p1", "--games", "1"]) == 0
    other = [*common, "--vs", "handcrafted", "--as", "p2", "--games", "1"]
    assert main([*other, "--player", "handcrafted"]) == 0  # another player in that seat
    records = [json.loads(line) for line in log.read_text().splitlines()]
    for record, length in zip(records, [300.0, 420.0, 120.0, 1800.0], strict=True):
        record["seconds"] = length  # games of a length that tells the estimates apart
    log.write_text("".join(json.dumps(record) + "\n" for record in records))
    capsys.readouterr()
    monkeypatch.setattr(evaluate_module, "run_match_task", lambda task: pytest.fail("played"))
    before = log.read_bytes()
    args = [*common, "--vs", "random,handcrafted", "--as", "p1,p2", "--games", "3", "--dry-run"]
    assert main(args) == 0
    assert log.read_bytes() == before
    out = capsys.readouterr().out.splitlines()
    # the cells with games logged are timed by them; one with none by the player's games
    # against its opponent in the other seat (120 s, not handcrafted's 1800 in its seat)
    assert "| p1 vs random | 2 of 3 | 1 | 360 | 0.1 |" in out
    assert "| p1 vs handcrafted | 1 of 3 | 2 | 120 | 0.1 |" in out
    assert "| p2 vs random | 0 of 3 | 3 | (360) | 0.3 |" in out
    assert "| p2 vs handcrafted | 0 of 3 | 3 | (120) | 0.1 |" in out
    assert out[-3].startswith("left: 9 of 12 games, about 0.6 core-hours (at one game a ")
    # a player with none of its own against an opponent: other players' games in its seat
    others = [*common, "--vs", "random,handcrafted", "--player", "handcrafted", "--as", "p1"]
    assert main([*others, "--games", "3", "--dry-run"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "| p1 vs random | 0 of 3 | 3 | (360) | 0.3 |" in out
    assert "| p1 vs handcrafted | 0 of 3 | 3 | (1800) | 1.5 |" in out
    assert main([*common[:-2], "--vs", "random", "--games", "3", "--dry-run"]) == 0  # no log
    assert capsys.readouterr().out.splitlines()[-1] == (
        "left: 6 of 6 games, no game logged to time them"
    )


def test_eval_stop_at_plays_what_starts_before_it_and_prints_what_is_left(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    from ggp.training import evaluate as evaluate_module

    log = tmp_path / "matches.jsonl"
    common = ["eval", str(GAMES / "meier.gdl"), "--player", "random", "--vs", "random",
              "--as", "p1", "--games", "3", "--backend", "inline", "--no-progress"]  # fmt: skip
    assert main([*common, "--log", str(log), "--games", "1"]) == 0  # one game logged
    capsys.readouterr()
    monkeypatch.setattr(evaluate_module, "run_match_task", lambda task: pytest.fail("played"))
    assert main([*common, "--log", str(log), "--stop-at", "@0"]) == 75  # past: none started
    out = capsys.readouterr().out
    assert "stopped at 19" in out and "0 game(s) played in this run and logged, 2 not " in out
    assert "| p1 vs random | 1 of 3 | 2 |" in out  # what is left, as by --dry-run
    assert len(log.read_text().splitlines()) == 1
    assert main([*common, "--stop-at", "@0"]) == 1  # no log to keep the games in
    assert "a stop time needs a log" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main([*common, "--log", str(log), "--stop-at", "half past three"])
    assert "not a time: 'half past three'" in capsys.readouterr().err


def test_eval_log_is_shared_across_folders_tables_and_records_depths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A log written for a copy of the game elsewhere (another machine) and by a command
    with other columns is found again; classic-search players log their depths."""
    from ggp.training import evaluate as evaluate_module

    played: list[str] = []
    run = evaluate_module.run_match_task
    monkeypatch.setattr(
        evaluate_module, "run_match_task", lambda task: played.append(task.opponent) or run(task)
    )
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    copy = elsewhere / "tictactoe.gdl"
    copy.write_bytes((GAMES / "tictactoe.gdl").read_bytes())
    log = tmp_path / "matches.jsonl"
    common = ["--player", "alphabeta:depth=2", "--games", "2", "--as", "xplayer",
              "--backend", "inline", "--no-progress", "--log", str(log)]  # fmt: skip
    assert main(["eval", str(copy), "--vs", "random", *common]) == 0
    first = capsys.readouterr().out
    assert played == ["random", "random"]
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert all(r["game"].startswith("tictactoe.gdl:") for r in records)
    assert all(r["depths"] and set(r["depths"]) == {2} for r in records)
    assert "depth alphabeta:depth=2 reached per searched move" in first
    assert "| tictactoe, alphabeta:depth=2 as xplayer | 2 (2-2) |" in first
    assert all(r["opponent_depths"] == [] for r in records)  # random counts none
    assert "depth the opponent reached" not in first
    # As if written on another machine: the logged path does not exist here.
    log.write_text(
        "".join(json.dumps({**r, "game_path": "/gone/tictactoe.gdl"}) + "\n" for r in records)
    )
    played.clear()
    assert main(["eval", str(GAMES / "tictactoe.gdl"), "--vs", "mcts,random", *common]) == 0
    assert played == ["mcts", "mcts"]  # the random column came from the log
    # Another game's text under the same name is another game.
    copy.write_text((GAMES / "tictactoe.gdl").read_text() + "\n; changed\n")
    evaluate_module.game_id.cache_clear()
    played.clear()
    assert main(["eval", str(copy), "--vs", "random", *common]) == 0
    assert played == ["random", "random"]


def test_a_match_logs_the_opponents_late_moves_too(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Whose moves came late: the row player's and, since 2026-12-06, the opponents'
    (a table's late moves may be one side's or the machine's); older logs read as
    unknown (None), not as none."""
    from ggp.players import registry
    from ggp.players.random_player import RandomPlayer
    from ggp.training import evaluate as evaluate_module
    from ggp.training.workers import MatchTask, run_match_task

    class Slow(RandomPlayer):
        def play(self, observation: Any, deadline: float) -> Any:
            time.sleep(0.25)
            return super().play(observation, deadline)

    make = registry.make_player
    monkeypatch.setattr(
        registry,
        "make_player",
        lambda spec, rng, game=None: Slow(rng) if spec == "slow" else make(spec, rng, game),
    )
    task = MatchTask(str(GAMES / "tictactoe.gdl"), "random", "slow", "xplayer", 3, 0.2)
    out = run_match_task(task)
    assert out.replaced == 0 and out.max_move_s < 0.2
    assert out.opponent_replaced is not None and out.opponent_max_move_s is not None
    assert out.opponent_replaced == out.moves >= 5  # asked every step (noop too), always late
    assert out.opponent_max_move_s >= 0.25
    log = tmp_path / "matches.jsonl"
    log.write_text(evaluate_module.log_record(task.game_path, task, out))
    (logged,) = evaluate_module.read_match_log(log).values()
    assert logged == out
    record = json.loads(log.read_text())
    old = {k: v for k, v in record.items() if not k.startswith("opponent_")}  # before the fields
    log.write_text(json.dumps(old) + "\n")
    (logged,) = evaluate_module.read_match_log(log).values()
    assert logged.opponent_replaced is None and logged.opponent_max_move_s is None
    assert logged.opponent_depths is None and out.opponent_depths == ()  # random: no depths
    assert logged.replaced == 0


def test_eval_logs_and_prints_the_opponents_depths(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Since 2026-12-07 a match logs the depths the opponents' searches reached too
    (whether the player out-searched its opponent), and the table prints them."""
    log = tmp_path / "matches.jsonl"
    args = ["eval", str(GAMES / "tictactoe.gdl"), "--player", "alphabeta:depth=2", "--vs",
            "alphabeta:depth=1", "--games", "1", "--as", "oplayer", "--backend", "inline",
            "--no-progress", "--log", str(log)]  # fmt: skip
    assert main(args) == 0
    out = capsys.readouterr().out
    (record,) = [json.loads(line) for line in log.read_text().splitlines()]
    assert set(record["depths"]) == {2} and set(record["opponent_depths"]) == {1}
    assert len(record["depths"]) + len(record["opponent_depths"]) <= 9  # one a searched move
    assert "depth the opponent reached per searched move" in out
    assert "| tictactoe, alphabeta:depth=2 as oplayer | 1 (1-1) |" in out


def test_eval_of_a_trained_checkpoint(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "run"
    Trainer(MONTY, TINY.replace(games=10, eval_games=0), folder).run()
    code = main(
        ["eval", str(MONTY), "--player", f"cfr+nn:{folder / 'best.pt'}", "--games", "2",
         "--backend", "inline", "--no-progress", "--play-clock", "30"]
    )  # fmt: skip
    assert code == 0
    out = capsys.readouterr().out
    assert "| montyhall, cfr+nn:" in out and "10 self-play games" in out
    # The same checkpoint for other rules: the search-only cfr player, with one warning
    # (a spec with options is one opponent of --vs).
    spec = f"cfr+nn:{folder / 'best.pt'},mix=0.5"
    code = main(
        ["eval", str(SPR), "--player", spec, "--vs", f"random,{spec}", "--games", "1",
         "--backend", "inline", "--no-progress", "--play-clock", "30"]
    )  # fmt: skip
    assert code == 0
    out, err = capsys.readouterr()
    warnings = [line for line in err.splitlines() if line.startswith("warning:")]
    assert len(warnings) == 1 and "was trained for" in warnings[0]
    assert "| scissors_paper_rock, cfr as " in out
    assert "| game, agent | vs random | vs cfr |" in out


def test_selfplay_where_the_rules_hide_legal_moves() -> None:
    game = Game.from_text(HIDDEN_LEGAL_KIF)
    encoding = GameEncoding(game)
    net = PolicyValueNet(NetShape.for_encoding(encoding), torch.Generator().manual_seed(0))
    evaluator = NetEvaluator(net, encoding)
    rng = np.random.default_rng(0)
    player = encoding.head_of(game.role_index("player"))
    assert player is not None
    columns = encoding.move_indices(player, (game.term("safe"), game.term("wait")))
    config = TINY.replace(samples=50)  # 4 samples miss coin 0 with probability 0.2
    for _ in range(5):
        result = play_selfplay_game(game, evaluator, config, rng)
        row = result.positions.policy[1]  # the player's decision, at the second step
        assert result.positions.has_policy[1, player]
        # The target covers only the moves legal whatever the hidden coin.
        assert row[columns].sum() == pytest.approx(1.0)


def test_selfplay_plays_games_of_thousands_of_steps() -> None:
    """The 8x8 RTS games run 2,400 steps and more; self-play once stopped them at 1,000
    (and the training run with them). Here: a 2,000-step count with a choice at its end."""
    succ = " ".join(f"(succ {i} {i + 1})" for i in range(2000))
    game = Game.from_text(
        f"(role r) (init (step 0)) {succ}"
        " (<= (legal r tick) (true (step ?n)) (not (true (step 2000))))"
        " (<= (legal r win) (true (step 1999))) (<= (legal r lose) (true (step 1999)))"
        " (<= (next (step ?m)) (true (step ?n)) (succ ?n ?m))"
        " (<= (next won) (does r win)) (<= terminal (true (step 2000)))"
        " (<= (goal r 100) (true won)) (<= (goal r 0) (not (true won)))"
    )
    encoding = GameEncoding(game)
    net = PolicyValueNet(NetShape.for_encoding(encoding), torch.Generator().manual_seed(0))
    result = play_selfplay_game(game, NetEvaluator(net, encoding), TINY, np.random.default_rng(0))
    assert result.steps == 2000 and result.decisions == 1


def test_mcts_selfplay_targets_are_the_root_visits() -> None:
    game = load(GAMES / "tictactoe.gdl")
    encoding = GameEncoding(game)
    net = PolicyValueNet(NetShape.for_encoding(encoding), torch.Generator().manual_seed(0))
    config = TINY.replace(search="mcts", simulations=32)
    result = play_selfplay_game(game, NetEvaluator(net, encoding), config, np.random.default_rng(3))
    positions = result.positions
    assert result.decisions == result.steps > 4  # one mover every step
    offsets = np.concatenate([[0], np.cumsum(encoding.policy_sizes)])
    for step in range(result.steps):
        mover = step % 2  # xplayer moves first
        head = encoding.head_of(mover)
        assert head is not None
        assert positions.has_policy[step].tolist() == [h == head for h in range(2)]
        row = positions.policy[step, offsets[head] : offsets[head + 1]]
        legal = positions.legal[step, offsets[head] : offsets[head + 1]]
        assert row.sum() == pytest.approx(1.0) and not row[~legal].any()
        other = positions.policy[step, offsets[1 - head] : offsets[2 - head]]
        assert not other.any()
    outcome = np.asarray(result.goals, dtype=np.float32) / 100
    assert np.allclose(positions.value, outcome)
    net2 = PolicyValueNet(NetShape.for_encoding(encoding), torch.Generator().manual_seed(0))
    again = play_selfplay_game(game, NetEvaluator(net2, encoding), config, np.random.default_rng(3))
    assert np.array_equal(again.positions.policy, positions.policy)  # seeded: reproducible


def test_mcts_selfplay_value_targets_mix_the_outcome_with_the_root_value() -> None:
    """``true_value_weight`` w: each value target is (1 - w) * outcome + w * the search's
    mean value at that step's root, which the same game searched again reproduces."""
    game = load(GAMES / "tictactoe.gdl")
    encoding = GameEncoding(game)
    net = PolicyValueNet(NetShape.for_encoding(encoding), torch.Generator().manual_seed(0))
    config = TINY.replace(search="mcts", simulations=32)
    plain = play_selfplay_game(game, NetEvaluator(net, encoding), config, np.random.default_rng(5))
    mixed_config = config.replace(true_value_weight=0.25)
    mixed = play_selfplay_game(
        game, NetEvaluator(net, encoding), mixed_config, np.random.default_rng(5)
    )
    assert np.array_equal(mixed.positions.policy, plain.positions.policy)  # the same game
    outcome = np.asarray(plain.goals, dtype=np.float32) / 100
    assert np.allclose(plain.positions.value, outcome)
    root_values = (mixed.positions.value - 0.75 * outcome) / 0.25
    assert not np.allclose(root_values, outcome)  # the searches' values, not the outcome
    assert ((root_values > -1e-4) & (root_values < 1 + 1e-4)).all()


def test_mcts_selfplay_plays_the_most_visited_move_after_sample_steps() -> None:
    """Moves of the first ``sample_steps`` steps are drawn (with ``explore``), later ones
    are the most visited (the temperature drop)."""
    game = load(GAMES / "tictactoe.gdl")
    encoding = GameEncoding(game)
    net = PolicyValueNet(NetShape.for_encoding(encoding), torch.Generator().manual_seed(0))
    config = TINY.replace(search="mcts", simulations=24, sample_steps=2, explore=0.6)
    offsets = np.concatenate([[0], np.cumsum(encoding.policy_sizes)])
    drawn_off_the_top = 0
    for seed in range(6):
        evaluator = NetEvaluator(net, encoding)
        result = play_selfplay_game(game, evaluator, config, np.random.default_rng(seed))
        positions, state = result.positions, game.initial_state()
        for step in range(result.steps - 1):  # (the last move's state is not a position)
            mover = game.roles[step % 2]
            head = encoding.head_of(step % 2)
            assert head is not None
            row = positions.policy[step, offsets[head] : offsets[head + 1]]
            noop = game.legal_moves(state, game.roles[1 - step % 2])[0]
            nexts = {}
            for move in game.legal_moves(state, mover):
                joint = (move, noop) if step % 2 == 0 else (noop, move)
                nexts[move] = game.next_state(state, joint)
            reached = positions.features[step + 1]
            played = next(
                m for m, s in nexts.items() if np.array_equal(encoding.encode_bits([s])[0], reached)
            )
            share = row[encoding.move_indices(head, (played,))[0]]
            if step >= config.sample_steps:
                assert share == row.max()
            else:
                drawn_off_the_top += share < row.max()
            state = nexts[played]
    assert drawn_off_the_top > 0  # the first steps were drawn, not the most visited


class _OneAtATime(NetEvaluator):
    """The network a state at a time: the same values whatever the batch (a batched
    float32 product may round differently from a single row's)."""

    def _forward(self, states: Sequence[State]) -> Prediction:
        parts = [super(_OneAtATime, self)._forward([state]) for state in states]
        return Prediction(
            np.concatenate([p.values for p in parts]),
            tuple(
                np.concatenate([p.policies[h] for p in parts])
                for h in range(len(self.encoding.policy_sizes))
            ),
        )


def test_concurrent_selfplay_games_are_the_games_played_one_by_one() -> None:
    game = load(GAMES / "tictactoe.gdl")
    encoding = GameEncoding(game)
    net = PolicyValueNet(NetShape.for_encoding(encoding), torch.Generator().manual_seed(0))
    config = TINY.replace(search="mcts", simulations=40)  # batches of 16, 16 and 8
    evaluator = _OneAtATime(net, encoding)
    calls: list[int] = []
    evaluate = evaluator.evaluate
    evaluator.evaluate = lambda game, states, deadline=None: (  # type: ignore[method-assign]
        calls.append(len(states)) or evaluate(game, states)
    )
    seeds = range(5)
    together = play_selfplay_games(
        game, evaluator, config, [np.random.default_rng(s) for s in seeds], parallel=3
    )
    assert max(calls) > 16  # three searches' leaves in one call
    alone = [
        play_selfplay_game(game, _OneAtATime(net, encoding), config, np.random.default_rng(s))
        for s in seeds
    ]
    assert len({r.positions.features.tobytes() for r in alone}) > 1  # five different games
    for a, b in zip(together, alone, strict=True):
        assert (a.goals, a.steps, a.decisions) == (b.goals, b.steps, b.decisions)
        for field in ("features", "legal", "policy", "has_policy", "value"):
            assert np.array_equal(getattr(a.positions, field), getattr(b.positions, field))


def test_selfplay_precision() -> None:
    assert selfplay_precision(TINY.replace(precision="float32")) == "float32"
    assert selfplay_precision(TINY.replace(precision="bfloat16")) == "bfloat16"
    expected = "bfloat16" if bfloat16_is_fast() else "float32"
    assert selfplay_precision(TINY.replace(precision="auto")) == expected
    with pytest.raises(ConfigError, match="precision must be auto, float32 or bfloat16"):
        TINY.replace(precision="float16")
    with pytest.raises(ConfigError, match="parallel_games must be >= 1"):
        TINY.replace(parallel_games=0)


def test_bfloat16_predictions_are_close_to_float32() -> None:
    game = load(GAMES / "tictactoe.gdl")
    encoding = GameEncoding(game)
    net = PolicyValueNet(NetShape.for_encoding(encoding), torch.Generator().manual_seed(0))
    with torch.no_grad():  # weights away from the small initial heads
        for parameter in net.parameters():
            parameter.add_(0.05 * torch.randn(parameter.shape, generator=torch.Generator()))
    rng = np.random.default_rng(0)
    states = [game.initial_state()]
    while len(states) < 40:
        state = states[-1]
        if game.is_terminal(state):
            states.append(game.initial_state())
            continue
        joint = [rng.choice(list(game.legal_moves(state, r))) for r in game.roles]
        states.append(game.next_state(state, joint))
    exact = NetEvaluator(net, encoding, cache_size=0).predict(states)
    half = NetEvaluator(net, encoding, cache_size=0, precision="bfloat16")
    rounded = half.predict(states)
    assert np.abs(rounded.values - exact.values).max() < 2.0  # goal points of 100
    assert not np.array_equal(rounded.values, exact.values)  # it did run in bfloat16
    for p, q in zip(rounded.policies, exact.policies, strict=True):
        assert np.abs(p - q).max() < 0.02
        assert np.array_equal(p > 0, q > 0)  # the legal moves, and none in terminal states
    assert next(iter(net.parameters())).dtype == torch.float32  # the caller's net untouched
    with pytest.raises(ValueError, match="precision must be one of float32, bfloat16"):
        NetEvaluator(net, encoding, precision="int8")


def test_selfplay_search_follows_what_the_roles_see() -> None:
    tictactoe, monty = load(GAMES / "tictactoe.gdl"), load(MONTY)
    assert selfplay_search(tictactoe, TINY) == "mcts"  # moves public: the state is known
    assert selfplay_search(monty, TINY) == "cfr"  # sees rules: sample histories
    assert selfplay_search(tictactoe, TINY.replace(search="cfr")) == "cfr"
    encoding = GameEncoding(monty)
    evaluator = NetEvaluator(PolicyValueNet(NetShape.for_encoding(encoding)), encoding)
    with pytest.raises(GameError, match="moves are public"):
        play_selfplay_game(monty, evaluator, TINY.replace(search="mcts"), np.random.default_rng(0))
    with pytest.raises(ConfigError, match="search must be auto, cfr or mcts"):
        TINY.replace(search="alphabeta")


@requires_shared
def test_training_on_blind_breakthrough(tmp_path: Path) -> None:
    # Its rules hide whether a pawn may step forward (the cell ahead may hold an unseen
    # pawn): the role's legal moves differ between the histories it cannot tell apart.
    config = TINY.replace(games=2, eval_games=0, samples=4, iterations=4, max_nodes=300)
    path = SHARED / "gdl" / "gdl2" / "blind_breakthrough_5x5.kif"
    summary = Trainer(path, config, tmp_path / "run").run()
    assert summary.games == 2 and summary.positions > 0


@pytest.mark.parametrize("name", sorted(p.name for p in GAMES.glob("*.gdl")))
def test_training_works_on_every_game(name: str, tmp_path: Path) -> None:
    config = TINY.replace(games=2, eval_games=0, samples=2, iterations=4, max_nodes=300)
    summary = Trainer(GAMES / name, config, tmp_path / "run").run()
    assert summary.games == 2 and summary.positions > 0
    load_network(tmp_path / "run" / "latest.pt", load(GAMES / name))
