"""An installed server needs no source tree: a wheel of the project, installed into a fresh
virtual environment and run from outside the repository, migrates a new database to the newest
revision of the top-level `migrations/` and serves the top-level `openapi.yaml` and
`asyncapi.yaml` byte for byte.

The wheel is built without build isolation (with the current environment's setuptools); the new
environment sees nothing of the current one and installs the wheel's dependencies itself.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest
from alembic.script import ScriptDirectory

from tests.process import ROOT, free_port

# What building needs from the source tree is copied, not the tree's own build/ and egg-info
# (a stale build/lib would leak removed files into the wheel) nor its tests, caches and data.
NOT_COPIED = shutil.ignore_patterns(
    ".git",
    "build",
    "dist",
    "*.egg-info",
    "__pycache__",
    ".*_cache",
    ".venv",
    ".hypothesis",
    ".schemathesis",
    "node_modules",
    "tests",
    "bench",
    "*.db",
    "*.db-*",
)


def run(*args: str | Path, cwd: Path, env: dict[str, str] | None = None) -> str:
    result = subprocess.run(
        [str(arg) for arg in args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, f"{args} failed:\n{result.stdout}\n{result.stderr}"
    return result.stdout


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """A fresh virtual environment with the project's wheel installed; yields its python."""
    tmp = tmp_path_factory.mktemp("install")
    source = tmp / "source"
    shutil.copytree(ROOT, source, ignore=NOT_COPIED)
    wheels = tmp / "wheels"
    run(
        sys.executable,
        "-m",
        "pip",
        "wheel",
        "--quiet",
        "--disable-pip-version-check",
        "--no-deps",
        "--no-build-isolation",
        "--wheel-dir",
        wheels,
        source,
        cwd=tmp,
    )
    (wheel,) = wheels.glob("*.whl")
    env_dir = tmp / "venv"
    # A virtual environment of its own, with its own pip: the wheel is installed with its
    # dependencies from the index (and the pip configuration) that the current pip uses, so the
    # test passes the same in a developer's fresh virtual environment and in CI's system Python.
    run(sys.executable, "-m", "venv", env_dir, cwd=tmp)
    python = env_dir / "bin" / "python"
    run(python, "-m", "pip", "install", "--quiet", "--disable-pip-version-check", wheel, cwd=tmp)
    yield python


def outside_env() -> dict[str, str]:
    """The environment for a process that must not find the source tree."""
    env = dict(os.environ, RATE_LIMIT="0")
    env.pop("PYTHONPATH", None)
    return env


def test_the_installed_package_is_the_one_imported(venv: Path, tmp_path: Path) -> None:
    out = run(
        venv,
        "-c",
        "import server, server.files as r\n"
        "print(server.__file__)\nprint(r.migrations_dir())\nprint(r.openapi_path())\n"
        "print(r.asyncapi_path())",
        cwd=tmp_path,
        env=outside_env(),
    )
    package, migrations, document, asyncapi = (Path(line) for line in out.splitlines())
    prefix = venv.parent.parent.resolve()
    for path in (package, migrations, document, asyncapi):
        assert path.resolve().is_relative_to(prefix), (path, prefix)
        assert not path.resolve().is_relative_to(ROOT), path
    assert (migrations / "env.py").is_file()
    assert document.read_bytes() == (ROOT / "openapi.yaml").read_bytes()
    # Side by side, as at the top level: asyncapi.yaml's schemas refer to openapi.yaml's.
    assert asyncapi.read_bytes() == (ROOT / "asyncapi.yaml").read_bytes()
    assert asyncapi.parent == document.parent


def get(url: str) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.read()


def test_the_installed_server_migrates_and_serves_the_api_documents(
    venv: Path, tmp_path: Path
) -> None:
    port = free_port()
    base = f"http://127.0.0.1:{port}"
    database = tmp_path / "x.db"
    log_path = tmp_path / "server.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            [venv, "-m", "server", "--port", str(port), "--database-url", f"sqlite:///{database}"],
            cwd=tmp_path,
            env=outside_env(),
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        deadline = time.monotonic() + 60
        while True:
            assert process.poll() is None, f"server exited:\n{log_path.read_text()}"
            assert time.monotonic() < deadline, f"not ready:\n{log_path.read_text()}"
            try:
                if get(base + "/readyz")[0] == 200:
                    break
            except OSError:
                pass
            time.sleep(0.1)

        for name in ("openapi.yaml", "asyncapi.yaml"):
            status, body = get(f"{base}/{name}")
            assert status == 200, name
            assert body == (ROOT / name).read_bytes(), name
        # The web client, its subfolders included, is in the package.
        web = ROOT / "server" / "web"
        files = [p.relative_to(web).as_posix() for p in web.rglob("*") if p.is_file()]
        assert "lib/socket.js" in files and "views/play/view.js" in files
        for name in files:
            status, body = get(f"{base}/" if name == "index.html" else f"{base}/web/{name}")
            assert status == 200, name
            assert body == (web / name).read_bytes(), name

        # The rules and the problem pages, rendered from the Markdown in the package
        # (server/rules/: package data) by markdown-it-py (a dependency of the wheel).
        rules = sorted(p.name for p in (ROOT / "server" / "rules").glob("*.md"))
        assert len(rules) == 6, rules
        for lang in ("en", "ro", "he"):
            for path in ("/rules", "/problems", "/problems/illegal-move"):
                status, body = get(f"{base}{path}?lang={lang}")
                assert status == 200, (path, lang, body[:300])
                assert f'<html lang="{lang}"'.encode() in body, (path, lang)
            status, body = get(f"{base}/rules?lang={lang}")
            assert b'id="rule-group_too_large"' in body and b"<table>" in body, lang

        head = ScriptDirectory(str(ROOT / "migrations")).get_current_head()
        assert head is not None
        with sqlite3.connect(database) as connection:
            rows = connection.execute("SELECT version_num FROM alembic_version").fetchall()
        connection.close()
        assert rows == [(head,)]
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)
    assert process.returncode == 0, log_path.read_text()
