"""Pydantic models of the wire: the HTTP request bodies and queries (the documents out are
rendered by `server.api.render`), and every WebSocket message of `/api/v1/live`, both ways
(`asyncapi.yaml`): the client's as one union told apart by `type`, the server's as the models
`render.py` fills in."""

from __future__ import annotations

import uuid
from datetime import date
from typing import Annotated, Any, Literal, TypeVar, get_args

from aiohttp import web
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StrictBool,
    StrictInt,
    StrictStr,
    StringConstraints,
    TypeAdapter,
    ValidationError,
    ValidationInfo,
    WithJsonSchema,
    field_validator,
    model_validator,
)
from pydantic_core import ErrorDetails

from server.api.access import TOKEN_MAX
from server.api.params import Flag, Instant
from server.api.problems import invalid, validation_errors, validation_problem
from server.engine import Card, DealCode, Rule, parse_place
from server.services.errors import NotFound, Problem
from server.services.names import checked_name
from server.services.passwords import checked_password
from server.services.values import MAX_ACTIONS, MOVE_PAGE_MAX, ActionRequest, is_printable_ascii

# 256: a bound on what is read; the name's own limits apply once it is NFC (server.services.names).
Name = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=256)]


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


# 1,024: a bound on what is read; a password's own limits apply once it is NFC
# (`server.services.passwords`).
Password = Annotated[StrictStr, StringConstraints(max_length=1024)]
Label = Annotated[StrictStr, StringConstraints(min_length=1, max_length=64)]


class NewPlayerIn(Strict):
    """A sign-up: a name, and a password or none (a guest)."""

    name: Name
    password: Password | None = None

    @field_validator("name")
    @classmethod
    def valid_name(cls, value: str) -> str:
        """NFC, visible, at most 32 characters (`server.services.names`)."""
        return checked_name(value)

    @field_validator("password")
    @classmethod
    def valid_password(cls, value: str | None, info: ValidationInfo) -> str | None:
        """10 to 256 characters once NFC, not the name (`server.services.passwords`)."""
        if value is None:
            return None
        return checked_password(value, info.data.get("name", ""))


class NewSessionIn(Strict):
    """A sign-in: the player's name and password, and a label for the new session."""

    name: Name
    password: Password
    label: Label | None = None


class PasswordIn(Strict):
    """A password added (a guest's first) or changed (the current one given)."""

    password: Password
    current_password: Password | None = None


class SeedsIn(Strict):
    """The client seed of the player's next seed pair (SPEC 1.8.2), which becomes current: 1
    to 64 printable ASCII characters (checked by `server.services.seeds`)."""

    client_seed: Annotated[StrictStr, StringConstraints(max_length=1024)]


class SeedHistoryQueryIn(Strict):
    """Query of GET /api/v1/me/seeds/history: the latest `limit` ended pairs, those with an
    `index` below `before`."""

    limit: int = Field(default=100, ge=1, le=100)
    before: int | None = Field(default=None, ge=0, le=2**31 - 1)


class DeletionIn(Strict):
    """The erasure of one's account: the password, when one is set."""

    password: Password | None = None


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
    assisted: Flag = False
    limit: int = Field(default=20, ge=1, le=100)
    after: str | None = Field(default=None, max_length=512)

    @field_validator("code")
    @classmethod
    def valid_code(cls, value: str | None) -> str | None:
        return str(DealCode.parse(value)) if value is not None else None

    @field_validator("daily")
    @classmethod
    def valid_day(cls, value: str | None) -> str | None:
        if value is not None and date.fromisoformat(value) == date.max:
            # Its board would end on the day after, which no date can name.
            raise ValueError("expected a date before 9999-12-31")
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
    since: Instant | None = None
    until: Instant | None = None
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
    if not isinstance(value, str):
        raise invalid(field, KEY_LENGTH)
    wrong = key_refusal(value)
    if wrong is not None:
        raise invalid(field, wrong)
    return value


KEY_LENGTH = f"must be 1 to {IDEMPOTENCY_KEY_MAX} characters"


def key_refusal(value: str) -> str | None:
    """What is wrong with an idempotency key (None: nothing)."""
    if not 1 <= len(value) <= IDEMPOTENCY_KEY_MAX:
        return KEY_LENGTH
    if not is_printable_ascii(value):
        return "must be printable ASCII characters"
    return None


Q = TypeVar("Q", bound=Strict)


def query_of(request: web.Request, model: type[Q]) -> Q:
    try:
        return model.model_validate(dict(request.query))
    except ValidationError as exc:
        raise validation_problem(validation_errors(exc)) from None


# ---------------------------------------------------------------- the WebSocket (asyncapi.yaml)
#
# A string's own limits are checked in Python, not by pydantic's constraints: those refuse a
# lone surrogate, which JSON can carry (`"\ud800"`), and such text is answered as any other
# (an unknown token is 401, as over HTTP). `WithJsonSchema` says the same limits in the schema.


def _echoable(value: object) -> str | int | None:
    """A message's `id` as its answer repeats it: a string or an integer, else absent."""
    return value if isinstance(value, (str, int)) and not isinstance(value, bool) else None


MessageId = Annotated[StrictStr | StrictInt | None, BeforeValidator(_echoable)]
"""Chosen by the client, repeated in the answer; any other JSON value counts as absent."""
EchoedId = StrictStr | StrictInt | None


def _canonical_uuid(value: str) -> str:
    return str(uuid.UUID(value))


Uuid = Annotated[
    StrictStr, AfterValidator(_canonical_uuid), WithJsonSchema({"type": "string", "format": "uuid"})
]
"""A game's or a race's id, in any form `uuid.UUID` reads, as the canonical text."""


def _token(value: str) -> str:
    if not 1 <= len(value) <= TOKEN_MAX:
        raise ValueError(f"a token has 1 to {TOKEN_MAX} characters")
    return value


Token = Annotated[
    StrictStr,
    AfterValidator(_token),
    WithJsonSchema({"type": "string", "minLength": 1, "maxLength": TOKEN_MAX}),
]


def _key(value: str) -> str:
    wrong = key_refusal(value)
    if wrong is not None:
        raise ValueError(wrong)
    return value


IdempotencyKey = Annotated[
    StrictStr,
    AfterValidator(_key),
    WithJsonSchema(
        {
            "type": "string",
            "minLength": 1,
            "maxLength": IDEMPOTENCY_KEY_MAX,
            "pattern": "^[ -~]+$",
        }
    ),
]
Version = Annotated[StrictInt, Field(ge=0)]
"""A game's version (the number of its accepted changes), or a race's."""
MoveText = Annotated[str, Field(pattern=r"^(?:[A2-9TJQK][SHDC]-(?:t[1-7]|f)|undo)$")]
"""The notation of an applied action (openapi.yaml's `MoveText`)."""


class MessageIn(BaseModel):
    """A client's message: a JSON object with a `type`; fields it does not define are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    id: MessageId = None


class AuthIn(MessageIn):
    type: Literal["auth"]
    token: Token


class ActIn(MessageIn):
    """An action, exactly the body of POST /api/v1/games/{id}/moves."""

    type: Literal["act"]
    game_id: Uuid
    action: ActionIn
    idempotency_key: IdempotencyKey | None = None


class WatchIn(MessageIn):
    type: Literal["watch"]
    game_id: Uuid
    since: Version | None = None
    """The last version the client saw (None: from now)."""


class UnwatchIn(MessageIn):
    type: Literal["unwatch"]
    game_id: Uuid


class WatchRaceIn(MessageIn):
    type: Literal["watch_race"]
    race_id: Uuid


class UnwatchRaceIn(MessageIn):
    type: Literal["unwatch_race"]
    race_id: Uuid


class PingIn(MessageIn):
    type: Literal["ping"]


class FollowMeIn(MessageIn):
    """Follow the connection's player's own events (SPEC 2.6.2; scope `read`)."""

    type: Literal["follow_me"]
    since: Version | None = None
    """The last notice id the client saw (None: from now)."""


class AbandonIn(MessageIn):
    """The connection's player abandons their game, as POST /api/v1/games/{id}/abandon."""

    type: Literal["abandon"]
    game_id: Uuid


class HintIn(MessageIn):
    """A hint for the connection's player's game, as GET /api/v1/games/{id}/hint."""

    type: Literal["hint"]
    game_id: Uuid


ClientMessage = Annotated[
    AuthIn
    | ActIn
    | WatchIn
    | UnwatchIn
    | WatchRaceIn
    | UnwatchRaceIn
    | PingIn
    | AbandonIn
    | HintIn
    | FollowMeIn,
    Field(discriminator="type"),
]
CLIENT_MESSAGES: TypeAdapter[ClientMessage] = TypeAdapter(ClientMessage)
MESSAGE_TYPES = tuple(
    get_args(model.model_fields["type"].annotation)[0]
    for model in get_args(get_args(ClientMessage)[0])
)
"""The `type` of each client message, in the order the refusal of an unknown one lists them."""

_READ_ORDER = ("token", "since", "game_id", "race_id", "action", "idempotency_key")
"""The fields of client messages in the order the server has always checked them: a message
wrong in several ways is refused for the first (an action's own fields come last)."""
_SHAPE_ERRORS = {"missing", "model_type", "model_attributes_type", "dict_type"}


def echoed_id(data: dict[str, Any]) -> str | int | None:
    """The `id` the answer to the message `data` repeats, read or not."""
    return _echoable(data.get("id"))


def client_message(data: dict[str, Any]) -> ClientMessage:
    """The client message that the JSON object `data` is, or the Problem that refuses it: an
    unknown `type` or a bad field is 422 (`validation-error`, with `errors`), an id that is not
    a UUID is 404 (it names nothing), an action's own fields are refused as over HTTP."""
    try:
        return CLIENT_MESSAGES.validate_python(data)
    except ValidationError as exc:
        raise _refusal(exc.errors(include_url=False, include_input=False), data) from None


def _rank(error: ErrorDetails) -> int:
    loc = error["loc"]
    if len(loc) < 2:
        return -1  # the `type` itself
    name = str(loc[1])
    if name == "action" and (len(loc) > 2 or error["type"] not in _SHAPE_ERRORS):
        return len(_READ_ORDER)
    return _READ_ORDER.index(name) if name in _READ_ORDER else len(_READ_ORDER)


def _refusal(errors: list[ErrorDetails], data: dict[str, Any]) -> Problem:
    error = min(errors, key=_rank)
    loc = error["loc"]
    if len(loc) < 2:
        return invalid("type", "expected one of " + ", ".join(MESSAGE_TYPES))
    name = str(loc[1])
    if name in ("game_id", "race_id"):
        what = name.removesuffix("_id")
        return NotFound(f"There is no {what} {data.get(name)!r}.")
    if name == "token":
        return invalid("token", "expected the bearer token as text")
    if name == "since" and data.get("type") == "follow_me":
        return invalid("since", "expected a notice id (an integer >= 0)")
    if name == "since":
        return invalid("since", "expected a version number (an integer >= 0)")
    if name == "idempotency_key":
        wrong = error["msg"].removeprefix("Value error, ")
        return invalid(name, wrong if error["type"] == "value_error" else KEY_LENGTH)
    if name == "action" and _rank(error) < len(_READ_ORDER):
        return invalid("action", "expected an action object, as the body of POST .../moves")
    # The action's own fields, in the words (and field names) of POST .../moves.
    try:
        ActionIn.model_validate(data.get("action"))
    except ValidationError as exc:
        errors_of_action = validation_errors(exc)
    else:  # pragma: no cover - the union refused it, so the model alone does too
        errors_of_action = [{"field": "body", "message": error["msg"]}]
    return validation_problem([{**e, "field": "action." + e["field"]} for e in errors_of_action])


class MessageOut(BaseModel):
    """A message of the server: every field is always sent, and no other."""

    model_config = ConfigDict(extra="forbid", frozen=True)


class PlayerRefOut(MessageOut):
    id: Uuid
    name: str


class AuthenticatedOut(MessageOut):
    type: Literal["authenticated"] = "authenticated"
    id: EchoedId
    player: PlayerRefOut


class ResultOut(MessageOut):
    """An accepted action: the HTTP action's response (`move`, `game`), its game and version;
    `replayed` True when it is the stored answer to a retried idempotency key (HTTP's
    `Idempotent-Replayed: true`), False otherwise (always sent, as every field)."""

    type: Literal["result"] = "result"
    id: EchoedId
    game_id: Uuid
    version: Version
    move: MoveText
    game: dict[str, Any]
    replayed: StrictBool


class AbandonedOut(MessageOut):
    """An abandonment accepted: the game after it (HTTP's answer to `.../abandon`)."""

    type: Literal["abandoned"] = "abandoned"
    id: EchoedId
    game_id: Uuid
    version: Version
    game: dict[str, Any]


class HintedOut(MessageOut):
    """The answer to `hint`: HTTP's hint document (`status`, `move`, `line_length`)."""

    type: Literal["hinted"] = "hinted"
    id: EchoedId
    game_id: Uuid
    hint: dict[str, Any]


class WatchingOut(MessageOut):
    type: Literal["watching"] = "watching"
    id: EchoedId
    game_id: Uuid
    version: Version
    game: dict[str, Any]


class ResyncOut(MessageOut):
    """The answer to a `watch` whose `since` is too far behind, or ahead: the game now."""

    type: Literal["resync"] = "resync"
    id: EchoedId
    game_id: Uuid
    version: Version
    game: dict[str, Any]


class EventOut(MessageOut):
    """A watched game's accepted change (`move` None for one that is not a move)."""

    type: Literal["event"] = "event"
    game_id: Uuid
    version: Version
    move: MoveText | None
    game: dict[str, Any]


class MissedEventOut(MessageOut):
    """A change missed while away, from the move log: the move and the score, no game."""

    type: Literal["event"] = "event"
    game_id: Uuid
    version: Version
    move: MoveText | None
    score: Annotated[StrictInt, Field(ge=0)]
    missed: Literal[True] = True


class UnwatchedOut(MessageOut):
    type: Literal["unwatched"] = "unwatched"
    id: EchoedId
    game_id: Uuid


class WatchingRaceOut(MessageOut):
    """The race now, with its version (the `race` pushes' versions order against it)."""

    type: Literal["watching_race"] = "watching_race"
    id: EchoedId
    race_id: Uuid
    version: Version
    race: dict[str, Any]


class RaceOut(MessageOut):
    """A watched race's whole document after a change."""

    type: Literal["race"] = "race"
    race_id: Uuid
    version: Version
    race: dict[str, Any]


class UnwatchedRaceOut(MessageOut):
    type: Literal["unwatched_race"] = "unwatched_race"
    id: EchoedId
    race_id: Uuid


class PongOut(MessageOut):
    type: Literal["pong"] = "pong"
    id: EchoedId


class FollowingMeOut(MessageOut):
    """The answer to `follow_me`, after the notices missed since `since`: `last` is the id
    of the player's last notice (0: none yet); every later one is pushed as a `notice`."""

    type: Literal["following_me"] = "following_me"
    id: EchoedId
    last: Version


class NoticeRatingOut(MessageOut):
    """A race rating after a race (as in the player's statistics)."""

    mu: float
    sigma: float
    ordinal: float
    races: Annotated[StrictInt, Field(ge=1)]


class NoticeBase(MessageOut):
    """An event that concerns the player (`server.services.notices`): its `id` (growing by one
    per player), `kind`, `at` (RFC 3339), and the fields of its kind beside them. One model per
    kind's fields (`NoticeOut`)."""

    type: Literal["notice"] = "notice"
    id: Annotated[StrictInt, Field(ge=1)]
    at: str


class SeatNoticeOut(NoticeBase):
    """Someone else took (`race_joined`) or gave up (`race_left`) a seat in the player's race."""

    kind: Literal["race_joined", "race_left"]
    race_id: Uuid
    player: PlayerRefOut


class StartingNoticeOut(NoticeBase):
    """The countdown of the player's race began: it starts at `starts_at`, with `game_id`."""

    kind: Literal["race_starting"]
    race_id: Uuid
    starts_at: str
    game_id: Uuid


class FinishedNoticeOut(NoticeBase):
    """The player's race ended: their place, and their rating after it and its ordinal's change
    (both null when the race changed no rating of theirs)."""

    kind: Literal["race_finished"]
    race_id: Uuid
    place: Annotated[StrictInt, Field(ge=1)] | None
    rating: NoticeRatingOut | None
    ordinal_change: float | None


class GameEndedNoticeOut(NoticeBase):
    """One of the player's games ended without them choosing it: `timed_out` (its race's
    deadline) or `action_limit` (its 5,000th action ended it)."""

    kind: Literal["game_ended"]
    game_id: Uuid
    race_id: Uuid | None
    reason: Literal["timed_out", "action_limit"]


class DailyNoticeOut(NoticeBase):
    """A day whose daily deal the player played has ended: its code is public."""

    kind: Literal["daily_revealed"]
    date: Annotated[str, Field(pattern=r"^\d{4}-\d{2}-\d{2}$")]
    rule: Literal["classic", "relaxed"]
    code: str


class SessionNoticeOut(NoticeBase):
    """One of the player's sessions ended (this one's streams end with it)."""

    kind: Literal["session_revoked"]
    session_id: Uuid


NoticeOut = (
    SeatNoticeOut
    | StartingNoticeOut
    | FinishedNoticeOut
    | GameEndedNoticeOut
    | DailyNoticeOut
    | SessionNoticeOut
)
NOTICES: TypeAdapter[NoticeOut] = TypeAdapter(Annotated[NoticeOut, Field(discriminator="kind")])
"""Reads a notice as the model of its kind."""


class ErrorOut(MessageOut):
    """A message that failed: the problem document the HTTP API would give."""

    type: Literal["error"] = "error"
    id: EchoedId
    problem: dict[str, Any]


ServerMessage = (
    AuthenticatedOut
    | ResultOut
    | AbandonedOut
    | HintedOut
    | WatchingOut
    | ResyncOut
    | EventOut
    | MissedEventOut
    | UnwatchedOut
    | WatchingRaceOut
    | RaceOut
    | UnwatchedRaceOut
    | PongOut
    | FollowingMeOut
    | SeatNoticeOut
    | StartingNoticeOut
    | FinishedNoticeOut
    | GameEndedNoticeOut
    | DailyNoticeOut
    | SessionNoticeOut
    | ErrorOut
)
