"""The web client's files: `/` and `/web/{name}`, only files of server/web, with a policy that
keeps the page on its own origin, and every module the page imports present."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from aiohttp.test_utils import TestClient

from server.api.pages import NAME

WEB = Path(__file__).resolve().parents[2] / "server" / "web"


async def test_the_page_is_served_at_the_root(client: TestClient[Any, Any]) -> None:
    response = await client.get("/")
    assert response.status == 200
    assert response.content_type == "text/html"
    body = await response.text()
    assert body == (WEB / "index.html").read_text(encoding="utf-8")
    policy = response.headers["Content-Security-Policy"]
    assert "default-src 'self'" in policy and "connect-src 'self'" in policy
    assert response.headers["X-Content-Type-Options"] == "nosniff"


async def test_files_come_with_their_type_and_an_etag(client: TestClient[Any, Any]) -> None:
    for name, content_type in [
        ("app.js", "text/javascript"),
        ("style.css", "text/css"),
        ("icon.svg", "image/svg+xml"),
    ]:
        response = await client.get(f"/web/{name}")
        assert response.status == 200, name
        assert response.content_type == content_type
        assert await response.read() == (WEB / name).read_bytes()
        etag = response.headers["ETag"]
        for tags in (etag, f'"other", W/{etag}', "*"):
            again = await client.get(f"/web/{name}", headers={"If-None-Match": tags})
            assert again.status == 304, tags
            assert await again.read() == b""
        changed = await client.get(f"/web/{name}", headers={"If-None-Match": f'x{etag}"'})
        assert changed.status == 200


async def test_nothing_outside_the_folder_is_served(client: TestClient[Any, Any]) -> None:
    for path in [
        "/web/nothing.js",
        "/web/..%2fapp.py",
        "/web/%2e%2e%2f%2e%2e%2fpyproject.toml",
        "/web/.hidden.js",
        "/web/README.md",
        "/web/",
        "/web/sub/app.js",
        "/web/%00.js",
        "/web/a%00b.js",
        "/web/" + "a" * 300 + ".js",
        "/web/app.py",
    ]:
        response = await client.get(path)
        assert response.status == 404, path
        assert response.content_type == "application/problem+json", path


def test_every_file_of_the_client_has_a_name_the_server_serves() -> None:
    for path in WEB.iterdir():
        assert NAME.fullmatch(path.name), path.name


def test_every_file_the_page_loads_is_there() -> None:
    page = (WEB / "index.html").read_text(encoding="utf-8")
    referenced = re.findall(r'(?:src|href)="/web/([^"]+)"', page)
    assert {"app.js", "style.css"} <= set(referenced)
    for name in referenced:
        assert (WEB / name).is_file(), name
    for script in WEB.glob("*.js"):
        text = script.read_text(encoding="utf-8")
        imported = re.findall(r'"\./([\w.-]+\.js)"', text)  # imports and the router's views
        for name in imported:
            assert (WEB / name).is_file(), f"{script.name} imports a missing {name}"
        assert "http://" not in text and "https://" not in text, script.name
