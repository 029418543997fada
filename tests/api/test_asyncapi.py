"""`asyncapi.yaml` describes the WebSocket `/api/v1/live` as the server speaks it (SPEC 2.6,
2.6.1): a live session — play, watch from a second socket, missed events, a resync, a race's
messages from the lobby to the results, refusals and protocol errors — is recorded, and every
message sent and received is checked against the document's schema for it. A message the
server sends that no message of the document describes, or that two describe, fails; a message
the server refuses as malformed must be one the document does not describe either. Every
message of the document is seen in the session, every answer is among the replies its
operation lists, and the close codes the server uses are the document's.

The document and the server's own models of the messages (`server.api.schemas`: the client's
union, told apart by `type`, and the server's messages `render.py` fills in) are one to one:
each message of the document is one model, with the same fields, the same required ones and
the same types and limits; in the session, every message is also read by its model, a message
the document does not describe is refused by the client's union, and a server message is
accepted by its own model only."""

from __future__ import annotations

import json
import typing
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yaml
from aiohttp import WSMsgType
from aiohttp.test_utils import TestClient
from jsonschema import Draft7Validator, FormatChecker
from pydantic import BaseModel, ValidationError
from referencing import Registry
from referencing.jsonschema import DRAFT7

from server.api.schemas import CLIENT_MESSAGES, ClientMessage, ServerMessage
from server.app import create_app
from server.files import asyncapi_path, openapi_path
from server.keys import NOTICES
from server.settings import Settings
from tests.api.boards_helpers import NOW, Clock
from tests.api.helpers import Player, new_player
from tests.conftest import Api

PATH = "/api/v1/live"
CODE = "RU1-C-AAAAAFN"  # AC, the last card of column 6, goes to its foundation first.
TIMEOUT = 5.0
SETTLE_S = 10.0  # the race tick marks a race running within 2 s of its start
COUNTDOWN_MS = 5_000
BASE = "https://russian-solitaire.invalid/"  # where the two documents sit side by side
JSON_SCHEMA = "application/schema+json;version=draft-07"
CLIENT_MODELS: tuple[type[BaseModel], ...] = typing.get_args(typing.get_args(ClientMessage)[0])
SERVER_MODELS: tuple[type[BaseModel], ...] = typing.get_args(ServerMessage)
LIMITS = ("enum", "minimum", "maximum", "minLength", "maxLength", "pattern")
"""What a schema says of a value that the document and a model must say alike, or both not."""
STATED = ("type", "format")
"""What a model must say alike when the document says it."""
Facts = dict[str, set[Any]]
Lookup = Callable[[str], tuple[dict[str, Any], Any]]


def facts(schema: dict[str, Any], lookup: Lookup) -> Facts:
    """What a schema says of its values (types, format, constants, limits), through `$ref`,
    `allOf`, `anyOf` and `oneOf`, not into an object's properties. `lookup(ref)` gives the
    schema a reference names, and the lookup for the references in it."""
    found: Facts = {}

    def add(key: str, *values: Any) -> None:
        found.setdefault(key, set()).update(values)

    def walk(part: dict[str, Any], lookup: Lookup) -> None:
        if "$ref" in part:
            walk(*lookup(part["$ref"]))
        kind = part.get("type")
        if kind is not None:
            add("type", *([kind] if isinstance(kind, str) else kind))
        if "const" in part:
            add("enum", json.dumps(part["const"]))
        if "enum" in part:
            add("enum", *(json.dumps(value) for value in part["enum"]))
        for key in ("format", *LIMITS[1:]):
            if key in part:
                add(key, part[key])
        for key in ("allOf", "anyOf", "oneOf"):
            for branch in part.get(key, []):
                walk(branch, lookup)

    walk(schema, lookup)
    return found


def model_lookup(schema: dict[str, Any]) -> Lookup:
    """The lookup of a pydantic model's JSON schema (its references are to its own `$defs`)."""

    def lookup(ref: str) -> tuple[dict[str, Any], Lookup]:
        return schema["$defs"][ref.removeprefix("#/$defs/")], lookup

    return lookup


def document_lookup(resolver: Any) -> Lookup:
    def lookup(ref: str) -> tuple[dict[str, Any], Lookup]:
        resolved = resolver.lookup(ref)
        return resolved.contents, document_lookup(resolved.resolver)

    return lookup


def type_of(model: type[BaseModel]) -> str:
    """The `type` a message model carries (its `Literal`)."""
    (kind,) = typing.get_args(model.model_fields["type"].annotation)
    assert isinstance(kind, str), model
    return kind


def load(path: Path) -> dict[str, Any]:
    loaded = yaml.safe_load(path.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict), path
    return loaded


def ref_name(ref: dict[str, str]) -> str:
    """The key of a channel message a `$ref` (`#/channels/live/messages/<key>`) names."""
    prefix = "#/channels/live/messages/"
    assert ref["$ref"].startswith(prefix), ref
    return ref["$ref"].removeprefix(prefix)


@dataclass
class Document:
    """The AsyncAPI document: a validator per message, and which way each message goes."""

    spec: dict[str, Any]
    validators: dict[str, Draft7Validator]
    client: set[str]  # messages of `receive` operations: client to server
    server: set[str]  # replies and messages of `send` operations: server to client
    replies: dict[str, set[str]]  # a client message -> the messages that may answer it
    pushed: set[str]  # server messages that answer nothing (no `id`)
    names: dict[str, str]  # a message -> its name (the `type` it carries)
    schemas: dict[str, tuple[dict[str, Any], Lookup]]  # a message -> its payload schema
    models: dict[str, type[BaseModel]]  # a message -> the server's model of it
    sent: set[str] = field(default_factory=set)
    received: set[str] = field(default_factory=set)

    @classmethod
    def load(cls) -> Document:
        spec = load(asyncapi_path())
        registry: Registry[Any] = Registry().with_resources(
            [
                (BASE + "asyncapi.yaml", DRAFT7.create_resource(spec)),
                (BASE + "openapi.yaml", DRAFT7.create_resource(load(openapi_path()))),
            ]
        )
        channel = spec["channels"]["live"]
        validators = {}
        names = {}
        schemas = {}
        lookup = document_lookup(registry.resolver(base_uri=BASE + "asyncapi.yaml"))
        for key, ref in channel["messages"].items():
            component = ref["$ref"].removeprefix("#/components/messages/")
            names[key] = spec["components"]["messages"][component]["name"]
            payload = spec["components"]["messages"][component]["payload"]
            assert payload["schemaFormat"] == JSON_SCHEMA, key
            pointer = f"{BASE}asyncapi.yaml#/components/messages/{component}/payload/schema"
            validators[key] = Draft7Validator(
                {"$ref": pointer}, registry=registry, format_checker=FormatChecker()
            )
            schemas[key] = lookup(pointer)
        client: set[str] = set()
        server: set[str] = set()
        replies: dict[str, set[str]] = {}
        sent_by_server: set[str] = set()
        for name, operation in spec["operations"].items():
            assert operation["channel"] == {"$ref": "#/channels/live"}, name
            messages = {ref_name(ref) for ref in operation["messages"]}
            if operation["action"] == "receive":
                client |= messages
                answers = {ref_name(ref) for ref in operation["reply"]["messages"]}
                server |= answers
                for message in messages:
                    replies[message] = answers
            else:
                assert operation["action"] == "send", name
                assert "reply" not in operation, name
                sent_by_server |= messages
        server |= sent_by_server
        answers_anything = set().union(*replies.values())
        assert not client & server
        assert client | server == set(validators), "a channel message no operation uses"
        pushed = sent_by_server - answers_anything
        models = {}
        for key in validators:
            side = CLIENT_MODELS if key in client else SERVER_MODELS
            properties = set(schemas[key][0]["properties"])
            found = [
                model
                for model in side
                if type_of(model) == names[key] and set(model.model_fields) == properties
            ]
            assert len(found) == 1, (key, found, "no model, or several, of this message")
            models[key] = found[0]
        return cls(spec, validators, client, server, replies, pushed, names, schemas, models)

    def matches(self, keys: set[str], message: Any) -> list[str]:
        return sorted(key for key in keys if self.validators[key].is_valid(message))

    def explain(self, keys: set[str], message: Any) -> str:
        """Why each message of `keys` named as `message`'s `type` refuses it."""
        kind = message.get("type") if isinstance(message, dict) else None
        return "\n".join(
            f"{key}: {error.json_path}: {error.message}"
            for key in sorted(keys)
            if self.names[key] == kind
            for error in self.validators[key].iter_errors(message)
        )

    def client_message(self, message: Any) -> str:
        """The key of a client message the document describes; the server's union reads it
        as that message's model."""
        found = self.matches(self.client, message)
        assert len(found) == 1, (found, message, self.explain(self.client, message))
        read = CLIENT_MESSAGES.validate_python(message)
        assert type(read) is self.models[found[0]], (found, read)
        self.sent.add(found[0])
        return found[0]

    def server_message(self, message: Any) -> str:
        """The key of a server message the document describes; its model, and no other
        model of a server message, accepts it."""
        found = self.matches(self.server, message)
        assert len(found) == 1, (found, message, self.explain(self.server, message))
        accepted = [model for model in SERVER_MODELS if accepts(model, message)]
        assert accepted == [self.models[found[0]]], (found, accepted, message)
        self.received.add(found[0])
        return found[0]


def accepts(model: type[BaseModel], message: Any) -> bool:
    try:
        model.model_validate(message)
    except ValidationError:
        return False
    return True


def echoed(message: Any) -> Any:
    """The `id` an answer to `message` repeats: a string or an integer, else null."""
    mid = message.get("id") if isinstance(message, dict) else None
    return mid if isinstance(mid, (str, int)) and not isinstance(mid, bool) else None


class Session:
    """One recorded WebSocket: every message both ways is checked against the document."""

    def __init__(self, ws: aiohttp.ClientWebSocketResponse, document: Document) -> None:
        self.ws = ws
        self.document = document
        self.pushed: list[dict[str, Any]] = []  # pushed messages received while awaiting answers

    async def send(self, message: Any, described: bool = True) -> str | None:
        """Sends `message` (raw text if a str); returns the document's key for it. A message
        that is not `described` must match no client message of the document."""
        if isinstance(message, str):
            text = message
            try:
                parsed = json.loads(text)
            except ValueError:
                parsed = None
            assert not described
        else:
            text, parsed = json.dumps(message), message
        key = None
        if described:
            key = self.document.client_message(parsed)
        else:
            assert self.document.matches(self.document.client, parsed) == [], parsed
            with pytest.raises(ValidationError):  # the server's models refuse it too
                CLIENT_MESSAGES.validate_python(parsed)
        await self.ws.send_str(text)
        return key

    async def receive(self, timeout: float = TIMEOUT) -> tuple[str, dict[str, Any]]:
        msg = await self.ws.receive(timeout)
        assert msg.type == WSMsgType.TEXT, (msg.type, msg.data, msg.extra)
        body = json.loads(msg.data)
        return self.document.server_message(body), body

    async def request(
        self, message: Any, described: bool = True, status: int | None = None
    ) -> dict[str, Any]:
        """Sends `message` and returns its answer, which must repeat its `id` and be one of the
        replies of its operation; pushed messages met meanwhile are kept in `pushed`. With
        `status`, the answer must be an `error` with a problem of that status."""
        key = await self.send(message, described)
        while True:
            answer_key, answer = await self.receive()
            if answer_key not in self.document.pushed:
                break
            self.pushed.append(answer)
        assert answer["id"] == echoed(message), (message, answer)
        if key is not None:
            assert answer_key in self.document.replies[key], (key, answer_key, answer)
        else:
            assert answer_key == "error", answer
        if status is not None:
            assert answer["type"] == "error", answer
            assert answer["problem"]["status"] == status, answer
        else:
            assert answer["type"] != "error", answer
        return answer

    async def until(
        self, wanted: Callable[[dict[str, Any]], bool], timeout: float = TIMEOUT
    ) -> dict[str, Any]:
        """Reads (pushed) messages until one is `wanted`; returns it."""
        for body in self.pushed:
            if wanted(body):
                self.pushed.remove(body)
                return body
        while True:
            _, body = await self.receive(timeout)
            if wanted(body):
                return body

    async def closed(self) -> int:
        """Reads until the server closes the connection; returns the close code."""
        while True:
            msg = await self.ws.receive(TIMEOUT)
            if msg.type == WSMsgType.CLOSE:
                return int(msg.data)
            assert msg.type == WSMsgType.TEXT, (msg.type, msg.data)
            self.document.server_message(json.loads(msg.data))


Connect = Callable[..., Awaitable[Session]]


@pytest.fixture
def document() -> Document:
    return Document.load()


def opener(client: TestClient[Any, Any], document: Document, opened: list[Session]) -> Connect:
    async def connect(player: Player | None = None) -> Session:
        headers = {"Authorization": f"Bearer {player.token}"} if player else {}
        protocol = document.spec["channels"]["live"]["x-subprotocol"]
        ws = await client.ws_connect(PATH, headers=headers, protocols=(protocol,))
        assert ws.protocol == protocol
        session = Session(ws, document)
        opened.append(session)
        return session

    return connect


@pytest.fixture
async def connect(timed: TestClient[Any, Any], document: Document) -> AsyncIterator[Connect]:
    opened: list[Session] = []
    yield opener(timed, document, opened)
    for session in opened:
        await session.ws.close()


def move(card: str, to: str) -> dict[str, str]:
    return {"action": "move", "card": card, "to": to}


# ---------------------------------------------------------------- the document itself


def test_the_examples_of_the_document_are_its_messages(document: Document) -> None:
    checked = 0
    for key, ref in document.spec["channels"]["live"]["messages"].items():
        component = ref["$ref"].removeprefix("#/components/messages/")
        for example in document.spec["components"]["messages"][component].get("examples", []):
            if key in document.client:
                assert document.client_message(example["payload"]) == key
            else:
                assert document.server_message(example["payload"]) == key
            checked += 1
    assert checked >= 4


def test_each_message_of_the_document_is_a_model_of_the_server(document: Document) -> None:
    """One to one: the same fields, the same required ones (a server message always carries
    every field, and no other), the same types, formats, constants and limits."""
    assert sorted(document.models[key].__name__ for key in document.client) == sorted(
        model.__name__ for model in CLIENT_MODELS
    )
    assert sorted(document.models[key].__name__ for key in document.server) == sorted(
        model.__name__ for model in SERVER_MODELS
    )
    for key, model in document.models.items():
        schema, lookup = document.schemas[key]
        mine = model.model_json_schema()
        assert schema["properties"].keys() == mine["properties"].keys(), key
        if key in document.client:
            assert set(schema["required"]) == set(mine.get("required", ())), key
            assert schema.get("additionalProperties", True) is True, key  # others are ignored
        else:
            assert set(schema["required"]) == set(model.model_fields), key
            assert schema["additionalProperties"] is False, key
            assert mine["additionalProperties"] is False, key
        for name, part in schema["properties"].items():
            documented = facts(part, lookup)
            modelled = facts(mine["properties"][name], model_lookup(mine))
            where = (key, name, documented, modelled)
            for limit in LIMITS:
                assert documented.get(limit) == modelled.get(limit), (limit, *where)
            for stated in STATED:
                if stated in documented:
                    assert documented[stated] == modelled.get(stated), (stated, *where)
        assert facts(schema["properties"]["type"], lookup)["enum"] == {json.dumps(type_of(model))}


def test_every_message_refers_to_schemas_that_exist(document: Document) -> None:
    """A `$ref` into openapi.yaml that names nothing fails here, not in a client's hands."""
    for key, validator in document.validators.items():
        # Validating anything follows every reference the schema reaches.
        for _ in validator.iter_errors({"type": key}):
            pass


# ---------------------------------------------------------------- a whole recorded session


async def test_a_live_session_speaks_only_the_documented_messages(
    timed: TestClient[Any, Any], clock: Clock, document: Document, connect: Connect
) -> None:
    api = Api(timed)
    ana = await new_player(timed, "ana")
    bo = await new_player(timed, "bo")
    game_id = (await api.game(ana.auth, code=CODE))["id"]

    # A player authenticated by a message, and a watcher with no token.
    player = await connect()
    await player.request({"type": "ping", "id": "p"})
    authenticated = await player.request({"type": "auth", "id": 1, "token": ana.token})
    assert authenticated["player"] == {"id": ana.id, "name": "ana"}
    watcher = await connect()
    watching = await watcher.request({"type": "watch", "id": "w", "game_id": game_id})
    assert (watching["type"], watching["version"]) == ("watching", 0)

    # Play: a move with an idempotency key (sent twice: the same answer), an undo, a move.
    first = {
        "type": "act",
        "id": "m1",
        "game_id": game_id,
        "action": move("AC", "f"),
        "idempotency_key": "first-move",
    }
    result = await player.request(first)
    assert (result["type"], result["version"], result["move"]) == ("result", 1, "AC-f")
    assert result["replayed"] is False
    again = await player.request({**first, "id": "m1-again"})
    assert {**again, "id": "m1", "replayed": False} == result
    assert again["replayed"] is True
    await player.request({"type": "act", "id": 2, "game_id": game_id, "action": {"action": "undo"}})
    await player.request({"type": "act", "id": 3, "game_id": game_id, "action": move("ac", "F")})
    for version, text in ((1, "AC-f"), (2, "undo"), (3, "AC-f")):
        event = await watcher.until(lambda m: m["type"] == "event")
        assert (event["version"], event["move"], event["game"]["version"]) == (
            version,
            text,
            version,
        )

    # Reconnecting with `since`: the missed events, then `watching`; too far ahead: `resync`.
    late = await connect()
    caught_up = await late.request({"type": "watch", "id": "s", "game_id": game_id, "since": 1})
    assert (caught_up["type"], caught_up["version"]) == ("watching", 3)
    missed = [(m["version"], m["move"], m["missed"]) for m in late.pushed]
    assert missed == [(2, "undo", True), (3, "AC-f", True)]
    ahead = await connect()
    resync = await ahead.request({"type": "watch", "id": "r", "game_id": game_id, "since": 99})
    assert (resync["type"], resync["version"]) == ("resync", 3)

    # Refusals of well-formed messages: problems, and the connection goes on.
    nobody = await connect()
    action = {"type": "act", "id": "x", "game_id": game_id, "action": move("3D", "t3")}
    await nobody.request(action, status=401)  # no player yet
    await nobody.request({"type": "auth", "id": "t", "token": "not-a-token"}, status=401)
    other = await connect(bo)
    await other.request(action, status=403)  # someone else's game
    illegal = await player.request(
        {"type": "act", "id": "i", "game_id": game_id, "action": move("AC", "t1")}, status=422
    )
    assert illegal["problem"]["type"].endswith("/problems/illegal-move"), illegal
    assert isinstance(illegal["problem"]["rule"], str), illegal
    unknown = "00000000-0000-4000-8000-000000000000"
    await nobody.request({"type": "watch", "id": "u", "game_id": unknown}, status=404)
    await nobody.request({"type": "watch_race", "id": "u", "race_id": unknown}, status=404)

    # Protocol errors: messages the document does not describe either.
    await nobody.request("{not json", described=False, status=400)
    await nobody.request("[1, 2]", described=False, status=422)
    await nobody.request('"ping"', described=False, status=422)
    await nobody.request({"type": "dance", "id": "d"}, described=False, status=422)
    await nobody.request({"id": 7}, described=False, status=422)
    await nobody.request({"type": "auth", "id": 8, "token": ""}, described=False, status=422)
    for since in (-1, "3", True, 1.5):
        bad_since = {"type": "watch", "id": 9, "game_id": game_id, "since": since}
        await nobody.request(bad_since, described=False, status=422)
    for bad_action in ({**move("AC", "f"), "extra": 1}, {"card": "AC"}, "AC-f", None):
        bad = {"type": "act", "id": 10, "game_id": game_id, "action": bad_action}
        await player.request(bad, described=False, status=422)
    bad_key = {"type": "act", "id": 11, "game_id": game_id, "action": move("3D", "t3")}
    await player.request({**bad_key, "idempotency_key": ""}, described=False, status=422)
    for bad_id in ("nope", 42, None):
        await nobody.request({"type": "watch", "id": 12, "game_id": bad_id}, False, 404)
        await nobody.request({"type": "unwatch_race", "id": 13, "race_id": bad_id}, False, 404)
    await nobody.request({"type": "ping", "id": 14}, status=None)

    # A hint, then the abandonment, over the socket: each reaches the watcher as an event with
    # no move (the hint marks the game assisted).
    hinted = await player.request({"type": "hint", "id": "h", "game_id": game_id})
    assert hinted["hint"]["status"] in ("winnable", "unwinnable", "unknown"), hinted
    assisted = await watcher.until(lambda m: m["type"] == "event")
    assert (assisted["version"], assisted["move"], assisted["game"]["assisted"]) == (4, None, True)
    quit_ = await player.request({"type": "abandon", "id": "q", "game_id": game_id})
    assert (quit_["type"], quit_["version"]) == ("abandoned", 5), quit_
    assert quit_["game"]["status"] == "abandoned", quit_
    abandoned = await watcher.until(lambda m: m["type"] == "event")
    assert (abandoned["version"], abandoned["move"]) == (5, None)
    assert abandoned["game"]["status"] == "abandoned"
    unwatched = await watcher.request({"type": "unwatch", "id": "uw", "game_id": game_id})
    assert unwatched["game_id"] == game_id

    # A race, watched by a spectator from the lobby to the results.
    response = await timed.post(
        "/api/v1/races", json={"seats": 2, "winnable": False}, headers=ana.auth
    )
    assert response.status == 201, await response.text()
    race_id = (await response.json())["id"]
    spectator = await connect()
    lobby = await spectator.request({"type": "watch_race", "id": "race", "race_id": race_id})
    assert lobby["race"]["status"] == "open", lobby
    assert isinstance(lobby["version"], int), lobby
    response = await timed.post(f"/api/v1/races/{race_id}/join", headers=bo.auth)
    assert response.status == 200, await response.text()
    starting = await spectator.until(
        lambda m: m["type"] == "race" and m["race"]["status"] == "starting"
    )
    games = starting["race"]["games"]
    # Too early for the racer; a racer's game is hidden from the spectator.
    early = {"type": "act", "id": "e", "game_id": games[ana.id], "action": move("AC", "f")}
    refused = await player.request(early, status=409)
    assert refused["problem"]["rule"] == "race_not_started", refused
    await spectator.request({"type": "watch", "id": "h", "game_id": games[bo.id]}, status=403)
    clock.now = NOW + COUNTDOWN_MS + 1  # the countdown ends: the server pushes `running`
    await spectator.until(
        lambda m: m["type"] == "race" and m["race"]["status"] == "running", SETTLE_S
    )
    for racer in (ana, bo):
        path = f"/api/v1/games/{games[racer.id]}/abandon"
        response = await timed.post(path, headers=racer.auth)
        assert response.status == 200, await response.text()
    finished = await spectator.until(
        lambda m: m["type"] == "race" and m["race"]["status"] == "finished"
    )
    assert finished["race"]["code"] is not None, finished
    # Neither racer moved after the start: the race rated nobody (SPEC 2.6.1).
    assert not any("rating" in s for s in finished["race"]["standings"]), finished
    left = await spectator.request({"type": "unwatch_race", "id": "bye", "race_id": race_id})
    assert left["race_id"] == race_id

    # A player's own events (SPEC 2.6.2): ana follows; the others and the server cause them.
    follower = await connect(ana)
    await follower.request({"type": "follow_me", "id": "me", "since": 0})
    kinds = [m["kind"] for m in follower.pushed]  # the race's, missed: sent before following_me
    assert kinds == ["race_joined", "race_starting", "race_finished"], kinds
    body = {"seats": 3, "winnable": False, "time_limit_s": 60}
    response = await timed.post("/api/v1/races", json=body, headers=ana.auth)
    assert response.status == 201, await response.text()
    second = (await response.json())["id"]
    for action, who in (("join", bo), ("leave", bo), ("join", bo), ("start", ana)):
        response = await timed.post(f"/api/v1/races/{second}/{action}", headers=who.auth)
        assert response.status == 200, await response.text()
    clock.now += COUNTDOWN_MS + 61_000  # past the deadline: the server times the games out
    timed_out = await follower.until(lambda m: m.get("kind") == "game_ended", SETTLE_S)
    assert timed_out["reason"] == "timed_out", timed_out
    await follower.until(lambda m: m.get("kind") == "race_finished", SETTLE_S)
    response = await timed.post("/api/v1/games", json={"daily": True}, headers=ana.auth)
    assert response.status == 201, await response.text()
    clock.now += 24 * 3600 * 1000
    await timed.app[NOTICES].reveal_daily()
    await follower.until(lambda m: m.get("kind") == "daily_revealed")
    password = {"password": "correct horse battery"}
    response = await timed.put("/api/v1/me/password", json=password, headers=ana.auth)
    assert response.status == 204, await response.text()
    response = await timed.post("/api/v1/sessions", json={"name": "ana", **password})
    assert response.status == 201, await response.text()
    other = {"Authorization": f"Bearer {(await response.json())['token']}"}
    response = await timed.delete("/api/v1/me/sessions/current", headers=other)
    assert response.status == 204, await response.text()
    await follower.until(lambda m: m.get("kind") == "session_revoked")

    # Every message of the document was sent or received, each the way the document says.
    assert document.sent == document.client
    assert document.received == document.server


# ---------------------------------------------------------------- the connection


@pytest.fixture
async def flood_client(
    aiohttp_client: Callable[..., Awaitable[TestClient[Any, Any]]], database_url: str
) -> TestClient[Any, Any]:
    """A client of an app that allows 5 messages a second."""
    settings = Settings(database_url=database_url, rate_limit=5, migrate=False)
    return await aiohttp_client(create_app(settings))


async def test_the_close_codes_the_server_uses_are_the_documents(
    flood_client: TestClient[Any, Any], document: Document
) -> None:
    documented = document.spec["channels"]["live"]["x-close-codes"]
    assert all(isinstance(code, str) and code.isdigit() for code in documented)
    opened: list[Session] = []
    connect = opener(flood_client, document, opened)
    try:
        binary = await connect()
        await binary.ws.send_bytes(b'{"type": "ping"}')
        too_big = await connect()
        await too_big.ws.send_str(json.dumps({"type": "ping", "pad": "x" * 16 * 1024}))
        flood = await connect()
        for n in range(40):
            await flood.send({"type": "ping", "id": n})
        codes = {"binary": await binary.closed(), "too big": await too_big.closed()}
        codes["flood"] = await flood.closed()
        assert codes == {"binary": 1003, "too big": 1009, "flood": 1008}
        for code in codes.values():
            assert str(code) in documented, code
    finally:
        for session in opened:
            await session.ws.close()


async def test_the_server_selects_the_documents_subprotocol(
    client: TestClient[Any, Any], document: Document
) -> None:
    protocol = document.spec["channels"]["live"]["x-subprotocol"]
    headers = document.spec["channels"]["live"]["bindings"]["ws"]["headers"]["properties"]
    assert "Sec-WebSocket-Protocol" in headers
    ws = await client.ws_connect(PATH, protocols=("chat.v9", protocol))
    try:
        assert ws.protocol == protocol
    finally:
        await ws.close()


async def test_the_document_is_served_beside_openapi_yaml(client: TestClient[Any, Any]) -> None:
    """/asyncapi.yaml is the file itself; its references to `openapi.yaml` resolve against
    its own address to /openapi.yaml."""
    response = await client.get("/asyncapi.yaml")
    assert response.status == 200, await response.text()
    assert response.content_type == "application/yaml"
    assert await response.read() == asyncapi_path().read_bytes()
    response = await client.get("/openapi.yaml")
    assert response.status == 200
