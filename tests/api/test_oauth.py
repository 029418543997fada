"""Apps' sign-in over HTTP (SPEC 2.2.1): the OAuth 2.0 code grant with PKCE through the consent
page, the token and revocation endpoints and the metadata document, and every refusal: a wrong
verifier, a reused code (whose first token then dies), an expired code, a foreign redirect URI
at the token endpoint, a bad client_id, redirect URI, challenge or method at the authorization
endpoint (an error page, never a redirect), malformed forms (a 4xx, never a 500), CORS for apps
in browsers elsewhere, and the rate budget."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
from typing import Any

import pytest
from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient
from yarl import URL

from server.app import create_app
from server.services.apps import CODE_LIFETIME_MS, TOKEN_LIFETIME_S
from server.settings import Settings
from tests.api.boards_helpers import Clock
from tests.api.helpers import problem
from tests.conftest import ClientFactory
from tests.names import unique_name

PASSWORD = "a long enough password"
REDIRECT = "http://127.0.0.1:8765/callback"
CLIENT = 'Fancy <b>"Solver"</b> & co'
"""A client_id with characters the page must escape."""
TOKEN_KEYS = {"access_token", "token_type", "scope", "expires_in"}


def pkce() -> tuple[str, str]:
    """(verifier, S256 challenge)."""
    verifier = secrets.token_urlsafe(48)
    digest = hashlib.sha256(verifier.encode()).digest()
    return verifier, base64.urlsafe_b64encode(digest).decode().rstrip("=")


def request_params(challenge: str, **changes: str | None) -> dict[str, str]:
    params: dict[str, str | None] = {
        "response_type": "code",
        "client_id": CLIENT,
        "redirect_uri": REDIRECT,
        "code_challenge": challenge,
        "code_challenge_method": "S256",
        "scope": "play read",
        "state": "st-" + secrets.token_hex(4),
    }
    params.update(changes)
    return {key: value for key, value in params.items() if value is not None}


async def account(client: TestClient[Any, Any]) -> tuple[str, str, dict[str, str]]:
    """A new player with a password: (id, name, the web client's auth header)."""
    name = unique_name("app-user")
    response = await client.post("/api/v1/players", json={"name": name, "password": PASSWORD})
    assert response.status == 201, await response.text()
    body = await response.json()
    return body["id"], name, {"Authorization": f"Bearer {body['token']}"}


async def decide(
    client: TestClient[Any, Any], params: dict[str, str], **form: str
) -> ClientResponse:
    return await client.post("/oauth/authorize", data={**params, **form}, allow_redirects=False)


async def approve(client: TestClient[Any, Any], params: dict[str, str], name: str) -> str:
    """Signs in on the consent page and allows: the code from the redirect."""
    response = await decide(client, params, name=name, password=PASSWORD, decision="approve")
    assert response.status == 303, await response.text()
    location = URL(response.headers["Location"])
    assert str(location.with_query(None)) == params["redirect_uri"]
    assert location.query["state"] == params["state"]
    assert set(location.query) == {"code", "state"}
    return location.query["code"]


async def exchange(
    client: TestClient[Any, Any], code: str, verifier: str, **changes: str | None
) -> ClientResponse:
    """The token request for `code` (`changes`: other values; None leaves one out)."""
    form: dict[str, str | None] = {
        "grant_type": "authorization_code",
        "code": code,
        "code_verifier": verifier,
        "redirect_uri": REDIRECT,
        "client_id": CLIENT,
        **changes,
    }
    sent = {key: value for key, value in form.items() if value is not None}
    return await client.post("/oauth/token", data=sent)


async def oauth_error(response: ClientResponse, error: str, status: int = 400) -> dict[str, Any]:
    text = await response.text()
    assert response.status == status, text
    assert response.content_type == "application/json", text
    assert response.headers["Cache-Control"] == "no-store"
    body: dict[str, Any] = json.loads(text)
    assert set(body) == {"error", "error_description"}, body
    assert body["error"] == error, body
    assert body["error_description"], body
    return body


async def token_of(client: TestClient[Any, Any], name: str, **changes: str | None) -> str:
    verifier, challenge = pkce()
    code = await approve(client, request_params(challenge, **changes), name)
    response = await exchange(client, code, verifier)
    assert response.status == 200, await response.text()
    token: str = (await response.json())["access_token"]
    return token


async def error_page(response: ClientResponse, status: int = 400) -> str:
    text = await response.text()
    assert response.status == status, text
    assert response.content_type == "text/html", text
    assert "Location" not in response.headers
    assert 'id="oauth-error"' in text, text
    return text


# ---------------------------------------------------------------- the whole flow


async def test_a_whole_flow_gives_a_session_with_exactly_the_scopes_granted(
    client: TestClient[Any, Any],
) -> None:
    player_id, name, _ = await account(client)
    verifier, challenge = pkce()
    params = request_params(challenge)

    page = await client.get("/oauth/authorize", params=params, headers={"Accept-Language": "en"})
    text = await page.text()
    assert page.status == 200, text
    assert page.content_type == "text/html"
    policy = page.headers["Content-Security-Policy"]
    assert "frame-ancestors 'none'" in policy
    assert "form-action 'self' http://127.0.0.1:8765" in policy
    assert page.headers["X-Frame-Options"] == "DENY"
    assert page.headers["Cache-Control"] == "no-store"
    assert '<html lang="en" dir="ltr">' in text
    assert "Fancy &lt;b&gt;&quot;Solver&quot;&lt;/b&gt; &amp; co" in text
    assert "<b>" not in text
    assert "127.0.0.1:8765" in text  # the redirect host
    assert 'data-scope="play"' in text and 'data-scope="read"' in text
    assert 'data-scope="race"' not in text and 'data-scope="account"' not in text
    assert 'name="password"' in text and 'value="approve"' in text and 'value="deny"' in text

    code = await approve(client, params, name)
    response = await exchange(client, code, verifier)
    assert response.status == 200, await response.text()
    assert response.headers["Cache-Control"] == "no-store"
    body = await response.json()
    assert set(body) == TOKEN_KEYS
    assert body["token_type"] == "Bearer"
    assert body["scope"] == "play read"
    assert body["expires_in"] == TOKEN_LIFETIME_S
    auth = {"Authorization": f"Bearer {body['access_token']}"}

    me = await client.get("/api/v1/me", headers=auth)
    assert me.status == 200, await me.text()
    session = (await me.json())["session"]
    assert (await me.json())["id"] == player_id
    assert session["scopes"] == ["play", "read"]
    assert session["app"] == {"client_id": CLIENT, "name": CLIENT}
    assert session["label"] == CLIENT
    assert session["current"] is True

    game = await client.post("/api/v1/games", json={}, headers=auth)  # play: granted
    assert game.status == 201, await game.text()
    race = await client.post("/api/v1/races", json={"seats": 2}, headers=auth)
    assert (await problem(race, 403))["scope"] == "race"
    sessions = await client.get("/api/v1/me/sessions", headers=auth)
    refused = await problem(sessions, 403)
    assert refused["type"] == "/problems/missing-scope" and refused["scope"] == "account"


async def test_the_web_clients_session_can_approve_in_place_of_a_password(
    client: TestClient[Any, Any],
) -> None:
    player_id, _, web_auth = await account(client)
    verifier, challenge = pkce()
    params = request_params(challenge, scope="race")
    web_token = web_auth["Authorization"].removeprefix("Bearer ")
    response = await decide(client, params, token=web_token, decision="approve")
    assert response.status == 303, await response.text()
    code = URL(response.headers["Location"]).query["code"]
    token = (await (await exchange(client, code, verifier)).json())["access_token"]
    me = await client.get("/api/v1/me", headers={"Authorization": f"Bearer {token}"})
    assert (await me.json())["id"] == player_id
    assert (await me.json())["session"]["scopes"] == ["race"]

    # an app's token has no `account` scope: it cannot approve for another app
    response = await decide(client, params, token=token, decision="approve")
    assert response.status == 401 and 'data-who="refused"' in await response.text()
    # nor can a dead one
    response = await decide(client, params, token="not-a-token", decision="approve")
    assert response.status == 401


async def test_the_scopes_asked_for_are_listed_in_the_servers_order(
    client: TestClient[Any, Any],
) -> None:
    _, name, _ = await account(client)
    verifier, challenge = pkce()
    code = await approve(client, request_params(challenge, scope="read account play race"), name)
    body = await (await exchange(client, code, verifier)).json()
    assert body["scope"] == "play race account read"


async def test_no_scope_gives_a_token_that_only_says_who_the_player_is(
    client: TestClient[Any, Any],
) -> None:
    player_id, name, _ = await account(client)
    token = await token_of(client, name, scope=None)
    auth = {"Authorization": f"Bearer {token}"}
    me = await client.get("/api/v1/me", headers=auth)
    assert (await me.json())["id"] == player_id
    assert (await me.json())["session"]["scopes"] == []
    game = await client.post("/api/v1/games", json={}, headers=auth)
    assert (await problem(game, 403))["scope"] == "play"


async def test_denying_sends_access_denied_back_with_the_state(
    client: TestClient[Any, Any],
) -> None:
    _, challenge = pkce()
    params = request_params(challenge)
    response = await decide(client, params, decision="deny")
    assert response.status == 303, await response.text()
    location = URL(response.headers["Location"])
    assert str(location.with_query(None)) == REDIRECT
    assert location.query["error"] == "access_denied"
    assert location.query["state"] == params["state"]
    assert "code" not in location.query


# ---------------------------------------------------------------- refusals at the token endpoint


async def test_a_wrong_verifier_is_refused(client: TestClient[Any, Any]) -> None:
    _, name, _ = await account(client)
    _, challenge = pkce()
    code = await approve(client, request_params(challenge), name)
    other, _ = pkce()
    await oauth_error(await exchange(client, code, other), "invalid_grant")
    await oauth_error(await exchange(client, code, ""), "invalid_grant")


async def test_a_reused_code_is_refused_and_ends_the_session_it_made(
    client: TestClient[Any, Any],
) -> None:
    _, name, _ = await account(client)
    verifier, challenge = pkce()
    code = await approve(client, request_params(challenge), name)
    first = await exchange(client, code, verifier)
    assert first.status == 200, await first.text()
    auth = {"Authorization": f"Bearer {(await first.json())['access_token']}"}
    assert (await client.get("/api/v1/me", headers=auth)).status == 200
    await oauth_error(await exchange(client, code, verifier), "invalid_grant")
    await problem(await client.get("/api/v1/me", headers=auth), 401)
    await oauth_error(await exchange(client, code, verifier), "invalid_grant")


async def test_two_exchanges_of_one_code_at_once_are_a_reuse(
    client: TestClient[Any, Any],
) -> None:
    _, name, _ = await account(client)
    verifier, challenge = pkce()
    code = await approve(client, request_params(challenge), name)
    answers = await asyncio.gather(*(exchange(client, code, verifier) for _ in range(2)))
    assert sorted(answer.status for answer in answers) == [200, 400]
    won = next(answer for answer in answers if answer.status == 200)
    lost = next(answer for answer in answers if answer.status == 400)
    await oauth_error(lost, "invalid_grant")
    auth = {"Authorization": f"Bearer {(await won.json())['access_token']}"}
    await problem(await client.get("/api/v1/me", headers=auth), 401)


async def test_an_expired_code_is_refused(timed: TestClient[Any, Any], clock: Clock) -> None:
    _, name, _ = await account(timed)
    verifier, challenge = pkce()
    code = await approve(timed, request_params(challenge), name)
    clock.now += CODE_LIFETIME_MS
    await oauth_error(await exchange(timed, code, verifier), "invalid_grant")
    # one that has a moment left is taken
    verifier, challenge = pkce()
    code = await approve(timed, request_params(challenge), name)
    clock.now += CODE_LIFETIME_MS - 1
    assert (await exchange(timed, code, verifier)).status == 200


async def test_the_token_lives_a_year(timed: TestClient[Any, Any], clock: Clock) -> None:
    _, name, _ = await account(timed)
    auth = {"Authorization": f"Bearer {await token_of(timed, name)}"}
    clock.now += TOKEN_LIFETIME_S * 1000 - 1
    assert (await timed.get("/api/v1/me", headers=auth)).status == 200
    clock.now += 1
    await problem(await timed.get("/api/v1/me", headers=auth), 401)


async def test_a_code_is_bound_to_its_redirect_uri_and_client(
    client: TestClient[Any, Any],
) -> None:
    _, name, _ = await account(client)
    verifier, challenge = pkce()
    code = await approve(client, request_params(challenge), name)
    for changes in (
        {"redirect_uri": "http://127.0.0.1:8765/elsewhere"},
        {"redirect_uri": "https://attacker.example/callback"},
        {"client_id": "another app"},
    ):
        await oauth_error(await exchange(client, code, verifier, **changes), "invalid_grant")
    await oauth_error(await exchange(client, code, verifier, redirect_uri=None), "invalid_request")
    await oauth_error(await exchange(client, code, verifier, redirect_uri=""), "invalid_grant")
    await oauth_error(await exchange(client, code, verifier, client_id=""), "invalid_client")
    await oauth_error(await exchange(client, code, verifier, client_id=None), "invalid_client")
    # none of those used the code up
    assert (await exchange(client, code, verifier)).status == 200


async def test_made_up_and_malformed_token_requests_are_4xx(
    client: TestClient[Any, Any],
) -> None:
    verifier, _ = pkce()
    await oauth_error(await exchange(client, "made-up", verifier), "invalid_grant")
    await oauth_error(await exchange(client, "ç" * 300, verifier), "invalid_grant")
    for grant in ("password", "refresh_token", "openid", ""):
        response = await exchange(client, "made-up", verifier, grant_type=grant)
        await oauth_error(response, "unsupported_grant_type")
    twice = "grant_type=authorization_code&code=a&code=b&code_verifier=v&client_id=x&redirect_uri=y"
    response = await client.post(
        "/oauth/token",
        data=twice,
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    await oauth_error(response, "invalid_request")
    for body, content_type, status in [
        (b'{"grant_type": "authorization_code"}', "application/json", 415),
        (b"code=%C3%28", "application/x-www-form-urlencoded", 400),
        ("code=é".encode(), "application/x-www-form-urlencoded", 400),
        (b"a=1&" * 100, "application/x-www-form-urlencoded", 400),
        (b"code=" + b"x" * 20_000, "application/x-www-form-urlencoded", 413),
    ]:
        response = await client.post(
            "/oauth/token", data=body, headers={"Content-Type": content_type}
        )
        await oauth_error(response, "invalid_request", status)
    # a stray % is taken literally (as browsers send it): the request is then what it is
    response = await client.post(
        "/oauth/token",
        data=b"grant_type=authorization_code&code=%ZZ&code_verifier=%&client_id=a%&redirect_uri=%",
        headers={"Content-Type": "application/x-www-form-urlencoded"},
    )
    await oauth_error(response, "invalid_grant")
    # parameters in the query of a POST are refused (RFC 6749 3.2)
    response = await client.post(
        "/oauth/token?code=x", data={"grant_type": "authorization_code", "code": "x"}
    )
    await oauth_error(response, "invalid_request")


# ---------------------------------------------------- refusals at the authorization endpoint


@pytest.mark.parametrize(
    ("changes", "detail"),
    [
        ({"redirect_uri": "https://attacker.example/cb#fragment"}, "redirect"),
        ({"redirect_uri": "http://attacker.example/cb"}, "redirect"),
        ({"redirect_uri": "http://localhost.attacker.example/cb"}, "redirect"),
        ({"redirect_uri": "http://localhost@attacker.example/cb"}, "redirect"),
        ({"redirect_uri": "https://user:pw@example.com/cb"}, "redirect"),
        ({"redirect_uri": "javascript:alert(1)"}, "redirect"),
        ({"redirect_uri": "ftp://example.com/cb"}, "redirect"),
        ({"redirect_uri": "/relative"}, "redirect"),
        ({"redirect_uri": None}, "redirect"),
        ({"client_id": None}, "client"),
        ({"client_id": ""}, "client"),
        ({"client_id": "x" * 65}, "client"),
        ({"client_id": "tab\tin it"}, "client"),
        ({"code_challenge_method": "plain"}, "S256"),
        ({"code_challenge_method": None}, "S256"),
        ({"code_challenge": None}, "code_challenge"),
        ({"code_challenge": "short"}, "code_challenge"),
        ({"code_challenge": "x" * 129}, "code_challenge"),
        ({"code_challenge": "!" * 43}, "code_challenge"),
    ],
)
async def test_a_bad_client_redirect_or_challenge_is_an_error_page_never_a_redirect(
    client: TestClient[Any, Any], changes: dict[str, str | None], detail: str
) -> None:
    _, name, _ = await account(client)
    _, challenge = pkce()
    params = request_params(challenge, **changes)
    text = await error_page(await client.get("/oauth/authorize", params=params))
    assert detail.lower() in text.lower(), text
    # the form refuses them as well, whatever it is asked to do
    for decision in ("approve", "deny"):
        response = await decide(client, params, name=name, password=PASSWORD, decision=decision)
        await error_page(response)


async def test_https_and_loopback_redirects_are_taken(client: TestClient[Any, Any]) -> None:
    _, challenge = pkce()
    for uri in (
        "https://app.example.com/oauth/done?from=solitaire",
        "http://localhost/cb",
        "http://localhost:3000/cb",
        "http://127.0.0.1/cb",
    ):
        response = await client.get(
            "/oauth/authorize", params=request_params(challenge, redirect_uri=uri)
        )
        assert response.status == 200, (uri, await response.text())


async def test_other_errors_of_the_request_go_back_to_the_app(
    client: TestClient[Any, Any],
) -> None:
    _, challenge = pkce()
    for changes, error in [
        ({"scope": "play admin"}, "invalid_scope"),
        ({"response_type": "token"}, "unsupported_response_type"),
        ({"response_type": None}, "invalid_request"),
    ]:
        params = request_params(challenge, **changes)
        response = await client.get("/oauth/authorize", params=params, allow_redirects=False)
        assert response.status == 302, await response.text()
        location = URL(response.headers["Location"])
        assert str(location.with_query(None)) == REDIRECT
        assert location.query["error"] == error
        assert location.query["state"] == params["state"]


async def test_wrong_credentials_show_the_page_again_and_the_names_limit_holds(
    client: TestClient[Any, Any],
) -> None:
    _, name, _ = await account(client)
    _, challenge = pkce()
    params = request_params(challenge)
    response = await decide(
        client, params, name=name, password="wrong password", decision="approve"
    )
    text = await response.text()
    assert response.status == 401, text
    assert "The name or the password is wrong." in text
    assert f'value="{name}"' in text and 'data-who="password"' in text
    response = await decide(
        client, params, name="nobody-" + name, password=PASSWORD, decision="approve"
    )
    assert response.status == 401
    response = await decide(client, params, name=name, password="", decision="approve")
    assert response.status == 400
    for _ in range(9):
        await decide(client, params, name=name, password="wrong again", decision="approve")
    response = await decide(client, params, name=name, password=PASSWORD, decision="approve")
    text = await response.text()
    assert response.status == 429, text
    assert int(response.headers["Retry-After"]) > 0
    assert response.content_type == "text/html"
    response = await decide(client, params, decision="maybe")
    await error_page(response)


async def test_the_page_speaks_the_players_language(client: TestClient[Any, Any]) -> None:
    _, challenge = pkce()
    params = request_params(challenge)
    hebrew = await client.get("/oauth/authorize", params=params, headers={"Accept-Language": "he"})
    text = await hebrew.text()
    assert '<html lang="he" dir="rtl">' in text and "אישור" in text
    assert hebrew.headers["Content-Language"] == "he"
    romanian = await client.get("/oauth/authorize", params={**params, "lang": "ro"})
    text = await romanian.text()
    assert '<html lang="ro" dir="ltr">' in text and "Permite" in text
    assert 'name="lang" value="ro"' in text
    broken = await client.get(
        "/oauth/authorize", params={**params, "client_id": ""}, headers={"Accept-Language": "he"}
    )
    assert '<html lang="he" dir="rtl">' in await error_page(broken)


async def test_malformed_authorization_requests_are_4xx(client: TestClient[Any, Any]) -> None:
    _, challenge = pkce()
    params = request_params(challenge)
    duplicated = "&".join(f"{k}={v}" for k, v in params.items()) + "&client_id=other"
    for query in ("", "client_id=%ZZ", "a=%00%ff", duplicated, "redirect_uri=" + "x" * 3000):
        response = await client.get("/oauth/authorize?" + query, allow_redirects=False)
        assert 400 <= response.status < 500, (query, response.status)
    for body, content_type in [
        (b"{}", "application/json"),
        (b"decision=approve&%ff", "application/x-www-form-urlencoded"),
        (b"x=" + b"y" * 20_000, "application/x-www-form-urlencoded"),
    ]:
        response = await client.post(
            "/oauth/authorize", data=body, headers={"Content-Type": content_type}
        )
        assert 400 <= response.status < 500 and response.content_type == "text/html"


# ---------------------------------------------------------------- revocation and metadata


async def test_a_revoked_token_is_dead(client: TestClient[Any, Any]) -> None:
    _, name, web_auth = await account(client)
    token = await token_of(client, name)
    auth = {"Authorization": f"Bearer {token}"}
    response = await client.post("/oauth/revoke", data={"token": token})
    assert response.status == 200, await response.text()
    await problem(await client.get("/api/v1/me", headers=auth), 401)
    assert (await client.get("/api/v1/me", headers=web_auth)).status == 200  # only that one
    for form in (
        {"token": token},
        {"token": "made-up", "token_type_hint": "refresh_token"},
        {"token": "x" * 5000},
    ):
        assert (await client.post("/oauth/revoke", data=form)).status == 200
    await oauth_error(await client.post("/oauth/revoke", data={}), "invalid_request")


async def test_the_metadata_document_describes_the_endpoints(
    client: TestClient[Any, Any],
) -> None:
    response = await client.get("/.well-known/oauth-authorization-server")
    assert response.status == 200
    body = await response.json()
    issuer = str(client.make_url("")).rstrip("/")
    assert body == {
        "issuer": issuer,
        "authorization_endpoint": issuer + "/oauth/authorize",
        "token_endpoint": issuer + "/oauth/token",
        "revocation_endpoint": issuer + "/oauth/revoke",
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "revocation_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": ["play", "race", "account", "read"],
    }


async def test_apps_in_browsers_elsewhere_may_call_the_token_and_revocation_endpoints(
    client: TestClient[Any, Any],
) -> None:
    origin = {"Origin": "https://app.example.com"}
    for path in ("/oauth/token", "/oauth/revoke", "/.well-known/oauth-authorization-server"):
        preflight = await client.options(
            path,
            headers={
                **origin,
                "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "content-type",
            },
        )
        assert preflight.status == 200
        assert preflight.headers["Access-Control-Allow-Origin"] == "*"
        assert "POST" in preflight.headers["Access-Control-Allow-Methods"]
        assert "Content-Type" in preflight.headers["Access-Control-Allow-Headers"]
    response = await client.post("/oauth/token", data={"grant_type": "x"}, headers=origin)
    assert response.status == 400 and response.headers["Access-Control-Allow-Origin"] == "*"
    response = await client.post("/oauth/revoke", data={"token": "x"}, headers=origin)
    assert response.status == 200 and response.headers["Access-Control-Allow-Origin"] == "*"
    response = await client.get("/.well-known/oauth-authorization-server", headers=origin)
    assert response.headers["Access-Control-Allow-Origin"] == "*"
    # the consent page is no API: not for other origins
    _, challenge = pkce()
    page = await client.get("/oauth/authorize", params=request_params(challenge), headers=origin)
    assert "Access-Control-Allow-Origin" not in page.headers


async def test_the_oauth_routes_are_charged_to_the_rate_budget(
    aiohttp_client: ClientFactory, database_url: str
) -> None:
    settings = Settings(database_url=database_url, rate_limit=0.625, migrate=False)
    limited = await aiohttp_client(create_app(settings))
    statuses = []
    for _ in range(8):
        response = await limited.post("/oauth/token", data={"grant_type": "authorization_code"})
        statuses.append(response.status)
        if response.status == 429:
            assert response.headers["Access-Control-Allow-Origin"] == "*"
            assert int(response.headers["Retry-After"]) > 0
    assert 429 in statuses, statuses
    _, challenge = pkce()
    page = await limited.get("/oauth/authorize", params=request_params(challenge))
    assert page.status == 429 and page.content_type == "text/html"
