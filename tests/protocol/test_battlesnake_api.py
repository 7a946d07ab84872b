"""``ggp battlesnake serve``: official-format requests in, moves (or 400s with reasons) out.

The requests follow the official API v1 layout field for field (game with ruleset,
settings, map, timeout and source; board with hazards; snakes with latency, head, length,
shout, squad and customizations), as BattlesnakeOfficial's engine sends them.
"""

from __future__ import annotations

import copy
import itertools
import json
import threading
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from ggp.protocol.battlesnake_api import (
    BattlesnakeService,
    SnakeServerSettings,
    make_snake_server,
)

MOVES = {"up": (0, 1), "down": (0, -1), "left": (-1, 0), "right": (1, 0)}


def snake(sid: str, body: list[tuple[int, int]], health: int = 100) -> dict[str, Any]:
    cells = [{"x": x, "y": y} for x, y in body]
    return {
        "id": sid,
        "name": f"snake {sid}",
        "latency": "42",
        "health": health,
        "body": cells,
        "head": cells[0],
        "length": len(cells),
        "shout": "",
        "squad": "",
        "customizations": {"color": "#888888", "head": "default", "tail": "default"},
    }


def request(
    snakes: list[dict[str, Any]],
    you: int = 0,
    turn: int = 0,
    size: int = 11,
    food: tuple[tuple[int, int], ...] = ((5, 5),),
    game_id: str = "game-1",
) -> dict[str, Any]:
    return {
        "game": {
            "id": game_id,
            "ruleset": {
                "name": "standard",
                "version": "v1.2.3",
                "settings": {
                    "foodSpawnChance": 15,
                    "minimumFood": 1,
                    "hazardDamagePerTurn": 14,
                    "royale": {"shrinkEveryNTurns": 25},
                    "squad": {
                        "allowBodyCollisions": False,
                        "sharedElimination": False,
                        "sharedHealth": False,
                        "sharedLength": False,
                    },
                },
            },
            "map": "standard",
            "timeout": 500,
            "source": "custom",
        },
        "turn": turn,
        "board": {
            "height": size,
            "width": size,
            "food": [{"x": x, "y": y} for x, y in food],
            "hazards": [],
            "snakes": snakes,
        },
        "you": snakes[you],
    }


START_11 = [
    snake("a", [(1, 1)] * 3),
    snake("b", [(1, 9)] * 3),
    snake("c", [(9, 1)] * 3),
    snake("d", [(9, 9)] * 3),
]
START_7 = [snake("a", [(1, 1)] * 3), snake("b", [(5, 5)] * 3)]


@pytest.fixture(scope="module")
def service() -> BattlesnakeService:
    return BattlesnakeService(SnakeServerSettings(player="snake:greedy", seed=0))


def post(service: BattlesnakeService, path: str, payload: Any) -> tuple[int, dict[str, Any]]:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    reply = service.handle("POST", path, body)
    return reply.status, reply.body


def test_get_root_gives_the_look(service: BattlesnakeService) -> None:
    reply = service.handle("GET", "/", b"")
    assert reply.status == 200
    assert reply.body["apiversion"] == "1"
    assert {"author", "color", "head", "tail", "version"} <= set(reply.body)


def test_a_game_start_move_end_on_the_standard_board(service: BattlesnakeService) -> None:
    assert post(service, "/start", request(START_11, game_id="std")) == (200, {})
    status, reply = post(service, "/move", request(START_11, game_id="std"))
    assert status == 200 and reply["move"] in MOVES
    # turn 1: a moved away from its stack, toward the food at the centre
    later = [snake("a", [(2, 1), (1, 1), (1, 1)], 99), *START_11[1:]]
    status, reply = post(service, "/move", request(later, turn=1, game_id="std"))
    assert status == 200
    dx, dy = MOVES[reply["move"]]
    assert (2 + dx, 1 + dy) not in {(1, 1)}  # never back onto its own neck
    assert post(service, "/end", request(later, turn=1, game_id="std")) == (200, {})


def test_greedy_goes_for_food_and_an_eliminated_snake_may_be_missing(
    service: BattlesnakeService,
) -> None:
    start = request(START_7, size=7, food=((3, 3),), game_id="duel")
    assert post(service, "/start", start)[0] == 200
    me = snake("a", [(3, 1), (2, 1), (1, 1)], 97)
    status, reply = post(
        service, "/move", request([me], size=7, turn=3, food=((3, 3),), game_id="duel")
    )
    assert (status, reply["move"]) == (200, "up")


def test_a_board_of_another_size_and_count_gets_its_own_game(service: BattlesnakeService) -> None:
    three = [snake("a", [(1, 1)] * 3), snake("b", [(1, 5)] * 3), snake("c", [(5, 1)] * 3)]
    status, reply = post(service, "/move", request(three, size=7, food=(), game_id="three"))
    assert status == 200 and reply["move"] in MOVES


_BAD_GAMES = itertools.count()


def _bad(mutate: Any) -> dict[str, Any]:
    """A standard-board request of a fresh game, changed by ``mutate``."""
    payload = copy.deepcopy(request(START_11, game_id=f"bad-{next(_BAD_GAMES)}"))
    mutate(payload)
    return payload


@pytest.mark.parametrize(
    ("payload", "reason"),
    [
        (b"{not json", "not JSON"),
        ({"turn": 0}, "no 'game'"),
        (_bad(lambda p: p["board"].update(height=9)), "only square boards"),
        (_bad(lambda p: p["board"]["snakes"][1].update(health=0)), "health 0"),
        (_bad(lambda p: p["board"]["snakes"][1].update(body=[])), "empty body"),
        (_bad(lambda p: p["board"]["snakes"][1].update(body=[{"x": 11, "y": 0}])), "off the board"),
        (
            _bad(
                lambda p: p["board"]["snakes"][1].update(
                    body=[{"x": 1, "y": 9}, {"x": 1, "y": 8}, {"x": 1, "y": 9}]
                )
            ),
            "crosses itself",
        ),
        (_bad(lambda p: p["board"]["snakes"][2]["body"][0].update(x="3")), "expected int"),
        (_bad(lambda p: p.update(you=snake("zz", [(4, 4)]))), "'zz'"),
        (_bad(lambda p: p["game"].update(timeout=-5)), "positive int"),
        (
            _bad(lambda p: p["board"]["snakes"].extend(snake(str(i), [(5, i)]) for i in range(5))),
            "9 snakes",
        ),
    ],
)
def test_bad_requests_get_400_with_the_reason(
    service: BattlesnakeService, payload: Any, reason: str
) -> None:
    status, reply = post(service, "/move", payload)
    assert status == 400
    assert reason in reply["error"]


def test_a_snake_that_was_not_there_at_the_start_is_refused(service: BattlesnakeService) -> None:
    assert post(service, "/start", request(START_11, game_id="late"))[0] == 200
    stranger = [*START_11[:3], snake("e", [(9, 9)] * 3)]
    status, reply = post(service, "/move", request(stranger, game_id="late"))
    assert status == 400 and "was not on the board at the start" in reply["error"]


@pytest.mark.parametrize("spec", ["alphabeta:eval=snake", "idapos"])
def test_a_search_player_answers(spec: str) -> None:
    service = BattlesnakeService(SnakeServerSettings(player=spec, seed=0))
    payload = request(START_7, size=7, food=((3, 3), (0, 2), (6, 4)), game_id="ab")
    payload["game"]["timeout"] = 300
    status, reply = post(service, "/move", payload)
    assert status == 200 and reply["move"] in MOVES


@pytest.fixture
def server() -> Iterator[str]:
    settings = SnakeServerSettings(player="snake:aggressive", seed=0)
    httpd = make_snake_server(settings, "127.0.0.1", 0)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield httpd.url
    finally:
        httpd.shutdown()
        httpd.server_close()


def _http(url: str, data: bytes | None = None) -> tuple[int, dict[str, Any]]:
    req = urllib.request.Request(url, data=data, headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_over_http_a_bad_request_does_not_stop_the_server(server: str) -> None:
    assert _http(server + "/")[1]["apiversion"] == "1"
    assert _http(server + "/move", b"[1, 2")[0] == 400
    payload = json.dumps(request(START_7, size=7, food=((3, 3),), game_id="http")).encode()
    assert _http(server + "/start", payload) == (200, {})
    status, reply = _http(server + "/move", payload)
    assert status == 200 and reply["move"] in MOVES
    assert _http(server + "/nowhere", payload)[0] == 404
