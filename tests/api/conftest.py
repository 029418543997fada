"""Fixtures of the API tests that read a clock the test controls (boards, the daily deal, fair
play): `clock`, `timed` (a client of an app whose services all read it) and `tapi`."""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from server.settings import Settings
from tests.api.boards_helpers import NOW, Clock, clocked_client
from tests.conftest import Api, ClientFactory


@pytest.fixture
def clock() -> Clock:
    return Clock(NOW)


@pytest.fixture
async def timed(
    settings: Settings, clock: Clock, aiohttp_client: ClientFactory
) -> TestClient[Any, Any]:
    """A client of an app whose every service reads the test's `clock` (the database first,
    so that it outlives the app)."""
    return await clocked_client(aiohttp_client, settings, clock)


@pytest.fixture
def tapi(timed: TestClient[Any, Any]) -> Api:
    return Api(timed)
