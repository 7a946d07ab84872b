"""The JSON-lines log of one served match (``ggp serve --log-dir``).

One JSON object per line, each with ``time`` (ISO 8601, UTC) and ``event``: what the
manager's messages were and what was answered (``start``, ``ready``, ``play``, ``stop``,
``abort``...; see :mod:`ggp.protocol.session` for the events and their fields).
"""

from __future__ import annotations

import json
import logging
import re
import threading
from datetime import UTC, datetime
from pathlib import Path
from typing import IO

__all__ = ["MatchLog"]

logger = logging.getLogger(__name__)


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class MatchLog:
    """One JSON object per line: what a match's messages were and what was answered.

    Thread-safe. A directory that cannot be written is logged as an error once, and the
    match is then played without a log.

    Args:
        directory: Where the file goes (created if needed; None: no log).
        match_id: The match, for the file name (``STAMP-MATCH.jsonl``).

    Attributes:
        path: The log file (None: no log).
    """

    def __init__(self, directory: Path | None, match_id: str) -> None:
        self._lock = threading.Lock()
        self._file: IO[str] | None = None
        self.path: Path | None = None
        if directory is None:
            return
        try:
            directory.mkdir(parents=True, exist_ok=True)
            stamp = datetime.now(UTC).strftime("%Y%m%d-%H%M%S")
            safe = re.sub(r"[^A-Za-z0-9_.-]", "_", match_id)[:64] or "match"
            path = directory / f"{stamp}-{safe}.jsonl"
            counter = 1
            while path.exists():
                counter += 1
                path = directory / f"{stamp}-{safe}-{counter}.jsonl"
            self._file = path.open("w", encoding="utf-8")
            self.path = path
        except OSError as e:
            logger.error("cannot write the match log in %s: %s", directory, e)

    def write(self, event: str, **fields: object) -> None:
        """Append ``{"time": ..., "event": event, **fields}`` (values JSON or ``str``)."""
        with self._lock:
            if self._file is None:
                return
            record = {"time": _now_iso(), "event": event, **fields}
            self._file.write(json.dumps(record, default=str) + "\n")
            self._file.flush()

    def close(self) -> None:
        """Close the file; later writes are dropped."""
        with self._lock:
            if self._file is not None:
                self._file.close()
                self._file = None
