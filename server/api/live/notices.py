"""A connection's player's own events (`follow_me`, SPEC 2.6.2): `following_me`, then a `notice`
for each.

Listen first, then read: the player's notices are listened to (the broker key
`notices:<player>`), the subscription is made to take effect (`ready`), and only then the
notices missed since `since` are read and sent, then `following_me` with the last id; a signal
that comes meanwhile only marks that there may be more. From then on each signal reads what is
numbered above the last id sent, so every notice is sent once, in order, whichever process
posted it. Following again (another `since`) never sends a notice twice: what was sent already
stays sent. Reading needs the scope `read` (the player's own data, as their hidden games).
"""

from __future__ import annotations

import asyncio
import logging

from server.api.live.outbox import Outbox
from server.api.render import following_me_message, message_text, notice_message
from server.services.notices import PAGE, NoticeService
from server.services.sessions import require
from server.services.values import Principal
from server.store.faults import unavailable

log = logging.getLogger(__name__)


class NoticeFollowing:
    def __init__(self, notices: NoticeService, outbox: Outbox) -> None:
        self.notices = notices
        self.outbox = outbox
        self.player: str | None = None
        self.sent = 0
        """The id of the last notice sent."""
        self.ready = False
        """Whether `following_me` was sent (pushes wait until then)."""
        self.task: asyncio.Task[None] | None = None
        self.again = False

    async def follow(self, mid: str | int | None, principal: Principal, since: int | None) -> None:
        require(principal, "read")
        if self.player != principal.id:
            self.unfollow()
            self.player = principal.id
            self.ready = False
            self.notices.listen(principal.id, self._signalled)
            try:
                await self.notices.ready(principal.id)
                last = await self.notices.last_id(principal.id)
            except BaseException:
                self.unfollow()  # a follow_me again starts afresh, from its own `since`
                raise
            # Without `since`, from now: what is there already is not news.
            self.sent = last if since is None else min(since, last)
        await self._send_new()
        self.outbox.send(following_me_message(mid, self.sent))
        self.ready = True
        if self.again:
            self._signalled()

    def _signalled(self) -> None:
        if not self.ready:
            self.again = True
            return
        if self.task is not None and not self.task.done():
            self.again = True
            return
        self.task = asyncio.create_task(self._pump())

    async def _pump(self) -> None:
        try:
            while True:
                self.again = False
                await self._send_new()
                if not self.again:
                    return
        except Exception as exc:  # the next signal or a `follow_me` again reads them
            if not unavailable(exc):
                log.exception("reading the notices of %s failed", self.player)
            else:
                log.warning(
                    "reading the notices of %s failed: the database is unavailable", self.player
                )

    async def _send_new(self) -> None:
        player = self.player
        while player is not None and player == self.player:
            found = await self.notices.since(player, self.sent, PAGE)
            for notice in found:
                if notice.id > self.sent and player == self.player:
                    self.sent = notice.id
                    self.outbox.put(message_text(notice_message(notice)))
            if len(found) < PAGE:
                return

    def unfollow(self) -> None:
        if self.player is not None:
            self.notices.unlisten(self.player, self._signalled)
        self.player = None
        self.ready = False
        if self.task is not None:
            self.task.cancel()
            self.task = None
