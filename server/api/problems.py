"""The one place where errors become RFC 9457 problem documents (`application/problem+json`).

Every problem document is in the language the request asked for (`Accept-Language`: English,
Romanian or Hebrew; `server/api/texts.py`), says so in `Content-Language`, and a refusal's
`rule` links to its definition on the rules page (`rule_url`). The problems raised while a
request is handled are rendered here (`problem_middleware`); the ones that other middlewares
answer with (the rate budget's 429s) or that handlers return (`/readyz`) are put in the asked
language on their way out (`language_middleware`, outside them all).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

from aiohttp import web
from aiohttp.web_protocol import RequestPayloadError
from pydantic import BaseModel, ValidationError

from server.api.texts import localize
from server.engine import IllegalMove, NotationError
from server.engine.messages import negotiate, title
from server.services.errors import InvalidInput, MalformedJson, Problem
from server.store.faults import broker_down, fault_line, unavailable

log = logging.getLogger(__name__)

PROBLEM_BASE = "/problems/"
CONTENT_TYPE = "application/problem+json"

M = TypeVar("M", bound=BaseModel)
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def problem_body(status: int, slug: str, title: str, detail: str, **extra: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": PROBLEM_BASE + slug,
        "title": title,
        "status": status,
        "detail": detail,
    }
    body.update(extra)
    return body


def problem_response(
    status: int,
    slug: str,
    title: str,
    detail: str,
    headers: dict[str, str] | None = None,
    **extra: Any,
) -> web.Response:
    return web.Response(
        status=status,
        text=json.dumps(problem_body(status, slug, title, detail, **extra), ensure_ascii=False),
        content_type=CONTENT_TYPE,
        headers=headers,
    )


def illegal_move_body(exc: IllegalMove, lang: str) -> dict[str, Any]:
    body = problem_body(
        422,
        "illegal-move",
        "Illegal move",
        exc.explain(lang),
        rule=exc.rule,
        rule_title=title(exc.rule, lang),
    )
    return localize(body, lang, detail_done=True)


def validation_errors(exc: ValidationError) -> list[dict[str, str]]:
    errors = []
    for error in exc.errors(include_url=False, include_input=False):
        field = ".".join(str(part) for part in error["loc"]) or "body"
        # a validator's own words, without pydantic's "Value error, " in front of them
        message = error["msg"].removeprefix("Value error, ")
        ctx = error.get("ctx") or {}
        if isinstance(ctx.get("error"), NotationError):
            message = str(ctx["error"])
        errors.append({"field": field, "message": message})
    return errors


def invalid(field: str, message: str) -> Problem:
    """A validation problem (422) about one field."""
    return validation_problem([{"field": field, "message": message}])


def validation_problem(errors: list[dict[str, str]]) -> Problem:
    summary = "; ".join(f"{e['field']}: {e['message']}" for e in errors)
    return InvalidInput(summary, errors=errors)


async def read_json(request: web.Request, model: type[M]) -> M:
    """The request body parsed as JSON and validated by `model` (400 / 413 / 422)."""
    try:
        raw = await request.read()
    except (RequestPayloadError, ConnectionResetError) as exc:
        # A body that cannot be decoded (a bad gzip stream), or a client gone mid-body.
        raise Problem(
            f"The body could not be read: {exc}.", slug="bad-body", title="Unreadable body"
        ) from None
    try:
        # An empty body stands for {} (every field optional); JSON null is not an object.
        data = json.loads(raw) if raw.strip() else {}
    except RecursionError:
        detail = "The body is JSON nested too deeply for this server."
        raise MalformedJson(detail) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise MalformedJson(f"The body is not JSON: {exc}.") from None
    if not isinstance(data, dict):
        raise invalid("body", "expected a JSON object")
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise validation_problem(validation_errors(exc)) from None


def _http_problem(exc: web.HTTPException, lang: str) -> web.Response:
    headers: dict[str, str] = {}
    slugs = {
        404: ("not-found", "Not found", "There is nothing at this address."),
        405: ("method-not-allowed", "Method not allowed", "This method is not allowed here."),
        413: (
            "payload-too-large",
            "Payload too large",
            "The request body is larger than this server accepts.",
        ),
    }
    slug, name, detail = slugs.get(
        exc.status, ("http-error", "HTTP error", exc.text or exc.reason or "Error")
    )
    if isinstance(exc, web.HTTPMethodNotAllowed):
        headers["Allow"] = ", ".join(sorted(exc.allowed_methods))
    headers["Content-Language"] = lang
    body = localize(problem_body(exc.status, slug, name, detail), lang)
    return web.Response(
        status=exc.status,
        text=json.dumps(body, ensure_ascii=False),
        content_type=CONTENT_TYPE,
        headers=headers,
    )


def known_problem(exc: Exception, lang: str) -> dict[str, Any] | None:
    """The problem document of an error a client can cause, in `lang`, or None for any other
    error.

    Shared by the HTTP middleware and the WebSocket endpoint, so both answer alike.
    """
    if isinstance(exc, Problem):
        body = problem_body(exc.status, exc.slug, exc.title, exc.detail, **exc.extra)
    elif isinstance(exc, IllegalMove):
        return illegal_move_body(exc, lang)
    elif isinstance(exc, NotationError):
        body = problem_body(422, "validation-error", "Validation error", str(exc))
    elif unavailable(exc):
        log.warning("database unavailable: %s", fault_line(exc))
        body = problem_body(
            503,
            "database-unavailable",
            "Database unavailable",
            "The database cannot take this request now; try again shortly.",
        )
    elif broker_down(exc):
        log.warning("broker unavailable: %s", fault_line(exc))
        body = problem_body(
            503,
            "broker-unavailable",
            "Broker unavailable",
            "Redis cannot be reached now; try again shortly.",
        )
    else:
        return None
    return localize(body, lang)


def internal_error(lang: str) -> dict[str, Any]:
    """The problem of a failure of the server itself (logged where it is caught)."""
    body = problem_body(
        500, "internal-error", "Internal server error", "The server failed to answer."
    )
    return localize(body, lang)


def language(request: web.Request) -> str:
    """The language a request asks for (`Accept-Language`; English by default)."""
    return negotiate(request.headers.get("Accept-Language"))


@web.middleware
async def problem_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except web.HTTPException as exc:
        if exc.status < 400:
            raise
        return _http_problem(exc, language(request))
    except Exception as exc:
        return error_response(request, exc)


def error_response(request: web.Request, exc: Exception) -> web.Response:
    """The problem document of an error raised while `request` was handled (a 500, logged with
    its traceback, for one that is no known problem)."""
    lang = language(request)
    body = known_problem(exc, lang)
    if body is None:
        log.exception("unhandled error on %s %s", request.method, request.path)
        body = internal_error(lang)
    headers = dict(exc.headers) if isinstance(exc, Problem) else {}
    if body["status"] == 503:
        headers.setdefault("Retry-After", "1")
    headers["Content-Language"] = lang
    return web.Response(
        status=body["status"],
        text=json.dumps(body, ensure_ascii=False),
        content_type=CONTENT_TYPE,
        headers=headers,
    )


@web.middleware
async def language_middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Puts in the asked language the problem documents that were not made in it: those that
    the middlewares inside this one answer with themselves, or that a handler returns."""
    response = await handler(request)
    if (
        response.content_type != CONTENT_TYPE
        or "Content-Language" in response.headers
        or not isinstance(response, web.Response)
        or not isinstance(response.body, bytes)
    ):
        return response
    lang = language(request)
    try:
        body = json.loads(response.body)
    except ValueError:
        return response
    if isinstance(body, dict):
        response.body = json.dumps(localize(body, lang), ensure_ascii=False).encode()
    response.headers["Content-Language"] = lang
    return response
