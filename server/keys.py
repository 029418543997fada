"""Every typed application key, in one place (the request's principal is keyed beside the code
that resolves it, `server.api.access.PRINCIPAL`)."""

from __future__ import annotations

from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncEngine

from server.live.broker import Broker
from server.services.deals import SolverService
from server.services.games import GameService
from server.services.leaderboards import BoardService
from server.services.players import PlayerService
from server.services.races.lobby import RaceService
from server.services.values import Clock
from server.settings import Settings

SETTINGS = web.AppKey("settings", Settings)
CLOCK: web.AppKey[Clock] = web.AppKey("clock")
"""The clock of every service (`create_app(settings, clock=...)`)."""
ENGINE = web.AppKey("engine", AsyncEngine)
SERVICE = web.AppKey("service", GameService)
PLAYERS = web.AppKey("players", PlayerService)
BROKER = web.AppKey("broker", Broker)
BOARDS = web.AppKey("boards", BoardService)
SOLVER = web.AppKey("solver", SolverService)
RACES = web.AppKey("races", RaceService)
