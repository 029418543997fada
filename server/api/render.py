"""The wire format out, every JSON document, from the values the services hand over: players
(sign-up, profile, settings, statistics), games, moves, targets and hints, a deal's verdict and
the daily deal, replays (and the export's NDJSON lines) and their verification, races, the
leaderboards and every page of a list, as JSON-ready dicts; and the WebSocket's messages
(`server.api.schemas`' `...Out` models) as text. A change is rendered once per version for all
its watchers in a process (`LiveTexts`). Handlers only parse, call a use-case and render here."""

from __future__ import annotations

import dataclasses
import functools
import json
from datetime import UTC, datetime
from typing import Any

import orjson
from aiohttp import web

from server.api.rules import rule_url
from server.api.schemas import (
    NOTICES,
    AbandonedOut,
    EventOut,
    FollowingMeOut,
    HintedOut,
    MissedEventOut,
    NoticeOut,
    RaceOut,
    ResultOut,
    ResyncOut,
    ServerMessage,
    WatchingOut,
    WatchingRaceOut,
)
from server.engine import Card, DealCode, card_text, place_text
from server.engine.codes import commitment
from server.engine.legal import Legal
from server.engine.replay import Verification
from server.services.deals import Daily, Hint
from server.services.leaderboards import BoardPage, PlayerStats
from server.services.notices import Notice
from server.services.players import Me, NewPlayer, PlayerInfo
from server.services.races.ratings import RatingPage
from server.services.races.standings import RaceView, Standing
from server.services.seeds import EndedPair, Seeds
from server.services.sessions import NewSession, SessionInfo
from server.services.values import Applied, GameView, Page
from server.store.players import ERASED_NAME
from server.store.records import GameRecord, LoggedMove


def json_response(
    data: Any, status: int = 200, headers: dict[str, str] | None = None
) -> web.Response:
    """`data` as UTF-8 JSON. Encoded by orjson: a move's answer took 9.5 µs through the standard
    library's encoder and takes 1.7 µs (bench/load.py: about 2% of a move's CPU)."""
    return web.Response(
        body=orjson.dumps(data, option=orjson.OPT_NON_STR_KEYS),
        status=status,
        content_type="application/json",
        charset="utf-8",
        headers=headers,
    )


def next_link(request: web.Request, cursor: str | None) -> dict[str, str]:
    if cursor is None:
        return {}
    url = request.rel_url.update_query(after=cursor)
    return {"Link": f'<{url}>; rel="next"'}


REPLAY_FORMAT = "russian-solitaire-replay"
REPLAY_VERSION = 1


def player_ref(player_id: str, name: str) -> dict[str, str | None]:
    """A player as a game, a race or a board names them: an erased player is "deleted player",
    with no name and no id (SPEC 2.2.2)."""
    if name == ERASED_NAME:
        return {"id": None, "name": None}
    return {"id": player_id, "name": name}


def iso(ms: int | None) -> str | None:
    if ms is None:
        return None
    return (
        datetime.fromtimestamp(ms / 1000, UTC)
        .isoformat(timespec="milliseconds")
        .replace("+00:00", "Z")
    )


def action_json(applied: Applied) -> dict[str, Any]:
    """The answer to an accepted action: `{"move": ..., "game": ...}` (HTTP and WebSocket)."""
    return {"move": applied.move, "game": game_json(applied.view)}


@functools.lru_cache(maxsize=4096)
def deal_commitment(code: str) -> str:
    """The commitment of a stored code (SPEC 1.8.1), computed once per code."""
    return commitment(code)


def code_json(row: GameRecord, now_ms: int) -> str | None:
    """The game's deal code, or None while it is a secret (SPEC 2.3 "Fair play")."""
    return row.code if row.code_revealed(now_ms) else None


def game_json(view: GameView) -> dict[str, Any]:
    row, game = view.row, view.game
    return {
        "id": row.id,
        "code": code_json(row, view.now_ms),
        "deal_commitment": deal_commitment(row.code),
        "rule": row.rule,
        "chosen": row.chosen,
        "daily": row.daily,
        "status": row.status,
        "player": player_ref(row.player_id, view.player_name),
        "score": game.score,
        "ranked_score": row.ranked_score,
        "moves": game.moves,
        "elapsed_ms": view.elapsed_ms,
        "undo_available": game.undo_available,
        "version": row.version,
        "assisted": row.assisted,
        "race_id": row.race_id,
        "timed_out": row.timed_out,
        "seed": game_seed_json(row),
        "tableau": game.tableau_view(),
        "foundations": game.foundations_view(),
        "created_at": iso(row.created_ms),
        "finished_at": iso(row.finished_ms),
    }


def moves_json(view: GameView, log: list[LoggedMove], more: bool) -> dict[str, Any]:
    """A page of the move log; `next` is the `after` of the next page (null on the last)."""
    return {
        "game_id": view.row.id,
        "version": view.row.version,
        "moves": [
            {"seq": m.seq, "move": m.move, "score": m.score, "at": iso(m.at_ms)} for m in log
        ],
        "next": log[-1].seq if more and log else None,
    }


def deal_json(code: DealCode) -> list[list[str]]:
    return [[card_text(c) for c in column] for column in code.columns()]


def game_seed_json(row: GameRecord) -> dict[str, Any] | None:
    """What dealt a server-dealt solo game (SPEC 1.8.2): its pair's server seed's hash, the
    client seed, the nonce and the candidate (null for a plain random game); null for chosen,
    daily and race games (a race's seed is on the race) and games dealt before seeds."""
    if row.seed_hash is None:
        return None
    return {
        "server_seed_hash": row.seed_hash,
        "client_seed": row.seed_client,
        "nonce": row.seed_nonce,
        "candidate": row.seed_candidate,
    }


def replay_seed_json(row: GameRecord, revealed: str | None, now_ms: int) -> dict[str, Any] | None:
    """A solo game's seed in its replay: the game document's, with `server_seed` (hex) once
    its pair has been rotated away (`revealed`) and the game's code is shown."""
    seed = game_seed_json(row)
    if seed is None:
        return None
    shown = revealed if revealed is not None and row.code_revealed(now_ms) else None
    return {**seed, "server_seed": shown}


def replay_json(
    view: GameView, log: list[LoggedMove], seed: dict[str, Any] | None = None
) -> dict[str, Any]:
    """The replay (SPEC 2.4): the code and the deal only once the game has ended and its code
    is revealed; the commitment always; `seed`, what dealt it (`server.api.seeding`)."""
    row, game = view.row, view.game
    started = row.started_ms
    code = code_json(row, view.now_ms)
    return {
        "format": REPLAY_FORMAT,
        "version": REPLAY_VERSION,
        "game_id": row.id,
        "code": code,
        "deal_commitment": deal_commitment(row.code),
        "rule": row.rule,
        "player": player_ref(row.player_id, view.player_name),
        "deal": deal_json(game.code) if code is not None and row.status != "active" else None,
        "seed": seed,
        "actions": [
            {"move": m.move, "t_ms": max(0, m.at_ms - started) if started is not None else 0}
            for m in log
        ],
        "result": {
            "status": row.status,
            "score": game.score,
            "ranked_score": row.ranked_score,
            "moves": game.moves,
            "elapsed_ms": view.elapsed_ms,
        },
        "created_at": iso(row.created_ms),
        "finished_at": iso(row.finished_ms),
    }


def race_json(view: RaceView) -> dict[str, Any]:
    """The race document (SPEC 2.6.1): standings carry progress, never a card; the code is null
    until the race has finished, its commitment until the countdown began; an open race has no
    games, no standings. Its server seed's hash from its creation; the seed (hex), the client
    seeds and the candidate that made the deal once it has finished (SPEC 1.8.2); every seed
    member null for a race made before seeds."""
    race = view.race
    finished = race.status == "finished"
    games = {
        s.player_id: s.game_id
        for s in view.seats
        if s.game_id is not None and s.name != ERASED_NAME
    }
    return {
        "id": race.id,
        "rule": race.rule,
        "status": view.status,
        "seats": race.seats,
        "public": race.public,
        "winnable": race.winnable,
        "time_limit_s": race.time_limit_s,
        "creator": player_ref(race.creator_id, view.creator_name),
        "players": [player_ref(s.player_id, s.name) for s in view.seats],
        "created_at": iso(race.created_ms),
        "starts_at": iso(race.starts_ms),
        "ended_at": iso(race.ended_ms),
        "now": iso(view.now_ms),
        "deal_commitment": deal_commitment(race.code) if race.code is not None else None,
        "code": race.code if finished else None,
        "server_seed_hash": race.server_seed_hash,
        "server_seed": view.server_seed if finished else None,
        "client_seeds": list(race.client_seeds) if finished and race.client_seeds else None,
        "candidate": race.candidate if finished else None,
        "games": games,
        "standings": [standing_json(s) for s in view.standings()],
    }


def standing_json(s: Standing) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "player": player_ref(s.player_id, s.name),
        "status": s.status,
        "foundation_cards": s.foundation_cards,
        "ranked_score": s.ranked_score,
        "moves": s.moves,
        "elapsed_ms": s.elapsed_ms,
        "finished_at": iso(s.finished_ms),
        "place": s.place,
    }
    if s.rating is not None:
        mu_before, sigma_before, mu_after, sigma_after = s.rating
        entry["rating"] = {
            "before": {
                "mu": mu_before,
                "sigma": sigma_before,
                "ordinal": mu_before - 3 * sigma_before,
            },
            "after": {"mu": mu_after, "sigma": sigma_after, "ordinal": mu_after - 3 * sigma_after},
        }
    return entry


def rating_json(mu: float, sigma: float) -> dict[str, float]:
    """An OpenSkill rating; its ordinal is mu - 3 sigma (the `openskill` package's)."""
    return {"mu": mu, "sigma": sigma, "ordinal": mu - 3 * sigma}


# ---------------------------------------------------------------- players


def new_player_json(player: NewPlayer) -> dict[str, Any]:
    """The answer to a sign-up: with a sign-in's, the only documents that carry a token."""
    return {
        "id": player.id,
        "name": player.name,
        "token": player.token,
        "session": session_json(player.session),
    }


def session_json(info: SessionInfo) -> dict[str, Any]:
    """A session as its player sees it (SPEC 2.2): never its token."""
    app = None if info.client_id is None else {"client_id": info.client_id, "name": info.client_id}
    return {
        "id": info.id,
        "label": info.label,
        "created_at": iso(info.created_ms),
        "last_used_at": iso(info.last_used_ms),
        "scopes": list(info.scopes),
        "app": app,
        "current": info.current,
    }


def new_session_json(made: NewSession) -> dict[str, Any]:
    return {
        "token": made.token,
        "session": session_json(made.session),
        "player": {"id": made.player_id, "name": made.player_name},
    }


def sessions_json(sessions: list[SessionInfo]) -> dict[str, Any]:
    return {"sessions": [session_json(info) for info in sessions]}


def seeds_json(seeds: Seeds) -> dict[str, Any]:
    return {
        "server_seed_hash": seeds.server_seed_hash,
        "client_seed": seeds.client_seed,
        "nonce": seeds.nonce,
        "next_server_seed_hash": seeds.next_server_seed_hash,
    }


def ended_pair_json(pair: EndedPair) -> dict[str, Any]:
    return {
        "index": pair.position,
        "server_seed": pair.server_seed,
        "server_seed_hash": pair.server_seed_hash,
        "client_seed": pair.client_seed,
        "nonces": pair.nonces,
        "created_at": iso(pair.created_ms),
        "ended_at": iso(pair.ended_ms),
    }


def me_json(me: Me) -> dict[str, Any]:
    return {
        "id": me.id,
        "name": me.name,
        "created_at": iso(me.created_ms),
        "has_password": me.has_password,
        "session": session_json(me.session),
    }


def player_json(player: PlayerInfo) -> dict[str, Any]:
    """A player's public profile."""
    return {"id": player.id, "name": player.name, "created_at": iso(player.created_ms)}


def settings_json(player: PlayerInfo) -> dict[str, Any]:
    """A player's play settings (SPEC 1.7)."""
    return {"player_id": player.id, **player.settings}


def stats_json(stats: PlayerStats) -> dict[str, Any]:
    """A player's statistics, per rule (`BoardService.stats`)."""
    return {
        "player": {"id": stats.player_id, "name": stats.name},
        "rules": {rule.value: dataclasses.asdict(s) for rule, s in stats.rules.items()},
    }


def games_page_json(page: Page[GameView]) -> dict[str, Any]:
    """A page of games: a player's, or the games being played now."""
    return {"games": [game_json(view) for view in page.items], "next": page.next}


# ---------------------------------------------------------------- placement help and the solver


def targets_json(card: Card, places: list[int]) -> dict[str, Any]:
    """Where `card` may go now (placement help)."""
    return {"card": str(card), "targets": [place_text(p) for p in places]}


def legal_json(view: GameView, found: Legal) -> dict[str, Any]:
    """Every legal move of a game now, in move text and the order of SPEC 2.3, its version and
    whether an undo would be accepted."""
    return {
        "version": view.row.version,
        "moves": [str(move) for move in found.moves],
        "undo": found.undo,
    }


def hint_json(hint: Hint) -> dict[str, Any]:
    return {"status": hint.status, "move": hint.move, "line_length": hint.line_length}


def verdict_json(code: DealCode, take_backs: bool, verdict: tuple[str, int]) -> dict[str, Any]:
    """The solver's verdict on a deal: its status and the nodes searched."""
    status, nodes = verdict
    return {"code": str(code), "take_backs": take_backs, "status": status, "nodes": nodes}


def daily_json(daily: Daily) -> dict[str, Any]:
    """The daily deal: its code only once revealed, its commitment always, its board."""
    day, rule, code = daily.day, daily.rule.value, daily.code
    return {
        "date": day,
        "rule": rule,
        "code": str(code) if daily.revealed else None,
        "deal_commitment": code.commitment,
        "reveals_at": iso(daily.reveals_ms),
        "leaderboard": f"/api/v1/leaderboards?daily={day}&rule={rule}",
    }


def upcoming_json(rule: str, days: list[tuple[str, str]]) -> dict[str, Any]:
    """The commitments of the coming days' daily deals (never a code)."""
    return {"rule": rule, "days": [{"date": day, "deal_commitment": c} for day, c in days]}


# ---------------------------------------------------------------- replays' verification


def verification_json(code: DealCode, result: Verification) -> dict[str, Any]:
    """The verdict on a replay, replayed."""
    return {
        "valid": result.valid,
        "code": str(code),
        "status": result.status,
        "score": result.score,
        "ranked_score": result.ranked_score,
        "moves": result.moves,
        "failed_index": result.failed_index,
        "rule": result.rule,
        "rule_url": rule_url(result.rule) if result.rule is not None else None,
        "reason": result.reason,
    }


def refused_json(code: DealCode, rule: str, reason: str) -> dict[str, Any]:
    """The verdict on a replay whose code or deal does not hold (it is not replayed)."""
    return {
        "valid": False,
        "code": str(code),
        "status": None,
        "score": None,
        "ranked_score": None,
        "moves": None,
        "failed_index": None,
        "rule": rule,
        "rule_url": rule_url(rule),
        "reason": reason,
    }


# ---------------------------------------------------------------- boards and races' pages


def board_page_json(page: BoardPage) -> dict[str, Any]:
    """A page of a score, time or moves board; each entry's code as the service decided it."""
    return {
        "rule": page.rule.value,
        "by": page.by,
        "period": page.period,
        "code": page.code,
        "daily": page.daily,
        "assisted": page.assisted,
        "entries": [
            {
                "rank": entry.rank,
                "player": player_ref(entry.row.player_id, entry.row.player_name),
                "game_id": entry.row.game_id,
                "code": entry.code,
                "status": entry.row.status,
                "score": entry.row.score,
                "ranked_score": entry.row.ranked_score,
                "time_ms": entry.row.elapsed_ms,
                "moves": entry.row.moves,
                "finished_at": iso(entry.row.finished_ms),
            }
            for entry in page.items
        ],
        "next": page.next,
    }


def races_page_json(page: Page[RaceView]) -> dict[str, Any]:
    """A page of the public races."""
    return {"races": [race_json(view) for view in page.items], "next": page.next}


def race_board_json(page: RatingPage) -> dict[str, Any]:
    """A page of the race board: players by their race rating's ordinal."""
    return {
        "rule": page.rule.value,
        "entries": [
            {
                "rank": rank,
                "player": player_ref(row.player_id, row.name),
                "mu": row.mu,
                "sigma": row.sigma,
                "ordinal": row.ordinal,
                "races": row.races,
            }
            for rank, row in page.items
        ],
        "next": page.next,
    }


# ---------------------------------------------------------------- the WebSocket's messages


def message_text(message: ServerMessage) -> str:
    """A message of the WebSocket as sent. A lone surrogate (in an `id` a client chose) is no
    UTF-8: the text then escapes it, as JSON allows."""
    data = message.model_dump()
    text = json.dumps(data, ensure_ascii=False)
    try:
        text.encode()
    except UnicodeEncodeError:
        text = json.dumps(data)
    return text


def result_message(mid: str | int | None, applied: Applied) -> ResultOut:
    """The answer to an accepted `act`: the HTTP action's response with the game's id and
    version."""
    assert applied.move is not None, "an action is a move"
    row = applied.view.row
    return ResultOut(
        id=mid,
        game_id=row.id,
        version=row.version,
        move=applied.move,
        game=game_json(applied.view),
        replayed=applied.replayed,
    )


def abandoned_message(mid: str | int | None, applied: Applied) -> AbandonedOut:
    """The answer to an accepted `abandon`: the game after it, as HTTP answers."""
    row = applied.view.row
    return AbandonedOut(id=mid, game_id=row.id, version=row.version, game=game_json(applied.view))


def hinted_message(mid: str | int | None, game_id: str, hint: Hint) -> HintedOut:
    """The answer to `hint`: HTTP's hint document."""
    return HintedOut(id=mid, game_id=game_id, hint=hint_json(hint))


def event_message(applied: Applied) -> EventOut:
    """The message pushed to a game's watchers after an accepted change (`move` is None for a
    change that is not a move: an abandonment, a hint). Face-down cards are null."""
    view = applied.view
    return EventOut(
        game_id=view.row.id, version=view.row.version, move=applied.move, game=game_json(view)
    )


def watching_message(mid: str | int | None, view: GameView) -> WatchingOut:
    row = view.row
    return WatchingOut(id=mid, game_id=row.id, version=row.version, game=game_json(view))


def resync_message(mid: str | int | None, view: GameView) -> ResyncOut:
    row = view.row
    return ResyncOut(id=mid, game_id=row.id, version=row.version, game=game_json(view))


def missed_messages(
    game_id: str, since: int, version: int, log: list[LoggedMove]
) -> list[MissedEventOut]:
    """The changes after `since`, up to `version`, from the move log. A version without a log
    entry is a change that is not a move (a hint marking the game assisted, an abandonment):
    its event has `move` null and the score as it stood."""
    score = 0
    logged: dict[int, LoggedMove] = {}
    for entry in log:
        if entry.seq <= since:
            score = entry.score
        else:
            logged[entry.seq] = entry
    missed = []
    for seq in range(since + 1, version + 1):
        found = logged.get(seq)
        if found is not None:
            score = found.score
        move = found.move if found is not None else None
        missed.append(MissedEventOut(game_id=game_id, version=seq, move=move, score=score))
    return missed


def watching_race_message(mid: str | int | None, view: RaceView) -> WatchingRaceOut:
    return WatchingRaceOut(id=mid, race_id=view.race.id, version=view.version, race=race_json(view))


def race_message(version: int, view: RaceView) -> RaceOut:
    """The message pushed to a race's watchers on every change: the whole document."""
    return RaceOut(race_id=view.race.id, version=version, race=race_json(view))


NOTICE_TIMES = {"starts_ms": "starts_at"}
"""A notice's times as kept (epoch ms) and as shown (RFC 3339)."""


def notice_message(notice: Notice) -> NoticeOut:
    """A notice as the WebSocket's `notice` message (and the data of its server-sent event)."""
    fields = {
        NOTICE_TIMES.get(name, name): iso(value) if name in NOTICE_TIMES else value
        for name, value in notice.data.items()
    }
    return NOTICES.validate_python(
        {"type": "notice", "id": notice.id, "kind": notice.kind, "at": iso(notice.at_ms), **fields}
    )


def following_me_message(mid: str | int | None, last: int) -> FollowingMeOut:
    return FollowingMeOut(id=mid, last=last)


class LiveTexts:
    """The pushed messages of this process, each rendered once per (game, version) or (race,
    version) for all its watchers here, however many they are: the text of the last `KEPT`
    changes is kept (a watcher gets a change as it comes, or moments later, once the snapshot
    it was reading is sent)."""

    KEPT = 1024

    def __init__(self) -> None:
        self.texts: dict[tuple[str, str, int], str] = {}

    def event(self, applied: Applied) -> str:
        row = applied.view.row
        key = ("game", row.id, row.version)
        text = self.texts.get(key)
        if text is None:
            text = self._keep(key, message_text(event_message(applied)))
        return text

    def race(self, version: int, view: RaceView) -> str:
        key = ("race", view.race.id, version)
        text = self.texts.get(key)
        if text is None:
            text = self._keep(key, message_text(race_message(version, view)))
        return text

    def _keep(self, key: tuple[str, str, int], text: str) -> str:
        self.texts[key] = text
        if len(self.texts) > self.KEPT:
            del self.texts[next(iter(self.texts))]
        return text
