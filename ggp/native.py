"""Native extensions: C sources beside their modules, compiled at first use, cached.

Two CPython extensions ship as C source: the propnet kernel
(``ggp/reasoning/_kernel.c``, :mod:`ggp.reasoning.kernel`) and the classic searches'
inner loops (``ggp/search/classic/_native.c``, :mod:`ggp.search.classic.native`). Each
is compiled once per machine, source and Python version with the C compiler Python was
built with (``sysconfig``'s ``CC``, or ``$CC``), into a cache folder: ``$GGP_CACHE_DIR``,
else ``$XDG_CACHE_HOME/ggp``, else ``~/.cache/ggp``. A build is written to a temporary
file and renamed, so concurrent processes are safe. ``make setup`` builds both
(the ``main`` of :mod:`ggp.reasoning.kernel` and of :mod:`ggp.search.classic.native`).

Every extension has a pure-Python twin with the same answers: where there is no
compiler, the build fails, or ``GGP_NATIVE=0``, :func:`load_extension` returns None (with
one warning per process and module) and its callers use the Python code.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import logging
import os
import shlex
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path
from types import ModuleType

__all__ = [
    "BuildError",
    "CFLAGS",
    "build_extension",
    "cache_dir",
    "compiler",
    "extension_path",
    "import_extension",
    "load_extension",
]

logger = logging.getLogger(__name__)

#: Compiler flags; part of the cache key.
CFLAGS = ("-O3", "-std=gnu11", "-fPIC", "-shared", "-fno-strict-aliasing")
BUILD_TIMEOUT_S = 180.0

_loaded: dict[str, ModuleType] = {}
_failed: dict[str, str] = {}


class BuildError(RuntimeError):
    """A native extension could not be compiled or loaded (the message says why)."""


def cache_dir() -> Path:
    """Where builds go (module docstring)."""
    explicit = os.environ.get("GGP_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "ggp"


def compiler() -> list[str]:
    """The C compiler's command."""
    cc = os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc"
    return shlex.split(str(cc))


def extension_path(source: Path, name: str) -> Path:
    """Where module ``name`` built from ``source`` (for this Python, compiler and flags)
    is, or will be."""
    digest = hashlib.sha256()
    digest.update(source.read_bytes())
    digest.update(sys.version.encode())
    digest.update(" ".join([*compiler(), *CFLAGS]).encode())
    suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
    return cache_dir() / digest.hexdigest()[:16] / f"{name}{suffix}"


def build_extension(source: Path, target: Path) -> None:
    """Compile ``source`` to ``target`` (atomically: a temporary file, then a rename).

    Raises:
        BuildError: No compiler, a failed compile, or a timeout.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    include = sysconfig.get_paths()["include"]
    fd, temporary = tempfile.mkstemp(suffix=target.suffix, dir=target.parent)
    os.close(fd)
    command = [*compiler(), *CFLAGS, f"-I{include}", str(source), "-o", temporary]
    try:
        done = subprocess.run(command, capture_output=True, text=True, timeout=BUILD_TIMEOUT_S)
    except (OSError, subprocess.TimeoutExpired) as e:
        Path(temporary).unlink(missing_ok=True)
        raise BuildError(f"cannot run the C compiler ({' '.join(command[:1])}): {e}") from e
    if done.returncode != 0:
        Path(temporary).unlink(missing_ok=True)
        last = (done.stderr or done.stdout).strip().splitlines()[-3:]
        raise BuildError(f"the C compiler failed: {' / '.join(last)}")
    os.replace(temporary, target)


def import_extension(path: Path, name: str) -> ModuleType:
    """Load the extension module ``name`` from ``path``.

    Raises:
        BuildError: The file is not a loadable module.
    """
    loader = importlib.machinery.ExtensionFileLoader(name, str(path))
    spec = importlib.util.spec_from_file_location(name, path, loader=loader)
    if spec is None:
        raise BuildError(f"cannot load {path}")
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def load_extension(source: Path, name: str, what: str) -> ModuleType | None:
    """Module ``name`` compiled from ``source`` (on first use), once per process; None
    where it cannot be (logged once, as ``what`` unavailable) or ``GGP_NATIVE=0``."""
    if os.environ.get("GGP_NATIVE", "1") == "0":
        return None
    module = _loaded.get(name)
    if module is not None or name in _failed:
        return module
    try:
        path = extension_path(source, name)
        if not path.exists():
            logger.info("building the %s in %s", what, path.parent)
            build_extension(source, path)
        module = import_extension(path, name)
    except (BuildError, OSError, ImportError) as e:
        _failed[name] = str(e)
        logger.warning("%s unavailable (%s); using the pure-Python code", what, e)
        return None
    _loaded[name] = module
    return module
