"""Pydantic models of the request bodies (the wire format in; see views.py for out)."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Annotated, Any, Literal, TypeVar

from aiohttp import web
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StringConstraints,
    ValidationError,
    field_validator,
    model_validator,
)

from server.api.problems import invalid, validation_errors, validation_problem
from server.engine import Card, DealCode, Rule, parse_place
from server.services.errors import NotFound
from server.services.games import is_printable_ascii
from server.services.names import checked_name
from server.services.values import MAX_ACTIONS, MOVE_PAGE_MAX, ActionRequest

# 256: a bound on what is read; the name's own limits apply once it is NFC (server.services.names).
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=256)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NewPlayerIn(Strict):
    name: Name

    @field_validator("name")
    @classmethod
    def valid_name(cls, value: str) -> str:
        """NFC, visible, at most 32 characters (`server.services.names`)."""
        return checked_name(value)


class SettingsIn(Strict):
    """Some or all of the four play settings (SPEC 1.7)."""

    double_click: StrictBool | None = None
    placement_help: StrictBool | None = None
    interactive_rules: StrictBool | None = None
    auto_placement: StrictBool | None = None

    def changes(self) -> dict[str, bool]:
        return {k: v for k, v in self.model_dump().items() if v is not None}


class NewGameIn(Strict):
    """A new game: from a `code`, today's `daily` deal, or a random (optionally certified
    `winnable`) deal of `rule` (classic by default)."""

    rule: Rule | None = None
    code: str | None = Field(default=None, max_length=64)
    winnable: StrictBool = False
    daily: StrictBool = False

    @field_validator("code")
    @classmethod
    def valid_code(cls, value: str | None) -> str | None:
        if value is not None:
            DealCode.parse(value)
        return value

    @model_validator(mode="after")
    def rule_matches_code(self) -> NewGameIn:
        if (
            self.code is not None
            and self.rule is not None
            and DealCode.parse(self.code).rule is not self.rule
        ):
            raise ValueError("the rule does not match the rule letter of the code")
        if sum((self.code is not None, self.winnable, self.daily)) > 1:
            raise ValueError("choose at most one of code, winnable and daily")
        return self

    def deal_code(self) -> DealCode | None:
        return DealCode.parse(self.code) if self.code is not None else None


class ActionIn(Strict):
    """One action: a move `{card, to}`, `{action: tap|double_tap, card}` or `{action: undo}`."""

    action: Literal["move", "tap", "double_tap", "undo"] = "move"
    card: str | None = Field(default=None, max_length=8)
    to: str | None = Field(default=None, max_length=8)
    expected_version: StrictInt | None = Field(default=None, ge=0, le=2**31 - 1)

    @field_validator("card")
    @classmethod
    def valid_card(cls, value: str | None) -> str | None:
        if value is not None:
            Card.parse(value)
        return value

    @field_validator("to")
    @classmethod
    def valid_place(cls, value: str | None) -> str | None:
        if value is not None:
            parse_place(value)
        return value

    @model_validator(mode="after")
    def fields_of_action(self) -> ActionIn:
        needs_card = self.action != "undo"
        needs_to = self.action == "move"
        if needs_card and self.card is None:
            raise ValueError(f"a {self.action} needs a card")
        if not needs_card and self.card is not None:
            raise ValueError("an undo takes no card")
        if needs_to and self.to is None:
            raise ValueError("a move needs a place 'to' (t1..t7 or f)")
        if not needs_to and self.to is not None:
            raise ValueError(f"a {self.action} takes no 'to'")
        return self

    def request(self) -> ActionRequest:
        return ActionRequest(
            kind=self.action,
            card=Card.parse(self.card) if self.card is not None else None,
            to=parse_place(self.to) if self.to is not None else None,
            expected_version=self.expected_version,
        )


class BoardQueryIn(Strict):
    """Query of GET /api/v1/leaderboards."""

    rule: Rule = Rule.CLASSIC
    by: Literal["score", "time", "moves"] = "score"
    period: Literal["day", "week", "month", "all"] = "all"
    code: str | None = Field(default=None, max_length=64)
    daily: str | None = Field(default=None, pattern=r"^\d{4}-\d{2}-\d{2}$")
    assisted: bool = False
    limit: int = Field(default=20, ge=1, le=100)
    after: str | None = Field(default=None, max_length=512)

    @field_validator("code")
    @classmethod
    def valid_code(cls, value: str | None) -> str | None:
        return str(DealCode.parse(value)) if value is not None else None

    @field_validator("daily")
    @classmethod
    def valid_day(cls, value: str | None) -> str | None:
        if value is not None:
            date.fromisoformat(value)
        return value

    @model_validator(mode="after")
    def one_deal(self) -> BoardQueryIn:
        if self.code is not None and self.daily is not None:
            raise ValueError(
                "choose code or daily: the daily board is addressed by its date and rule"
            )
        return self


class GamesQueryIn(Strict):
    """Query of GET /api/v1/players/{id}/games (and its export)."""

    rule: Rule | None = None
    status: Literal["active", "won", "abandoned", "finished"] | None = None
    since: datetime | None = None
    until: datetime | None = None
    limit: int = Field(default=20, ge=1, le=100)
    after: str | None = Field(default=None, max_length=512)

    def statuses(self) -> tuple[str, ...] | None:
        if self.status == "finished":
            return ("won", "abandoned")
        return (self.status,) if self.status is not None else None


class ReplayIn(BaseModel):
    """A replay document to verify; unknown fields are ignored (they are not checked)."""

    model_config = ConfigDict(extra="allow")

    code: str | None = Field(max_length=64)
    deal_commitment: str | None = Field(default=None, pattern=r"^[0-9a-f]{64}$")
    actions: list[Any] = Field(max_length=MAX_ACTIONS)  # the longest game
    result: dict[str, Any] | None = None
    deal: Any = None

    @field_validator("code")
    @classmethod
    def valid_code(cls, value: str | None) -> str:
        if value is None:
            raise ValueError(
                "a replay without its code cannot be verified: the code is shown once the "
                "game's deal is revealed (the game has ended, or its daily deal's day)"
            )
        DealCode.parse(value)
        return value


class NewRaceIn(Strict):
    """Body of POST /api/v1/races (SPEC 2.6.1); every field has its default."""

    rule: Rule = Rule.CLASSIC
    seats: StrictInt = Field(default=4, ge=2, le=8)
    winnable: StrictBool = True
    time_limit_s: StrictInt = Field(default=600, ge=60, le=3600)
    public: StrictBool = True


class RacesQueryIn(Strict):
    """Query of GET /api/v1/races: public races, newest first (`running` includes starting)."""

    status: Literal["open", "running", "finished"] | None = None
    rule: Rule | None = None
    limit: int = Field(default=20, ge=1, le=100)
    after: str | None = Field(default=None, max_length=512)


class RaceBoardQueryIn(Strict):
    """Query of GET /api/v1/leaderboards/races."""

    rule: Rule = Rule.CLASSIC
    limit: int = Field(default=20, ge=1, le=100)
    after: str | None = Field(default=None, max_length=512)


class LiveGamesQueryIn(Strict):
    """Query of GET /api/v1/live/games."""

    limit: int = Field(default=20, ge=1, le=100)
    after: str | None = Field(default=None, max_length=512)


class MovesQueryIn(Strict):
    """Query of GET /api/v1/games/{id}/moves: the entries after sequence number `after`."""

    limit: int = Field(default=MOVE_PAGE_MAX, ge=1, le=MOVE_PAGE_MAX)
    after: int = Field(default=0, ge=0, le=MAX_ACTIONS)


IDEMPOTENCY_KEY_MAX = 255


def path_id(request: web.Request, name: str = "id") -> str:
    """A resource id from the path; anything that is not a UUID names nothing (404)."""
    raw = request.match_info[name]
    try:
        return str(uuid.UUID(raw))
    except ValueError:
        raise NotFound(f"There is no resource {raw!r}.") from None


def idempotency_key(value: object, field: str) -> str | None:
    """A request's idempotency key (the `Idempotency-Key` header, or the `idempotency_key` of a
    WebSocket `act`): absent, or 1 to IDEMPOTENCY_KEY_MAX printable ASCII characters."""
    if value is None:
        return None
    if not isinstance(value, str) or not 1 <= len(value) <= IDEMPOTENCY_KEY_MAX:
        raise invalid(field, f"must be 1 to {IDEMPOTENCY_KEY_MAX} characters")
    if not is_printable_ascii(value):
        raise invalid(field, "must be printable ASCII characters")
    return value


Q = TypeVar("Q", bound=Strict)


def query_of(request: web.Request, model: type[Q]) -> Q:
    try:
        return model.model_validate(dict(request.query))
    except ValidationError as exc:
        raise validation_problem(validation_errors(exc)) from None
