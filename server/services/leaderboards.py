"""Use-cases of the leaderboards, player statistics, game listings and export (SPEC 2.5).

Periods are calendar periods in UTC: `day` since today's midnight, `week` since Monday's,
`month` since the first of the month, `all` for ever.

Every cursor the API gives out (the boards, a player's games, the live games, the races) is made
by `Cursors`: opaque to clients, base64url JSON of the last row's position and a fingerprint of
the list it belongs to, signed with HMAC-SHA256 under the server's `cursor_secret` (kept in the
database like the deal secret, so every process accepts every process's cursors). A cursor
that does not decode, fails the signature or belongs to another list is refused (422). A cursor
carries no rank: the rank of the rows after it is counted in the database.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, timedelta

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.engine import DealCode, Rule, Status
from server.engine.snapshot import loads
from server.services.cursors import Cursors, fingerprint
from server.services.errors import NotFound
from server.services.values import Clock, GameView, Page, Principal, wall_clock_ms
from server.store import deals as deal_rows
from server.store import games as game_rows
from server.store import leaderboards as board_rows
from server.store import players as player_rows
from server.store import races as race_store
from server.store import stats as stats_rows
from server.store.records import GameRecord, LoggedMove, code_revealed, utc_day

PERIODS = ("day", "week", "month", "all")
RACE_MU = 25.0
RACE_SIGMA = 25.0 / 3
"""The OpenSkill rating of a player who has not raced yet (the package's defaults)."""
BOARD_KINDS = ("score", "time", "moves")
EXPORT_CHUNK = 100
"""An export reads a player's games this many rows at a time..."""
EXPORT_ACTIONS = 1_000
"""...and their move logs in batches of at most this many actions (a longer game alone, its
log read this many entries a statement)."""


def period_start(period: str, now_ms: int) -> int | None:
    if period == "all":
        return None
    now = datetime.fromtimestamp(now_ms / 1000, UTC)
    start = now.replace(hour=0, minute=0, second=0, microsecond=0)
    if period == "week":
        start -= timedelta(days=start.weekday())
    elif period == "month":
        start = start.replace(day=1)
    return int(start.timestamp() * 1000)


def day_end(day: str) -> int:
    """The end of a UTC date (YYYY-MM-DD), in milliseconds."""
    start = datetime.strptime(day, "%Y-%m-%d").replace(tzinfo=UTC)
    return int((start + timedelta(days=1)).timestamp() * 1000)


@dataclass(frozen=True, slots=True)
class BoardEntry:
    """A row of a leaderboard at its rank. `code` is the row's deal code as it may be shown at
    the board's `now_ms` (SPEC 2.3 "Fair play"): None while the deal is a secret."""

    rank: int
    row: board_rows.BoardRow
    code: str | None


@dataclass(frozen=True, slots=True)
class BoardPage(Page[BoardEntry]):
    """A page of a leaderboard, with the board it is of (its rule is the deal's, for a deal's
    board) as read at `now_ms`."""

    now_ms: int
    code: str | None
    """The board's deal code as it may be shown (a daily deal's only once its day is over)."""
    rule: Rule
    by: str
    period: str
    daily: str | None
    assisted: bool


class BoardService:
    def __init__(
        self,
        readers: async_sessionmaker[AsyncSession],
        cursors: Cursors,
        clock: Clock = wall_clock_ms,
    ) -> None:
        self.readers = readers
        self.cursors = cursors
        self.clock = clock

    async def leaderboard(
        self,
        *,
        rule: Rule,
        by: str,
        period: str,
        assisted: bool,
        code: str | None,
        daily: str | None,
        limit: int,
        after: str | None,
    ) -> BoardPage:
        """A page of the board of `rule` (a deal's board is of the deal's rule, whatever `rule`
        says), each entry's code decided at the board's `now`."""
        if code is not None:
            rule = DealCode.parse(code).rule
        board = fingerprint("board", rule, by, period, assisted, code, daily)
        now = self.clock()
        until = None
        shown = code
        if daily is not None:
            # The daily board: the day's deal of the rule, games finished within the day.
            async with self.readers.begin() as session:
                code = await deal_rows.daily_deal(session, daily, rule)
            shown = code if code_revealed(True, daily, Status.WON, now) else None
            until = day_end(daily)
        position: tuple[int, int, str] | None = None
        if after is not None:
            key, finished, game_id = self.cursors.decode(after, board, (int, int, str))
            position = (key, finished, game_id)
        if daily is not None and code is None:  # no deal was drawn that day
            return BoardPage([], None, now, None, rule, by, period, daily, assisted)
        query = board_rows.BoardQuery(
            rule=rule,
            by=by,
            assisted=assisted,
            code=code,
            daily=daily,
            since_ms=period_start(period, now),
            until_ms=until,
            after=position,
            limit=limit + 1,
        )
        async with self.readers.begin() as session:
            rows = await board_rows.board(session, query)
            # The rank is counted here, never taken from the client: the entries up to the
            # cursor's position, read from the board's index.
            rank = await board_rows.board_rank(session, query) if rows and position else 0
        more = len(rows) > limit
        rows = rows[:limit]
        ranked = [
            BoardEntry(rank + i + 1, row, row.code if revealed(row, now) else None)
            for i, row in enumerate(rows)
        ]
        next_cursor = None
        if more and rows:
            last = rows[-1]
            next_cursor = self.cursors.encode(
                [last.sort_key(by), last.finished_ms, last.game_id], board
            )
        return BoardPage(ranked, next_cursor, now, shown, rule, by, period, daily, assisted)

    async def stats(self, player_id: str) -> PlayerStats:
        """The player's statistics of every rule (SPEC 2.5), as kept while their games finish
        (`server.store.stats`): a few rows whatever the player's history. The figures are
        those `rule_stats` computes from the player's finished games."""
        async with self.readers.begin() as session:
            player = await player_rows.player_by_id(session, player_id)
            if player is None:
                raise NotFound(f"There is no player {player_id!r}.")
            kept = await stats_rows.totals(session, player_id)
            ratings = {rule: await race_store.rating_of(session, player_id, rule) for rule in Rule}
        today = datetime.fromtimestamp(self.clock() / 1000, UTC).date()
        rules = {}
        for rule in Rule:
            rating = ratings[rule]
            race = (
                RaceRating(rating.mu, rating.sigma, rating.ordinal, rating.races)
                if rating is not None
                else RaceRating(RACE_MU, RACE_SIGMA, 0.0, 0)
            )
            rules[rule] = kept_stats(kept[rule], today, race)
        return PlayerStats(player_id, player.name, rules)

    async def live_games(self, *, limit: int, after: str | None) -> Page[GameView]:
        """Games in play that anyone may watch, most recently active first: not daily games
        before their day ends, not race games before their race ends."""
        position = None
        if after is not None:
            active, game_id = self.cursors.decode(after, "live", (int, str))
            position = (active, game_id)
        now = self.clock()
        async with self.readers.begin() as session:
            rows = await game_rows.live_games(
                session, utc_day(now), limit=limit + 1, after=position
            )
        more = len(rows) > limit
        rows = rows[:limit]
        views = [GameView(row, name, loads(row.snapshot), now) for row, name in rows]
        cursor = None
        if more and rows:
            last = rows[-1][0]
            cursor = self.cursors.encode([last.active_ms or 0, last.id], "live")
        return Page(views, cursor)

    def _seen_by(self, f: game_rows.GameFilter, viewer: Principal | None) -> game_rows.GameFilter:
        """The filter as `viewer` may see the player's games: others see no daily game before
        its day ends, and no race game before its race ends; nor does the player's own token
        without the `read` scope."""
        if viewer is not None and viewer.id == f.player_id and "read" in viewer.scopes:
            return f
        return replace(f, hide_daily_from=utc_day(self.clock()))

    async def games(
        self,
        f: game_rows.GameFilter,
        viewer: Principal | None,
        *,
        after: str | None,
        limit: int,
    ) -> Page[GameView]:
        """A page of a player's games (`f`) as `viewer` may see them, newest first."""
        f = self._seen_by(f, viewer)
        board = fingerprint("games", f)
        position = None
        if after is not None:
            created, game_id = self.cursors.decode(after, board, (int, str))
            position = (created, game_id)
        async with self.readers.begin() as session:
            player = await player_rows.player_by_id(session, f.player_id)
            if player is None:
                raise NotFound(f"There is no player {f.player_id!r}.")
            rows = await game_rows.player_games(session, f, after=position, limit=limit + 1)
        more = len(rows) > limit
        rows = rows[:limit]
        now = self.clock()
        views = [GameView(r, player.name, loads(r.snapshot), now) for r in rows]
        next_cursor = None
        if more and rows:
            next_cursor = self.cursors.encode([rows[-1].created_ms, rows[-1].id], board)
        return Page(views, next_cursor)

    async def export(
        self, f: game_rows.GameFilter, viewer: Principal | None
    ) -> AsyncIterator[list[tuple[GameView, list[LoggedMove]]]]:
        """The player's finished games (of those `f` asks for) as `viewer` may see them, oldest
        first, with their move logs, in batches (`_export`: never all in memory)."""
        finished = [
            s for s in (f.status or (Status.WON, Status.ABANDONED)) if s is not Status.ACTIVE
        ]
        f = replace(self._seen_by(f, viewer), status=finished)
        async with self.readers.begin() as session:
            player = await player_rows.player_by_id(session, f.player_id)
            if player is None:
                raise NotFound(f"There is no player {f.player_id!r}.")
            name = player.name
        return self._export(f, name)

    async def every_game(
        self, viewer: Principal
    ) -> AsyncIterator[list[tuple[GameView, list[LoggedMove]]]]:
        """Every game of the viewer's own, in play or ended, as they may see them, oldest first,
        with their move logs, in batches (their data export, SPEC 2.2.2)."""
        f = self._seen_by(game_rows.GameFilter(player_id=viewer.id), viewer)
        return self._export(f, viewer.name)

    async def _export(
        self, f: game_rows.GameFilter, name: str
    ) -> AsyncIterator[list[tuple[GameView, list[LoggedMove]]]]:
        """The games of `f` in batches of at most EXPORT_ACTIONS actions (a longer game alone),
        whatever the player's history: the rows EXPORT_CHUNK at a time, each batch's logs read
        in a transaction of its own (none is held while the caller writes a batch out), each
        log up to its game's version as read (a game in play may have moved since). The games'
        states are loaded in a thread: a long game's history is checked as it loads."""
        position: tuple[int, str] | None = None
        now = self.clock()
        while True:
            async with self.readers.begin() as session:
                rows = await game_rows.player_games(
                    session, f, after=position, limit=EXPORT_CHUNK, newest_first=False
                )
            for batch in action_batches(rows, EXPORT_ACTIONS):
                async with self.readers.begin() as session:
                    if len(batch) == 1 and batch[0].version > EXPORT_ACTIONS:
                        logs = {batch[0].id: await long_log(session, batch[0])}
                    else:
                        logs = await game_rows.move_logs(session, [r.id for r in batch])
                views = await asyncio.to_thread(_views, batch, name, now)
                yield [
                    (view, [m for m in logs[view.row.id] if m.seq <= view.row.version])
                    for view in views
                ]
            if len(rows) < EXPORT_CHUNK:
                return
            position = (rows[-1].created_ms, rows[-1].id)


async def long_log(session: AsyncSession, row: GameRecord) -> list[LoggedMove]:
    """A long game's move log up to its version, EXPORT_ACTIONS entries a statement (no step of
    the event loop handles more rows than that)."""
    log: list[LoggedMove] = []
    while True:
        after = log[-1].seq if log else 0
        page = await game_rows.move_log(
            session, row.id, row.version, after=after, limit=EXPORT_ACTIONS
        )
        log += page
        if len(page) < EXPORT_ACTIONS:
            return log


def action_batches(rows: list[GameRecord], most: int) -> list[list[GameRecord]]:
    """`rows` in order, cut into runs of at most `most` actions (their versions) each; a game
    longer than that is a run of its own."""
    batches: list[list[GameRecord]] = []
    batch: list[GameRecord] = []
    size = 0
    for row in rows:
        if batch and size + row.version > most:
            batches.append(batch)
            batch, size = [], 0
        batch.append(row)
        size += row.version
    if batch:
        batches.append(batch)
    return batches


def _views(rows: list[GameRecord], name: str, now: int) -> list[GameView]:
    return [GameView(row, name, loads(row.snapshot), now) for row in rows]


def revealed(row: board_rows.BoardRow, now_ms: int) -> bool:
    """Whether a board row's deal code may be shown at `now_ms` (SPEC 2.3 "Fair play")."""
    return code_revealed(row.secret_deal, row.daily, row.status, now_ms)


@dataclass(frozen=True, slots=True)
class RaceRating:
    """A player's race rating of one rule (the starting rating before a first race)."""

    mu: float
    sigma: float
    ordinal: float
    races: int


@dataclass(frozen=True, slots=True)
class RuleStats:
    """A player's statistics of one rule (SPEC 2.5)."""

    played: int
    won: int
    win_rate: float
    best_score: int | None
    best_ranked_score: int | None
    best_time_ms: int | None
    fewest_moves: int | None
    current_streak: int
    longest_streak: int
    clean_wins: int
    daily_streak: int
    race: RaceRating


@dataclass(frozen=True, slots=True)
class PlayerStats:
    player_id: str
    name: str
    rules: dict[Rule, RuleStats]


def kept_stats(kept: stats_rows.Totals, today: date, race: RaceRating) -> RuleStats:
    """Statistics of one rule from what is kept of it (`server.store.stats`): the same figures
    as `rule_stats` of the player's finished games of the rule."""
    return RuleStats(
        played=kept.played,
        won=kept.won,
        win_rate=round(kept.won / kept.played, 4) if kept.played else 0.0,
        best_score=kept.best_score,
        best_ranked_score=kept.best_ranked_score,
        best_time_ms=kept.best_time_ms,
        fewest_moves=kept.fewest_moves,
        current_streak=kept.current_streak,
        longest_streak=kept.longest_streak,
        clean_wins=kept.clean_wins,
        daily_streak=kept.daily_streak(today),
        race=race,
    )


def rule_stats(games: list[game_rows.FinishedGame], today: date, race: RaceRating) -> RuleStats:
    """Statistics of one rule from a player's finished games in finishing order, from scratch:
    the definition of what `server.store.stats` keeps (its tests compare the two)."""
    won = [g for g in games if g.status is Status.WON]
    streak = longest = 0
    for g in games:
        streak = streak + 1 if g.status is Status.WON else 0
        longest = max(longest, streak)
    daily_days = sorted(
        {g.daily for g in games if g.daily is not None and g.status is Status.WON}, reverse=True
    )
    daily_streak = 0
    expected = today
    for day_text in daily_days:
        day = datetime.strptime(day_text, "%Y-%m-%d").date()
        if daily_streak == 0 and day == today - timedelta(days=1):
            expected = day  # a streak is still alive until today's daily is missed
        if day != expected:
            break
        daily_streak += 1
        expected = day - timedelta(days=1)
    times = [g.elapsed_ms for g in won if g.elapsed_ms is not None]
    return RuleStats(
        played=len(games),
        won=len(won),
        win_rate=round(len(won) / len(games), 4) if games else 0.0,
        best_score=max((g.score for g in games), default=None),
        best_ranked_score=max((g.ranked_score for g in games), default=None),
        best_time_ms=min(times, default=None),
        fewest_moves=min((g.moves for g in won), default=None),
        current_streak=streak,
        longest_streak=longest,
        clean_wins=sum(1 for g in won if not g.assisted),
        daily_streak=daily_streak,
        race=race,
    )
