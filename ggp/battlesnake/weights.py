"""The weights of the IDAPOS leaf heuristics (:mod:`ggp.battlesnake.heuristics`): the
paper's, the tuned ones shipped with the package, or a weights file.

A weights file is JSON with the four duel and the four multi-snake weights by name; other
keys (``ggp tune`` writes ``"tuning"``: how the weights were found) are ignored:

.. code-block:: json

    {"duel": {"total_fill": 0.7, "hunger_pressure": 10.0, "adversarial_fill": 4.0,
              "delta_length_food": 4.0},
     "multi": {"delta_length_food": 12.0, "control": 1.0, "hunger_malus": 10.0,
               "tail_reachable": 10.0}}

Players name weights by a *weights spec* (:func:`snake_weights`): ``paper`` (the values of
the paper's code), ``tuned`` (:data:`TUNED_WEIGHTS_FILE`, found by ``ggp tune``) or the
path of a weights file.

Example:
    >>> snake_weights("paper") == SnakeWeights()
    True
    >>> SnakeWeights().multi
    MultiWeights(delta_length_food=12.0, control=1.0, hunger_malus=10.0, tail_reachable=10.0)
    >>> SnakeWeights.from_json_dict(SnakeWeights().to_json_dict()) == SnakeWeights()
    True
"""

from __future__ import annotations

import dataclasses
import json
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ggp.errors import SettingError

__all__ = [
    "DuelWeights",
    "MultiWeights",
    "SnakeWeights",
    "PAPER_WEIGHTS",
    "TUNED_WEIGHTS_FILE",
    "DEFAULT_WEIGHTS_SPEC",
    "WEIGHTS_SPECS",
    "load_weights",
    "save_weights",
    "snake_weights",
]


@dataclass(frozen=True)
class DuelWeights:
    """The duel heuristic's weights (the defaults: the paper's code)."""

    total_fill: float = 0.7
    hunger_pressure: float = 10.0
    adversarial_fill: float = 4.0
    delta_length_food: float = 4.0


@dataclass(frozen=True)
class MultiWeights:
    """The heuristic's weights with more than two snakes (the defaults: the paper's code)."""

    delta_length_food: float = 12.0
    control: float = 1.0
    hunger_malus: float = 10.0
    tail_reachable: float = 10.0


W = TypeVar("W", DuelWeights, MultiWeights)


def _family(kind: type[W], data: object, where: str) -> W:
    names = [f.name for f in dataclasses.fields(kind)]
    if not isinstance(data, Mapping) or sorted(data) != sorted(names):
        raise SettingError(f"{where}: expected the weights {', '.join(names)}, got {data!r}")
    values = {}
    for name in names:
        value = data[name]
        number = isinstance(value, int | float) and not isinstance(value, bool)
        if not number or not math.isfinite(value):
            raise SettingError(f"{where}.{name}: a weight must be a finite number, not {value!r}")
        values[name] = float(value)
    return kind(**values)


@dataclass(frozen=True)
class SnakeWeights:
    """Both families of weights: :attr:`duel` (two snakes alive) and :attr:`multi` (more)."""

    duel: DuelWeights = DuelWeights()
    multi: MultiWeights = MultiWeights()

    def to_json_dict(self) -> dict[str, dict[str, float]]:
        """The weights as JSON-ready dicts (:func:`json.dumps` takes it)."""
        return {"duel": dataclasses.asdict(self.duel), "multi": dataclasses.asdict(self.multi)}

    @classmethod
    def from_json_dict(cls, data: Mapping[str, Any], where: str = "weights") -> SnakeWeights:
        """The inverse of :meth:`to_json_dict`; other keys are ignored.

        Raises:
            SettingError: A family or a weight is missing or not a finite number (the
                message starts with ``where``).
        """
        return cls(
            _family(DuelWeights, data.get("duel"), f"{where}: duel"),
            _family(MultiWeights, data.get("multi"), f"{where}: multi"),
        )


#: The values of the paper's code (Schier & Wuestenbecker 2019).
PAPER_WEIGHTS = SnakeWeights()

#: The weights ``ggp tune`` found, shipped with the package (spec ``tuned``).
TUNED_WEIGHTS_FILE = Path(__file__).resolve().parent / "tuned_weights.json"

#: The weights spec the players use unless told otherwise.
DEFAULT_WEIGHTS_SPEC = "paper"

#: The named weights specs (any other spec is a file's path).
WEIGHTS_SPECS = ("paper", "tuned")


def load_weights(path: Path | str) -> SnakeWeights:
    """The weights in the file at ``path``.

    Raises:
        SettingError: The file cannot be read, is not JSON, or lacks a weight.
    """
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as e:
        raise SettingError(f"weights file {path}: {e.strerror or e}") from None
    except json.JSONDecodeError as e:
        raise SettingError(f"weights file {path}:{e.lineno}:{e.colno}: not JSON: {e.msg}") from None
    if not isinstance(data, dict):
        raise SettingError(f"weights file {path}: expected a JSON object")
    return SnakeWeights.from_json_dict(data, where=str(path))


def save_weights(path: Path | str, weights: SnakeWeights, **extra: Any) -> None:
    """Write ``weights`` to ``path`` (atomically), with ``extra`` JSON-ready keys beside
    them (``tuning=...``)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(
        json.dumps({**weights.to_json_dict(), **extra}, indent=2) + "\n", encoding="utf-8"
    )
    temporary.replace(path)


def snake_weights(spec: str) -> SnakeWeights:
    """The weights a spec names: ``paper``, ``tuned`` or a weights file's path.

    Raises:
        SettingError: The file is missing or malformed.
    """
    if spec == "paper":
        return PAPER_WEIGHTS
    if spec == "tuned":
        return load_weights(TUNED_WEIGHTS_FILE)
    return load_weights(spec)
