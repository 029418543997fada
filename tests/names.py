"""Player names for tests that sign up players against one database more than once: two players
cannot share a name (ignoring case), so each gets a short random suffix."""

from __future__ import annotations

import secrets


def unique_name(base: str) -> str:
    """`base` and a random suffix: "daily-3fa9c1"."""
    return f"{base}-{secrets.token_hex(3)}"
