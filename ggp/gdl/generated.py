"""What the game generators share (``python -m ggp.battlesnake.generate``,
``python -m ggp.rts.battlecity``, ``python -m ggp.rts.microrts``): the rules text as a
GDL comment block, and the command that writes the generated files.

Example:
    >>> print(comment_block("Rules.\\n\\n- one"), end="")
    ; Rules.
    ;
    ; - one
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable
from pathlib import Path

__all__ = ["comment_block", "write_generated"]


def comment_block(text: str) -> str:
    """``text`` as GDL comment lines (``; `` before each, trailing blanks stripped)."""
    return "".join(f"; {line}".rstrip() + "\n" for line in text.splitlines())


def write_generated(
    argv: list[str] | None,
    description: str,
    default_out: str,
    files: Iterable[tuple[str, str, str]],
) -> int:
    """The generators' command: parse ``argv`` (one optional argument, the output folder,
    default ``default_out``), then write each of ``files`` (``(file name, GDL text, a
    summary printed after the path)``, produced as they are written) into it."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("out", nargs="?", default=default_out, help="output folder")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for name, text, summary in files:
        path = out / name
        path.write_text(text)
        print(f"{path}: {summary}")
    return 0
