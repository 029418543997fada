"""Faults of the server's dependencies (the database, Redis), told apart from bugs (SPEC 2.7
"Faults").

A *fault* is a failure that says nothing about the request or the code: the database restarts,
crashes, is starting up or in recovery, refuses connections, closes one mid-statement, is
read-only (a standby after a fail-over), is locked (SQLite) or does not answer within
`DATABASE_WAIT_S`; Redis is down. A request that meets one is answered `503` with `Retry-After`
(`server.api.problems`), over HTTP and over the WebSocket alike, and is worth retrying with its
`Idempotency-Key` a moment later: its change was either made once or not at all.

A fault is logged as one line (`log_fault`: what failed, the exception's class and its first
line), never a traceback: a database restart makes hundreds of them, and a traceback says
nothing more about the database than its name. Anything else keeps its traceback: it is a bug.

`periodic` is the one way a background job runs every few seconds (the races' tick, the daily
reveal check, the expiry of idempotency records): each round that meets a fault logs its line
and the job goes on with the next round, so that it works again as soon as the database does.
"""

from __future__ import annotations

import asyncio
import errno
import logging
import socket
import sqlite3
from collections.abc import Awaitable, Callable, Iterator
from typing import Final

import sqlalchemy.exc

FAULT_STATES: Final = ("08", "53", "57", "58")
"""SQLSTATE classes of faults: connection exceptions (08), insufficient resources (53: too many
connections, out of disk or memory), operator intervention (57: admin or crash shutdown,
"cannot connect now" while starting or recovering, a statement cancelled by its timeout), system
errors (58: I/O)."""
FAULT_CODES: Final = frozenset({"25006", "55P03", "40001", "40P01"})
"""SQLSTATEs of faults besides: read-only transaction (a standby), lock not available (a lock
timeout), serialization failure and deadlock (retrying is the cure)."""
ASYNCPG_FAULTS: Final = frozenset(
    {"InterfaceError", "InternalClientError", "ConnectionDoesNotExistError"}
)
"""asyncpg's client-side faults, named so that this module does not need asyncpg: "connection
is closed", a protocol left in a failed state by a connection that died under it."""
SOCKET_ERRNOS: Final = frozenset(
    {errno.EHOSTUNREACH, errno.ENETUNREACH, errno.ENETDOWN, errno.ETIMEDOUT, errno.EADDRNOTAVAIL}
)
"""A socket's failures that are not `ConnectionError`s."""
SQLITE_FAULTS: Final = ("locked", "busy", "unable to open", "disk i/o error")
"""Words of SQLite's operational errors that are faults of the file, not of the statement."""


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """`exc`, then what it wraps (SQLAlchemy's `orig`, the `__cause__` / `__context__`)."""
    seen: set[int] = set()
    error: BaseException | None = exc
    while error is not None and id(error) not in seen:
        seen.add(id(error))
        yield error
        error = getattr(error, "orig", None) or error.__cause__ or error.__context__


def unavailable(exc: BaseException) -> bool:
    """Whether `exc` is a fault of the database (see the module's docstring): the request could
    not be answered now, and is worth retrying a moment later (503)."""
    for error in _chain(exc):
        if isinstance(
            error,
            sqlalchemy.exc.TimeoutError  # the pool's checkout wait
            | TimeoutError  # a statement or a checkout past DATABASE_WAIT_S (asyncpg)
            | ConnectionError  # refused, reset, aborted, broken pipe
            | socket.gaierror,  # the database's host cannot be resolved
        ):
            return True
        if isinstance(error, sqlalchemy.exc.DBAPIError) and error.connection_invalidated:
            return True
        if type(error).__name__ in ASYNCPG_FAULTS:
            return True
        state = getattr(error, "sqlstate", None)
        if isinstance(state, str) and (state.startswith(FAULT_STATES) or state in FAULT_CODES):
            return True
        if isinstance(error, sqlite3.OperationalError) and any(
            word in str(error).lower() for word in SQLITE_FAULTS
        ):
            return True
        if isinstance(error, OSError) and (
            error.errno in SOCKET_ERRNOS or "Connect call failed" in str(error)
        ):
            return True  # the socket failed (no route, network down; asyncio's own wording)
    return False


def broker_down(exc: BaseException) -> bool:
    """Whether `exc` is a fault of Redis (the broker or the rate budgets' storage): redis-py's
    connection and timeout errors, or a socket's."""
    from redis.exceptions import ConnectionError as RedisConnectionError
    from redis.exceptions import TimeoutError as RedisTimeoutError

    return any(
        isinstance(error, RedisConnectionError | RedisTimeoutError | ConnectionError)
        for error in _chain(exc)
    )


def is_fault(exc: BaseException) -> bool:
    """A fault of any dependency (the database or Redis)."""
    return unavailable(exc) or broker_down(exc)


def fault_line(exc: BaseException) -> str:
    """One line that names a fault: the class of the deepest error it wraps and its first line
    (`ConnectionDoesNotExistError: connection was closed in the middle of operation`)."""
    deepest = list(_chain(exc))[-1]
    text = str(deepest).strip().splitlines()
    first = text[0][:200] if text else ""
    return f"{type(deepest).__name__}: {first}" if first else type(deepest).__name__


def log_fault(logger: logging.Logger, what: str, exc: BaseException) -> None:
    """Logs `what` failed: one warning line for a dependency's fault, the traceback for
    anything else (a bug)."""
    if is_fault(exc):
        logger.warning("%s: %s", what, fault_line(exc))
    else:
        logger.error("%s", what, exc_info=exc)


def periodic(
    what: str,
    period_s: float,
    step: Callable[[], Awaitable[object]],
    logger: logging.Logger,
    *,
    first_delay_s: float | None = None,
) -> asyncio.Task[None]:
    """Runs `step` every `period_s` seconds (the first after `first_delay_s`, by default one
    period) until the task is cancelled. A round that fails logs one line (`log_fault`: `what`
    failed) and the next round comes all the same."""

    async def run() -> None:
        await asyncio.sleep(period_s if first_delay_s is None else first_delay_s)
        while True:
            try:
                await step()
            except Exception as exc:
                log_fault(logger, f"{what} failed", exc)
            await asyncio.sleep(period_s)

    return asyncio.get_running_loop().create_task(run(), name=what)
