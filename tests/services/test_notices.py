"""The notice service on a real migrated database (SQLite and PostgreSQL): numbers that two
transactions telling one player something at once never share, a notice that exists only if
its transaction committed, a listener told after the commit, and an erased account's notices
gone.
"""

from __future__ import annotations

import asyncio

from server.services.notices import NoticeService
from server.store.db import sessionmakers
from tests.services.conftest import Services


def notices_of(services: Services) -> NoticeService:
    readers, writers = sessionmakers(services.engine)
    return NoticeService(readers, writers, services.broker, services.clock)


async def test_concurrent_posts_to_one_player_take_distinct_numbers(services: Services) -> None:
    ana = await services.player("ana-numbers")
    notices = notices_of(services)

    async def post(n: int) -> None:
        async with notices.writers.begin() as session:
            await notices.post(session, ana.id, "session_revoked", {"session_id": str(n)})

    await asyncio.gather(*(post(n) for n in range(12)))
    found = await notices.since(ana.id, 0)
    assert [n.id for n in found] == list(range(1, 13))
    assert sorted(int(n.data["session_id"]) for n in found) == list(range(12))
    assert await notices.last_id(ana.id) == 12


async def test_a_rolled_back_cause_leaves_no_notice(services: Services) -> None:
    ana = await services.player("ana-rollback")
    notices = notices_of(services)
    try:
        async with notices.writers.begin() as session:
            await notices.post(session, ana.id, "session_revoked", {"session_id": "x"})
            raise RuntimeError("the cause fails")
    except RuntimeError:
        pass
    assert await notices.since(ana.id, 0) == []
    assert await notices.last_id(ana.id) == 0


async def test_a_listener_is_told_after_the_commit(services: Services) -> None:
    ana = await services.player("ana-listen")
    notices = notices_of(services)
    told: list[int] = []

    def listener() -> None:
        told.append(1)

    notices.listen(ana.id, listener)
    assert await notices.ready(ana.id)
    async with notices.writers.begin() as session:
        posted = await notices.post(session, ana.id, "session_revoked", {"session_id": "x"})
        assert told == []  # not before the commit
    await notices.signal(posted)
    assert told == [1]
    notices.unlisten(ana.id, listener)
    await notices.signal([ana.id])
    assert told == [1]


async def test_an_erased_account_keeps_only_its_revocations(services: Services) -> None:
    ana = await services.player("ana-erased")
    notices = notices_of(services)
    services.players.sessions.notices = notices
    async with notices.writers.begin() as session:
        await notices.post(
            session, ana.id, "daily_revealed", {"date": "d", "rule": "r", "code": "c"}
        )
    await services.players.erase(ana, None)
    kept = await notices.since(ana.id, 0)
    assert [(n.kind, n.data) for n in kept] == [("session_revoked", {"session_id": ana.session_id})]
