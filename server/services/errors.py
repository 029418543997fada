"""The one family of errors a client can cause: each `Problem` carries its HTTP status, its
problem type and title, headers to send, and extra members for the document.

The use-cases raise the named kinds below; handlers raise them too, or a `Problem` with its own
status and type. They become RFC 9457 problem documents in one place, `server.api.problems`,
for HTTP and the WebSocket alike. The engine's own errors (`IllegalMove`, `NotationError`) are
mapped there too.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


class Problem(Exception):
    status = 400
    slug = "bad-request"
    title = "Bad request"
    headers: Mapping[str, str] = {}

    def __init__(
        self,
        detail: str,
        *,
        status: int | None = None,
        slug: str | None = None,
        title: str | None = None,
        headers: Mapping[str, str] | None = None,
        **extra: Any,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        if status is not None:
            self.status = status
        if slug is not None:
            self.slug = slug
        if title is not None:
            self.title = title
        if headers is not None:
            self.headers = headers
        self.extra = extra


class MalformedJson(Problem):
    status = 400
    slug = "malformed-json"
    title = "Malformed JSON"


class NotFound(Problem):
    status = 404
    slug = "not-found"
    title = "Not found"


class Unauthorized(Problem):
    status = 401
    slug = "unauthorized"
    title = "Unauthorized"
    headers = {"WWW-Authenticate": 'Bearer realm="russian-solitaire"'}  # noqa: RUF012


class Forbidden(Problem):
    status = 403
    slug = "forbidden"
    title = "Forbidden"


class MissingScope(Problem):
    """The token lacks the scope the request needs (SPEC 2.2); `scope` names it."""

    status = 403
    slug = "missing-scope"
    title = "Missing scope"

    def __init__(self, scope: str) -> None:
        super().__init__(
            f"This token was not granted the scope {scope!r}, which this request needs.",
            scope=scope,
        )


class InvalidCredentials(Problem):
    """A sign-in's name or password is wrong: which one is never said (SPEC 2.2)."""

    status = 401
    slug = "invalid-credentials"
    title = "Invalid credentials"
    headers = {"WWW-Authenticate": 'Bearer realm="russian-solitaire"'}  # noqa: RUF012

    def __init__(self) -> None:
        super().__init__("The name or the password is wrong.")


class TooManySignIns(Problem):
    """A name's sign-ins failed too often lately (SPEC 2.2): the rest of the window is refused."""

    status = 429
    slug = "too-many-sign-ins"
    title = "Too many sign-ins"

    def __init__(self, retry_after_s: int) -> None:
        super().__init__(
            "Too many failed sign-ins with this name lately: try again later.",
            headers={"Retry-After": str(retry_after_s)},
        )


class WrongPassword(Problem):
    """The player's current password, asked for to change it or to erase the account, is
    wrong."""

    status = 403
    slug = "wrong-password"
    title = "Wrong password"

    def __init__(self) -> None:
        super().__init__("The password is wrong.")


class VersionConflict(Problem):
    status = 409
    slug = "version-conflict"
    title = "The game has moved on"


class Busy(Problem):
    """Other requests kept changing the same game; retrying is safe."""

    status = 409
    slug = "conflict"
    title = "Conflict"


class DailyInPlay(Problem):
    """A game of a day's daily deal is dealt while the player's game of it is in play (SPEC
    2.5): `rule` is `daily_in_play`."""

    status = 409
    slug = "conflict"
    title = "Conflict"


class SeedInUse(Problem):
    """A rotation while a game the current seed pair dealt is in play (SPEC 1.8.2): revealing
    the server seed would reveal that game's deal. `rule` is `seed_in_use`."""

    status = 409
    slug = "conflict"
    title = "Conflict"


class IdempotencyKeyReused(Problem):
    status = 422
    slug = "idempotency-key-reused"
    title = "Idempotency key reused"


class InvalidInput(Problem):
    status = 422
    slug = "validation-error"
    title = "Validation error"


class RaceConflict(Problem):
    """A race refused a request (SPEC 2.6.1); the problem's `rule` says why."""

    status = 409
    slug = "race-conflict"
    title = "Refused by the race"


class NameTaken(Problem):
    """Another player has a name with the same key (409)."""

    status = 409
    slug = "name-taken"
    title = "Name taken"

    def __init__(self, name: str) -> None:
        super().__init__(
            f"Another player is already called “{name}” (names are compared ignoring case, "
            "accents written either way and look-alike forms): choose another name.",
            # The web client shows this message under the name field.
            errors=[{"field": "name", "message": f"another player is already called “{name}”"}],
        )


RETRY_AFTER = "5"
"""The seconds a client is asked to wait when the solver's workers are busy."""


class WorkBusy(Problem):
    """A lane is full: the client should come back later."""

    status = 503
    slug = "solver-unavailable"
    title = "Solver unavailable"
    headers = {"Retry-After": RETRY_AFTER}  # noqa: RUF012


class OneAtATime(Problem):
    """A client asked for costly work while its previous costly request was still running."""

    status = 429
    slug = "too-many-requests"
    title = "Too many requests"
    headers = {"Retry-After": "1"}  # noqa: RUF012


def refused(rule: str, detail: str) -> RaceConflict:
    """A race's refusal of a request, with the rule that refused it."""
    return RaceConflict(detail, rule=rule)
