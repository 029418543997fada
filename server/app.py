"""`create_app(settings, clock=...)`: wiring only, no work at import time. Every service reads the
one clock it is given here (tests give one they move by hand)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from aiohttp import web
from aiohttp.typedefs import Middleware

from server.api import (
    accounts,
    deals,
    docs,
    events,
    games,
    health,
    leaderboards,
    live,
    oauth,
    players,
    races,
    replays,
    rules,
    seeds,
)
from server.api import monitoring as api_metrics
from server.api import pages as client
from server.api import replicas as replica_reads
from server.api.conditional import conditional
from server.api.cors import setup_cors
from server.api.limits import RateBudget, send_rate_headers
from server.api.problems import language_middleware, problem_middleware
from server.keys import (
    APPS,
    BOARDS,
    BROKER,
    BUDGET,
    CLOCK,
    ENGINE,
    NOTICES,
    PLAYERS,
    RACES,
    REPLICAS,
    SEEDS,
    SERVICE,
    SESSIONS,
    SETTINGS,
    SOLVER,
)
from server.live import make_broker
from server.services.apps import AppService
from server.services.cursors import Cursors
from server.services.deals import SolverService, load_deal_secret
from server.services.games import GameService
from server.services.idempotency import KeyExpiry
from server.services.leaderboards import BoardService
from server.services.notices import NoticeService
from server.services.players import PlayerService
from server.services.races.lobby import RaceService
from server.services.secrets import CURSOR_SECRET, load_server_secret
from server.services.seeds import SeedService, load_seed_box
from server.services.sessions import SessionService
from server.services.values import Clock, wall_clock_ms
from server.settings import Settings, SettingsError
from server.store.commits import PgCommitter, open_committer
from server.store.db import make_engine, migrate_async, sessionmakers, snapshot_sessions
from server.store.replicas import Replicas
from server.store.sessions import TokenReader


async def database(app: web.Application) -> AsyncIterator[None]:
    """Creates (and migrates) the database engine, and disposes of it at shutdown."""
    settings = app[SETTINGS]
    clock = app[CLOCK]
    if settings.migrate:
        await migrate_async(settings.database_url)
    wait = settings.database_wait_s
    engine = make_engine(settings.database_url, wait_s=wait)
    readers, writers = sessionmakers(engine)
    if settings.database_replica_urls and settings.is_sqlite:
        raise SettingsError("DATABASE_REPLICA_URLS needs a PostgreSQL primary")
    replicas = Replicas(
        settings.database_replica_urls,
        max_lag_s=settings.replica_max_lag_s,
        wait_s=wait,
        primary_url=settings.database_url,
    )
    await replicas.start()
    app[REPLICAS] = replicas
    # The lag-tolerant routes' reads go to a replica (server.api.replicas); all others here.
    readers = replicas.route(readers)
    snapshots = replicas.route(snapshot_sessions(engine))
    committer = await open_committer(settings.database_url, wait)
    broker = make_broker(settings.database_url, settings.broker_url)
    await broker.start()
    app[ENGINE] = engine
    app[BROKER] = broker
    pool = committer.pool if isinstance(committer, PgCommitter) else None
    tokens = await TokenReader.open(settings.database_url, wait, pool)
    app[SESSIONS] = SessionService(readers, writers, clock, tokens)
    app[NOTICES] = NoticeService(readers, writers, broker, clock)
    app[SESSIONS].notices = app[NOTICES]
    app[APPS] = AppService(readers, writers, app[SESSIONS], clock)
    box = await load_seed_box(writers, settings.seed_key, clock)
    app[SEEDS] = SeedService(readers, writers, box, clock)
    app[PLAYERS] = PlayerService(readers, writers, app[SESSIONS], clock, seeds=app[SEEDS])
    app[SERVICE] = GameService(readers, writers, committer, broker, clock, seeds=app[SEEDS])
    app[SERVICE].on_ended = app[NOTICES].game_ended  # the action limit's game_ended
    app[SERVICE].session_holds = app[SESSIONS].holds  # a move of a known token
    cursors = Cursors(await load_server_secret(writers, CURSOR_SECRET))
    app[BOARDS] = BoardService(readers, cursors, clock)
    deal_secret = (
        settings.deal_secret.encode() if settings.deal_secret else await load_deal_secret(writers)
    )
    app[SOLVER] = SolverService(
        readers, writers, app[SERVICE], deal_secret, clock=clock, seeds=app[SEEDS]
    )
    app[RACES] = RaceService(
        readers,
        writers,
        app[SERVICE],
        broker,
        app[SOLVER].first_certified,
        cursors,
        clock,
        snapshots=snapshots,
        notices=app[NOTICES],
        seeds=app[SEEDS],
    )
    app[RACES].start_ticking()
    app[NOTICES].start_ticking()
    app[SOLVER].start_drawing()  # the daily deals, a week ahead
    expiry = KeyExpiry(writers, clock)  # idempotency records kept 24 h, then deleted
    expiry.start()
    yield
    await expiry.close()
    await app[RACES].close()
    await app[NOTICES].close()
    await app[SOLVER].stop_drawing()
    app[SOLVER].close()
    await broker.close()
    await tokens.close()
    await committer.close()
    await replicas.close()
    await engine.dispose()


async def rate_budget(app: web.Application) -> AsyncIterator[None]:
    """Closes the rate budget's storage (its Redis connections) at shutdown."""
    yield
    await app[BUDGET].close()


def create_app(settings: Settings, clock: Clock = wall_clock_ms) -> web.Application:
    budget = RateBudget(
        settings.rate_limit,
        settings.rate_limit_storage,
        settings.trust_forwarded,
        settings.signup_limit,
    )
    # The rate budget first: every request is charged before anything else reads it. The
    # conditional reads last, next to the handlers: they tag the answers the handlers made.
    middlewares: list[Middleware] = [budget.middleware(), problem_middleware, conditional]
    middlewares.append(replica_reads.reads)  # innermost: it may read a request twice
    # Outside the budget: its 429s too are put in the asked language.
    middlewares.insert(0, language_middleware)
    # Before everything: the access log and the request metrics see every final status.
    middlewares.insert(0, api_metrics.observe)
    app = web.Application(middlewares=middlewares, client_max_size=settings.body_limit)
    app[SETTINGS] = settings
    app[CLOCK] = clock
    app[BUDGET] = budget
    app.on_response_prepare.append(send_rate_headers)  # RateLimit-Policy, RateLimit
    app.on_response_prepare.append(replica_reads.send_read_from)  # X-Read-From
    app.cleanup_ctx.append(rate_budget)
    app.cleanup_ctx.append(database)
    api_metrics.setup(app)  # after `database`: it follows the engine's pool
    for module in (
        health,
        docs,
        players,
        accounts,
        games,
        deals,
        replays,
        leaderboards,
        races,
        seeds,
        oauth,
        rules,
        client,
    ):
        app.router.add_routes(module.routes)
    live.setup(app)
    events.setup(app)  # server-sent events (SPEC 2.6.2)
    setup_cors(app)  # last: on every /api/ route added above
    return app
