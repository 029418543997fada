"""The use-cases of games: each loads what it needs, asks the engine, and commits one change.

Handlers in `server.api` parse and authenticate, call one of these, and render the value it
returns (`server.api.render`); the service itself builds no JSON. A new game's row is made by
one factory, `new_game_row` (a game asked for, and a racer's at the start of a race).

Every change to a game (an action, an abandonment, a hint marking it assisted, a race game's
time-out at its race's deadline) takes one path, `GameService._change`: the game comes from
this process's cache (or is loaded once), the engine decides on a copy of it, and one
`GameCommit` writes the version-checked update, the move-log entry, the idempotency record and
the watchers' notification as one unit. The cached view is replaced only once that write has
committed, so a view handed out is never changed afterwards.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import uuid
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server import metrics
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
)
from server.engine.legal import Legal, legal
from server.engine.snapshot import dumps, loads
from server.live.broker import Broker, LocalBroker
from server.services.errors import (
    Busy,
    DailyInPlay,
    Forbidden,
    IdempotencyKeyReused,
    MissingScope,
    NotFound,
    RaceConflict,
    Unauthorized,
    VersionConflict,
)
from server.services.idempotency import fresh_since
from server.services.seeds import SeedService, SeedUse
from server.services.values import (
    MAX_ACTIONS,
    ActionRequest,
    Applied,
    Clock,
    GameView,
    Principal,
    decode_answer,
    encode_answer,
    wall_clock_ms,
)
from server.store import games as game_rows
from server.store import players as player_rows
from server.store import stats as stats_rows
from server.store.commits import (
    Committer,
    GameCommit,
    IdempotencyRecord,
    Outcome,
)
from server.store.faults import log_fault
from server.store.records import GameRecord, LoggedMove, day_start_ms, utc_day

log = logging.getLogger(__name__)

CHANGE_ATTEMPTS = 8
"""How often a change is decided again after another process changed the game first."""


@dataclass(frozen=True, slots=True)
class Decision:
    """What the engine decided for a change: the game after it (a new `Game`, or the same one
    when the position does not change), the move text (None for a change that is not a move),
    and whether the game is assisted from now on."""

    game: Game
    move: str | None
    assisted: bool
    time_out: TimeOut | None = None
    """The time-out of a race game at its race's deadline (`GameService.time_out`)."""


@dataclass(frozen=True, slots=True)
class TimeOut:
    """Where a timed-out race game's clock stops: at its race's deadline, after the race's
    whole time limit (both as the race row says)."""

    finished_ms: int
    elapsed_ms: int


Decide = Callable[[GameView], Decision | None]
"""Decides a change on the current view (None: nothing to change), or raises `IllegalMove`."""


@dataclass(slots=True)
class Slot:
    """A game's place in this process's cache: the lock that serializes this process's changes
    to it, and the view as last written or read here (None: to be loaded)."""

    lock: asyncio.Lock
    view: GameView | None = None


class GameCache:
    """The most recently used games of this process (an LRU of `Slot`s).

    A cached view may be stale (another process may have changed the game): the commit is
    conditional on its version, so a stale view costs a reload, never a wrong result.
    """

    def __init__(self, size: int = 10_000) -> None:
        self.size = size
        self.slots: OrderedDict[str, Slot] = OrderedDict()

    def slot(self, game_id: str) -> Slot:
        found = self.slots.get(game_id)
        if found is None:
            found = self.slots[game_id] = Slot(asyncio.Lock())
            if len(self.slots) > self.size:
                self.slots.popitem(last=False)
        else:
            self.slots.move_to_end(game_id)
        return found

    def put(self, view: GameView) -> None:
        self.slot(view.row.id).view = view

    def forget(self, game_id: str) -> None:
        """Drops the game's view (kept for its lock): the next change loads it again."""
        found = self.slots.get(game_id)
        if found is not None:
            found.view = None

    def discard(self, game_id: str, slot: Slot) -> None:
        if self.slots.get(game_id) is slot:
            del self.slots[game_id]


class GameService:
    def __init__(
        self,
        readers: async_sessionmaker[AsyncSession],
        writers: async_sessionmaker[AsyncSession],
        committer: Committer,
        broker: Broker | None = None,
        clock: Clock = wall_clock_ms,
        *,
        seeds: SeedService | None = None,
    ) -> None:
        self.readers = readers
        self.writers = writers
        self.clock = clock
        self.seeds = seeds
        """The players' seed pairs that deal their random games (SPEC 1.8.2); without them
        (a test's service alone) a random game is dealt from 128 bits of `secrets`."""
        self.committer = committer
        self.broker = broker if broker is not None else LocalBroker()
        self.cache = GameCache()
        self.on_race_change: Callable[[Applied], Awaitable[None]] | None = None
        """Told of every committed change to a race game (the race's standings changed)."""
        self.on_ended: Callable[[str, str, str | None, str], Awaitable[None]] | None = None
        """Told (player id, game id, race id, reason) when a game ends without its player
        choosing it by an action of theirs (the action limit), after the commit."""
        self.session_holds: Callable[[str], Awaitable[bool]] | None = None
        """Whether a session still holds (`SessionService.holds`): asked when a commit that
        tested its session (`act`'s `session`) made nothing."""

    # ---------------------------------------------------------------- games

    async def create_game(
        self,
        player: Principal,
        rule: Rule | None,
        code: DealCode | None,
        *,
        secret: bool = False,
        daily: str | None = None,
        seed: SeedUse | None = None,
    ) -> GameView:
        """Deal a game: from `code`, or from the player's seed pair (SPEC 1.8.2: the next nonce
        of their current pair) as a secret RU2 code of `rule`. A code the player gave is
        *chosen* and shown from the start; a code the server drew (`secret`, or none given) is a
        secret until the game reveals it (SPEC 2.3); `seed` says which pair, nonce and candidate
        dealt a winnable-only one.

        A daily game (`daily` = its UTC date) is ranked for the player's first attempt of that
        day only, and only for a player made before the day began; later ones are practice (a
        unique index decides races). A player has one game of a day's deal in play at a time
        (SPEC 2.5): while one is active, another is `409` (rule `daily_in_play`), so that the
        ranked game cannot wait while a practice one explores the deal."""
        now = self.clock()
        if code is None and self.seeds is not None:
            await self.seeds.ensure(player.id)
        async with self.writers.begin() as session:
            if code is None:
                code, seed = await self._seeded_code(session, player, rule or Rule.CLASSIC)
                secret = True
            elif seed is not None and self.seeds is not None:
                await self.seeds.check_current(session, seed)
            game = Game.deal(code)
            row = new_game_row(player.id, code, game, now, secret=secret, daily=daily, seed=seed)
            if daily is not None:
                await self._check_daily(session, player, daily, code.rule)
                if player.created_ms >= day_start_ms(daily):
                    # A player made on the day plays the daily as practice (SPEC 2.5): a fresh
                    # account cannot solve it with hints and hand the line to another.
                    row = replace(row, practice=True)
            if daily is None or row.practice:
                await game_rows.insert_game(session, row)
            elif not await game_rows.insert_ranked_daily(session, row):
                # The player's ranked attempt of the day exists (it has ended: checked above).
                row = replace(row, practice=True)
                await game_rows.insert_game(session, row)
        view = GameView(row, player.name, game, now)
        self.cache.put(view)
        return view

    async def _seeded_code(
        self, session: AsyncSession, player: Principal, rule: Rule
    ) -> tuple[DealCode, SeedUse | None]:
        if self.seeds is None:
            return DealCode(rule, secrets.randbits(128), 2), None
        reserved = await self.seeds.reserve(session, player.id)
        return reserved.code(rule), reserved.use

    async def _check_daily(
        self, session: AsyncSession, player: Principal, day: str, rule: Rule
    ) -> None:
        # The player's row locked first: two daily deals asked at once check one at a time.
        await player_rows.lock_players(session, [player.id])
        if await game_rows.daily_in_play(session, player.id, day, rule):
            raise DailyInPlay(
                f"Your game of the daily deal of {day} is still in play: finish it or give it up "
                "before dealing the deal again.",
                rule="daily_in_play",
            )

    async def get_game(self, game_id: str, viewer: Principal | None = None) -> GameView:
        view = await self._read(game_id)
        self.check_visible(view, viewer)
        return view

    async def move_log(
        self, game_id: str, viewer: Principal | None = None
    ) -> tuple[GameView, list[LoggedMove]]:
        """The whole move log (a replay; at most MAX_ACTIONS entries)."""
        async with self.readers.begin() as session:
            view = await self._load(session, game_id)
            self.check_visible(view, viewer)
            return view, await game_rows.move_log(session, game_id, view.row.version)

    async def missed(
        self, game_id: str, viewer: Principal | None, since: int | None, most: int
    ) -> tuple[GameView, list[LoggedMove]]:
        """The game, and what a watcher back from version `since` needs to catch up: the last
        log entry at or before `since` (the score as it stood) and the entries after it, when
        there are at most `most` changes to catch up on (else none: the watcher resyncs)."""
        async with self.readers.begin() as session:
            view = await self._load(session, game_id)
            self.check_visible(view, viewer)
            version = view.row.version
            if since is None or not 0 <= version - since <= most:
                return view, []
            log = await game_rows.move_log(session, game_id, since, after=0, limit=None, last=1)
            log += await game_rows.move_log(session, game_id, version, after=since)
        return view, log

    async def move_page(
        self, game_id: str, viewer: Principal | None, *, after: int, limit: int
    ) -> tuple[GameView, list[LoggedMove], bool]:
        """Up to `limit` entries of the move log after sequence number `after`, and whether
        more follow (up to the game's version as read)."""
        async with self.readers.begin() as session:
            view = await self._load(session, game_id)
            self.check_visible(view, viewer)
            log = await game_rows.move_log(
                session, game_id, view.row.version, after=after, limit=limit + 1
            )
        return view, log[:limit], len(log) > limit

    async def targets(self, game_id: str, card: Card, viewer: Principal | None = None) -> list[int]:
        view = await self.get_game(game_id, viewer)
        return view.game.targets(card)

    async def legal(self, game_id: str, viewer: Principal | None = None) -> tuple[GameView, Legal]:
        """Every legal move of the game now and whether an undo would be accepted (SPEC 2.3),
        with the game's visibility. A race game whose deadline has passed takes nothing more,
        so it has none, even before the time-out has ended it; a race game in its countdown
        lists the moves of its position (accepted from `starts_at` on: the list does not
        change at the start)."""
        view = await self.get_game(game_id, viewer)
        deadline = view.row.deadline_ms
        if deadline is not None and view.now_ms >= deadline:
            return view, Legal((), False)
        return view, legal(view.game)

    def check_visible(self, view: GameView, viewer: Principal | None) -> None:
        """A daily game is hidden from everyone but its player until its day ends (UTC), so
        that nobody can copy a line of the day's deal; a race game until its race ends."""
        daily = view.row.daily
        if viewer is not None and viewer.id == view.row.player_id:
            if "read" not in viewer.scopes and self.hidden(view):
                raise MissingScope("read")  # a token that may not read its player's hidden games
            return
        if view.row.race_hidden:
            raise Forbidden(
                "This is a game of a race that is still on: only its racer may see it until "
                "the race ends."
            )
        if daily is None:
            return
        if daily >= utc_day(self.clock()):
            raise Forbidden(
                f"This is a game of the daily deal of {daily}: only its player may see it "
                "until the day ends (UTC)."
            )

    def hidden(self, view: GameView) -> bool:
        """Whether the game is hidden from all but its player now (a race's still on, or of
        today's daily deal)."""
        daily = view.row.daily
        return view.row.race_hidden or (daily is not None and daily >= utc_day(self.clock()))

    async def act(
        self,
        player: Principal,
        game_id: str,
        request: ActionRequest,
        idempotency_key: str | None = None,
        session: str | None = None,
    ) -> Applied:
        """Apply one action to a game (SPEC 2.3).

        With an idempotency key, the answer is stored with the action, and a retry (also one
        that arrives at the same time, in this process or another) gets it back, marked
        `replayed`, instead of applying the action again. With `session`, the player's token was
        not read for this request (`SessionService.known`): the action is committed only if that
        session still holds, tested by the commit itself, and Unauthorized if it does not.
        """

        def decide(view: GameView) -> Decision:
            race_timing(view.row, self.clock())
            if request.expected_version is not None and request.expected_version != (
                view.row.version
            ):
                raise VersionConflict(
                    f"The game is at version {view.row.version}, not {request.expected_version}.",
                    version=view.row.version,
                )
            game = view.game.copy()
            action = game.play(resolve(game, request))
            if view.row.version + 1 >= MAX_ACTIONS and game.status is Status.ACTIVE:
                game.abandon()  # the action limit: the game ends with this action
            return Decision(game, str(action), view.row.assisted)

        fingerprint = request.fingerprint(game_id) if idempotency_key is not None else ""
        try:
            applied = await self._change(
                player, game_id, decide, idempotency_key, fingerprint, session
            )
        except IllegalMove as exc:
            metrics.action_refused(exc.rule)
            raise
        except RaceConflict as exc:
            metrics.action_refused(str(exc.extra.get("rule", "")))
            raise
        if not applied.replayed:
            metrics.action_applied(applied.view.row.rule)
            if applied.move is not None and applied.view.game.status is Status.ABANDONED:
                await self._limit_reached(applied)  # a move that ends a game: the action limit
        return applied

    async def _limit_reached(self, applied: Applied) -> None:
        """Tells the player that the action limit ended their game (`on_ended`), after the
        commit: the change is acknowledged whatever happens here."""
        if self.on_ended is None:
            return
        row = applied.view.row
        try:
            await self.on_ended(row.player_id, row.id, row.race_id, "action_limit")
        except Exception as exc:
            log_fault(log, f"game {row.id}: telling its player of the action limit failed", exc)

    async def abandon(self, player: Principal, game_id: str) -> Applied:
        def decide(view: GameView) -> Decision:
            race_timing(view.row, self.clock(), countdown_ok=True)
            game = view.game.copy()
            game.abandon()
            return Decision(game, None, view.row.assisted)

        return await self._change(player, game_id, decide)

    async def mark_assisted(self, player: Principal, game_id: str) -> Applied:
        """A hint was given: the game is assisted from now on (a change of its own, with a
        version and an event, the first time only). A game that ended while its hint was
        searched for is left as it ended: the hint came too late to help, and a finished
        game's figures (boards, statistics: `server.store.stats`) never change."""

        def decide(view: GameView) -> Decision | None:
            if view.row.assisted or view.game.status is not Status.ACTIVE:
                return None
            return Decision(view.game, None, True)

        return await self._change(player, game_id, decide)

    async def time_out(self, game_id: str, deadline_ms: int, limit_ms: int) -> Applied:
        """A race game still active at its race's deadline ends, timed out: abandoned, its
        clock stopped at the race's deadline after its time limit (`deadline_ms`, `limit_ms`,
        as the race row says). A change like any other (a version, its watchers told, the cache
        swapped on commit), and the only one a game takes at or after its deadline. The server
        decides it: no player's ownership is checked. A game already ended is left as it is
        (`Applied.move` None and the view unchanged)."""

        def decide(view: GameView) -> Decision | None:
            if view.game.status is not Status.ACTIVE or view.row.race_id is None:
                return None
            game = view.game.copy()
            game.abandon()
            return Decision(game, None, view.row.assisted, TimeOut(deadline_ms, limit_ms))

        return await self._change(None, game_id, decide)

    async def _change(
        self,
        player: Principal | None,
        game_id: str,
        decide: Decide,
        key: str | None = None,
        fingerprint: str = "",
        session: str | None = None,
    ) -> Applied:
        """The one path of every change to a game (see the module docstring); `player` is who
        asks (None: the server itself, for a race time-out); `session` must hold for the
        commit to be made (`act`).

        A refusal, or a stale `expected_version`, on a cached view is decided again on a fresh
        read, since the cache may be behind another process; a commit that finds the game at
        another version reloads and decides again. With an idempotency key, a refusal of any
        kind (the engine's: the game is over or the move no longer legal; a stale
        `expected_version`; the race's timing: `race_over`, `race_not_started`) or a conflict
        first looks for the key's stored answer: it is a retry of an applied action, answered
        as it was the first time, before any deadline or state check may refuse it (an action
        applied 1 ms before its race's deadline and retried after it gets its answer, not
        `race_over`). The record is looked for only then, not before every keyed action: a
        retry whose action is still legal is decided again and its commit finds the key taken
        (`Outcome.KEY_TAKEN`), so the answer is the stored one either way, and a first request
        costs no read.
        A committed change to a race game is told to its race once the game's lock is released.
        """
        applied, committed = await self._decided(player, game_id, decide, key, fingerprint, session)
        if committed and applied.view.row.race_id is not None:
            await self._race_changed(applied)
        return applied

    async def _decided(
        self,
        player: Principal | None,
        game_id: str,
        decide: Decide,
        key: str | None,
        fingerprint: str,
        session: str | None,
    ) -> tuple[Applied, bool]:
        """`_change` under the game's lock: the answer, and whether this call committed it."""
        slot = self.cache.slot(game_id)
        async with slot.lock:
            for _ in range(CHANGE_ATTEMPTS):
                fresh = slot.view is None
                if slot.view is None:
                    try:
                        slot.view = await self._read(game_id)
                    except NotFound:
                        self.cache.discard(game_id, slot)
                        raise
                view = slot.view
                if player is not None and view.row.player_id != player.id:
                    raise Forbidden("This game belongs to another player.")
                try:
                    decision = decide(view)
                except (IllegalMove, VersionConflict, RaceConflict) as refusal:
                    # A keyed retry of an applied action gets its stored answer whatever the
                    # game's state or its race's clock says now (race_over, game over, ...).
                    if key is not None and player is not None:
                        stored = await self._stored(player, key, fingerprint)
                        if stored is not None:
                            return stored, False
                    if fresh or isinstance(refusal, RaceConflict):
                        raise  # (a race's timing is the row's: a fresh read would say the same)
                    slot.view = None
                    continue
                now = self.clock()
                if decision is None:
                    return Applied(None, replace(view, now_ms=now)), False
                applied = Applied(
                    decision.move,
                    GameView(
                        next_row(view.row, decision, now), view.player_name, decision.game, now
                    ),
                )
                record = None
                if key is not None and player is not None:
                    answer = encode_answer(applied)  # stored, and sent to the watchers too
                    record = IdempotencyRecord(player.id, key, fingerprint, answer, now)
                outcome = await self.committer.commit(
                    GameCommit(
                        applied.view.row,
                        move=decision.move,
                        at_ms=now,
                        record=record,
                        timed_out=decision.time_out is not None,
                        stats=stats_rows.finish_of(view.row, applied.view.row),
                        session=session,
                    )
                )
                if outcome is Outcome.COMMITTED:
                    slot.view = applied.view
                    await self.broker.published(applied, record.answer if record else None)
                    return applied, True
                if outcome is Outcome.KEY_TAKEN and key is not None and player is not None:
                    stored = await self._stored(player, key, fingerprint)
                    if stored is not None:
                        return stored, False
                    # The key's record has expired (or just gone): the key is fresh, its old
                    # record deleted, and the change decided again on the view (nothing written).
                    await self._forget_expired(player, key)
                    continue
                if session is not None:  # made nothing: the session may have ended
                    if self.session_holds is None or not await self.session_holds(session):
                        raise Unauthorized("The bearer token is not valid.")
                    session = None  # it holds (as a token read at the start would)
                slot.view = None  # another process changed the game: read it again
        raise Busy("Other changes to this game kept coming first; try again.")

    async def _race_changed(self, applied: Applied) -> None:
        """Tells the race of a committed change to one of its games. The change is acknowledged
        whatever happens here: a race that this fails to settle is settled by the race tick."""
        if self.on_race_change is None:
            return
        try:
            await self.on_race_change(applied)
        except Exception as exc:
            row = applied.view.row
            log_fault(log, f"race {row.race_id}: a change to game {row.id}", exc)

    async def _stored(self, player: Principal, key: str, fingerprint: str) -> Applied | None:
        """The stored answer of the player's earlier request with this key, if there is one
        that has not expired (`server.services.idempotency`: 24 hours)."""
        since = fresh_since(self.clock())
        async with self.readers.begin() as session:
            found = await game_rows.idempotency_answer(session, player.id, key, since)
        if found is None:
            return None
        stored_fingerprint, answer = found
        if stored_fingerprint != fingerprint:
            raise IdempotencyKeyReused("This Idempotency-Key was already used for another request.")
        return decode_answer(answer)

    async def _forget_expired(self, player: Principal, key: str) -> None:
        """Deletes the player's record of `key` if it has expired (a key older than 24 hours is
        a fresh key), before the expiry job would."""
        async with self.writers.begin() as session:
            await game_rows.forget_idempotency(session, player.id, key, fresh_since(self.clock()))

    # ---------------------------------------------------------------- internals

    async def _read(self, game_id: str) -> GameView:
        async with self.readers.begin() as session:
            return await self._load(session, game_id)

    async def _load(self, session: AsyncSession, game_id: str) -> GameView:
        found = await game_rows.load_game(session, game_id)
        if found is None:
            raise NotFound(f"There is no game {game_id!r}.")
        row, name = found
        return GameView(row, name, loads(row.snapshot), self.clock())


def next_row(row: GameRecord, decision: Decision, now: int) -> GameRecord:
    """The game's row after a change at `now`: the clock starts at the first move, and stops
    when the game ends (won or abandoned). A daily game still active when its day ends becomes
    practice (unranked) with its first change after it, since its code is public then (SPEC
    2.5); until it changes it is active, and only finished games are ranked."""
    game = decision.game
    started = row.started_ms
    if started is None and decision.move is not None:
        started = now
    finished, elapsed = row.finished_ms, row.elapsed_ms
    if decision.time_out is not None:
        finished, elapsed = decision.time_out.finished_ms, decision.time_out.elapsed_ms
    elif game.status is not Status.ACTIVE and row.status is Status.ACTIVE:
        finished = now
        elapsed = max(0, now - started) if started is not None else 0
    # A daily game changed after its UTC day (its code now public) is practice from then on.
    practice = row.practice or (row.daily is not None and utc_day(now) > row.daily)
    return replace(
        row,
        practice=practice,
        active_ms=now,
        status=game.status,
        score=game.score,
        moves=game.moves,
        ranked_score=game.ranked_score,
        version=row.version + 1,
        snapshot=dumps(game),
        started_ms=started,
        finished_ms=finished,
        elapsed_ms=elapsed,
        assisted=decision.assisted,
        timed_out=row.timed_out or decision.time_out is not None,
    )


def new_game_row(
    player_id: str,
    code: DealCode,
    game: Game,
    now: int,
    *,
    secret: bool,
    daily: str | None = None,
    race_id: str | None = None,
    starts_ms: int | None = None,
    deadline_ms: int | None = None,
    seed: SeedUse | None = None,
) -> GameRecord:
    """The row of a game just dealt (`game`, of `code`) to a player at `now`: the one factory of
    a new game, for a game asked for (`GameService.create_game`) and a racer's (the start of a
    race). A code the player gave is chosen, not `secret`; a daily game is ranked unless the
    player's attempt of the day exists. A race game (`race_id`) is practice, hidden until its
    race ends, its clock starting at the race's `starts_ms` and stopping at `deadline_ms`."""
    racing = race_id is not None
    return GameRecord(
        id=str(uuid.uuid4()),
        player_id=player_id,
        code=str(code),
        rule=code.rule,
        chosen=not secret,
        status=game.status,
        score=0,
        moves=0,
        version=0,
        snapshot=dumps(game),
        created_ms=now,
        started_ms=starts_ms,
        finished_ms=None,
        elapsed_ms=None,
        assisted=False,
        daily=daily,
        practice=racing,
        secret_deal=secret,
        ranked_score=0,
        race_id=race_id,
        timed_out=False,
        deadline_ms=deadline_ms,
        race_hidden=racing,
        active_ms=now,
        seed_pair_id=seed.pair_id if seed else None,
        seed_hash=seed.server_seed_hash if seed else None,
        seed_client=seed.client_seed if seed else None,
        seed_nonce=seed.nonce if seed else None,
        seed_candidate=seed.candidate if seed else None,
    )


def race_timing(row: GameRecord, now: int, *, countdown_ok: bool = False) -> None:
    """A race game takes no action before its race's start (an abandonment excepted) nor at or
    after its deadline (the commit is conditional on the deadline too)."""
    if row.deadline_ms is None:
        return
    if not countdown_ok and row.started_ms is not None and now < row.started_ms:
        raise RaceConflict(
            "The race has not started yet: wait for the countdown.", rule="race_not_started"
        )
    if now >= row.deadline_ms:
        raise RaceConflict("The race is over: its time limit has passed.", rule="race_over")


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
