"""The routes that serve the page (``/page/``) from the files inside the package.

Not ``/ui``: LangGraph's server keeps that for its own generative-UI files.

Every response carries a content security policy that lets the page load only its own
files and talk only to its own server, and run no inline script: model text and tool
output are written as text by the page, and even a mistake that let some through as
HTML could neither run a script nor fetch from elsewhere.
"""

from __future__ import annotations

from importlib.resources import files

from starlette.requests import Request
from starlette.responses import PlainTextResponse, RedirectResponse, Response
from starlette.routing import Route

PREFIX = "/page"
ASSETS = files("reasoning_graphs.web") / "assets"
TYPES = {
    "index.html": "text/html; charset=utf-8",
    "app.js": "text/javascript; charset=utf-8",
    "render.js": "text/javascript; charset=utf-8",
    "forms.js": "text/javascript; charset=utf-8",
    "style.css": "text/css; charset=utf-8",
    "icon.svg": "image/svg+xml",
}
"""The page's files, each with its content type: nothing else is served."""
POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'none'; base-uri 'none'; frame-ancestors 'none'"
)
HEADERS = {
    "Content-Security-Policy": POLICY,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    "Cache-Control": "no-cache",
}


# The server reads a route's docstring as YAML for its API description: plain sentences.


async def page(request: Request) -> Response:
    """The page itself."""
    return _asset("index.html")


async def asset(request: Request) -> Response:
    """One of the page's files by name; any other path under the page is not found."""
    return _asset(request.path_params["name"])


async def to_page(request: Request) -> Response:
    """The page's address without its slash, sent on to the page."""
    return RedirectResponse(f"{PREFIX}/", status_code=308)


def _asset(name: str) -> Response:
    kind = TYPES.get(name)
    if kind is None:
        return PlainTextResponse("Not found", status_code=404, headers=HEADERS)
    body = (ASSETS / name).read_bytes()
    return Response(body, media_type=kind, headers=HEADERS)


routes = [
    Route(PREFIX, to_page, methods=["GET"]),
    Route(f"{PREFIX}/", page, methods=["GET"]),
    Route(f"{PREFIX}/{{name:path}}", asset, methods=["GET"]),
]
