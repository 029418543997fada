"""Every typed application key, in one place."""

from __future__ import annotations

from aiohttp import web
from sqlalchemy.ext.asyncio import AsyncEngine

from server.boards import BoardService
from server.broker import Broker
from server.races import RaceService
from server.service import GameService
from server.settings import Settings
from server.solving import SolverService

SETTINGS = web.AppKey("settings", Settings)
ENGINE = web.AppKey("engine", AsyncEngine)
SERVICE = web.AppKey("service", GameService)
BROKER = web.AppKey("broker", Broker)
BOARDS = web.AppKey("boards", BoardService)
SOLVER = web.AppKey("solver", SolverService)
RACES = web.AppKey("races", RaceService)
