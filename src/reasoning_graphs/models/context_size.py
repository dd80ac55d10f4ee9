"""How many tokens a model's prompt may hold, where the model says it.

- LangChain's model profile: ``model.profile["max_input_tokens"]`` (langchain-core
  1.0 and later fill it in for the models they know, ``openai:gpt-4o-mini`` among them);
- the embedded llama.cpp model: its ``n_ctx``;
- an OpenAI-compatible server, asked once per server and model: llama.cpp's
  ``llama-server`` on ``GET /props`` (``default_generation_settings.n_ctx``, the
  context it runs with), vLLM on ``GET /v1/models`` (``max_model_len``), else a
  ``meta.n_ctx_train`` or ``context_length`` there. llama-cpp-python's own server
  (``python -m llama_cpp.server``) reports none: give ``context_window`` for it.

The server is asked through :class:`~reasoning_graphs.effects.Blocking`, so on the
async face the request runs on a worker thread, never on the event loop; a server
that does not answer within :data:`ASK_SECONDS` has no known window.

Examples:
    >>> from reasoning_graphs.testing import ScriptedChatModel
    >>> declared_context_window(ScriptedChatModel(profile={"max_input_tokens": 8192}))
    8192
"""

from __future__ import annotations

import json
import os
import threading
import urllib.error
import urllib.request
from collections.abc import Mapping
from typing import Any, NamedTuple
from urllib.parse import urlsplit

from langchain_core.language_models import BaseChatModel
from pydantic import SecretStr

from reasoning_graphs.effects import Blocking, Body

ASK_SECONDS = 3.0
"""How long a server may take to say its context before it counts as unknown."""
OPENAI_HOST = "api.openai.com"
"""OpenAI's own API, which reports no context size: its models' profiles do."""


class Server(NamedTuple):
    """An OpenAI-compatible server and the model asked of it (with the key it takes)."""

    base_url: str
    model: str
    api_key: str | None

    @property
    def asked(self) -> tuple[str, str]:
        """What an answer is kept by: the server and the model, not the key."""
        return self.base_url, self.model


def declared_context_window(model: BaseChatModel) -> int | None:
    """The window ``model`` itself declares, without asking anyone: its LangChain profile's
    ``max_input_tokens``, or the embedded model's ``n_ctx``."""
    from reasoning_graphs.models.local import LocalChatModel

    if isinstance(model, LocalChatModel):
        return model.n_ctx
    profile = getattr(model, "profile", None)
    window = profile.get("max_input_tokens") if isinstance(profile, Mapping) else None
    return window if _is_size(window) else None


def server_of(model: BaseChatModel) -> Server | None:
    """The OpenAI-compatible server ``model`` talks to, unless that is OpenAI's own API."""
    if not hasattr(model, "openai_api_base"):  # not a client of the OpenAI API
        return None
    base_url = model.openai_api_base or os.environ.get("OPENAI_BASE_URL")
    name = getattr(model, "model_name", None)
    if not base_url or not isinstance(name, str) or urlsplit(base_url).hostname == OPENAI_HOST:
        return None
    key = getattr(model, "openai_api_key", None)
    secret = key.get_secret_value() if isinstance(key, SecretStr) else None
    return Server(base_url.rstrip("/"), name, secret)


def context_window_of(model: BaseChatModel) -> Body[int | None]:
    """The window ``model`` declares, else the one its server reports (``None``: unknown)."""
    window = declared_context_window(model)
    if window is not None:
        return window
    server = server_of(model)
    if server is None:
        return None
    known = _ASKED.get(server.asked)
    if known is not None:
        return known.window
    return (yield Blocking(served_context_window, server))


class _Answer(NamedTuple):
    window: int | None


_ASKED: dict[tuple[str, str], _Answer] = {}
_ASKING = threading.Lock()


def served_context_window(server: Server) -> int | None:
    """What ``server`` reports of its context for its model, asked once (blocking I/O)."""
    with _ASKING:
        if server.asked not in _ASKED:
            _ASKED[server.asked] = _Answer(_ask(server))
        return _ASKED[server.asked].window


def _ask(server: Server) -> int | None:
    root = server.base_url.removesuffix("/v1")
    props = _get_json(f"{root}/props", server.api_key)
    settings = props.get("default_generation_settings")
    window = settings.get("n_ctx") if isinstance(settings, Mapping) else props.get("n_ctx")
    if _is_size(window):
        return window
    return _listed_window(_get_json(f"{server.base_url}/models", server.api_key), server.model)


def _listed_window(listing: Mapping[str, Any], model: str) -> int | None:
    """The context of ``model`` in a ``/v1/models`` listing, where the server gives one."""
    entries = [e for e in listing.get("data") or () if isinstance(e, Mapping)]
    named = [e for e in entries if e.get("id") == model]
    if not named and len(entries) == 1:  # a server of one model may list it by another name
        named = entries
    for entry in named:
        meta = entry.get("meta")
        trained = meta.get("n_ctx_train") if isinstance(meta, Mapping) else None
        for window in (entry.get("max_model_len"), entry.get("context_length"), trained):
            if _is_size(window):
                return window
    return None


def _get_json(url: str, api_key: str | None) -> Mapping[str, Any]:
    """The JSON object at ``url``; an empty one when the server has none to give."""
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        with urllib.request.urlopen(  # the model's own server, over http or https
            urllib.request.Request(url, headers=headers), timeout=ASK_SECONDS
        ) as response:
            body = json.loads(response.read())
    except (OSError, ValueError):  # refused, timed out, an HTTP error, not JSON
        return {}
    return body if isinstance(body, Mapping) else {}


def _is_size(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0
