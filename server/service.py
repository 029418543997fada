"""The use-cases: each opens one transaction, loads what it needs (the game locked), asks the
engine, writes the move log and the game, and commits.

Handlers in `server.api` parse and authenticate, call one of these, and serialize the result.
"""

from __future__ import annotations

import asyncio
import hashlib
import secrets
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, replace

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.broker import Broker, LocalBroker
from server.engine import (
    UNDO,
    Action,
    Card,
    DealCode,
    Game,
    IllegalMove,
    Move,
    Rule,
    Status,
    replay,
)
from server.engine.snapshot import dumps, loads
from server.errors import (
    Busy,
    Forbidden,
    IdempotencyKeyReused,
    NotFound,
    Unauthorized,
    VersionConflict,
)
from server.store import queries
from server.store.fastpath import MoveWrite, MoveWriter
from server.store.models import Player
from server.store.queries import GameRecord, LoggedMove
from server.views import action_body, event_json, game_json

Clock = Callable[[], int]


def wall_clock_ms() -> int:
    return time.time_ns() // 1_000_000


def utc_day(ms: int) -> str:
    """The UTC date of a time in milliseconds, as YYYY-MM-DD."""
    return time.strftime("%Y-%m-%d", time.gmtime(ms / 1000))


def hash_token(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Principal:
    """The authenticated player of a request."""

    id: str
    name: str


SETTING_NAMES = ("double_click", "placement_help", "interactive_rules", "auto_placement")


@dataclass(frozen=True, slots=True)
class PlayerInfo:
    id: str
    name: str
    created_ms: int
    settings: dict[str, bool]

    @classmethod
    def of(cls, player: Player) -> PlayerInfo:
        settings = {name: bool(getattr(player, name)) for name in SETTING_NAMES}
        return cls(player.id, player.name, player.created_ms, settings)


@dataclass(frozen=True, slots=True)
class NewPlayer:
    id: str
    name: str
    token: str


@dataclass(slots=True)
class GameView:
    """A game as loaded: its row (metadata), its player's name and its engine state."""

    row: GameRecord
    player_name: str
    game: Game
    now_ms: int

    @property
    def elapsed_ms(self) -> int:
        row = self.row
        if row.elapsed_ms is not None:
            return row.elapsed_ms
        if row.started_ms is None:
            return 0
        return max(0, self.now_ms - row.started_ms)


@dataclass(frozen=True, slots=True)
class ActionRequest:
    """What a client asked for: `kind` is move, tap, double_tap or undo."""

    kind: str
    card: Card | None = None
    to: int | None = None
    expected_version: int | None = None

    def fingerprint(self, game_id: str) -> str:
        text = f"{game_id}|{self.kind}|{self.card}|{self.to}|{self.expected_version}"
        return hashlib.sha256(text.encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class ActResult:
    """An applied action: its move text, the game after it, the response body and the event."""

    move: str
    view: GameView
    body: str
    event: str

    @classmethod
    def of(cls, move: str, view: GameView) -> ActResult:
        game = game_json(view)
        return cls(move, view, action_body(move, game), event_json(view, move, game))


@dataclass(frozen=True, slots=True)
class StoredResponse:
    """The first response to an idempotent request, returned again for its retries."""

    status: int
    body: str


@dataclass(slots=True)
class CachedGame:
    """A game as this process last wrote or read it, to act on without loading it again."""

    row: GameRecord
    player_name: str
    game: Game
    lock: asyncio.Lock


class GameCache:
    """The most recently used games of this process (an LRU of `CachedGame`).

    A cached game may be stale (another process may have moved it): the write that follows is
    conditional on its version, so a stale entry costs a retry on the locked path, never a
    wrong result.
    """

    def __init__(self, size: int = 10_000) -> None:
        self.size = size
        self.entries: OrderedDict[str, CachedGame] = OrderedDict()

    def get(self, game_id: str) -> CachedGame | None:
        entry = self.entries.get(game_id)
        if entry is not None:
            self.entries.move_to_end(game_id)
        return entry

    def put(self, view: GameView) -> None:
        self.entries[view.row.id] = CachedGame(
            view.row, view.player_name, view.game, asyncio.Lock()
        )
        self.entries.move_to_end(view.row.id)
        if len(self.entries) > self.size:
            self.entries.popitem(last=False)

    def drop(self, game_id: str) -> None:
        self.entries.pop(game_id, None)


class GameService:
    def __init__(
        self,
        readers: async_sessionmaker[AsyncSession],
        writers: async_sessionmaker[AsyncSession],
        clock: Clock = wall_clock_ms,
        move_writer: MoveWriter | None = None,
        broker: Broker | None = None,
    ) -> None:
        self.readers = readers
        self.writers = writers
        self.clock = clock
        self.move_writer = move_writer
        self.broker = broker if broker is not None else LocalBroker()
        self.cache = GameCache()
        self._principals: OrderedDict[str, Principal] = OrderedDict()

    # ---------------------------------------------------------------- players

    async def create_player(self, name: str) -> NewPlayer:
        token = secrets.token_urlsafe(32)
        player_id = str(uuid.uuid4())
        async with self.writers.begin() as session:
            await queries.insert_player(
                session,
                id=player_id,
                name=name,
                token_hash=hash_token(token),
                created_ms=self.clock(),
                double_click=True,
                placement_help=True,
                interactive_rules=True,
                auto_placement=False,
            )
        return NewPlayer(player_id, name, token)

    def known_player(self, token: str) -> str | None:
        """The id of the player of `token` if this process has verified it before."""
        principal = self._principals.get(hash_token(token))
        return principal.id if principal is not None else None

    async def authenticate(self, token: str) -> Principal:
        """The player whose token this is; tokens never change, so they are cached."""
        token_hash = hash_token(token)
        cached = self._principals.get(token_hash)
        if cached is not None:
            return cached
        async with self.readers.begin() as session:
            found = await queries.player_by_token_hash(session, token_hash)
        if found is None:
            raise Unauthorized("The bearer token is not valid.")
        principal = Principal(*found)
        self._principals[token_hash] = principal
        if len(self._principals) > 10_000:
            self._principals.popitem(last=False)
        return principal

    async def get_player(self, player_id: str) -> PlayerInfo:
        async with self.readers.begin() as session:
            player = await queries.player_by_id(session, player_id)
            if player is None:
                raise NotFound(f"There is no player {player_id!r}.")
            return PlayerInfo.of(player)

    async def update_settings(
        self, principal: Principal, player_id: str, changes: dict[str, bool]
    ) -> PlayerInfo:
        """Changes some (or, to read them, none) of the player's own play settings."""
        if principal.id != player_id:
            raise Forbidden("Only the player may read or change their settings.")
        async with (self.writers if changes else self.readers).begin() as session:
            if changes:
                await queries.update_player(session, player_id, **changes)
            player = await queries.player_by_id(session, player_id)
            assert player is not None
            return PlayerInfo.of(player)

    # ---------------------------------------------------------------- games

    async def create_game(
        self,
        player: Principal,
        rule: Rule | None,
        code: DealCode | None,
        *,
        chosen: bool | None = None,
        daily: str | None = None,
    ) -> GameView:
        """Deal a game: from `code` (chosen by the player unless told otherwise) or a random
        deal of `rule`. A daily game (`daily` = its UTC date) is ranked for the player's first
        attempt of that day only; later ones are practice (a unique index decides races)."""
        if chosen is None:
            chosen = code is not None
        if code is None:
            code = DealCode(rule or Rule.CLASSIC, secrets.randbelow(26**7))
        game = Game.deal(code)
        now = self.clock()
        values = {
            "id": str(uuid.uuid4()),
            "player_id": player.id,
            "code": str(code),
            "rule": code.rule.value,
            "chosen": chosen,
            "status": game.status.value,
            "score": 0,
            "moves": 0,
            "version": 0,
            "snapshot": dumps(game),
            "created_ms": now,
            "started_ms": None,
            "finished_ms": None,
            "elapsed_ms": None,
            "assisted": False,
            "daily": daily,
            "practice": False,
        }
        try:
            async with self.writers.begin() as session:
                await queries.insert_game(session, **values)
        except IntegrityError:
            if daily is None:
                raise
            values["practice"] = True  # the player's ranked attempt of the day exists
            async with self.writers.begin() as session:
                await queries.insert_game(session, **values)
        view = GameView(GameRecord(**values), player.name, game, now)  # type: ignore[arg-type]
        self.cache.put(view)
        return view

    async def get_game(self, game_id: str, viewer: Principal | None = None) -> GameView:
        async with self.readers.begin() as session:
            view = await self._load(session, game_id, lock=False)
        self.check_visible(view, viewer)
        return view

    async def move_log(
        self, game_id: str, viewer: Principal | None = None
    ) -> tuple[GameView, list[LoggedMove]]:
        async with self.readers.begin() as session:
            view = await self._load(session, game_id, lock=False)
            self.check_visible(view, viewer)
            return view, await queries.move_log(session, game_id, view.row.version)

    async def targets(self, game_id: str, card: Card, viewer: Principal | None = None) -> list[int]:
        view = await self.get_game(game_id, viewer)
        return view.game.targets(card)

    def check_visible(self, view: GameView, viewer: Principal | None) -> None:
        """A daily game is hidden from everyone but its player until its day ends (UTC), so
        that nobody can copy a line of the day's deal."""
        daily = view.row.daily
        if daily is None or (viewer is not None and viewer.id == view.row.player_id):
            return
        if daily >= utc_day(self.clock()):
            raise Forbidden(
                f"This is a game of the daily deal of {daily}: only its player may see it "
                "until the day ends (UTC)."
            )

    async def act(
        self,
        player: Principal,
        game_id: str,
        request: ActionRequest,
        idempotency_key: str | None = None,
    ) -> ActResult | StoredResponse:
        """Apply one action to a game in one transaction (SPEC 2.3).

        A game this process holds in its cache is acted on there and written with one
        conditional write (the fast path); anything else, or anything the fast path cannot
        settle by itself (a stale cache, a refusal, a stale `expected_version`), goes through
        the locked path: load the game `FOR UPDATE`, apply, write, commit. Either way the
        action's event is published to the game's watchers once it is committed.

        With an idempotency key, the first response is stored with the action, and a retry
        (also one that arrives at the same time: it waits for the game's lock) gets it back.
        """
        if idempotency_key is None and self.move_writer is not None:
            entry = self.cache.get(game_id)
            if entry is not None:
                fast = await self._act_cached(entry, player, request)
                if fast is not None:
                    await self.broker.published(game_id, fast.view.row.version, fast.event)
                    return fast
        result = await self._act_locked(player, game_id, request, idempotency_key)
        if isinstance(result, ActResult):
            self.cache.put(result.view)
            await self.broker.published(game_id, result.view.row.version, result.event)
        return result

    async def _act_cached(
        self, entry: CachedGame, player: Principal, request: ActionRequest
    ) -> ActResult | None:
        """The fast path; None when the locked path must decide."""
        assert self.move_writer is not None
        async with entry.lock:
            row = entry.row
            if self.cache.entries.get(row.id) is not entry:
                return None
            if row.player_id != player.id:
                raise Forbidden("This game belongs to another player.")
            if request.expected_version is not None and request.expected_version != row.version:
                return None
            game = entry.game
            try:
                action = resolve(game, request)
                game.play(action)
            except IllegalMove:
                return None
            now = self.clock()
            new = next_row(row, game, now)
            result = ActResult.of(str(action), GameView(new, entry.player_name, game, now))
            write = MoveWrite(
                game_id=row.id,
                expected_version=row.version,
                version=new.version,
                status=new.status,
                score=new.score,
                moves=new.moves,
                snapshot=new.snapshot,
                at_ms=now,
                started_ms=now if new.started_ms is None else new.started_ms,
                finished_ms=new.finished_ms,
                elapsed_ms=new.elapsed_ms,
                move=result.move,
                event=self.broker.notify_payload(row.id, new.version, result.event),
            )
            try:
                written = await self.move_writer.write(write)
            except BaseException:
                self.cache.drop(row.id)
                raise
            if not written:
                self.cache.drop(row.id)
                return None
            entry.row = new
            return result

    async def _act_locked(
        self,
        player: Principal,
        game_id: str,
        request: ActionRequest,
        idempotency_key: str | None,
    ) -> ActResult | StoredResponse:
        try:
            async with self.writers.begin() as session:
                view = await self._load(session, game_id, lock=True)
                row = view.row
                if row.player_id != player.id:
                    raise Forbidden("This game belongs to another player.")
                fingerprint = request.fingerprint(game_id) if idempotency_key else ""
                if idempotency_key:
                    stored = await queries.idempotency_record(session, player.id, idempotency_key)
                    if stored is not None:
                        if stored.fingerprint != fingerprint:
                            raise IdempotencyKeyReused(
                                "This Idempotency-Key was already used for another request."
                            )
                        return StoredResponse(stored.status_code, stored.body)
                if request.expected_version is not None and (
                    request.expected_version != row.version
                ):
                    raise VersionConflict(
                        f"The game is at version {row.version}, not {request.expected_version}.",
                        version=row.version,
                    )
                game = view.game
                action = resolve(game, request)
                game.play(action)
                new = next_row(row, game, view.now_ms)
                result = ActResult.of(
                    str(action), GameView(new, view.player_name, game, view.now_ms)
                )
                await queries.append_move(
                    session, row.id, new.version, result.move, new.score, view.now_ms
                )
                await queries.update_game(session, row.id, **changes(new))
                await self.broker.notify_in(session, row.id, new.version, result.event)
                if idempotency_key:
                    await queries.insert_idempotency_record(
                        session,
                        player_id=player.id,
                        key=idempotency_key,
                        fingerprint=fingerprint,
                        status_code=200,
                        body=result.body,
                        created_ms=view.now_ms,
                    )
                return result
        except IntegrityError:
            raise Busy("Another action on this game was applied at the same moment.") from None

    async def abandon(self, player: Principal, game_id: str) -> GameView:
        async with self.writers.begin() as session:
            view = await self._load(session, game_id, lock=True)
            if view.row.player_id != player.id:
                raise Forbidden("This game belongs to another player.")
            self.cache.drop(game_id)
            view.game.abandon()
            now = view.now_ms
            view.row = replace(
                view.row,
                status=Status.ABANDONED.value,
                version=view.row.version + 1,
                snapshot=dumps(view.game),
                finished_ms=now,
                elapsed_ms=view.elapsed_ms,
            )
            await queries.update_game(session, game_id, **changes(view.row))
            event = event_json(view, None)
            await self.broker.notify_in(session, game_id, view.row.version, event)
        await self.broker.published(game_id, view.row.version, event)
        return view

    # ---------------------------------------------------------------- internals

    async def _load(self, session: AsyncSession, game_id: str, *, lock: bool) -> GameView:
        found = await queries.load_game(session, game_id, lock=lock)
        if found is None:
            raise NotFound(f"There is no game {game_id!r}.")
        row, name = found
        return GameView(row, name, loads(row.snapshot), self.clock())


def next_row(row: GameRecord, game: Game, now: int) -> GameRecord:
    """The game's row after an accepted action at `now` (the clock starts at the first one)."""
    started = row.started_ms if row.started_ms is not None else now
    won = game.status is Status.WON
    return replace(
        row,
        status=game.status.value,
        score=game.score,
        moves=game.moves,
        version=row.version + 1,
        snapshot=dumps(game),
        started_ms=started,
        finished_ms=now if won else row.finished_ms,
        elapsed_ms=max(0, now - started) if won else row.elapsed_ms,
    )


def changes(row: GameRecord) -> dict[str, object]:
    """The columns an action changes."""
    return {
        "status": row.status,
        "score": row.score,
        "moves": row.moves,
        "version": row.version,
        "snapshot": row.snapshot,
        "started_ms": row.started_ms,
        "finished_ms": row.finished_ms,
        "elapsed_ms": row.elapsed_ms,
    }


def resolve(game: Game, request: ActionRequest) -> Action:
    """The engine action for a request: taps are resolved by the engine (SPEC 1.7)."""
    if request.kind == "undo":
        return UNDO
    assert request.card is not None
    if request.kind == "tap":
        return game.resolve_tap(request.card)
    if request.kind == "double_tap":
        return game.resolve_double_tap(request.card)
    assert request.to is not None
    return Move(request.card, request.to)


@dataclass(frozen=True, slots=True)
class Verification:
    valid: bool
    status: str
    score: int
    moves: int
    failed_index: int | None
    rule: str | None
    reason: str | None


def verify_replay(
    code: DealCode, actions: list[str], claimed: dict[str, object] | None
) -> Verification:
    """Replay `actions` on the deal of `code` and compare with the claimed result."""
    result = replay(code, actions)
    game = result.game
    status, score, moves = game.status.value, game.score, game.moves
    if not result.valid:
        return Verification(
            False, status, score, moves, result.failed_index, result.rule, result.error
        )
    if claimed:
        claimed_status = claimed.get("status")
        if claimed_status == Status.ABANDONED.value and game.status is Status.ACTIVE:
            status = Status.ABANDONED.value
        for name, actual in (("status", status), ("score", score), ("moves", moves)):
            if name in claimed and (
                type(claimed[name]) is not type(actual) or claimed[name] != actual
            ):
                return Verification(
                    False,
                    status,
                    score,
                    moves,
                    None,
                    "result_mismatch",
                    f"The actions lead to {name} {actual!r}, not {claimed[name]!r}.",
                )
    return Verification(True, status, score, moves, None, None, None)
