"""A store of ours for LangGraph Server, in place of its own: memory shared with the CLI.

The served graphs use whatever store the server gives them (``langgraph dev``: one
in memory, kept in ``.langgraph_api/`` between restarts; a deployment: its
PostgreSQL). To have them share memory with the CLI or with Python callers, point
``langgraph.json``'s ``store`` section at :func:`store`::

    "store": {"path": "./src/reasoning_graphs/served_store.py:store"}

and name the database in ``$REASONING_GRAPHS_STORE`` (a SQLite file or a
``postgresql://`` URL, as :func:`~reasoning_graphs.stores.open_store` reads it).
"""

from __future__ import annotations

import os

from langgraph.store.base import BaseStore

from reasoning_graphs.stores import open_store

STORE_ENV = "REASONING_GRAPHS_STORE"
NO_SPEC = (
    f"langgraph.json names reasoning_graphs.served_store as the server's store: set {STORE_ENV} "
    "to a SQLite file or a postgresql:// URL."
)


def store() -> BaseStore:
    """The store ``$REASONING_GRAPHS_STORE`` names, opened (and its tables set up) once, when
    the server starts.

    Raises:
        RuntimeError: The variable is unset.
    """
    spec = os.environ.get(STORE_ENV)
    if not spec:
        raise RuntimeError(NO_SPEC)
    return open_store(spec)
