"""One parser per kind of query parameter, the same for every parameter of that kind (issue 20):
booleans and RFC 3339 timestamps. `openapi.yaml` says the same rules on each parameter.

- **Booleans** (`assisted`, `take_backs`): exactly `true` or `false`, in lower case. Nothing else
  (not `1`/`0`, `yes`/`no`, `True`, an empty value) is taken: a client that sends something else
  gets `422` rather than a guess. An absent parameter takes its documented default.
- **Timestamps** (`since`, `until`): an RFC 3339 `date-time` (section 5.6): `YYYY-MM-DD`, `T`
  (or `t`), `hh:mm:ss`, an optional fraction of a second (any number of digits; beyond
  microseconds it is cut, never rounded up), and an offset `Z`, `z` or `±hh:mm`. Where the
  spec is silent: the offset may be left out, which means UTC (as `openapi.yaml` has said since
  these parameters were added); a leap second (`:60`) is read as the last microsecond of its
  minute, since Python's datetime has no 61st second. A bare date, a missing second, a week or
  ordinal date, a space for `T` (the ISO 8601 forms `datetime.fromisoformat` also takes) are
  `422`. A `+` of an offset must be sent percent-encoded (`%2B`): in a query string a raw `+`
  means a space, and the refusal says so. The instant must lie within years 1 to 9999 in UTC
  too (issue 21): `0001-01-01T00:30:00+01:00` is in year 0 there and `9999-12-31T23:30:00-01:00`
  in year 10000, which no UTC timestamp the server writes can name (and whose conversion raised
  `OverflowError`): both `422`. Year 0 and month 13 are no dates at all: `422`.
The results are always aware datetimes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta, timezone
from typing import Annotated, Final

from pydantic import BeforeValidator, WithJsonSchema

from server.api.problems import invalid

FLAG_SPELLINGS: Final = {"true": True, "false": False}
FLAG_RULE: Final = "expected true or false (exactly, in lower case)"

_RFC3339: Final = re.compile(
    r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?"
    r"(?:([Zz])|([+-])(\d{2}):(\d{2}))?",
    re.ASCII,
)
INSTANT_RULE: Final = (
    "expected an RFC 3339 date-time such as 2026-01-02T03:04:05Z or 2026-01-02T05:04:05+02:00"
    " (the offset may be left out for UTC)"
)
INSTANT_RANGE: Final = "an instant from 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999Z in UTC"


def parse_flag(text: object) -> bool:
    """A boolean query parameter: `true` or `false`; `ValueError` otherwise."""
    if isinstance(text, str) and text in FLAG_SPELLINGS:
        return FLAG_SPELLINGS[text]
    raise ValueError(FLAG_RULE)


def parse_instant(text: object) -> datetime:
    """A timestamp query parameter: an RFC 3339 date-time (UTC without an offset), as an aware
    datetime; `ValueError` otherwise."""
    if not isinstance(text, str):
        raise ValueError(INSTANT_RULE)
    found = _RFC3339.fullmatch(text)
    if found is None:
        if " " in text and _RFC3339.fullmatch(text.replace(" ", "+")):
            raise ValueError(INSTANT_RULE + "; send the + of an offset as %2B")
        raise ValueError(INSTANT_RULE)
    year, month, day, hour, minute, second = (int(found.group(i)) for i in range(1, 7))
    fraction, zulu, sign = found.group(7), found.group(8), found.group(9)
    micro = int((fraction or "0")[:6].ljust(6, "0"))
    leap = second == 60
    if leap:
        second, micro = 59, 999_999
    zone = UTC
    if not zulu and sign:
        hours, minutes = int(found.group(10)), int(found.group(11))
        if hours > 23 or minutes > 59:
            raise ValueError(INSTANT_RULE + ": an offset is at most 23:59")
        offset = timedelta(hours=hours, minutes=minutes)
        zone = timezone(-offset if sign == "-" else offset)
    try:
        moment = datetime(year, month, day, hour, minute, second, micro, tzinfo=zone)
    except ValueError:
        raise ValueError(INSTANT_RULE + ": no such date or time") from None
    try:
        moment.astimezone(UTC)
    except OverflowError:
        # 0001-01-01T00:30:00+01:00 is in year 0 in UTC, 9999-12-31T23:30:00-01:00 in 10000.
        raise ValueError(INSTANT_RULE + ": " + INSTANT_RANGE) from None
    return moment


def flag(query: Mapping[str, str], name: str, default: bool) -> bool:
    """The boolean query parameter `name` of a request's query (a mapping), or `default` when
    absent; a problem `422` naming it when it is anything but `true` or `false`."""
    text = query.get(name)
    if text is None:
        return default
    try:
        return parse_flag(text)
    except ValueError as exc:
        raise invalid(name, str(exc)) from None


def _flag(value: object) -> object:
    return value if isinstance(value, bool) else parse_flag(value)


def _instant(value: object) -> object:
    return value if isinstance(value, datetime) else parse_instant(value)


Flag = Annotated[
    bool,
    BeforeValidator(_flag),
    WithJsonSchema({"type": "boolean", "description": "exactly true or false"}),
]
"""A boolean query parameter of a pydantic query model (`parse_flag`)."""

Instant = Annotated[
    datetime,
    BeforeValidator(_instant),
    WithJsonSchema({"type": "string", "format": "date-time"}),
]
"""A timestamp query parameter of a pydantic query model (`parse_instant`)."""
