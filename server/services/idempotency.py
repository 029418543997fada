"""How long an action's idempotency record answers its retries, and the job that deletes it then.

A record (`idempotency_keys`: the player, the key, the request's fingerprint, the answer) is
written in the commit of the action it answers (`server.store.commits`). It answers the retries
of that request for `IDEMPOTENCY_TTL_S` (24 hours, SPEC 2.7 is silent; the README's
"Decisions" and `openapi.yaml`'s `Idempotency-Key` say it): far longer than any client retries
an action it had no answer to, and short enough that the table holds one day of keyed actions
(a record is about 1.1 KB: an address at its whole budget for a day leaves about 38 GB without
an expiry, a few GB a day with it, then no more).

**A key older than that is fresh.** The records are read with their age
(`server.store.games.idempotency_answer` takes only those of the last 24 hours), so that a
record that has expired answers nothing even before the job has deleted it; the commit of an
action whose key still has such a record finds the key taken, deletes the expired record and
is decided again (`GameService._decided`): the action is then applied as a new one (or refused
as the game is now).

**The expiry job** (`KeyExpiry`) runs in every process through `server.store.faults.periodic`
(one line per fault, then the next round): every `EXPIRY_PERIOD_S` (5 minutes) it deletes the
records older than 24 hours in batches of `EXPIRY_BATCH` (1,000; each its own short
transaction, the oldest first by `ix_idempotency_keys_created`, migration 0010), at most
`EXPIRY_BATCHES` (200) a round, a pause of `EXPIRY_PAUSE_S` between two so that the players'
commits (SQLite has one writer) come between them. 200,000 a round is 660 a second, more than
the keyed actions every address of a busy server can make; what a round leaves, the next takes.
Several processes may run it at once: a record is deleted once, the others find it gone.
"""

from __future__ import annotations

import asyncio
import logging

from sqlalchemy.ext.asyncio import AsyncSession, async_sessionmaker

from server.services.values import Clock
from server.store import games as game_rows
from server.store.faults import periodic

log = logging.getLogger(__name__)

IDEMPOTENCY_TTL_S = 24 * 3600
"""How long a record answers the retries of its request (seconds)."""
IDEMPOTENCY_TTL_MS = IDEMPOTENCY_TTL_S * 1000
EXPIRY_PERIOD_S = 300.0
EXPIRY_BATCH = 1_000
EXPIRY_BATCHES = 200
EXPIRY_PAUSE_S = 0.01


def fresh_since(now_ms: int) -> int:
    """The oldest `created_ms` of a record that still answers at `now_ms`."""
    return now_ms - IDEMPOTENCY_TTL_MS


class KeyExpiry:
    """Deletes the expired idempotency records of one database, a round every period."""

    def __init__(self, writers: async_sessionmaker[AsyncSession], clock: Clock) -> None:
        self.writers = writers
        self.clock = clock
        self.task: asyncio.Task[None] | None = None

    async def step(self, batch: int = EXPIRY_BATCH, batches: int = EXPIRY_BATCHES) -> int:
        """One round: at most `batches` batches of `batch` records older than the TTL, each
        its own transaction; the records deleted. The round ends early at a batch that was not
        full (nothing more has expired)."""
        before = fresh_since(self.clock())
        deleted = 0
        for number in range(batches):
            if number:
                await asyncio.sleep(EXPIRY_PAUSE_S)
            async with self.writers.begin() as session:
                taken = await game_rows.expire_idempotency(session, before, batch)
            deleted += taken
            if taken < batch:
                break
        if deleted:
            log.info("idempotency records expired: %d", deleted)
        return deleted

    def start(self) -> None:
        """Runs `step` every EXPIRY_PERIOD_S, the first a period after the start (a server just
        started answers its first requests first)."""
        self.task = periodic("the idempotency records' expiry", EXPIRY_PERIOD_S, self.step, log)

    async def close(self) -> None:
        if self.task is not None:
            self.task.cancel()
            await asyncio.gather(self.task, return_exceptions=True)
            self.task = None
