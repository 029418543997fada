"""The rules of the game and the problem types, as pages: `/rules`, `/problems` and
`/problems/{slug}` (SPEC 1, 2.3, 2.7), in English, Romanian and Hebrew.

The texts are Markdown in the package (`server/rules/rules.<lang>.md`, `problems.<lang>.md`),
rendered to HTML by markdown-it-py (CommonMark with tables, raw HTML off). A heading may end with
`{#id}`, which becomes its `id`: the rule ids of the refusals are the anchors `rule-<id>`
(`/rules#rule-same_suit`), the problem types are the sections `## <title> {#<slug>}` of the
problems' text, and that heading is also the problem's `title` in that language
(`problem_title`), so a page and the documents it explains never disagree.

Decisions where the spec is silent:
- The language is `?lang=` when it is one of `en`, `ro`, `he` (a region such as `ro-RO` counts
  as its language), else the best of `Accept-Language`, else English: an unknown `lang` is
  ignored rather than refused, since a person follows these links. The answer says it in
  `Content-Language` and varies on `Accept-Language`; its links to the other pages keep the
  language.
- `/problems/{slug}` of a slug that is not a problem type is a `404` problem.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from aiohttp import web
from markdown_it import MarkdownIt
from markdown_it.rules_core import StateCore
from markdown_it.token import Token

from server.engine.messages import LANGUAGES, negotiate
from server.services.errors import NotFound

routes = web.RouteTableDef()

FOLDER = Path(__file__).resolve().parent.parent / "rules"
RULE_ANCHOR = "rule-"
RULES_PATH = "/rules"
PROBLEMS_PATH = "/problems"
RTL = frozenset({"he"})
HEADING_ID = re.compile(r"\s*\{#([A-Za-z0-9_-]+)\}\s*$")
POLICY = (
    "default-src 'none'; style-src 'self'; img-src 'self'; base-uri 'none'; "
    "form-action 'none'; frame-ancestors 'none'"
)
LABELS = {
    "game": {"en": "Play", "ro": "Joacă", "he": "שחקו"},
    "rules": {"en": "Rules", "ro": "Reguli", "he": "חוקים"},
    "problems": {"en": "Problems", "ro": "Probleme", "he": "בעיות"},
    "languages": {"en": "Languages", "ro": "Limbi", "he": "שפות"},
    "type": {"en": "Problem type", "ro": "Tipul problemei", "he": "סוג הבעיה"},
}
LANGUAGE_NAMES = {"en": "English", "ro": "Română", "he": "עברית"}


def _heading_ids(state: StateCore) -> None:
    """`## Title {#id}` → `<h2 id="id">Title</h2>` (before the inline rules read the text)."""
    tokens = state.tokens
    for index, token in enumerate(tokens):
        if token.type != "heading_open":
            continue
        inline = tokens[index + 1]
        match = HEADING_ID.search(inline.content)
        if match is not None:
            token.attrSet("id", match[1])
            inline.content = inline.content[: match.start()]


def _keep_language(state: StateCore) -> None:
    """Links to the rules and problem pages keep the page's language (`env["lang"]`)."""
    lang = state.env.get("lang")
    if lang is None:
        return
    for token in state.tokens:
        for child in token.children or ():
            if child.type != "link_open":
                continue
            href = str(child.attrGet("href") or "")
            if href.startswith((RULES_PATH, PROBLEMS_PATH)) and "?" not in href:
                path, hash_, fragment = href.partition("#")
                child.attrSet("href", f"{path}?lang={lang}{hash_}{fragment}")


def markdown() -> MarkdownIt:
    md = MarkdownIt("commonmark", {"html": False}).enable("table")
    md.core.ruler.before("inline", "heading_ids", _heading_ids)
    md.core.ruler.push("keep_language", _keep_language)
    return md


MD = markdown()


@dataclass(frozen=True, slots=True)
class Section:
    """A `##` section of a text: its id, its title and its tokens (the heading included)."""

    id: str
    title: str
    tokens: list[Token]


@dataclass(frozen=True, slots=True)
class Text:
    """One Markdown text in one language, parsed once."""

    lang: str
    title: str
    tokens: list[Token]
    sections: dict[str, Section]


def source(name: str, lang: str) -> str:
    return (FOLDER / f"{name}.{lang}.md").read_text(encoding="utf-8")


@cache
def text(name: str, lang: str) -> Text:
    """The parsed text `name` (`rules` or `problems`) in `lang` (read once per process)."""
    tokens = MD.parse(source(name, lang), {"lang": lang})
    title = ""
    sections: dict[str, Section] = {}
    current: list[Token] | None = None
    for index, token in enumerate(tokens):
        if token.type == "heading_open" and token.tag == "h1" and not title:
            title = tokens[index + 1].content
        if token.type == "heading_open" and token.tag in ("h1", "h2"):
            current = None
            anchor = token.attrGet("id")
            if token.tag == "h2" and anchor is not None:
                current = []
                sections[str(anchor)] = Section(str(anchor), tokens[index + 1].content, current)
        if current is not None:
            current.append(token)
    return Text(lang, title, tokens, sections)


@cache
def anchors(name: str, lang: str) -> frozenset[str]:
    """Every heading id of the text `name` in `lang`."""
    return frozenset(
        {
            str(token.attrGet("id"))
            for token in text(name, lang).tokens
            if token.type == "heading_open" and token.attrGet("id") is not None
        }
    )


def problem_slugs() -> tuple[str, ...]:
    """The problem types that have a page, in the order of the English text."""
    return tuple(text("problems", "en").sections)


def problem_title(slug: str, lang: str) -> str | None:
    """The title of the problem type `slug` in `lang` (its page's heading), or None."""
    section = text("problems", lang).sections.get(slug)
    return section.title if section is not None else None


def rule_url(rule: str) -> str | None:
    """The address of a refusal's rule on the rules page, or None for an id it does not
    define."""
    anchor = RULE_ANCHOR + rule
    return f"{RULES_PATH}#{anchor}" if anchor in anchors("rules", "en") else None


# ---------------------------------------------------------------- pages


def page_language(request: web.Request) -> str:
    asked = request.query.get("lang", "").strip().lower().split("-")[0]
    if asked in LANGUAGES:
        return asked
    return negotiate(request.headers.get("Accept-Language"))


def render(tokens: list[Token], lang: str) -> str:
    return str(MD.renderer.render(tokens, MD.options, {"lang": lang}))


def page(request: web.Request, lang: str, title: str, body: str) -> web.Response:
    """A whole HTML page around `body`: the navigation, and the page in the other languages."""
    path = html.escape(request.path)  # the routes fix it; escaped all the same
    label = {key: names[lang] for key, names in LABELS.items()}
    current = ' aria-current="page"'
    others = " ".join(
        f'<a href="{path}?lang={other}" hreflang="{other}" lang="{other}"'
        f"{current if other == lang else ''}>{LANGUAGE_NAMES[other]}</a>"
        for other in LANGUAGES
    )
    document = f"""<!doctype html>
<html lang="{lang}" dir="{"rtl" if lang in RTL else "ltr"}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<link rel="icon" href="/web/icon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/web/rules.css">
</head>
<body>
<header>
<nav aria-label="{label["rules"]}">
<a href="/">{label["game"]}</a>
<a href="{RULES_PATH}?lang={lang}">{label["rules"]}</a>
<a href="{PROBLEMS_PATH}?lang={lang}">{label["problems"]}</a>
</nav>
<nav aria-label="{label["languages"]}" class="languages">{others}</nav>
</header>
<main>
{body}</main>
</body>
</html>
"""
    return web.Response(
        text=document,
        content_type="text/html",
        charset="utf-8",
        headers={
            "Content-Language": lang,
            "Vary": "Accept-Language",
            "Cache-Control": "no-cache",
            "Content-Security-Policy": POLICY,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
        },
    )


@routes.get(RULES_PATH)
async def rules_page(request: web.Request) -> web.Response:
    lang = page_language(request)
    rules = text("rules", lang)
    return page(request, lang, rules.title, render(rules.tokens, lang))


@routes.get(PROBLEMS_PATH)
async def problems_page(request: web.Request) -> web.Response:
    lang = page_language(request)
    problems = text("problems", lang)
    return page(request, lang, problems.title, render(problems.tokens, lang))


@routes.get(PROBLEMS_PATH + "/{slug}")
async def problem_page(request: web.Request) -> web.Response:
    slug = request.match_info["slug"]
    lang = page_language(request)
    section = text("problems", lang).sections.get(slug)
    if section is None:
        raise NotFound(f"There is no problem type {slug[:64]!r}.")
    tokens = [_as_h1(token) for token in section.tokens]
    type_line = (
        f'<p class="type">{LABELS["type"][lang]}: <code>{PROBLEMS_PATH}/{html.escape(slug)}'
        "</code></p>\n"
    )
    body = render(tokens[:3], lang) + type_line + render(tokens[3:], lang)
    return page(request, lang, section.title, body)


def _as_h1(token: Token) -> Token:
    """The section's own heading is the page's first one."""
    if token.type in ("heading_open", "heading_close") and token.tag == "h2":
        changed: dict[str, Any] = {"tag": "h1"}
        return token.copy(**changed)
    return token
