"""A fresh PostgreSQL database per test, on the server ``$REASONING_GRAPHS_TEST_POSTGRES`` names.

CI starts a server (``.ci/postgres.sh``) and exports its ``postgresql://``
URL; without it the tests that need PostgreSQL skip. Each test gets a
database of its own, dropped afterwards, so reruns and parallel runs never
see each other's tables.
"""

from __future__ import annotations

import os
import uuid
from collections.abc import Iterator
from urllib.parse import urlsplit

import pytest

POSTGRES_ENV = "REASONING_GRAPHS_TEST_POSTGRES"


def server_dsn() -> str:
    """The server's URL, or a skip saying how to provide one."""
    dsn = os.environ.get(POSTGRES_ENV)
    if not dsn:
        pytest.skip(f"set {POSTGRES_ENV} to a postgresql:// URL to run this")
    pytest.importorskip("langgraph.checkpoint.postgres", reason="pip install '.[postgres]'")
    return dsn


def with_database(dsn: str, name: str) -> str:
    """``dsn`` pointing at the database ``name`` on the same server."""
    return urlsplit(dsn)._replace(path=f"/{name}").geturl()


def create_database(dsn: str) -> str:
    """A new empty database on the server; its URL."""
    import psycopg

    name = f"rg_test_{uuid.uuid4().hex[:12]}"
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return with_database(dsn, name)


def drop_database(dsn: str, url: str) -> None:
    """Drop the database ``url`` names, whoever is still connected to it."""
    import psycopg

    name = urlsplit(url).path.lstrip("/")
    with psycopg.connect(dsn, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


@pytest.fixture
def postgres_url() -> Iterator[str]:
    """The URL of a fresh database, dropped after the test."""
    dsn = server_dsn()
    url = create_database(dsn)
    try:
        yield url
    finally:
        drop_database(dsn, url)
