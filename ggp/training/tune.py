"""Tuning the Battlesnake heuristic weights by a genetic algorithm (``ggp tune``).

As the IDAPOS paper tuned its weights (M. B. Schier & N. Wuestenbecker, *Adversarial
N-player Search using Locality for the Game of Battlesnake*, 2019; ../shared/
REFERENCE-SEARCH.md section 2.8): each weight is a 6-bit string mapped onto a range
(:data:`RANGES`), candidates vary by bit-string mutation, and a candidate's fitness is its
mean placement (1 = best) in low-depth games against the other candidates and the paper's
reflex snakes (greedy, aggressive, tail chaser).

- **Genome**: the four weights of one family, 6 bits each (24 bits), big-endian codes
  0..63; the family is the one the game's search uses most: ``duel`` in a two-snake game,
  ``multi`` with more snakes (the other family keeps the base weights, by default the
  paper's). The base weights are one genome of the first generation (the paper's are the
  middle code 32 of every range); the others are uniformly random bits.
- **Games**: every candidate plays ``games`` games a generation, one per round. In even
  rounds half the seats (at least one) go to candidates and the rest to reflex snakes drawn
  uniformly from :attr:`TuneSettings.opponents`; in odd rounds every seat goes to a candidate
  (a last, short table is filled with reflex snakes). Seats are shuffled. Candidates play
  IDAPOS (:class:`~ggp.players.idapos_player.IdaposPlayer`) to a fixed depth without a clock,
  so a game depends on its seed and the weights only, whatever the machine's speed.
- **Fitness**: a genome's mean placement over every game it played in the run (survivors
  add games each generation), shrunk towards the placement of an average snake,
  ``(seats + 1) / 2``, by :attr:`TuneSettings.prior_games` pseudo-games, so that a newcomer
  with a few lucky games does not oust a survivor with many. Placement: 1 + the snakes
  with a higher goal + half of those with the same goal (snakes out in the same turn share
  the average rank, as the paper ranks).
- **Next generation**: the ``elite`` best distinct genomes unchanged; the rest children of
  two parents chosen by tournaments of ``tournament`` genomes, uniform crossover with
  probability ``crossover`` (else a copy of the first parent), then every bit flipped with
  probability ``mutation``.
- **Final round**: a fitness of a few noisy games favours the lucky, so the run's answer is
  not the last generation's best but the winner of a final round: the ``finalists - 1``
  genomes of best fitness over the whole run and the base genome play ``final_games`` fresh
  games each (the same schedule, among themselves and the reflex snakes), and the one with
  the best mean placement in these games alone wins (the base genome may win: then the
  run found nothing better). ``final_games=0`` skips the round.

One :class:`numpy.random.Generator` from the seed draws everything (schedules, game seeds,
the first genomes, selection, crossover, mutation; the final round has its own, from the
seed and the number of generations), in the process that drives the run;
games run in worker processes (``workers``) and come back in schedule order, so a seed
gives the same run on any number of workers. After each generation the run folder gets
``tune.json`` (the population, the records, the generator's state: ``--resume`` goes on
from there exactly as an uninterrupted run), a line of ``log.jsonl`` and ``weights.json``
(the best weights so far, loadable by ``weights=FILE``); the final round adds its line and
writes its winner to ``weights.json``.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import math
import multiprocessing
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, Literal

import numpy as np
import numpy.typing as npt

from ggp.battlesnake.board import BoardError, board_size
from ggp.battlesnake.weights import (
    PAPER_WEIGHTS,
    DuelWeights,
    MultiWeights,
    SnakeWeights,
    save_weights,
)
from ggp.errors import GameError, SettingError
from ggp.game import Game
from ggp.gdl.terms import Const
from ggp.match import run_match
from ggp.players.base import Player
from ggp.players.idapos_player import IdaposPlayer, IdaposSettings
from ggp.players.registry import make_player

__all__ = [
    "Family",
    "BITS",
    "CODES",
    "MIDDLE",
    "genome_bits",
    "WeightRange",
    "RANGES",
    "TuneSettings",
    "FitnessGame",
    "ScheduledGame",
    "GenerationStats",
    "FinalStats",
    "TuneResult",
    "Tuner",
    "decode",
    "encode",
    "placements",
    "schedule",
    "games_per_generation",
    "play_fitness_game",
    "snake_count",
    "family_of",
    "CHECKPOINT_FILE",
    "LOG_FILE",
    "WEIGHTS_FILE",
]

logger = logging.getLogger(__name__)

Family = Literal["duel", "multi"]
Bits = npt.NDArray[np.uint8]

#: Bits per weight, as the paper's genetic algorithm: 64 values on each weight's range.
BITS = 6
#: The codes of a weight, 0..CODES-1.
CODES = 64
#: The code of a range's middle, the paper's value (see :data:`RANGES`).
MIDDLE = 32

CHECKPOINT_FILE = "tune.json"
LOG_FILE = "log.jsonl"
WEIGHTS_FILE = "weights.json"


@dataclass(frozen=True)
class WeightRange:
    """How one weight's 6-bit code decodes: ``low + step * code``, code 0..63.

    Attributes:
        name: The weight (a field of :class:`~ggp.battlesnake.weights.DuelWeights` or
            :class:`~ggp.battlesnake.weights.MultiWeights`).
        low: The value of code 0.
        step: The difference between neighbouring codes.
    """

    name: str
    low: float
    step: float

    @property
    def high(self) -> float:
        """The value of the largest code."""
        return self.low + self.step * (CODES - 1)


def _around_paper(weights: DuelWeights | MultiWeights) -> tuple[WeightRange, ...]:
    # The paper does not give the ranges its grid search found. Every term is oriented so
    # that more is better for the snake it scores, so a weight's sign is settled and only
    # its size is in question: from 0 (the term switched off) to twice the paper's value
    # less one step, in steps of 1/32 of it. The paper's value is then the middle code 32
    # exactly (the paper's weights are a genome), and since the evaluator divides by the
    # sum of the weights, the range lets any term's share go from nothing to dominant.
    return tuple(
        WeightRange(name, 0.0, value / MIDDLE)
        for name, value in dataclasses.asdict(weights).items()
    )


#: Each family's weight ranges, in genome order (see :func:`_around_paper` for why).
RANGES: dict[Family, tuple[WeightRange, ...]] = {
    "duel": _around_paper(PAPER_WEIGHTS.duel),
    "multi": _around_paper(PAPER_WEIGHTS.multi),
}


def genome_bits(family: Family) -> int:
    """The genome's length in bits."""
    return BITS * len(RANGES[family])


def decode(bits: Bits, family: Family) -> DuelWeights | MultiWeights:
    """The weights a genome (``[4 * BITS]`` zeros and ones, big-endian codes) stands for.

    Example:
        >>> decode(np.array([1, 0, 0, 0, 0, 0] * 4, dtype=np.uint8), "multi")  # codes 32
        MultiWeights(delta_length_food=12.0, control=1.0, hunger_malus=10.0, tail_reachable=10.0)
        >>> bits = [0] * 6 + [1] * 6 + [0, 0, 0, 0, 1, 0] * 2
        >>> weights = decode(np.array(bits, dtype=np.uint8), "multi")  # codes 0, 63, 2, 2
        >>> weights.delta_length_food, weights.control, weights.hunger_malus, weights.tail_reachable
        (0.0, 1.96875, 0.625, 0.625)
    """
    ranges = RANGES[family]
    if bits.shape != (BITS * len(ranges),):
        raise ValueError(f"a {family} genome has {BITS * len(ranges)} bits, not {bits.shape}")
    powers = 2 ** np.arange(BITS - 1, -1, -1)
    codes = bits.reshape(len(ranges), BITS).astype(np.int64) @ powers
    values = {r.name: r.low + r.step * int(c) for r, c in zip(ranges, codes, strict=True)}
    return DuelWeights(**values) if family == "duel" else MultiWeights(**values)


def encode(weights: DuelWeights | MultiWeights, family: Family) -> Bits:
    """The genome of the codes nearest to ``weights`` (clipped to the ranges)."""
    out: list[int] = []
    for r in RANGES[family]:
        value = getattr(weights, r.name)
        code = min(CODES - 1, max(0, round((value - r.low) / r.step)))
        out.extend(int(b) for b in format(code, f"0{BITS}b"))
    return np.array(out, dtype=np.uint8)


def _text(bits: Bits) -> str:
    return "".join(map(str, bits.tolist()))


def _bits(text: str) -> Bits:
    return np.array([int(c) for c in text], dtype=np.uint8)


def _with_family(base: SnakeWeights, family: Family, bits: Bits) -> SnakeWeights:
    weights = decode(bits, family)
    if isinstance(weights, DuelWeights):
        return dataclasses.replace(base, duel=weights)
    return dataclasses.replace(base, multi=weights)


def snake_count(game: Game) -> int:
    """The number of snakes of a Battlesnake game.

    Raises:
        GameError: The game is not one of the Battlesnake games (``games/battlesnake/``).
    """
    try:
        board_size(game)
    except BoardError as e:
        raise GameError(
            f"{game.description.path or 'the game'}: ggp tune tunes the Battlesnake "
            f"heuristics, for the games of games/battlesnake/ ({e})"
        ) from None
    return len(game.player_roles)


def family_of(snakes: int) -> Family:
    """The weights a game of ``snakes`` snakes is tuned for."""
    return "duel" if snakes == 2 else "multi"


def placements(goals: Sequence[float]) -> tuple[float, ...]:
    """Each snake's placement (1 = best) from its goal: 1 + the snakes with a higher goal +
    half of the others with the same goal.

    Example:
        >>> placements([33, 100, 33, 33])
        (3.0, 1.0, 3.0, 3.0)
    """
    return tuple(
        1.0 + sum(h > g for h in goals) + 0.5 * (sum(h == g for h in goals) - 1) for g in goals
    )


@dataclass(frozen=True)
class TuneSettings:
    """How a run tunes (module docstring).

    Attributes:
        generations: Generations to evaluate.
        population: Genomes per generation.
        games: Games each genome plays per generation (rounds).
        depth: IDAPOS's deepest round in the games (no clock: the search always finishes it).
        elite: The best genomes carried over unchanged.
        tournament: Genomes per selection tournament.
        crossover: Probability that a child mixes two parents (uniform crossover).
        mutation: Probability that each bit of a child is flipped.
        prior_games: Pseudo-games at the average placement added to each genome's record
            for its fitness (0: the plain mean).
        finalists: Genomes in the final round (the base genome among them).
        final_games: Games each finalist plays in the final round (0: no final round; the
            run's answer is then the last generation's best).
        opponents: The reflex snakes' player specs.
    """

    generations: int = 10
    population: int = 12
    games: int = 4
    depth: int = 1
    elite: int = 2
    tournament: int = 3
    crossover: float = 0.9
    mutation: float = 0.04
    prior_games: float = 4.0
    finalists: int = 8
    final_games: int = 24
    opponents: tuple[str, ...] = ("snake:greedy", "snake:aggressive", "snake:tailchaser")

    def __post_init__(self) -> None:
        counts = {
            "generations": self.generations,
            "population": self.population,
            "games": self.games,
            "depth": self.depth,
            "tournament": self.tournament,
        }
        for name, value in counts.items():
            if value < 1:
                raise SettingError(f"tune setting {name} must be at least 1, not {value}")
        if not 0 <= self.elite <= self.population:
            raise SettingError(f"tune setting elite must be 0..population, not {self.elite}")
        for name, p in (("crossover", self.crossover), ("mutation", self.mutation)):
            if not 0.0 <= p <= 1.0:
                raise SettingError(f"tune setting {name} must be a probability, not {p}")
        if self.finalists < 2:
            raise SettingError(f"tune setting finalists must be at least 2, not {self.finalists}")
        if self.final_games < 0:
            raise SettingError(f"tune setting final_games must be >= 0, not {self.final_games}")
        if not self.prior_games >= 0:
            raise SettingError(f"tune setting prior_games must be >= 0, not {self.prior_games}")
        if not self.opponents:
            raise SettingError("tune needs at least one reflex opponent")

    def to_json_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "opponents": list(self.opponents)}

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> TuneSettings:
        return cls(**{**data, "opponents": tuple(data["opponents"])})


# --------------------------------------------------------------------------- the games


@dataclass(frozen=True)
class FitnessGame:
    """One game of a generation, as plain data a worker can play.

    Attributes:
        game_path: The game file.
        seats: ``[snakes]`` each snake role's player, in role order: weights (IDAPOS to
            ``depth`` with them) or a reflex snake's spec.
        depth: IDAPOS's deepest round.
        seed: Seeds the referee and the players.
        match_id: The match's name.
    """

    game_path: str
    seats: tuple[SnakeWeights | str, ...]
    depth: int
    seed: int
    match_id: str = "tune"


@cache
def _game(path: str) -> Game:
    """The game at ``path``, loaded once per process."""
    return Game.from_file(path)


def play_fitness_game(task: FitnessGame) -> tuple[float, ...]:
    """Play ``task``; the placement of each seat (1 = best)."""
    game = _game(task.game_path)
    snakes = game.player_roles
    if len(snakes) != len(task.seats):
        raise GameError(f"{task.game_path} has {len(snakes)} snakes, not {len(task.seats)}")
    streams = np.random.SeedSequence(task.seed).spawn(len(snakes) + 1)
    players: dict[Const, Player] = {}
    for role, seat, stream in zip(snakes, task.seats, streams[1:], strict=True):
        rng = np.random.default_rng(stream)
        if isinstance(seat, str):
            players[role] = make_player(seat, rng, game)
        else:
            settings = IdaposSettings(max_depth=task.depth, margin_s=0.0, weights=seat)
            players[role] = IdaposPlayer(settings, rng)
    record = run_match(
        game,
        players,
        np.random.default_rng(streams[0]),
        match_id=task.match_id,
        start_clock_s=math.inf,
        play_clock_s=math.inf,
    )
    return placements([record.goals[game.role_index(role)] for role in snakes])


@dataclass(frozen=True)
class ScheduledGame:
    """A game of the schedule: ``seats`` hold genome indices or reflex specs."""

    seats: tuple[int | str, ...]
    seed: int


def _per_game(seats: int, round_index: int) -> int:
    """Candidates per game in a round: half the seats (at least one) in even rounds, all in
    odd rounds."""
    return max(1, seats // 2) if round_index % 2 == 0 else seats


def games_per_generation(settings: TuneSettings, seats: int) -> int:
    """How many games one generation plays."""
    return sum(math.ceil(settings.population / _per_game(seats, r)) for r in range(settings.games))


def schedule(
    rng: np.random.Generator,
    population: int,
    seats: int,
    rounds: int,
    opponents: Sequence[str],
) -> tuple[ScheduledGame, ...]:
    """One generation's games (module docstring): in each round every genome index
    ``0..population-1`` sits at exactly one game.

    Example:
        >>> games = schedule(np.random.default_rng(0), 5, 4, 2, ["snake:greedy"])
        >>> sorted(s for g in games[:3] for s in g.seats if isinstance(s, int))
        [0, 1, 2, 3, 4]
        >>> [len(g.seats) for g in games]
        [4, 4, 4, 4, 4]
    """
    games: list[ScheduledGame] = []
    for r in range(rounds):
        k = _per_game(seats, r)
        order = [int(i) for i in rng.permutation(population)]
        for start in range(0, population, k):
            table: list[int | str] = list(order[start : start + k])
            while len(table) < seats:
                table.append(opponents[int(rng.integers(len(opponents)))])
            seating = rng.permutation(seats)
            seed = int(rng.integers(2**63))
            games.append(ScheduledGame(tuple(table[int(i)] for i in seating), seed))
    return tuple(games)


def _play_all(
    tasks: Sequence[FitnessGame],
    executor: Executor | None,
    progress: Callable[[], None] | None = None,
) -> list[tuple[float, ...]]:
    """Each task's placements, in order: on ``executor`` (None: one after another here)."""
    if executor is None:
        results = []
        for task in tasks:
            results.append(play_fitness_game(task))
            if progress is not None:
                progress()
        return results
    futures = [executor.submit(play_fitness_game, task) for task in tasks]
    for _ in as_completed(futures):
        if progress is not None:
            progress()
    return [future.result() for future in futures]


# --------------------------------------------------------------------------- results


@dataclass(frozen=True)
class GenerationStats:
    """One evaluated generation.

    Attributes:
        generation: Its number, from 0.
        games: Games it played.
        best_fitness: The lowest fitness (mean placement, shrunk; 1 = best) in it.
        mean_fitness: The mean fitness of its genomes.
        best_games: Games the best genome has played in the run.
        best_genome: The best genome's bits.
        best: The best genome's weights (both families).
        base_fitness: The fitness of the base genome (the paper's weights by default),
            while it is in the population (None after).
        seconds: Seconds the run had taken when the generation ended.
    """

    generation: int
    games: int
    best_fitness: float
    mean_fitness: float
    best_games: int
    best_genome: str
    best: SnakeWeights
    base_fitness: float | None
    seconds: float

    def to_json_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "best": self.best.to_json_dict()}

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> GenerationStats:
        return cls(**{**data, "best": SnakeWeights.from_json_dict(data["best"])})


@dataclass(frozen=True)
class FinalStats:
    """The final round (module docstring).

    Attributes:
        genomes: ``[finalists]`` the finalists: the genomes of best fitness over the run
            other than the base genome (best first), then the base genome.
        fitness: ``[finalists]`` their fitness over the run before the round.
        placements: ``[finalists]`` their mean placements in the round's games.
        games: Games each finalist played in the round.
        best_genome: The winner (the lowest mean placement; the earlier on a tie).
        best: The winner's weights (both families).
        base_placement: The base genome's mean placement in the round.
        seconds: Seconds the run had taken when the round ended.
    """

    genomes: tuple[str, ...]
    fitness: tuple[float, ...]
    placements: tuple[float, ...]
    games: int
    best_genome: str
    best: SnakeWeights
    base_placement: float
    seconds: float

    def to_json_dict(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "best": self.best.to_json_dict()}

    @classmethod
    def from_json_dict(cls, data: dict[str, Any]) -> FinalStats:
        return cls(
            **{
                **data,
                "genomes": tuple(data["genomes"]),
                "fitness": tuple(data["fitness"]),
                "placements": tuple(data["placements"]),
                "best": SnakeWeights.from_json_dict(data["best"]),
            }
        )


@dataclass(frozen=True)
class TuneResult:
    """A finished run.

    Attributes:
        game: The game file.
        family: The weights tuned.
        generations: ``[generations]`` each generation's figures.
        final: The final round (None: ``final_games=0``).
        best: The run's answer (both families), as written to ``weights_file``: the final
            round's winner, or without one the last generation's best.
        best_genome: Its bits.
        best_placement: What it was chosen by: its mean placement in the final round, or
            its fitness in the last generation.
        best_games: The games behind that figure.
        weights_file: Where the best weights were written.
        seconds: Seconds the run took (resumed runs included).
    """

    game: str
    family: Family
    generations: tuple[GenerationStats, ...]
    final: FinalStats | None
    best: SnakeWeights
    best_genome: str
    best_placement: float
    best_games: int
    weights_file: Path
    seconds: float


# --------------------------------------------------------------------------- the run


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


class Tuner:
    """A tuning run in a folder; :meth:`run` plays the generations left.

    Use :meth:`start` for a new run and :meth:`resume` to go on with one.

    Args:
        game_path: The Battlesnake game file.
        settings: The run's settings.
        out: The run folder.
        seed: Seeds the run's generator.
        base: The weights of the family not tuned, and one genome of the first generation.
    """

    def __init__(
        self,
        game_path: Path,
        settings: TuneSettings,
        out: Path,
        seed: int,
        base: SnakeWeights = PAPER_WEIGHTS,
    ) -> None:
        self.game_path = game_path
        self.settings = settings
        self.out = out
        self.seed = seed
        self.base = base
        game = _game(str(game_path))
        self.seats = snake_count(game)
        self.family: Family = family_of(self.seats)
        self.rng = np.random.default_rng(seed)
        self.base_genome = _text(encode(getattr(base, self.family), self.family))
        #: Genomes to evaluate next, as bit strings.
        self.population: list[str] = []
        #: Each genome's (games, sum of placements) over the run.
        self.records: dict[str, tuple[int, float]] = {}
        self.history: list[GenerationStats] = []
        #: The final round, once played.
        self.final: FinalStats | None = None
        self.elapsed_s = 0.0

    # ----------------------------------------------------------------- set-up

    @classmethod
    def start(
        cls,
        game_path: Path | str,
        settings: TuneSettings,
        out: Path | str,
        seed: int,
        base: SnakeWeights = PAPER_WEIGHTS,
        fresh: bool = False,
    ) -> Tuner:
        """A new run: the base genome and random ones.

        Raises:
            SettingError: ``out`` holds a run and ``fresh`` is false.
            GameError: The game is not a Battlesnake game.
        """
        out = Path(out)
        if (out / CHECKPOINT_FILE).exists() and not fresh:
            raise SettingError(
                f"{out} holds a tuning run: resume it (--resume) or start over (--fresh)"
            )
        tuner = cls(Path(game_path), settings, out, seed, base)
        n = genome_bits(tuner.family)
        tuner.population = [tuner.base_genome] + [
            _text(tuner.rng.integers(0, 2, size=n, dtype=np.uint8))
            for _ in range(settings.population - 1)
        ]
        out.mkdir(parents=True, exist_ok=True)
        for name in (CHECKPOINT_FILE, WEIGHTS_FILE):  # an earlier run's, with --fresh
            (out / name).unlink(missing_ok=True)
        (out / LOG_FILE).write_text("", encoding="utf-8")
        return tuner

    @classmethod
    def resume(
        cls, out: Path | str, generations: int | None = None, game_path: Path | str | None = None
    ) -> Tuner:
        """The run in ``out``, to go on where its last finished generation left it, up to
        ``generations`` generations in all (None: as many as it was started with).

        Args:
            out: The run folder.
            generations: The run's new length.
            game_path: Where the run's game file is now (None: where it was).

        Raises:
            SettingError: ``out`` holds no run, or the game file is missing or another.
        """
        out = Path(out)
        path = out / CHECKPOINT_FILE
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            raise SettingError(f"{out} holds no tuning run to resume ({path} is missing)") from None
        settings = TuneSettings.from_json_dict(data["settings"])
        if generations is not None:
            settings = dataclasses.replace(settings, generations=generations)
        game_path = Path(data["game"] if game_path is None else game_path)
        if not game_path.is_file() or _digest(game_path) != data["game_sha256"]:
            raise SettingError(
                f"{path}: the run tunes {data['game']}; {game_path} is missing or another game"
            )
        tuner = cls(
            game_path,
            settings,
            out,
            int(data["seed"]),
            SnakeWeights.from_json_dict(data["base"], where=str(path)),
        )
        tuner.rng.bit_generator.state = data["rng"]
        tuner.population = list(data["population"])
        tuner.records = {g: (int(n), float(s)) for g, (n, s) in data["records"].items()}
        tuner.history = [GenerationStats.from_json_dict(h) for h in data["history"]]
        tuner.elapsed_s = float(data["elapsed_s"])
        final = data.get("final")
        if final is not None and tuner.generation >= settings.generations:
            tuner.final = FinalStats.from_json_dict(final)  # else more generations come first
        # The log holds exactly the checkpoint's lines (one written after a checkpoint that
        # was never saved is dropped: that generation runs again).
        lines = [h.to_json_dict() for h in tuner.history]
        if tuner.final is not None:
            lines.append({"final": tuner.final.to_json_dict()})
        (out / LOG_FILE).write_text(
            "".join(json.dumps(line) + "\n" for line in lines), encoding="utf-8"
        )
        return tuner

    # ----------------------------------------------------------------- fitness

    def fitness(self, genome: str) -> float:
        """``genome``'s mean placement over its games, shrunk towards the average one."""
        games, total = self.records.get(genome, (0, 0.0))
        prior = self.settings.prior_games
        if games + prior == 0:
            return (self.seats + 1) / 2
        return (total + prior * (self.seats + 1) / 2) / (games + prior)

    def ranking(self) -> list[int]:
        """Population indices, best first (fitness, then more games, then position)."""
        return sorted(
            range(len(self.population)),
            key=lambda i: (
                self.fitness(self.population[i]),
                -self.records.get(self.population[i], (0, 0.0))[0],
                i,
            ),
        )

    @property
    def generation(self) -> int:
        """The generations evaluated so far."""
        return len(self.history)

    @property
    def games_per_generation(self) -> int:
        return games_per_generation(self.settings, self.seats)

    @property
    def games_left(self) -> int:
        """Games the run has yet to play (the final round's assuming a full field)."""
        settings = self.settings
        left = max(0, settings.generations - self.generation) * self.games_per_generation
        if settings.final_games and self.final is None:
            field = dataclasses.replace(
                settings, population=settings.finalists, games=settings.final_games
            )
            left += games_per_generation(field, self.seats)
        return left

    # ----------------------------------------------------------------- one generation

    def evaluate(
        self, executor: Executor | None = None, progress: Callable[[], None] | None = None
    ) -> GenerationStats:
        """Play the current population's games (on ``executor``'s processes, or here) and
        record the placements; ``progress`` is called after each game."""
        started = time.monotonic()
        played = self._play(
            self.population, self.settings.games, executor, progress, "tune", self.rng
        )
        for genome, places in zip(self.population, played, strict=True):
            n, total = self.records.get(genome, (0, 0.0))
            self.records[genome] = (n + len(places), total + sum(places))
        self.elapsed_s += time.monotonic() - started
        ranked = self.ranking()
        best = self.population[ranked[0]]
        fitness = [self.fitness(g) for g in self.population]
        stats = GenerationStats(
            generation=self.generation,
            games=self.games_per_generation,
            best_fitness=self.fitness(best),
            mean_fitness=float(np.mean(fitness)),
            best_games=self.records[best][0],
            best_genome=best,
            best=self._weights(best),
            base_fitness=(
                self.fitness(self.base_genome) if self.base_genome in self.population else None
            ),
            seconds=self.elapsed_s,
        )
        self.history.append(stats)
        return stats

    def _play(
        self,
        genomes: Sequence[str],
        rounds: int,
        executor: Executor | None,
        progress: Callable[[], None] | None,
        label: str,
        rng: np.random.Generator,
    ) -> list[list[float]]:
        """``[genomes][rounds]`` each genome's placements in ``rounds`` rounds of games
        scheduled by ``rng``."""
        settings = self.settings
        games = schedule(rng, len(genomes), self.seats, rounds, settings.opponents)
        tasks = [
            FitnessGame(
                str(self.game_path),
                tuple(s if isinstance(s, str) else self._weights(genomes[s]) for s in game.seats),
                settings.depth,
                game.seed,
                f"{label}-{self.generation}-{n}",
            )
            for n, game in enumerate(games)
        ]
        placed: list[list[float]] = [[] for _ in genomes]
        for game, result in zip(games, _play_all(tasks, executor, progress), strict=True):
            for seat, place in zip(game.seats, result, strict=True):
                if isinstance(seat, int):
                    placed[seat].append(place)
        return placed

    def final_round(
        self, executor: Executor | None = None, progress: Callable[[], None] | None = None
    ) -> FinalStats:
        """Play the final round (module docstring) and keep it in :attr:`final`."""
        started = time.monotonic()
        settings = self.settings
        ranked = sorted(self.records, key=lambda g: (self.fitness(g), -self.records[g][0], g))
        others = [g for g in ranked if g != self.base_genome]
        genomes = [*others[: settings.finalists - 1], self.base_genome]
        # Its own generator, so that a run lengthened after its final round goes on as if
        # the round had not been played.
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, 1, self.generation]))
        played = self._play(genomes, settings.final_games, executor, progress, "final", rng)
        placements = [sum(p) / len(p) for p in played]
        winner = min(range(len(genomes)), key=lambda i: (placements[i], i))
        self.elapsed_s += time.monotonic() - started
        self.final = FinalStats(
            genomes=tuple(genomes),
            fitness=tuple(self.fitness(g) for g in genomes),
            placements=tuple(placements),
            games=settings.final_games,
            best_genome=genomes[winner],
            best=self._weights(genomes[winner]),
            base_placement=placements[genomes.index(self.base_genome)],
            seconds=self.elapsed_s,
        )
        return self.final

    def breed(self) -> list[str]:
        """The next population from the evaluated one (module docstring)."""
        settings, rng = self.settings, self.rng
        ranked = self.ranking()
        elite: list[str] = []
        for i in ranked:
            if len(elite) == settings.elite:
                break
            if self.population[i] not in elite:
                elite.append(self.population[i])
        children = list(elite)
        while len(children) < settings.population:
            first = _bits(self.population[self._tournament()])
            second = _bits(self.population[self._tournament()])
            if rng.random() < settings.crossover:
                child = np.where(rng.random(first.shape) < 0.5, first, second).astype(np.uint8)
            else:
                child = first.copy()
            child ^= (rng.random(child.shape) < settings.mutation).astype(np.uint8)
            children.append(_text(child))
        return children

    def _tournament(self) -> int:
        entrants = self.rng.integers(len(self.population), size=self.settings.tournament)
        return min((int(i) for i in entrants), key=lambda i: (self.fitness(self.population[i]), i))

    def _weights(self, genome: str) -> SnakeWeights:
        return _with_family(self.base, self.family, _bits(genome))

    # ----------------------------------------------------------------- files

    def save(self) -> None:
        """Write the checkpoint, atomically."""
        data = {
            "game": str(self.game_path),
            "game_sha256": _digest(self.game_path),
            "family": self.family,
            "seed": self.seed,
            "settings": self.settings.to_json_dict(),
            "base": self.base.to_json_dict(),
            "population": self.population,
            "records": {g: list(r) for g, r in self.records.items()},
            "rng": self.rng.bit_generator.state,
            "history": [h.to_json_dict() for h in self.history],
            "final": None if self.final is None else self.final.to_json_dict(),
            "elapsed_s": self.elapsed_s,
        }
        path = self.out / CHECKPOINT_FILE
        temporary = path.with_name(path.name + ".tmp")
        temporary.write_text(json.dumps(data), encoding="utf-8")
        temporary.replace(path)

    def _write_best(self) -> None:
        """Write the run's answer so far to the weights file, with how it was found."""
        result = self.result()
        save_weights(
            self.out / WEIGHTS_FILE,
            result.best,
            tuning={
                "game": str(self.game_path),
                "family": self.family,
                "seed": self.seed,
                "generations": self.generation,
                "settings": self.settings.to_json_dict(),
                "genome": result.best_genome,
                "chosen_by": "final round" if self.final is not None else "last generation",
                "mean_placement": result.best_placement,
                "games": result.best_games,
                "base_placement": None if self.final is None else self.final.base_placement,
                "seconds": round(self.elapsed_s, 1),
            },
        )

    def result(self) -> TuneResult:
        """The run's figures and answer so far.

        Raises:
            SettingError: No generation has been evaluated.
        """
        if not self.history:
            raise SettingError("the run has no generation: nothing to report")
        last, final = self.history[-1], self.final
        if final is not None:
            winner = final.genomes.index(final.best_genome)
            best, genome = final.best, final.best_genome
            placement, games = final.placements[winner], final.games
        else:
            best, genome = last.best, last.best_genome
            placement, games = last.best_fitness, last.best_games
        return TuneResult(
            game=str(self.game_path),
            family=self.family,
            generations=tuple(self.history),
            final=final,
            best=best,
            best_genome=genome,
            best_placement=placement,
            best_games=games,
            weights_file=self.out / WEIGHTS_FILE,
            seconds=self.elapsed_s,
        )

    # ----------------------------------------------------------------- the loop

    def run(
        self,
        workers: int = 1,
        progress: Callable[[], None] | None = None,
        on_generation: Callable[[GenerationStats], None] | None = None,
        on_final: Callable[[FinalStats], None] | None = None,
    ) -> TuneResult:
        """Evaluate and breed until :attr:`TuneSettings.generations` generations are done,
        then play the final round.

        Args:
            workers: Parallel game processes (1: in this process).
            progress: Called after each game.
            on_generation: Called with each generation's figures.
            on_final: Called with the final round's figures.
        """
        executor = (
            ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
            if workers > 1
            else None
        )
        try:
            while self.generation < self.settings.generations:
                stats = self.evaluate(executor, progress)
                self.population = self.breed()
                self.save()
                with (self.out / LOG_FILE).open("a", encoding="utf-8") as log:
                    log.write(json.dumps(stats.to_json_dict()) + "\n")
                self._write_best()
                logger.info(
                    "generation %d: best %.3f (%d games), mean %.3f; %s",
                    stats.generation,
                    stats.best_fitness,
                    stats.best_games,
                    stats.mean_fitness,
                    stats.best_genome,
                )
                if on_generation is not None:
                    on_generation(stats)
            if self.settings.final_games and self.final is None and self.history:
                final = self.final_round(executor, progress)
                self.save()
                with (self.out / LOG_FILE).open("a", encoding="utf-8") as log:
                    log.write(json.dumps({"final": final.to_json_dict()}) + "\n")
                self._write_best()
                logger.info("final round: %s wins", final.best_genome)
                if on_final is not None:
                    on_final(final)
        finally:
            if executor is not None:
                executor.shutdown(wait=False, cancel_futures=True)
        return self.result()
