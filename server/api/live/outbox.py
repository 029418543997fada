"""What a connection sends: one bounded queue, drained by one sender task, in order.

A peer too slow to keep up (its queue full) is closed with 1013 instead of holding anything up:
it reconnects and watches with `since`. What was queued before the connection began to close is
sent first (on shutdown, the answer to the message in flight); nothing is queued after.
"""

from __future__ import annotations

import asyncio
import contextlib

from aiohttp import web

from server.api.render import message_text
from server.api.schemas import ServerMessage

SEND_QUEUE = 256
CLOSE_NORMAL = 1000
CLOSE_TRY_AGAIN = 1013


class Outbox:
    def __init__(self, ws: web.WebSocketResponse) -> None:
        self.ws = ws
        self.queue: asyncio.Queue[str | None] = asyncio.Queue(SEND_QUEUE)
        self.close_code: int | None = None
        """Set once the connection is closing (no new message is taken then)."""
        self.reason = ""
        self.task: asyncio.Task[None] | None = None

    @property
    def closing(self) -> bool:
        return self.close_code is not None

    def send(self, message: ServerMessage) -> None:
        """Renders a message for this connection alone (an answer) and queues it."""
        self.put(message_text(message))

    def put(self, text: str) -> None:
        """Queues a message already rendered (a change, rendered once for all its watchers)."""
        if self.closing:
            return
        try:
            self.queue.put_nowait(text)
        except asyncio.QueueFull:
            self.close_soon(CLOSE_TRY_AGAIN, "too slow: reconnect and watch with 'since'")

    def close_soon(self, code: int, reason: str) -> None:
        """Closes the connection with `code` once what is queued is sent (the first code given
        is the one sent)."""
        if self.close_code is None:
            self.close_code = code
            self.reason = reason
            # A full queue has no room for the end: the sender closes once it has drained it.
            with contextlib.suppress(asyncio.QueueFull):
                self.queue.put_nowait(None)

    def start(self) -> asyncio.Task[None]:
        self.task = asyncio.create_task(self._send_forever())
        return self.task

    async def _send_forever(self) -> None:
        while not (self.closing and self.queue.empty()):
            text = await self.queue.get()
            if text is None or self.ws.closed:
                break
            try:
                await self.ws.send_str(text)
            except (ConnectionError, RuntimeError):
                break
        if not self.ws.closed:
            await self.ws.close(code=self.close_code or CLOSE_NORMAL, message=self.reason.encode())

    async def flushed(self, timeout: float) -> None:
        """Waits (at most `timeout` seconds) until the sender has sent what is queued and closed
        the socket; it is left running (the endpoint's `finally` cancels it)."""
        if self.task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(asyncio.shield(self.task), timeout)
