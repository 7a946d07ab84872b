"""``ggp tune``: the genetic algorithm over the Battlesnake heuristic weights, its run
folder (resume, the weights file) and the ``weights=`` option of the players that read it.

The runs play a 7x7 duel capped at 30 turns (IDAPOS at depth 1 against the reflex snakes
and itself): a handful of games each."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from ggp.battlesnake.board import Board, SnakeBody, board_state
from ggp.battlesnake.generate import Variant, battlesnake_gdl
from ggp.battlesnake.heuristics import SnakeHeuristicEvaluator
from ggp.battlesnake.weights import (
    PAPER_WEIGHTS,
    TUNED_WEIGHTS_FILE,
    DuelWeights,
    MultiWeights,
    SnakeWeights,
    load_weights,
    save_weights,
    snake_weights,
)
from ggp.cli import build_parser, main
from ggp.errors import GameError, SettingError
from ggp.game import Game
from ggp.players.classic_player import ClassicPlayer
from ggp.players.idapos_player import IdaposPlayer
from ggp.players.registry import make_player
from ggp.training.commands import cmd_tune
from ggp.training.tune import (
    BITS,
    CHECKPOINT_FILE,
    LOG_FILE,
    RANGES,
    WEIGHTS_FILE,
    Family,
    Tuner,
    TuneSettings,
    decode,
    encode,
    games_per_generation,
    placements,
    schedule,
)

ROOT = Path(__file__).resolve().parents[2]
GAMES = ROOT / "games"

SETTINGS = TuneSettings(
    generations=2, population=3, games=2, depth=1, elite=1, finalists=2, final_games=2
)


@pytest.fixture(scope="module")
def small_duel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("games") / "duel_7x7_short.gdl"
    path.write_text(battlesnake_gdl(Variant(7, 2, max_turns=30, name="duel_7x7_short")))
    return path


def _state(folder: Path) -> dict[str, Any]:
    """The checkpoint without its clock readings."""
    data: dict[str, Any] = json.loads((folder / CHECKPOINT_FILE).read_text())
    data.pop("elapsed_s")
    for stats in [*data["history"], data["final"]]:
        stats.pop("seconds")
    return data


@pytest.fixture(scope="module")
def duel_game(small_duel: Path) -> Game:
    return Game.from_file(small_duel)


@pytest.fixture(scope="module")
def straight_run(small_duel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two generations in one go, seed 3."""
    out = tmp_path_factory.mktemp("straight")
    Tuner.start(small_duel, SETTINGS, out, seed=3).run()
    return out


@pytest.fixture(scope="module")
def resumed_run(small_duel: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same run through the command line: one generation, then resumed to two."""
    out = tmp_path_factory.mktemp("resumed")
    common = [str(small_duel), "--out", str(out), "--no-progress"]
    settings = ["--population", "3", "--games", "2", "--depth", "1", "--elite", "1"]
    settings += ["--finalists", "2", "--final-games", "2"]
    assert main(["tune", *common, "--generations", "1", "--seed", "3", *settings]) == 0
    assert len(json.loads((out / CHECKPOINT_FILE).read_text())["history"]) == 1
    assert main(["tune", *common, "--resume", "--generations", "2"]) == 0
    return out


# --------------------------------------------------------------------------- genomes


def test_codes_map_onto_each_weights_range() -> None:
    families: list[tuple[Family, DuelWeights | MultiWeights]] = [
        ("duel", PAPER_WEIGHTS.duel),
        ("multi", PAPER_WEIGHTS.multi),
    ]
    for family, paper in families:
        n = BITS * len(RANGES[family])
        zeros = decode(np.zeros(n, dtype=np.uint8), family)
        ones = decode(np.ones(n, dtype=np.uint8), family)
        middle = decode(np.array([1, 0, 0, 0, 0, 0] * 4, dtype=np.uint8), family)
        assert all(v == 0 for v in dataclasses.astuple(zeros))
        assert middle == paper  # code 32: the paper's value
        for low, high, value in zip(
            dataclasses.astuple(zeros),
            dataclasses.astuple(ones),
            dataclasses.astuple(paper),
            strict=True,
        ):
            assert high == pytest.approx(value * 63 / 32)
            assert low == 0
    # the bits are big-endian codes: 000011 is 3 steps of 1/32 of the paper's value
    weights = decode(np.array([0, 0, 0, 0, 1, 1] + [0] * 18, dtype=np.uint8), "multi")
    assert isinstance(weights, MultiWeights)
    assert weights.delta_length_food == pytest.approx(12.0 * 3 / 32)


def test_encode_inverts_decode() -> None:
    rng = np.random.default_rng(0)
    for _ in range(50):
        bits = rng.integers(0, 2, size=24, dtype=np.uint8)
        assert np.array_equal(encode(decode(bits, "duel"), "duel"), bits)
    clipped = encode(DuelWeights(total_fill=-1.0, hunger_pressure=1e9), "duel")
    assert clipped[:6].tolist() == [0] * 6 and clipped[6:12].tolist() == [1] * 6


def test_placements_share_ties() -> None:
    assert placements([100, 0]) == (1.0, 2.0)
    assert placements([50, 50]) == (1.5, 1.5)
    assert placements([83, 83, 17, 17]) == (1.5, 1.5, 3.5, 3.5)
    assert placements([0, 67, 33, 100]) == (4.0, 2.0, 3.0, 1.0)


@pytest.mark.parametrize("seats", [2, 4, 8])
def test_schedule_seats_every_genome_once_a_round(seats: int) -> None:
    settings = TuneSettings(population=9, games=4)
    opponents = ("snake:greedy", "snake:tailchaser")
    games = schedule(np.random.default_rng(1), 9, seats, 4, opponents)
    assert len(games) == games_per_generation(settings, seats)
    counts = np.zeros(9, dtype=int)
    for game in games:
        assert len(game.seats) == seats
        genomes = [s for s in game.seats if isinstance(s, int)]
        assert len(genomes) == len(set(genomes)) >= 1
        assert all(s in opponents for s in game.seats if isinstance(s, str))
        counts[genomes] += 1
    assert counts.tolist() == [4] * 9
    # even rounds seat reflex snakes beside the genomes, odd rounds genomes only (but the
    # last, short table)
    assert any(all(isinstance(s, int) for s in g.seats) for g in games)
    assert any(any(isinstance(s, str) for s in g.seats) for g in games)


def test_settings_are_checked() -> None:
    with pytest.raises(SettingError, match="population"):
        TuneSettings(population=0)
    with pytest.raises(SettingError, match="elite"):
        TuneSettings(population=3, elite=4)
    with pytest.raises(SettingError, match="mutation"):
        TuneSettings(mutation=1.5)


# --------------------------------------------------------------------------- runs


def test_a_seed_gives_the_same_run_and_resuming_changes_nothing(
    straight_run: Path, resumed_run: Path
) -> None:
    straight, resumed = _state(straight_run), _state(resumed_run)
    assert straight["game"] == resumed["game"]
    assert straight == resumed
    assert len(straight["history"]) == 2
    log = [json.loads(line) for line in (resumed_run / LOG_FILE).read_text().splitlines()]
    assert [entry.get("generation", "final") for entry in log] == [0, 1, "final"]
    assert load_weights(straight_run / WEIGHTS_FILE) == load_weights(resumed_run / WEIGHTS_FILE)


def test_another_seed_gives_another_run(small_duel: Path, tmp_path: Path) -> None:
    one = Tuner.start(small_duel, SETTINGS, tmp_path / "a", seed=3)
    other = Tuner.start(small_duel, SETTINGS, tmp_path / "b", seed=4)
    assert one.population[0] == other.population[0] == "100000" * 4  # the paper's genome
    assert one.population[1:] != other.population[1:]


def test_the_records_add_up(straight_run: Path) -> None:
    data = json.loads((straight_run / CHECKPOINT_FILE).read_text())
    history, population = data["history"], data["population"]
    tuner = Tuner.resume(straight_run)
    # every genome plays one game a round: 3 genomes x 2 rounds x 2 generations
    assert sum(n for n, _ in tuner.records.values()) == 3 * 2 * 2
    assert all(1.0 <= total / n <= 2.0 for n, total in tuner.records.values())
    last = history[-1]
    assert last["best_genome"] in population  # the elite, carried over unchanged
    assert last["best_fitness"] == tuner.fitness(last["best_genome"])
    assert history[0]["base_fitness"] is not None  # the paper's genome played first


def test_the_final_round_picks_the_weights(straight_run: Path) -> None:
    data = json.loads((straight_run / CHECKPOINT_FILE).read_text())
    final = data["final"]
    assert final["genomes"][-1] == "100000" * 4  # the base (paper) genome plays in it
    assert len(final["genomes"]) == 2 and final["games"] == 2
    winner = min(range(2), key=lambda i: (final["placements"][i], i))
    assert final["best_genome"] == final["genomes"][winner]
    assert final["base_placement"] == final["placements"][-1]
    # the finalist besides the base is the genome of best fitness over the run
    tuner = Tuner.resume(straight_run)
    others = [g for g in tuner.records if g != final["genomes"][-1]]
    assert tuner.fitness(final["genomes"][0]) == min(tuner.fitness(g) for g in others)
    written = json.loads((straight_run / WEIGHTS_FILE).read_text())
    assert written["tuning"]["chosen_by"] == "final round"
    assert written["tuning"]["genome"] == final["best_genome"]
    assert load_weights(straight_run / WEIGHTS_FILE).duel == decode(
        np.array([int(c) for c in final["best_genome"]], dtype=np.uint8), "duel"
    )
    log = (straight_run / LOG_FILE).read_text().splitlines()
    assert json.loads(log[-1])["final"] == final


def test_elitism_keeps_the_best(small_duel: Path, tmp_path: Path) -> None:
    settings = dataclasses.replace(SETTINGS, population=6, elite=2)
    tuner = Tuner.start(small_duel, settings, tmp_path, seed=0)
    genomes = list(tuner.population)
    # fitness 1.9, 1.8, ... : the last genomes are the best
    tuner.records = {g: (40, 40 * (2.0 - 0.1 * (i + 1))) for i, g in enumerate(genomes)}
    children = tuner.breed()
    assert children[:2] == [genomes[5], genomes[4]]
    assert len(children) == 6
    assert tuner.ranking()[:2] == [5, 4]


def test_fitness_is_the_mean_placement_shrunk_to_the_average(
    small_duel: Path, tmp_path: Path
) -> None:
    tuner = Tuner.start(small_duel, dataclasses.replace(SETTINGS, prior_games=2), tmp_path, 0)
    tuner.records = {"a": (2, 2.0), "b": (6, 12.0)}
    assert tuner.fitness("a") == pytest.approx((2.0 + 2 * 1.5) / 4)
    assert tuner.fitness("b") == pytest.approx((12.0 + 3.0) / 8)
    assert tuner.fitness("never played") == 1.5


def test_a_run_folder_is_not_overwritten(small_duel: Path, straight_run: Path) -> None:
    with pytest.raises(SettingError, match="--resume"):
        Tuner.start(small_duel, SETTINGS, straight_run, seed=3)


def test_resume_needs_a_run(tmp_path: Path) -> None:
    with pytest.raises(SettingError, match="no tuning run"):
        Tuner.resume(tmp_path)


def test_only_battlesnake_games_are_tuned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(GameError, match="Battlesnake"):
        Tuner.start(GAMES / "tictactoe.gdl", SETTINGS, tmp_path, seed=0)
    assert main(["tune", str(GAMES / "tictactoe.gdl"), "--out", str(tmp_path)]) == 1
    assert "games/battlesnake/" in capsys.readouterr().err


def test_resume_refuses_new_settings(resumed_run: Path, small_duel: Path) -> None:
    args = ["tune", str(small_duel), "--out", str(resumed_run), "--resume", "--no-progress"]
    with pytest.raises(SettingError, match="--population"):
        cmd_tune(build_parser().parse_args([*args, "--population", "5"]))
    with pytest.raises(SettingError, match="another game"):
        Tuner.resume(resumed_run, game_path=GAMES / "battlesnake" / "duel_7x7.gdl")


# --------------------------------------------------------------------------- weights


A = SnakeBody(((1, 1), (1, 0), (0, 0)), 100)
B = SnakeBody(((5, 5), (5, 6), (6, 6)), 30)


def _values(evaluator: SnakeHeuristicEvaluator, game: Game) -> list[float]:
    board = Board(7, 3, (A, B), frozenset({(1, 3)}))
    values: list[float] = evaluator.evaluate(game, [board_state(game, board)]).values[0].tolist()
    return values


def test_the_weights_file_of_a_run_is_loadable(resumed_run: Path) -> None:
    data = json.loads((resumed_run / WEIGHTS_FILE).read_text())
    weights = load_weights(resumed_run / WEIGHTS_FILE)
    assert weights.to_json_dict() == {"duel": data["duel"], "multi": data["multi"]}
    assert weights.multi == PAPER_WEIGHTS.multi  # a duel run tunes the duel weights only
    assert data["tuning"]["generations"] == 2 and data["tuning"]["family"] == "duel"
    assert (
        decode(np.array([int(c) for c in data["tuning"]["genome"]], dtype=np.uint8), "duel")
        == weights.duel
    )


def test_the_players_load_a_weights_file(duel_game: Game, tmp_path: Path) -> None:
    game = duel_game
    mine = SnakeWeights(duel=DuelWeights(5.0, 0.0, 0.0, 1.0), multi=MultiWeights(1.0, 9.0, 0.5, 0))
    path = tmp_path / "w.json"
    save_weights(path, mine, tuning={"note": "ignored"})
    assert load_weights(path) == mine

    idapos = make_player(f"idapos:depth=1,weights={path}", np.random.default_rng(0), game)
    assert isinstance(idapos, IdaposPlayer)
    assert idapos.evaluator.weights == mine
    classic = make_player(f"alphabeta:eval=snake,weights={path}", np.random.default_rng(0), game)
    assert isinstance(classic, ClassicPlayer)
    evaluator = classic.load(game)
    assert isinstance(evaluator, SnakeHeuristicEvaluator) and evaluator.weights == mine
    paper = make_player("maxn:eval=snake,weights=paper", np.random.default_rng(0), game)
    assert isinstance(paper, ClassicPlayer)

    ours, theirs = _values(idapos.evaluator, game), _values(SnakeHeuristicEvaluator(), game)
    assert ours != pytest.approx(theirs)
    paper_evaluator = paper.load(game)
    assert isinstance(paper_evaluator, SnakeHeuristicEvaluator)
    assert _values(paper_evaluator, game) == pytest.approx(theirs)
    assert eval(repr(evaluator)).weights == mine  # an eval-able repr


def test_bad_weights_are_refused(duel_game: Game, tmp_path: Path) -> None:
    game = duel_game
    broken = tmp_path / "broken.json"
    broken.write_text('{"duel": {"total_fill": 1}, "multi": {}}')
    with pytest.raises(SettingError, match="expected the weights"):
        make_player(f"idapos:weights={broken}", np.random.default_rng(0), game)
    with pytest.raises(SettingError, match=r"missing\.json"):
        make_player("pvs:eval=snake,weights=missing.json", np.random.default_rng(0), game)
    with pytest.raises(GameError, match="eval=snake"):
        make_player("alphabeta:weights=paper", np.random.default_rng(0), game)


def test_the_shipped_tuned_weights_load() -> None:
    assert TUNED_WEIGHTS_FILE.is_file()
    tuned = snake_weights("tuned")
    assert tuned == load_weights(TUNED_WEIGHTS_FILE) != PAPER_WEIGHTS
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert "tuned_weights.json" in pyproject  # shipped as package data
