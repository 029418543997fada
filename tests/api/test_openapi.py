"""`openapi.yaml` describes exactly the routes the app serves, and is valid OpenAPI 3.1.

No database is needed: `create_app` only wires the routes; it does no I/O until started.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import schemathesis
import yaml
from pydantic import BaseModel
from schemathesis.core.result import Err

from server.api.schemas import (
    BoardQueryIn,
    DeletionIn,
    GamesQueryIn,
    NewGameIn,
    NewPlayerIn,
    NewSessionIn,
    PasswordIn,
    ReplayIn,
    SettingsIn,
)
from server.app import create_app
from server.settings import Settings

DOCUMENT = Path(__file__).resolve().parents[2] / "openapi.yaml"
HTTP_METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
AUTOMATIC = {"HEAD", "OPTIONS"}


@pytest.fixture(scope="module")
def document() -> dict[str, Any]:
    loaded = yaml.safe_load(DOCUMENT.read_text(encoding="utf-8"))
    assert isinstance(loaded, dict)
    return loaded


def documented(document: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method in HTTP_METHODS:
                yield method.upper(), path, operation


def served() -> set[tuple[str, str]]:
    app = create_app(Settings(database_url="sqlite:///unused.db", rate_limit=0, migrate=False))
    routes = set()
    for route in app.router.routes():
        if route.method in AUTOMATIC:
            continue
        canonical = route.resource.canonical if route.resource is not None else None
        assert canonical is not None, route
        routes.add((route.method, canonical))
    return routes


def test_document_lists_exactly_the_served_routes(document: dict[str, Any]) -> None:
    listed = {(method, path) for method, path, _ in documented(document)}
    routes = served()
    assert listed == routes, {
        "served but not documented": sorted(routes - listed),
        "documented but not served": sorted(listed - routes),
    }


def test_document_is_valid_openapi_3_1(document: dict[str, Any]) -> None:
    assert str(document["openapi"]).startswith("3.1.")
    schema = schemathesis.openapi.from_dict(document)
    schema.validate()  # against the OpenAPI 3.1 meta-schema
    results = list(schema.get_all_operations())
    errors = [result.err() for result in results if isinstance(result, Err)]
    assert not errors, errors
    assert len(results) == len(list(documented(document)))


def walk(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from walk(value)


def test_every_reference_resolves(document: dict[str, Any]) -> None:
    for node in walk(document):
        ref = node.get("$ref")
        if not isinstance(ref, str):
            continue
        assert ref.startswith("#/"), ref
        target: Any = document
        for part in ref[2:].split("/"):
            part = part.replace("~1", "/").replace("~0", "~")
            assert isinstance(target, dict) and part in target, f"unresolved {ref}"
            target = target[part]


def test_operation_ids_are_unique_and_links_name_them(document: dict[str, Any]) -> None:
    ids = [operation["operationId"] for _, _, operation in documented(document)]
    assert len(ids) == len(set(ids))
    for node in walk(document):
        links = node.get("links")
        if isinstance(links, dict):
            for link in links.values():
                assert link["operationId"] in ids, link


def test_common_answers_are_documented(document: dict[str, Any]) -> None:
    for method, path, operation in documented(document):
        answers = set(operation["responses"])
        where = f"{method} {path}"
        if path.startswith("/api/"):
            assert "429" in answers, where
        if "{id}" in path:
            assert "404" in answers, where
        if operation.get("security"):
            assert "401" in answers, where
        if "requestBody" in operation:
            # The OAuth routes (RFC 6749) answer a bad form with 400, never 422.
            wanted = {"400", "413", "422"} if path.startswith("/api/") else {"400", "413"}
            assert wanted <= answers, where


def query_parameters(document: dict[str, Any], path: str) -> set[str]:
    operation = document["paths"][path]["get"]
    names = set()
    for parameter in operation.get("parameters", []):
        ref = parameter.get("$ref")
        if isinstance(ref, str):
            parameter = document["components"]["parameters"][ref.rsplit("/", 1)[1]]
        if parameter["in"] == "query":
            names.add(parameter["name"])
    return names


def test_query_parameters_are_those_the_server_takes(document: dict[str, Any]) -> None:
    # Any other query parameter is refused (422), so the lists must be exact.
    boards = set(BoardQueryIn.model_fields)
    games = set(GamesQueryIn.model_fields)
    assert query_parameters(document, "/api/v1/leaderboards") == boards
    assert query_parameters(document, "/api/v1/players/{id}/games") == games
    # The export has no pages: `limit` and `after` are refused.
    assert query_parameters(document, "/api/v1/players/{id}/games/export") == games - {
        "limit",
        "after",
    }
    # Checked by hand in server/api/deals.py.
    assert query_parameters(document, "/api/v1/deals/{code}/winnable") == {"take_backs"}
    assert query_parameters(document, "/api/v1/daily") == {"rule", "date"}


@pytest.mark.parametrize(
    ("schema", "model"),
    [
        ("NewPlayer", NewPlayerIn),
        ("NewSession", NewSessionIn),
        ("PasswordChange", PasswordIn),
        ("AccountDeletion", DeletionIn),
        ("SettingsPatch", SettingsIn),
        ("NewGame", NewGameIn),
        ("ReplayIn", ReplayIn),
    ],
)
def test_request_bodies_name_the_fields_the_server_takes(
    document: dict[str, Any], schema: str, model: type[BaseModel]
) -> None:
    properties = document["components"]["schemas"][schema]["properties"]
    assert set(properties) == set(model.model_fields)


def operation(document: dict[str, Any], operation_id: str) -> dict[str, Any]:
    found = [op for _, _, op in documented(document) if op["operationId"] == operation_id]
    assert len(found) == 1, operation_id
    return found[0]


# The reads that take an optional token (`viewer` in server/api/access.py): a bad one is 401.
# The reads of a game also answer 403 for a game of today's daily deal (`check_visible`).
GAME_READS = ["getGame", "getMoveLog", "getTargets", "getLegalMoves", "getReplay"]
OPTIONAL_TOKEN = [*GAME_READS, "listPlayerGames", "exportPlayerGames"]


@pytest.mark.parametrize("operation_id", OPTIONAL_TOKEN)
def test_reads_take_an_optional_token(document: dict[str, Any], operation_id: str) -> None:
    found = operation(document, operation_id)
    assert found["security"] == [{}, {"bearer": []}, {"oauth2": ["read"]}]
    assert "401" in found["responses"]
    if operation_id in GAME_READS:
        assert found["responses"]["403"] == {"$ref": "#/components/responses/DailyHidden"}


@pytest.mark.parametrize("operation_id", ["createGame", "getDaily"])
def test_the_solver_may_be_unavailable(document: dict[str, Any], operation_id: str) -> None:
    answer = operation(document, operation_id)["responses"]["503"]
    assert answer == {"$ref": "#/components/responses/SolverUnavailable"}
