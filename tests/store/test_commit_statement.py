"""The commit's one PostgreSQL statement (`server.store.commits._pg_statement`) in every form it
takes: its parameters are numbered 1 to the count `PgCommitter.commit` sends, with no gap, and
PostgreSQL prepares each form (so each parameter's type is known and every name resolves)."""

from __future__ import annotations

import itertools
import re

import asyncpg
import pytest

from server.settings import is_sqlite
from server.store.commits import _RECORD_COLUMNS, _pg_statement
from server.store.db import asyncpg_connect_args
from server.store.records import STATE_FIELDS
from server.store.stats import pg_arity

FORMS = [
    flags
    for flags in itertools.product((False, True), repeat=6)
    if not flags[4] or flags[3]  # a daily's day comes only with the statistics
]


def count(log: bool, record: bool, stats: bool, daily: bool, session: bool) -> int:
    """How many parameters `PgCommitter.commit` sends for a form."""
    return (
        3
        + len(STATE_FIELDS)
        + int(log)
        + len(_RECORD_COLUMNS) * int(record)
        + (pg_arity(daily) if stats else 0)
        + int(session)
    )


@pytest.mark.parametrize("flags", FORMS)
def test_the_parameters_are_numbered_without_a_gap(flags: tuple[bool, ...]) -> None:
    log, record, timed_out, stats, daily, session = flags
    sql = _pg_statement(log, record, timed_out, stats, daily, session)
    used = {int(number) for number in re.findall(r"\$(\d+)", sql)}
    assert used == set(range(1, count(log, record, stats, daily, session) + 1)), sql


async def test_postgresql_prepares_every_form(database_url: str) -> None:
    if is_sqlite(database_url):
        pytest.skip("PostgreSQL's statement (this test runs on PostgreSQL)")
    connection = await asyncpg.connect(**asyncpg_connect_args(database_url))
    try:
        for log, record, timed_out, stats, daily, session in FORMS:
            sql = _pg_statement(log, record, timed_out, stats, daily, session)
            statement = await connection.prepare(sql)
            assert len(statement.get_parameters()) == count(log, record, stats, daily, session)
    finally:
        await connection.close()
