"""The web client's files: `/` and `/web/{name}` (down into its folders: `/web/lib/api.js`), only
files of server/web, with a policy that keeps the page on its own origin, and every module the
page imports present."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from aiohttp.test_utils import TestClient

from server.api import pages
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
        ("lib/api.js", "text/javascript"),
        ("views/play/view.js", "text/javascript"),
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
        # the same through the client's folders
        "/web/lib/..%2f..%2fapp.py",
        "/web/lib/..%2F..%2F..%2Fpyproject.toml",
        "/web/views/../../x",
        "/web/views/..%2f..%2fapi%2fpages.py",
        "/web/lib/%2e%2e/%2e%2e/app.py",
        "/web/lib/../../../pyproject.toml",
        "/web/lib/.hidden.js",
        "/web/.git/config",
        "/web/lib/",
        "/web/lib",
        "/web/lib//api.js",
        "/web/lib/nothing.js",
        "/web/lib/api.js/x.js",
        "/web/views/play/view.js%00.js",
        "/web/a/b/c/d.js",
    ]:
        response = await client.get(path)
        assert response.status == 404, path
        assert response.content_type == "application/problem+json", path


async def test_a_link_in_the_folder_is_not_followed(
    client: TestClient[Any, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "web"
    (folder / "lib").mkdir(parents=True)
    (folder / "lib" / "api.js").write_text("export {};\n", encoding="utf-8")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.js").write_text("secret\n", encoding="utf-8")
    (folder / "linked").symlink_to(outside, target_is_directory=True)
    (folder / "lib" / "secret.js").symlink_to(outside / "secret.js")
    monkeypatch.setattr(pages, "FOLDER", folder)
    assert (await client.get("/web/lib/api.js")).status == 200
    for path in ["/web/linked/secret.js", "/web/lib/secret.js"]:
        response = await client.get(path)
        assert response.status == 404, path
        assert response.content_type == "application/problem+json", path


def test_every_file_of_the_client_has_a_name_the_server_serves() -> None:
    for path in WEB.rglob("*"):
        if path.is_file():
            name = path.relative_to(WEB).as_posix()
            assert NAME.fullmatch(name), name


def test_every_file_the_page_loads_is_there() -> None:
    page = (WEB / "index.html").read_text(encoding="utf-8")
    referenced = re.findall(r'(?:src|href)="/web/([^"]+)"', page)
    assert {"app.js", "style.css"} <= set(referenced)
    for name in referenced:
        assert (WEB / name).is_file(), name
    scripts = sorted(WEB.rglob("*.js"))
    assert {"lib/api.js", "views/play/view.js"} <= {
        script.relative_to(WEB).as_posix() for script in scripts
    }
    for script in scripts:
        text = script.read_text(encoding="utf-8")
        name = script.relative_to(WEB).as_posix()
        # imports and the router's views, relative to the module that names them
        imported = re.findall(r'"(\.\.?/[\w./-]+\.js)"', text)
        for relative in imported:
            target = (script.parent / relative).resolve()
            assert target.is_relative_to(WEB), f"{name} imports {relative}, outside the client"
            assert target.is_file(), f"{name} imports a missing {relative}"
        assert "http://" not in text and "https://" not in text, name
