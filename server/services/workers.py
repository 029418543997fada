"""Costly work off the event loop, bounded and fair: the solver and replay verification run in
worker processes (issue 14).

Two lanes, each with its own worker process(es) and a bounded queue:

- `play`: work on a player's own games: hints, certifying winnable-only deals (new games and
  races) and drawing the daily deal;
- `public`: work that anyone may ask for without playing: a deal's verdict, a replay's
  verification.

Anonymous work never shares a worker with a player's hint, so a flood of verdicts cannot starve
the players. A lane holds at most `workers + queue` jobs, running or waiting; one more is refused
at once with `503` and `Retry-After` (`WorkBusy`). A client (its player, else its address) has one
costly request in flight at a time in a process, over both lanes, and an address at most
`PER_ADDRESS` (4) whatever players it signed up; one more at the same time is refused with `429`
(`OneAtATime`, `Retry-After: 1`, and the rate-limit headers of the cap that refused: `"costly"`
or `"costly-address"`, `qu="concurrent-requests"`, `r=0`).

The cap per address is kept, and raised from 2 to 4 (issue 20: players behind one NAT blocked
each other's hints). One per player is not enough alone: sign-ups are cheap (20 a minute per
address), so an address with nine players could fill a lane (1 worker + 8 waiting) and every
other client would get `503`. Four is the share the rate budgets give an address (4 times a
client's): a household or a classroom behind one NAT has four hints at once, and no address
holds half of a lane's room. Every job is bounded by its own node or action budget, sized to
end well within `JOB_SECONDS` on a slow core; a caller waits at most its own time limit, and a job
it gave up on still finishes in its worker (a deal's search is followed to its end and its verdict
stored, so the same request is then answered from the store: `server.services.deals`).

Processes are spawned (not forked) on first use, so that a worker never inherits the server's
event loop, sockets or database connections.

Child processes end with their parent. A server's solver workers and `--workers N` server
processes are children of one process. When that process ends without stopping them (killed
with SIGKILL, or crashed), they would live on as orphans: solver workers idle for ever on their
queue (each holds its end of the queue's pipe, so it never reads end-of-file), server workers
still holding the port and database connections. `exit_with_parent` ends a child once its parent
is gone: POSIX re-parents an orphan, so its parent id changes.
"""

from __future__ import annotations

import asyncio
import contextlib
import multiprocessing
import os
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import Any, TypeVar

from server import metrics
from server.services.errors import OneAtATime, WorkBusy

CHECK_S = 1.0


def exit_with_parent(parent: int) -> None:
    """Ends this process (without clean-up: there is nobody left to answer) within CHECK_S of
    `parent` ending; the check runs in a daemon thread."""

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(CHECK_S)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def start_worker(niceness: int, parent: int) -> None:
    """The initializer of a solver worker: a lower priority than the server's, and an end with
    the server's process."""
    os.nice(niceness)
    exit_with_parent(parent)


T = TypeVar("T")

QUEUE = 8
"""Jobs that may wait in a lane beside those running."""
PER_ADDRESS = 4
"""Costly requests of one address in flight at once, whatever players it signed up: the share
of an address in the rate budgets (4 clients' worth), under half of a lane's room, so that no
address can fill one."""
PER_CLIENT = 1
"""Costly requests of one client (a player, else an address's anonymous requests) at once."""
CONCURRENT = 'qu="concurrent-requests"'
JOB_SECONDS = 20.0
"""The longest a job may take on a slow core; node budgets are sized from it
(`server.services.deals`)."""
WORKER_NICENESS = 10


class Lane:
    """Worker processes with a bounded queue."""

    def __init__(self, name: str, workers: int = 1, queue: int = QUEUE) -> None:
        self.name = name
        self.workers = workers
        self.capacity = workers + queue
        self.pending = 0
        """Jobs submitted and not yet finished (running or waiting)."""
        self.jobs = 0
        """Jobs submitted since the start."""
        self.seconds = 0.0
        """How long the last job took, queue included."""
        self._pool: ProcessPoolExecutor | None = None

    @property
    def pool(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # Workers run at a lower priority than the server: on a busy machine the event
            # loop (every player's request) comes first, a search second. They end with the
            # server's process, however it ends.
            self._pool = ProcessPoolExecutor(
                self.workers,
                mp_context=multiprocessing.get_context("spawn"),
                initializer=start_worker,
                initargs=(WORKER_NICENESS, os.getpid()),
            )
        return self._pool

    def close(self) -> None:
        """Stops the workers, a job still running included (the server is shutting down)."""
        if self._pool is not None:
            # ProcessPoolExecutor lets a running job finish; on shutdown nobody waits for it.
            # (Python 3.14's terminate_workers() does this; 3.11 keeps the processes here.)
            processes = list(getattr(self._pool, "_processes", {}).values())
            self._pool.shutdown(wait=False, cancel_futures=True)
            for process in processes:
                process.terminate()
            self._pool = None

    def check_room(self) -> None:
        """`WorkBusy` when the lane is full."""
        if self.pending >= self.capacity:
            metrics.rate_refused("busy")
            raise WorkBusy(f"The server is busy with other {self.name} work; try again shortly.")

    async def run(self, fn: Callable[..., T], *args: Any, seconds: float) -> T:
        """`fn(*args)` in a worker; `WorkBusy` when the lane is full, `TimeoutError` after
        `seconds` (the job still finishes in its worker, its result unused)."""
        self.check_room()
        try:
            future = self.pool.submit(fn, *args)
        except BrokenProcessPool:
            self.close()  # a worker died (killed, out of memory): the next job starts anew
            raise WorkBusy("A worker process was lost; try again.") from None
        self.pending += 1
        self.jobs += 1
        metrics.solver_queued(self.name, self.pending)
        started = time.monotonic()
        waiting = asyncio.wrap_future(future)

        def finished(_: asyncio.Future[T]) -> None:
            self.pending -= 1
            self.seconds = time.monotonic() - started
            metrics.solver_queued(self.name, self.pending)
            metrics.solver_time(self.name, self.seconds)

        waiting.add_done_callback(finished)
        try:
            return await asyncio.wait_for(asyncio.shield(waiting), seconds)
        except BrokenProcessPool:
            self.close()
            raise WorkBusy("A worker process was lost; try again.") from None


@dataclass(frozen=True, slots=True)
class Client:
    """Who asks for costly work: `key` is its player (`player:<id>`), else its address
    (`address:<address>`); `address` is where the request came from."""

    key: str
    address: str


class CostlyWork:
    """The two lanes, and who has a costly request in flight."""

    def __init__(self, play_workers: int = 1, public_workers: int = 1, queue: int = QUEUE) -> None:
        self.play = Lane("play", play_workers, queue)
        self.public = Lane("public", public_workers, queue)
        self.busy: set[str] = set()
        self.addresses: dict[str, int] = {}

    @contextlib.contextmanager
    def one_at_a_time(self, client: Client) -> Iterator[None]:
        """Holds `client`'s one costly request, and one of its address's `PER_ADDRESS`;
        `OneAtATime` if the client already has one running, or its address has as many as it
        may (players signed up by one address cannot fill a lane)."""
        held = self.addresses.get(client.address, 0)
        if client.key in self.busy or held >= PER_ADDRESS:
            metrics.rate_refused("costly")
            cap = "costly" if client.key in self.busy else "costly-address"
            # The rate-limit headers of the caps (`server.api.limits` lists them after the
            # budgets that charged the request): the one that refused has nothing left.
            raise OneAtATime(
                "One costly request at a time (and at most "
                f"{PER_ADDRESS} from one address): wait for the answer to the previous one.",
                headers={
                    "Retry-After": "1",
                    "RateLimit-Policy": f'"costly";q={PER_CLIENT};{CONCURRENT}, '
                    f'"costly-address";q={PER_ADDRESS};{CONCURRENT}',
                    "RateLimit": f'"{cap}";r=0;t=1',
                },
            )
        self.busy.add(client.key)
        self.addresses[client.address] = held + 1
        try:
            yield
        finally:
            self.busy.discard(client.key)
            left = self.addresses[client.address] - 1
            if left:
                self.addresses[client.address] = left
            else:
                del self.addresses[client.address]

    def close(self) -> None:
        self.play.close()
        self.public.close()
