"""Every typed application key, in one place."""

from __future__ import annotations

from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncEngine

from server.live.broker import Broker
from server.services.deals import SolverService
from server.services.games import GameService
from server.services.leaderboards import BoardService
from server.services.races.lobby import RaceService
from server.settings import Settings

SETTINGS = web.AppKey("settings", Settings)
ENGINE = web.AppKey("engine", AsyncEngine)
SERVICE = web.AppKey("service", GameService)
BROKER = web.AppKey("broker", Broker)
BOARDS = web.AppKey("boards", BoardService)
SOLVER = web.AppKey("solver", SolverService)
RACES = web.AppKey("races", RaceService)
