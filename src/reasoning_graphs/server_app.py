"""The HTTP app ``langgraph.json`` mounts beside the LangGraph server's own API.

Two jobs, each owned elsewhere: the checks at every door that starts or writes a run
(:class:`~reasoning_graphs.server_checks.RunChecks`, on every request) and the page a
person opens in a browser (:mod:`reasoning_graphs.web`, at ``/page/``).
"""

from __future__ import annotations

from fastapi import FastAPI
from starlette.middleware import Middleware
from starlette.routing import BaseRoute

from reasoning_graphs.server_checks import RunChecks
from reasoning_graphs.web.page import routes

app = FastAPI(
    routes=list[BaseRoute](routes),
    middleware=[Middleware(RunChecks)],
    openapi_url=None,
    docs_url=None,
    redoc_url=None,
)
"""A FastAPI app, the kind every engine mounts: langgraph-api takes any Starlette app,
Aegra only FastAPI's. It has no API docs of its own: the engine's are the server's."""
