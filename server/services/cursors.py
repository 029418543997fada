"""Signed paging cursors for every list (SPEC 2.5): a cursor is the last row's sort key and a
fingerprint of the query it belongs to, HMAC-signed with the server's cursor secret, so a client
can neither forge a position nor reuse a cursor with another query."""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from typing import Any

from server.services.errors import InvalidInput

CURSOR_INT = 2**53  # integers in a cursor stay far inside every database's 64-bit range


def bad_cursor() -> InvalidInput:
    return InvalidInput(
        "The cursor 'after' is not one this board gave out.",
        errors=[{"field": "after", "message": "invalid cursor"}],
    )


def _b64encode(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _b64decode(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Cursors:
    """Makes and checks the signed cursors of every paged list.

    A cursor is base64url (unpadded) of `{"v": values, "b": list, "s": signature}`, where the
    signature is base64url of HMAC-SHA256(key, list + "\n" + the values as compact JSON).
    """

    def __init__(self, key: bytes) -> None:
        if len(key) < 16:
            raise ValueError("the cursor key is too short")
        self._key = key

    def _sign(self, values: list[Any], board: str) -> str:
        message = board.encode() + b"\n" + json.dumps(values, separators=(",", ":")).encode()
        return _b64encode(hmac.new(self._key, message, hashlib.sha256).digest())

    def encode(self, values: list[Any], board: str) -> str:
        body = {"v": values, "b": board, "s": self._sign(values, board)}
        return _b64encode(json.dumps(body, separators=(",", ":")).encode())

    def decode(self, cursor: str, board: str, types: tuple[type, ...]) -> list[Any]:
        """The values of a cursor this server made for the same list, or InvalidInput."""
        try:
            data = json.loads(_b64decode(cursor))
            values = data["v"]
            signature = data["s"]
            ok = (
                isinstance(data, dict)
                and set(data) == {"v", "b", "s"}
                and data["b"] == board
                and isinstance(signature, str)
                and isinstance(values, list)
                and hmac.compare_digest(signature.encode(), self._sign(values, board).encode())
                and len(values) == len(types)
                and all(
                    isinstance(v, t)
                    and not isinstance(v, bool)
                    and (not isinstance(v, int) or -CURSOR_INT <= v <= CURSOR_INT)
                    and (not isinstance(v, float) or -CURSOR_INT <= v <= CURSOR_INT)
                    and (not isinstance(v, str) or len(v) <= 64)
                    for v, t in zip(values, types, strict=True)
                )
            )
        except (ValueError, KeyError, TypeError, binascii.Error, RecursionError):
            ok = False
        if not ok:
            raise bad_cursor()
        return list(values)


def fingerprint(*parts: object) -> str:
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:16]
