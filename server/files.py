"""Where the server's files from the top level of the repository are: the alembic migrations
and the API documents.

They live at the top of the repository (`migrations/`, `openapi.yaml`, `asyncapi.yaml`).
Building the package (a wheel, `pip install .`, the Docker image) copies them into
`server/_bundled/` (setup.py), and an installed server reads that copy; a source checkout or an
editable install has no such copy and reads the top-level files themselves.
"""

from __future__ import annotations

from pathlib import Path

PACKAGE = Path(__file__).resolve().parent
BUNDLED = PACKAGE / "_bundled"
SOURCE = PACKAGE.parent


def _located(name: str) -> Path:
    bundled = BUNDLED / name
    return bundled if bundled.exists() else SOURCE / name


def migrations_dir() -> Path:
    """The alembic script directory (env.py, versions/)."""
    return _located("migrations")


def openapi_path() -> Path:
    """The OpenAPI document served at /openapi.yaml."""
    return _located("openapi.yaml")


def asyncapi_path() -> Path:
    """The AsyncAPI document of the WebSocket, served at /asyncapi.yaml (its schemas refer to
    openapi.yaml's, which sits beside it wherever it is)."""
    return _located("asyncapi.yaml")
