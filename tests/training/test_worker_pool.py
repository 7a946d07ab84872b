"""The local worker pool under Ctrl-C: workers ignore SIGINT, and the calling process,
interrupted, stops them at once with the tasks they run; ``kill`` (SIGTERM) stops a ggp
command the same way, also one whose SIGINT is ignored."""

from __future__ import annotations

import json
import multiprocessing
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from ggp.training.workers import WorkerPool, _terminate

from conftest import GAMES


def test_a_worker_ignores_sigint() -> None:
    with WorkerPool("process", 1) as pool:
        pid = pool.submit(_pid, 0).result()
        running = pool.submit(time.sleep, 0.5)
        os.kill(pid, signal.SIGINT)
        assert running.result() is None  # the task ran to its end, no KeyboardInterrupt


def test_an_interrupted_pool_stops_its_running_workers() -> None:
    with pytest.raises(KeyboardInterrupt), WorkerPool("process", 2) as pool:
        pids = {pool.submit(_pid, i).result() for i in range(4)}
        for _ in range(2):
            pool.submit(time.sleep, 600)
        raise KeyboardInterrupt
    live = {p.pid for p in multiprocessing.active_children()}
    assert pids and not pids & live


def test_a_terminated_worker_reaped_by_another_thread_leaves_the_children() -> None:
    # The race behind a rare failure of the test above: the executor's thread reaps a
    # dying worker, so the pool's own join finds no child and returns while the process
    # is still listed; the thread records the exit code a moment later.
    process = multiprocessing.get_context("spawn").Process(target=time.sleep, args=(600,))
    process.start()
    popen = process._popen  # type: ignore[attr-defined]
    original = popen.poll

    def reaped_elsewhere(flag: int = os.WNOHANG) -> int | None:
        if popen.returncode is None and not recorded.is_set():
            os.waitpid(process.pid, 0)  # the other thread's reap...
            threading.Timer(0.2, record).start()  # ...and its record, later
            recorded.set()
            return None
        return original(flag)

    def record() -> None:
        popen.returncode = -signal.SIGTERM

    recorded = threading.Event()
    popen.poll = reaped_elsewhere
    _terminate([process], timeout=5.0)
    assert process not in multiprocessing.active_children()
    assert process.exitcode == -signal.SIGTERM


def _pid(_: int) -> int:
    return os.getpid()


def test_kill_stops_an_eval_with_its_workers_and_keeps_its_log(tmp_path: Path) -> None:
    log = tmp_path / "log.jsonl"
    command = [sys.executable, "-m", "ggp", "eval", str(GAMES / "tictactoe.gdl"),
               "--player", "mcts", "--vs", "random", "--games", "100", "--workers", "1",
               "--play-clock", "0.3", "--no-progress", "--log", str(log)]  # fmt: skip
    # started as a script's `command &` is: SIGINT ignored, so Ctrl-C cannot reach it
    eval_ = subprocess.Popen(
        command,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN),
    )
    try:
        for _ in range(1200):  # the first matches logged
            if log.exists() and log.read_text().count("\n") >= 2:
                break
            time.sleep(0.05)
        workers = _children(eval_.pid)
        assert workers, "the eval runs its matches in a worker process"
        eval_.send_signal(signal.SIGTERM)
        _, stderr = eval_.communicate(timeout=60)
    finally:
        eval_.kill()
    assert eval_.returncode == 130 and "interrupted" in stderr
    for pid in workers:
        for _ in range(100):
            if not Path(f"/proc/{pid}").exists():
                break
            time.sleep(0.05)
        assert not Path(f"/proc/{pid}").exists(), f"worker {pid} outlived the eval"
    records = [json.loads(line) for line in log.read_text().splitlines()]
    assert 2 <= len(records) < 200 and all(r["player"] == "mcts" for r in records)


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found
