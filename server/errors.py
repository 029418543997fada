"""Errors of the use-cases, each with the HTTP status and problem type it maps to.

They are raised by `server.service` and turned into RFC 9457 problem documents in one place,
`server.api.problems`. The engine's own errors (`IllegalMove`, `NotationError`) are mapped there
too.
"""

from __future__ import annotations

from typing import Any


class ServiceError(Exception):
    status = 400
    slug = "bad-request"
    title = "Bad request"
    headers: dict[str, str] = {}  # noqa: RUF012 - read-only per class

    def __init__(self, detail: str, **extra: Any) -> None:
        super().__init__(detail)
        self.detail = detail
        self.extra = extra


class NotFound(ServiceError):
    status = 404
    slug = "not-found"
    title = "Not found"


class Unauthorized(ServiceError):
    status = 401
    slug = "unauthorized"
    title = "Unauthorized"
    headers = {"WWW-Authenticate": 'Bearer realm="russian-solitaire"'}  # noqa: RUF012


class Forbidden(ServiceError):
    status = 403
    slug = "forbidden"
    title = "Forbidden"


class VersionConflict(ServiceError):
    status = 409
    slug = "version-conflict"
    title = "The game has moved on"


class Busy(ServiceError):
    """Another request changed the same game at the same moment; retrying is safe."""

    status = 409
    slug = "conflict"
    title = "Conflict"


class IdempotencyKeyReused(ServiceError):
    status = 422
    slug = "idempotency-key-reused"
    title = "Idempotency key reused"


class InvalidInput(ServiceError):
    status = 422
    slug = "validation-error"
    title = "Validation error"
