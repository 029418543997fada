"""One parser per kind of query parameter (server/api/params.py): every boolean query parameter
of `openapi.yaml` takes exactly `true` and `false`, and every date-time one an RFC 3339
date-time, refusing a bare date with `422` as the document's "RFC 3339" says."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest
import yaml
from aiohttp.test_utils import TestClient

from server.api.params import parse_flag, parse_instant
from tests.api.helpers import problem
from tests.conftest import Api

DOCUMENT = Path(__file__).resolve().parents[2] / "openapi.yaml"


def query_parameters_of_kind(kind: str) -> list[tuple[str, str]]:
    """(path, name) of every documented GET query parameter of a kind: `boolean` (its schema's
    type) or `date-time` (its schema's format)."""
    document = yaml.safe_load(DOCUMENT.read_text(encoding="utf-8"))
    found = []
    for path, item in document["paths"].items():
        operation = item.get("get")
        if operation is None or not path.startswith("/api/"):
            continue
        for parameter in operation.get("parameters", []):
            ref = parameter.get("$ref")
            if isinstance(ref, str):
                parameter = document["components"]["parameters"][ref.rsplit("/", 1)[1]]
            schema = parameter.get("schema", {})
            if parameter["in"] != "query":
                continue
            if schema.get("type") == kind or schema.get("format") == kind:
                found.append((path, parameter["name"]))
    return found


BOOLEANS = query_parameters_of_kind("boolean")
INSTANTS = query_parameters_of_kind("date-time")


def test_the_document_has_parameters_of_both_kinds() -> None:
    assert ("/api/v1/leaderboards", "assisted") in BOOLEANS
    assert ("/api/v1/deals/{code}/winnable", "take_backs") in BOOLEANS
    assert ("/api/v1/players/{id}/games", "since") in INSTANTS
    assert ("/api/v1/players/{id}/games/export", "until") in INSTANTS


# ---------------------------------------------------------------- the parsers themselves


def test_a_flag_is_true_or_false_exactly() -> None:
    assert parse_flag("true") is True
    assert parse_flag("false") is False
    for text in ("True", "FALSE", "1", "0", "yes", "no", "on", "off", "t", "f", "", " true"):
        with pytest.raises(ValueError, match="true or false"):
            parse_flag(text)


@pytest.mark.parametrize(
    ("text", "moment"),
    [
        ("2026-01-02T03:04:05Z", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2026-01-02t03:04:05z", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2026-01-02T03:04:05", datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)),
        ("2026-01-02T03:04:05.5Z", datetime(2026, 1, 2, 3, 4, 5, 500_000, tzinfo=UTC)),
        (
            "2026-01-02T03:04:05.123456789+02:00",
            datetime(2026, 1, 2, 3, 4, 5, 123_456, tzinfo=timezone(timedelta(hours=2))),
        ),
        (
            "2026-01-02T03:04:05-05:30",
            datetime(2026, 1, 2, 3, 4, 5, tzinfo=timezone(-timedelta(hours=5, minutes=30))),
        ),
        ("2016-12-31T23:59:60Z", datetime(2016, 12, 31, 23, 59, 59, 999_999, tzinfo=UTC)),
    ],
)
def test_an_rfc_3339_date_time(text: str, moment: datetime) -> None:
    found = parse_instant(text)
    assert found == moment
    assert found.tzinfo is not None


@pytest.mark.parametrize(
    "text",
    [
        "2026-01-02",  # a bare date
        "2026-01-02T03:04",  # no seconds
        "2026-01-02 03:04:05Z",  # a space for T (ISO 8601, not RFC 3339's date-time)
        "20260102T030405Z",  # the basic format
        "2026-W01-5T03:04:05Z",  # a week date
        "2026-002T03:04:05Z",  # an ordinal date
        "2026-02-30T03:04:05Z",  # no such day
        "2026-01-02T24:00:00Z",
        "2026-01-02T03:04:05+24:00",
        "2026-01-02T03:04:05+0200",
        "2026-01-02T03:04:05.Z",
        "0000-01-02T03:04:05Z",
        "2026-01-02T03:04:05Z ",
        "٢٠٢٦-01-02T03:04:05Z",  # digits that are not ASCII
        "",
    ],
)
def test_anything_else_is_refused(text: str) -> None:
    with pytest.raises(ValueError, match="RFC 3339"):
        parse_instant(text)


def test_a_plus_sent_raw_is_explained() -> None:
    with pytest.raises(ValueError, match="%2B"):
        parse_instant("2026-01-02T03:04:05 02:00")  # what a raw + becomes in a query string


# ---------------------------------------------------------------- every parameter, over HTTP


async def path_of(api: Api, template: str) -> str:
    player_id, _ = await api.player()
    return template.replace("{id}", player_id).replace("{code}", "RU1-C-AAAAAFN")


@pytest.mark.parametrize(("template", "name"), BOOLEANS)
async def test_every_boolean_parameter_takes_true_and_false_only(
    client: TestClient[Any, Any], api: Api, template: str, name: str
) -> None:
    path = await path_of(api, template)
    for text in ("1", "0", "True", "yes", "", "on"):
        found = await problem(await client.get(path, params={name: text}), 422)
        assert name in str(found), found
    for text in ("true", "false"):
        response = await client.get(path, params={name: text})
        assert response.status == 200, (path, text, await response.text())


@pytest.mark.parametrize(("template", "name"), INSTANTS)
async def test_every_timestamp_parameter_is_rfc_3339(
    client: TestClient[Any, Any], api: Api, template: str, name: str
) -> None:
    path = await path_of(api, template)
    for text in ("2026-01-02", "2026-01-02T03:04", "2026-01-02 03:04:05Z", "yesterday"):
        found = await problem(await client.get(path, params={name: text}), 422)
        assert name in str(found), found
    for text in ("2026-01-02T03:04:05Z", "2026-01-02T03:04:05.250+02:00", "2026-01-02T03:04:05"):
        response = await client.get(path, params={name: text})
        assert response.status == 200, (path, text, await response.text())


async def test_since_counts_from_its_moment_with_its_offset(
    client: TestClient[Any, Any], api: Api
) -> None:
    """A game made now is listed since a minute ago, whatever the offset that moment is written
    with, and not since a minute from now."""
    player_id, auth = await api.player()
    await api.game(auth, code="RU1-C-AAAAAFN")
    path = f"/api/v1/players/{player_id}/games"
    now = datetime.now(UTC)

    async def listed(moment: datetime) -> int:
        text = moment.isoformat()
        response = await client.get(path, params={"since": text})
        assert response.status == 200, (text, await response.text())
        return len((await response.json())["games"])

    before, after = now - timedelta(minutes=1), now + timedelta(minutes=1)
    east = timezone(timedelta(hours=5, minutes=45))
    assert await listed(before) == 1
    assert await listed(before.astimezone(east)) == 1
    assert await listed(after) == 0
    assert await listed(after.astimezone(east)) == 0
