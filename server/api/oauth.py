"""Apps' sign-in (SPEC 2.2.1): OAuth 2.0 with PKCE. `GET /oauth/authorize` is the consent page
(sign-in and consent, in English, Romanian or Hebrew), `POST /oauth/authorize` its form,
`POST /oauth/token` the code exchange, `POST /oauth/revoke` (RFC 7009), and
`GET /.well-known/oauth-authorization-server` (RFC 8414). The protocol is
`server.services.apps` (oauthlib); this module reads forms and renders pages and JSON.

**The page.** Server-rendered HTML with the web client's style sheet (and `/web/oauth.css`), a
name and password form that works without scripts, and a small script (`/web/oauth.js`) that
offers "continue as <name>" when the browser holds the web client's session. It may not be
framed (`frame-ancestors 'none'`, `X-Frame-Options: DENY`): no other page can trick a click on
Allow. Its form may go to this server only, and the answer's redirect to the app's redirect
origin only (`form-action`). A request with a bad client_id, redirect URI or challenge is an
error page (400), never a redirect; other errors of the request go back to the app.

**Browsers elsewhere.** An app in a browser on another origin calls the token and revocation
endpoints (and reads the metadata) cross-origin: those answer with
`Access-Control-Allow-Origin: *` (no credentials: the form carries everything) and answer
their preflights. **Rate budgets**: `server.api.limits` meters `/api/` only, so these routes
charge the same budgets here (`_metered`), before anything else is done.
"""

from __future__ import annotations

import asyncio
import html
import math
from collections.abc import Awaitable, Callable, Iterable
from typing import Any
from urllib.parse import parse_qsl, urlencode

from aiohttp import web
from aiohttp.web_protocol import RequestPayloadError

from server.api.limits import REFUSAL_DELAY_S, Refusal
from server.api.render import json_response
from server.engine.messages import LANGUAGES, negotiate
from server.keys import APPS, BUDGET, SETTINGS
from server.services.apps import (
    AppService,
    Consent,
    Credentials,
    Pairs,
    Password,
    Redirect,
    Refused,
    StoredSession,
    TokenAnswer,
)
from server.services.errors import InvalidCredentials, MissingScope, TooManySignIns, Unauthorized
from server.services.sessions import SCOPES

routes = web.RouteTableDef()

FORM_MAX = 16_384
"""The largest form body read (an authorization request's parameters and a password)."""
FORM_FIELDS = 32
FORM_TYPE = "application/x-www-form-urlencoded"
TEXT_MAX = 1024
"""The longest name or password taken from the consent form (a password is at most 256
characters; longer is wrong anyway, and is not hashed)."""
CORS = {"Access-Control-Allow-Origin": "*"}
PREFLIGHT = {
    **CORS,
    "Access-Control-Allow-Methods": "POST, GET",
    "Access-Control-Allow-Headers": "Content-Type, Accept-Language",
    "Access-Control-Max-Age": "86400",
}
NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}


def apps(request: web.Request) -> AppService:
    return request.app[APPS]


# ---------------------------------------------------------------- words

TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "brand": "Russian Solitaire",
        "languages": "Language",
        "title": "Allow an app to use your account",
        "heading": "Allow {app} to use your account?",
        "app": "An app calling itself {app} asks to use your Russian Solitaire account. The app "
        "chose this name itself; this server does not vouch for it. Allow it only if you trust "
        "the app that sent you here.",
        "can": "If you allow it, it will be able to:",
        "always": "Know who you are: your player name",
        "scope.play": "Play for you: deal new games, make moves, ask for hints and give games up",
        "scope.race": "Race for you: create, join, leave and start races",
        "scope.account": "Manage your account: your settings, password and sessions, export "
        "your data and delete your account",
        "scope.read": "See your own games that stay hidden while they are played (daily and "
        "race games)",
        "redirect": "Your answer will be sent to {host}.",
        "lasts": "The app's access ends after a year, or whenever you end it among your "
        "account's sessions.",
        "who": "Who are you?",
        "current.before": "Continue as",
        "current.after": "(signed in on this browser)",
        "other": "Sign in with a name and password",
        "sign_in": "Sign in",
        "name": "Name",
        "password": "Password",
        "guest": "A guest without a password cannot sign in here: add a password on the game's "
        "Account page first.",
        "approve": "Allow",
        "deny": "Deny",
        "wrong": "The name or the password is wrong.",
        "missing": "Enter your name and your password.",
        "ended": "This browser's session can no longer sign in here. Sign in with your name and "
        "password.",
        "too_many": "Too many failed sign-ins with this name lately. Try again in {minutes} min.",
        "too_fast": "Too many requests from this address. Try again in {seconds} s.",
        "error.title": "This sign-in link does not work",
        "error.text": "The app that sent you here asked in a way this server cannot accept, so "
        "nothing was shared with it. You can close this page.",
        "error.detail": "Details for the app's developers:",
        "error.decision": "The form must say decision=approve or decision=deny.",
    },
    "ro": {
        "brand": "Pasiența rusească",
        "languages": "Limba",
        "title": "Permite unei aplicații să îți folosească contul",
        "heading": "Permiți aplicației {app} să îți folosească contul?",
        "app": "O aplicație care își spune {app} cere să îți folosească contul de Pasiența "
        "rusească. Numele l-a ales chiar aplicația; acest server nu garantează pentru el. "
        "Permite accesul doar dacă ai încredere în aplicația care te-a trimis aici.",
        "can": "Dacă îi permiți, va putea:",
        "always": "Să știe cine ești: numele tău de jucător",
        "scope.play": "Să joace în locul tău: să împartă jocuri noi, să facă mutări, să ceară "
        "indicii și să abandoneze jocuri",
        "scope.race": "Să concureze în locul tău: să creeze curse, să intre în ele, să le "
        "părăsească și să le pornească",
        "scope.account": "Să îți administreze contul: setările, parola și sesiunile, exportul "
        "datelor tale și ștergerea contului",
        "scope.read": "Să vadă jocurile tale care rămân ascunse cât timp se joacă (jocurile "
        "zilei și cele din curse)",
        "redirect": "Răspunsul tău va fi trimis la {host}.",
        "lasts": "Accesul aplicației se încheie după un an sau oricând îl închei tu din "
        "sesiunile contului.",
        "who": "Cine ești?",
        "current.before": "Continuă ca",
        "current.after": "(conectat în acest browser)",
        "other": "Conectează-te cu un nume și o parolă",
        "sign_in": "Conectare",
        "name": "Nume",
        "password": "Parolă",
        "guest": "Un jucător fără parolă nu se poate conecta aici: adaugă întâi o parolă pe "
        "pagina Cont a jocului.",
        "approve": "Permite",
        "deny": "Refuză",
        "wrong": "Numele sau parola este greșită.",
        "missing": "Introdu numele și parola.",
        "ended": "Sesiunea din acest browser nu mai poate fi folosită aici. Conectează-te cu "
        "numele și parola.",
        "too_many": "Prea multe conectări eșuate cu acest nume în ultima vreme. Încearcă din nou "
        "peste {minutes} min.",
        "too_fast": "Prea multe cereri de la această adresă. Încearcă din nou peste {seconds} s.",
        "error.title": "Acest link de conectare nu funcționează",
        "error.text": "Aplicația care te-a trimis aici a făcut o cerere pe care acest server nu "
        "o poate accepta, așa că nu i s-a transmis nimic. Poți închide această pagină.",
        "error.detail": "Detalii pentru dezvoltatorii aplicației:",
        "error.decision": "Formularul trebuie să spună decision=approve sau decision=deny.",
    },
    "he": {
        "brand": "סוליטר רוסי",
        "languages": "שפה",
        "title": "אישור גישה של אפליקציה לחשבון שלך",
        "heading": "לאשר ל־{app} להשתמש בחשבון שלך?",
        "app": "אפליקציה שקוראת לעצמה {app} מבקשת להשתמש בחשבון הסוליטר הרוסי שלך. האפליקציה "
        "בחרה את השם הזה בעצמה, והשרת הזה אינו ערב לו. אשרו רק אם אתם סומכים על האפליקציה "
        "ששלחה אתכם לכאן.",
        "can": "אם תאשרו, היא תוכל:",
        "always": "לדעת מי את/ה: שם השחקן שלך",
        "scope.play": "לשחק בשמך: לחלק משחקים חדשים, לבצע מהלכים, לבקש רמזים ולוותר על משחקים",
        "scope.race": "להתחרות בשמך: ליצור מרוצים, להצטרף אליהם, לעזוב אותם ולהתחיל אותם",
        "scope.account": "לנהל את החשבון שלך: ההגדרות, הסיסמה וההתחברויות, ייצוא הנתונים שלך "
        "ומחיקת החשבון",
        "scope.read": "לראות את המשחקים שלך שנשארים מוסתרים בזמן המשחק (המשחק היומי ומשחקי מרוץ)",
        "redirect": "התשובה שלך תישלח אל {host}.",
        "lasts": "הגישה של האפליקציה מסתיימת אחרי שנה, או מתי שתבטלו אותה ברשימת ההתחברויות "
        "של החשבון.",
        "who": "מי את/ה?",
        "current.before": "להמשיך בתור",
        "current.after": "(מחובר/ת בדפדפן הזה)",
        "other": "התחברות עם שם וסיסמה",
        "sign_in": "התחברות",
        "name": "שם",
        "password": "סיסמה",
        "guest": "שחקן אורח בלי סיסמה לא יכול להתחבר כאן: הוסיפו קודם סיסמה בדף החשבון במשחק.",
        "approve": "אישור",
        "deny": "דחייה",
        "wrong": "השם או הסיסמה שגויים.",
        "missing": "הזינו שם וסיסמה.",
        "ended": "ההתחברות בדפדפן הזה כבר לא יכולה לשמש כאן. התחברו עם שם וסיסמה.",
        "too_many": "יותר מדי ניסיונות התחברות כושלים עם השם הזה לאחרונה. נסו שוב בעוד "
        "{minutes} דקות.",
        "too_fast": "יותר מדי בקשות מהכתובת הזו. נסו שוב בעוד {seconds} שניות.",
        "error.title": "קישור ההתחברות הזה לא עובד",
        "error.text": "האפליקציה ששלחה אתכם לכאן ביקשה בקשה שהשרת הזה לא יכול לקבל, ולכן שום "
        "דבר לא נמסר לה. אפשר לסגור את הדף.",
        "error.detail": "פרטים למפתחי האפליקציה:",
        "error.decision": "הטופס צריך לומר decision=approve או decision=deny.",
    },
}
LANGUAGE_NAMES = {"en": "English", "ro": "Română", "he": "עברית"}


def language(request: web.Request, pairs: Iterable[tuple[str, str]]) -> str:
    """`lang` (of the query or the form) when it is one of ours, else `Accept-Language`."""
    for name, value in pairs:
        if name == "lang" and value in LANGUAGES:
            return value
    return negotiate(request.headers.get("Accept-Language"))


def _e(text: str) -> str:
    return html.escape(text, quote=True)


# ---------------------------------------------------------------- pages


def _policy(form_to: str | None) -> str:
    """The page's Content-Security-Policy: this server's files only, never framed, and a form
    that may go here and (its answer's redirect) to the app's origin only."""
    form = f"'self' {form_to}" if form_to else "'none'"
    return (
        "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
        f"connect-src 'self'; base-uri 'none'; form-action {form}; frame-ancestors 'none'"
    )


def _page(
    lang: str,
    title: str,
    body: str,
    *,
    status: int,
    form_to: str | None = None,
    links: str = "",
    headers: dict[str, str] | None = None,
) -> web.Response:
    t = TEXTS[lang]
    direction = "rtl" if lang == "he" else "ltr"
    document = f"""<!doctype html>
<html lang="{lang}" dir="{direction}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="color-scheme" content="light dark">
<meta name="referrer" content="no-referrer">
<title>{_e(title)} · {_e(t["brand"])}</title>
<link rel="icon" href="/web/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/web/style.css">
<link rel="stylesheet" href="/web/oauth.css">
<script type="module" src="/web/oauth.js"></script>
</head>
<body class="oauth">
<header class="top">
  <p class="brand"><a href="/">{_e(t["brand"])}</a></p>
  {links}
</header>
<main id="view" class="oauth-main">
{body}
</main>
</body>
</html>
"""
    sent = {
        "Content-Security-Policy": _policy(form_to),
        "X-Frame-Options": "DENY",
        "X-Content-Type-Options": "nosniff",
        "Referrer-Policy": "no-referrer",
        "Content-Language": lang,
        **NO_STORE,
    }
    sent.update(headers or {})
    return web.Response(
        status=status, text=document, content_type="text/html", charset="utf-8", headers=sent
    )


def _language_links(lang: str, params: Iterable[tuple[str, str]]) -> str:
    kept = [(name, value) for name, value in params]
    items = []
    for code in LANGUAGES:
        href = "/oauth/authorize?" + urlencode([*kept, ("lang", code)])
        current = ' aria-current="true"' if code == lang else ""
        items.append(
            f'<a href="{_e(href)}" lang="{code}" hreflang="{code}"{current}>'
            f"{_e(LANGUAGE_NAMES[code])}</a>"
        )
    label = _e(TEXTS[lang]["languages"])
    return f'<nav class="language oauth-languages" aria-label="{label}">{" ".join(items)}</nav>'


def consent_page(
    lang: str,
    consent: Consent,
    *,
    status: int = 200,
    message: str = "",
    name: str = "",
    who: str = "",
    headers: dict[str, str] | None = None,
) -> web.Response:
    """The consent page: the app's name, its redirect host, the scopes in words, who signs in,
    Allow and Deny. `who`: how the last try signed in ("password", or "refused": the stored
    session can no longer be used), so that the script offers the right choice."""
    t = TEXTS[lang]
    app = f'<strong class="oauth-app-name"><bdi>{_e(consent.client_id)}</bdi></strong>'
    host = f'<strong class="oauth-host"><bdi>{_e(consent.target.host)}</bdi></strong>'
    scopes = "".join(
        f'<li data-scope="{scope}">{_e(t["scope." + scope])}</li>'
        for scope in SCOPES
        if scope in consent.scopes
    )
    hidden = "\n".join(
        f'<input type="hidden" name="{_e(key)}" value="{_e(value)}">'
        for key, value in consent.params
    )
    problem = _e(message)
    body = f"""<section class="dialog oauth-panel" aria-labelledby="oauth-title">
<h1 id="oauth-title">{t["heading"].format(app=app)}</h1>
<p class="oauth-app">{t["app"].format(app=app)}</p>
<h2 class="oauth-can">{_e(t["can"])}</h2>
<ul class="oauth-scopes" id="oauth-scopes">
<li data-scope="">{_e(t["always"])}</li>{scopes}
</ul>
<p class="oauth-redirect" id="oauth-redirect">{t["redirect"].format(host=host)}</p>
<p class="note">{_e(t["lasts"])}</p>
<form method="post" action="/oauth/authorize" id="consent-form" data-who="{_e(who)}">
{hidden}
<input type="hidden" name="lang" value="{lang}">
<input type="hidden" name="token" id="oauth-token" value="">
<fieldset id="oauth-who" hidden disabled>
<legend>{_e(t["who"])}</legend>
<div class="choice"><input type="radio" name="who" value="current" id="oauth-who-current">
<label for="oauth-who-current">{_e(t["current.before"])} <strong id="oauth-current-name"></strong>
{_e(t["current.after"])}</label></div>
<div class="choice"><input type="radio" name="who" value="password" id="oauth-who-password">
<label for="oauth-who-password">{_e(t["other"])}</label></div>
</fieldset>
<fieldset id="oauth-sign-in">
<legend>{_e(t["sign_in"])}</legend>
<label for="oauth-name">{_e(t["name"])}</label>
<input id="oauth-name" name="name" required maxlength="64" autocomplete="username"
 value="{_e(name)}">
<label for="oauth-password">{_e(t["password"])}</label>
<input id="oauth-password" name="password" type="password" required maxlength="256"
 autocomplete="current-password">
<p class="help">{_e(t["guest"])}</p>
</fieldset>
<p class="problem" id="oauth-problem" role="alert">{problem}</p>
<div class="actions">
<button type="submit" name="decision" value="approve" class="primary" id="oauth-approve">
{_e(t["approve"])}</button>
<button type="submit" name="decision" value="deny" formnovalidate id="oauth-deny">
{_e(t["deny"])}</button>
</div>
</form>
</section>"""
    return _page(
        lang,
        t["title"],
        body,
        status=status,
        form_to=consent.target.origin,
        links=_language_links(lang, consent.params),
        headers=headers,
    )


def error_page(
    lang: str, detail: str, status: int = 400, headers: dict[str, str] | None = None
) -> web.Response:
    """A request that cannot go back to the app: what went wrong, never a redirect."""
    t = TEXTS[lang]
    body = f"""<section class="dialog oauth-panel" aria-labelledby="oauth-title">
<h1 id="oauth-title">{_e(t["error.title"])}</h1>
<p>{_e(t["error.text"])}</p>
<p class="note">{_e(t["error.detail"])}</p>
<p class="oauth-detail" id="oauth-error" lang="en" dir="ltr"><code>{_e(detail)}</code></p>
</section>"""
    return _page(lang, t["error.title"], body, status=status, headers=headers)


def message_page(lang: str, message: str, status: int, headers: dict[str, str]) -> web.Response:
    t = TEXTS[lang]
    body = f"""<section class="dialog oauth-panel" aria-labelledby="oauth-title">
<h1 id="oauth-title">{_e(t["title"])}</h1>
<p class="problem" id="oauth-problem" role="alert">{_e(message)}</p>
</section>"""
    return _page(lang, t["title"], body, status=status, headers=headers)


def _redirect(location: str, status: int) -> web.Response:
    return web.Response(
        status=status, headers={"Location": location, "Referrer-Policy": "no-referrer", **NO_STORE}
    )


# ---------------------------------------------------------------- forms and budgets


class FormError(Exception):
    def __init__(self, status: int, description: str) -> None:
        super().__init__(description)
        self.status = status
        self.description = description


async def read_form(request: web.Request) -> list[tuple[str, str]]:
    """The request's `application/x-www-form-urlencoded` body as (name, value) pairs, in order
    (repeated names kept, for the protocol to refuse); FormError (400 / 413 / 415) for any
    other body."""
    if request.content_type != FORM_TYPE:
        raise FormError(415, f"The body must be {FORM_TYPE}.")
    if request.content_length is not None and request.content_length > FORM_MAX:
        raise FormError(413, f"The body may be at most {FORM_MAX} bytes.")
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise FormError(413, f"The body may be at most {FORM_MAX} bytes.") from None
    except (RequestPayloadError, ConnectionResetError):
        raise FormError(400, "The body could not be read.") from None
    if len(raw) > FORM_MAX:
        raise FormError(413, f"The body may be at most {FORM_MAX} bytes.")
    try:
        text = raw.decode("ascii")
        return parse_qsl(
            text,
            keep_blank_values=True,
            encoding="utf-8",
            errors="strict",
            max_num_fields=FORM_FIELDS,
        )
    except ValueError:  # not ASCII, not UTF-8 once decoded, or too many fields
        raise FormError(400, f"The body is not a {FORM_TYPE} form.") from None


def _first(pairs: Iterable[tuple[str, str]], name: str) -> str:
    for key, value in pairs:
        if key == name:
            return value
    return ""


async def _metered(request: web.Request) -> Refusal | None:
    """Charges the request to the rate budgets, as `server.api.limits` does every `/api/`
    request (it meters nothing else); the refusal when one is spent."""
    budget = request.app[BUDGET]
    if not budget.on:
        return None
    refusal = await budget.charge_request(request, budget.address(request))
    if refusal is not None:
        await asyncio.sleep(REFUSAL_DELAY_S)
    return refusal


def _json(body: dict[str, Any] | None, status: int, headers: dict[str, str]) -> web.Response:
    if body is None:
        return web.Response(status=status, headers=headers)
    return json_response(body, status, headers=headers)


def _oauth_error(status: int, error: str, description: str, **headers: str) -> web.Response:
    return json_response(
        {"error": error, "error_description": description},
        status,
        headers={**CORS, **NO_STORE, **headers},
    )


def _refused_json(refusal: Refusal) -> web.Response:
    response = refusal.response()
    response.headers.update(CORS)
    return response


# ---------------------------------------------------------------- routes


@routes.get("/oauth/authorize")
async def authorize(request: web.Request) -> web.Response:
    pairs = list(request.query.items())
    lang = language(request, pairs)
    refusal = await _metered(request)
    if refusal is not None:
        return _too_fast(lang, refusal)
    asked = apps(request).ask(pairs)
    if isinstance(asked, Refused):
        return error_page(lang, asked.description)
    if isinstance(asked, Redirect):
        return _redirect(asked.location, 302)
    return consent_page(lang, asked)


def _too_fast(lang: str, refusal: Refusal) -> web.Response:
    text = TEXTS[lang]["too_fast"].format(seconds=refusal.retry_after)
    return message_page(lang, text, 429, {"Retry-After": str(refusal.retry_after)})


@routes.post("/oauth/authorize")
async def authorize_decision(request: web.Request) -> web.Response:
    lang = language(request, request.query.items())
    refusal = await _metered(request)
    if refusal is not None:
        return _too_fast(lang, refusal)
    try:
        pairs = await read_form(request)
    except FormError as error:
        return error_page(lang, error.description, error.status)
    lang = language(request, pairs)
    service = apps(request)
    decision = _first(pairs, "decision")
    if decision == "deny":
        return _decided(lang, service.deny(pairs))
    asked = service.ask(pairs)
    if not isinstance(asked, Consent):
        return _decided(lang, asked)
    if decision != "approve":
        return error_page(lang, TEXTS[lang]["error.decision"])
    token = _first(pairs, "token")
    name = _first(pairs, "name")[:TEXT_MAX]
    password = _first(pairs, "password")
    credentials: Credentials
    if token:
        credentials = StoredSession(token[:TEXT_MAX])
    elif not name.strip() or not password:
        return consent_page(lang, asked, status=400, message=TEXTS[lang]["missing"], name=name)
    elif len(password) > TEXT_MAX:
        return consent_page(lang, asked, status=401, message=TEXTS[lang]["wrong"], name=name)
    else:
        credentials = Password(name, password)
    try:
        return _decided(lang, await service.approve(pairs, credentials))
    except InvalidCredentials:
        return consent_page(
            lang, asked, status=401, message=TEXTS[lang]["wrong"], name=name, who="password"
        )
    except TooManySignIns as error:
        retry = int(error.headers.get("Retry-After", "60"))
        message = TEXTS[lang]["too_many"].format(minutes=max(1, math.ceil(retry / 60)))
        return consent_page(
            lang,
            asked,
            status=429,
            message=message,
            name=name,
            who="password",
            headers={"Retry-After": str(retry)},
        )
    except (Unauthorized, MissingScope):
        return consent_page(lang, asked, status=401, message=TEXTS[lang]["ended"], who="refused")


def _decided(lang: str, result: Consent | Redirect | Refused) -> web.Response:
    if isinstance(result, Redirect):
        return _redirect(result.location, 303)
    if isinstance(result, Refused):
        return error_page(lang, result.description)
    return consent_page(lang, result)  # (not reached: a decision redirects or is refused)


async def _form_endpoint(
    request: web.Request, answer_of: Callable[[Pairs, str], Awaitable[TokenAnswer]]
) -> web.Response:
    """A form endpoint of RFC 6749 / 7009: metered, the form read, answered in JSON."""
    refusal = await _metered(request)
    if refusal is not None:
        return _refused_json(refusal)
    try:
        pairs = await read_form(request)
    except FormError as error:
        return _oauth_error(error.status, "invalid_request", error.description)
    answer = await answer_of(pairs, request.query_string)
    return _json(answer.body, answer.status, {**CORS, **NO_STORE})


@routes.post("/oauth/token")
async def oauth_token(request: web.Request) -> web.Response:
    return await _form_endpoint(request, apps(request).exchange)


@routes.post("/oauth/revoke")
async def oauth_revoke(request: web.Request) -> web.Response:
    return await _form_endpoint(request, apps(request).revoke)


@routes.get("/.well-known/oauth-authorization-server")
async def oauth_metadata(request: web.Request) -> web.Response:
    refusal = await _metered(request)
    if refusal is not None:
        return _refused_json(refusal)
    issuer = _issuer(request)
    return json_response(
        {
            "issuer": issuer,
            "authorization_endpoint": issuer + "/oauth/authorize",
            "token_endpoint": issuer + "/oauth/token",
            "revocation_endpoint": issuer + "/oauth/revoke",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none"],
            "revocation_endpoint_auth_methods_supported": ["none"],
            "scopes_supported": list(SCOPES),
        },
        headers=CORS,
    )


def _issuer(request: web.Request) -> str:
    """This server's address as the request reached it: its scheme (behind a trusted proxy,
    `X-Forwarded-Proto`) and its host."""
    scheme = request.scheme
    if request.app[SETTINGS].trust_forwarded:
        forwarded = request.headers.get("X-Forwarded-Proto", "").rsplit(",", 1)[-1].strip()
        if forwarded in ("http", "https"):
            scheme = forwarded
    return f"{scheme}://{request.host}"


async def _preflight(request: web.Request) -> web.Response:
    refusal = await _metered(request)
    if refusal is not None:
        return _refused_json(refusal)
    return web.Response(status=200, headers=PREFLIGHT)


for _path in ("/oauth/token", "/oauth/revoke", "/.well-known/oauth-authorization-server"):
    routes.options(_path)(_preflight)
