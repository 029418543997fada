"""Every typed application key, in one place (the request's principal is keyed beside the code
that resolves it, `server.api.access.PRINCIPAL`).

The keys of the API's own parts (the rate budget, the open sockets, the rendered live messages)
name their types only for the type checker: those modules read these keys, so importing them
here would be a cycle."""

from __future__ import annotations

from typing import TYPE_CHECKING

from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncEngine

from server.live.broker import Broker
from server.services.apps import AppService
from server.services.deals import SolverService
from server.services.games import GameService
from server.services.leaderboards import BoardService
from server.services.notices import NoticeService
from server.services.players import PlayerService
from server.services.races.lobby import RaceService
from server.services.seeds import SeedService
from server.services.sessions import SessionService
from server.services.values import Clock
from server.settings import Settings
from server.store.replicas import Replicas

if TYPE_CHECKING:
    from aiohttp_sse import EventSourceResponse

    from server.api.limits import RateBudget
    from server.api.live import Connection
    from server.api.render import LiveTexts

SETTINGS = web.AppKey("settings", Settings)
CLOCK: web.AppKey[Clock] = web.AppKey("clock")
"""The clock of every service (`create_app(settings, clock=...)`)."""
ENGINE = web.AppKey("engine", AsyncEngine)
SERVICE = web.AppKey("service", GameService)
PLAYERS = web.AppKey("players", PlayerService)
SESSIONS = web.AppKey("sessions", SessionService)
APPS = web.AppKey("apps", AppService)
BROKER = web.AppKey("broker", Broker)
BOARDS = web.AppKey("boards", BoardService)
SOLVER = web.AppKey("solver", SolverService)
RACES = web.AppKey("races", RaceService)
NOTICES = web.AppKey("notices", NoticeService)
SEEDS = web.AppKey("seeds", SeedService)
REPLICAS = web.AppKey("replicas", Replicas)
"""The read replicas (`DATABASE_REPLICA_URLS`; none configured: every read on the primary)."""
BUDGET: web.AppKey[RateBudget] = web.AppKey("rate_budget")
CONNECTIONS: web.AppKey[set[Connection]] = web.AppKey("live_connections")
"""The open WebSocket connections of this process (closed at shutdown)."""
STREAMS: web.AppKey[set[EventSourceResponse]] = web.AppKey("event_streams")
"""The open server-sent event streams of this process (ended at shutdown)."""
TEXTS: web.AppKey[LiveTexts] = web.AppKey("live_texts")
"""The pushed messages of this process, rendered once per version for all their watchers."""
