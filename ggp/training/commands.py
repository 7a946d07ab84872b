"""The training sub-commands of ``ggp`` (``train``, ``eval``), registered by cli.py."""

from __future__ import annotations

import argparse


def add_commands(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Register this package's sub-commands (none yet)."""
