"""The HTTP app ``langgraph.json`` mounts beside the LangGraph server's own API.

Two jobs, each owned elsewhere: the checks at every door that starts or writes a run
(:class:`~reasoning_graphs.server_checks.RunChecks`, on every request) and the page a
person opens in a browser (:mod:`reasoning_graphs.web`, at ``/page/``).
"""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.middleware import Middleware

from reasoning_graphs.server_checks import RunChecks
from reasoning_graphs.web.page import routes

app = Starlette(routes=routes, middleware=[Middleware(RunChecks)])
