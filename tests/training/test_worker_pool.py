"""The local worker pool under Ctrl-C: workers ignore SIGINT, and the calling process,
interrupted, stops them at once with the tasks they run."""

from __future__ import annotations

import multiprocessing
import os
import signal
import time

import pytest

from ggp.training.workers import WorkerPool


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


def _pid(_: int) -> int:
    return os.getpid()
