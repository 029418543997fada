"""The use-cases on a real migrated database (a fresh one per test, SQLite and PostgreSQL), with
the real store and committer; a clock that moves only when the test says so."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from sqlalchemy.ext.asyncio import AsyncEngine

from server.engine import DealCode
from server.live.broker import LocalBroker
from server.services.cursors import Cursors
from server.services.games import GameService
from server.services.players import PlayerService
from server.services.races.lobby import RaceService
from server.services.seeds import SeedBox, SeedService
from server.services.sessions import SessionService
from server.services.values import Principal
from server.services.workers import Client
from server.store.commits import Committer, open_committer
from server.store.db import make_engine, sessionmakers
from tests.api.boards_helpers import NOW, Clock


@dataclass
class Services:
    engine: AsyncEngine
    committer: Committer
    broker: LocalBroker
    clock: Clock
    players: PlayerService
    games: GameService
    url: str

    async def player(self, name: str) -> Principal:
        new = await self.players.create_player(name)
        return await self.players.sessions.authenticate(new.token)

    def another_process(self, committer: Committer | None = None) -> GameService:
        """A game service with a cache of its own, as another server process has."""
        readers, writers = sessionmakers(self.engine)
        return GameService(readers, writers, committer or self.committer, None, self.clock)

    def races(self) -> RaceService:
        readers, writers = sessionmakers(self.engine)

        async def no_solver(codes: list[DealCode], client: Client, seconds: float) -> int:
            raise AssertionError("no certified deal in these tests")

        seeds = SeedService(readers, writers, SeedBox(b"s" * 32), self.clock)
        return RaceService(
            readers,
            writers,
            self.games,
            self.broker,
            no_solver,
            Cursors(b"k" * 32),
            self.clock,
            seeds=seeds,
        )


@pytest.fixture
async def services(database_url: str) -> AsyncIterator[Services]:
    engine = make_engine(database_url)
    readers, writers = sessionmakers(engine)
    committer = await open_committer(database_url)
    broker = LocalBroker()
    clock = Clock(NOW)
    players = PlayerService(readers, writers, SessionService(readers, writers, clock), clock)
    games = GameService(readers, writers, committer, broker, clock)
    yield Services(engine, committer, broker, clock, players, games, database_url)
    await committer.close()
    await engine.dispose()
