"""Turn a model spec into a chat model.

Specs: ``provider:model`` as LangChain's ``init_chat_model`` reads it, for any
provider whose integration package is installed (``openai:gpt-4o-mini`` with
langchain-openai, ``anthropic:…`` with langchain-anthropic, ``ollama:…``,
``groq:…``); ``openai:`` honours ``OPENAI_API_KEY`` and ``OPENAI_BASE_URL``, so
vLLM, Ollama, llama.cpp server and other OpenAI-compatible servers work.
``local`` (the embedded SmolLM2) or ``local:<path.gguf>`` run in-process, and a
ready ``BaseChatModel`` is used as is. With no spec: ``$REASONING_GRAPHS_MODEL``,
else ``openai:gpt-4o-mini`` when an OpenAI key is set, else ``local``.

``$REASONING_GRAPHS_MODEL_KWARGS`` (a JSON object) gives a provider model its
settings where no Python code builds it — the CLI, the dev server — e.g.
``{"temperature": 0, "extra_body": {"max_tokens": 256}}``: a small model on a
server with no default reply length can otherwise write until its context is full.

Models are cached per spec and per event loop. An async HTTP client's pooled
connections belong to the loop that opened them, and langchain-openai shares one
async client per server address across the whole process (langchain-ai/langchain
issue 35783), so a second ``asyncio.run(graph.ainvoke(...))`` would reuse a
connection of the first, closed loop: "Event loop is closed". An ``openai:``
model resolved on a running loop therefore gets an async client of its own.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
from functools import lru_cache
from typing import Any

from langchain.chat_models import init_chat_model
from langchain_core.language_models import BaseChatModel

MODEL_ENV = "REASONING_GRAPHS_MODEL"
MODEL_KWARGS_ENV = "REASONING_GRAPHS_MODEL_KWARGS"
DEFAULT_OPENAI_MODEL = "openai:gpt-4o-mini"
BAD_SPEC = (
    "Unknown model spec {spec!r}: use 'provider:model' (e.g. 'openai:gpt-4o-mini'), "
    "'local', 'local:<path.gguf>' or pass a chat model object."
)
MISSING_PACKAGE = "model spec {spec!r} needs the package {package}: pip install {package}"
UNUSABLE_SPEC = "model spec {spec!r} cannot be used: {reason}"
BAD_MODEL_KWARGS = f"${MODEL_KWARGS_ENV} must be a JSON object of model settings: {{reason}}"
# How init_chat_model names the integration package it could not import.
_PACKAGE_IN_MESSAGE = re.compile(r"requires the (\S+) package")


class ModelSpecError(ValueError):
    """A model spec that names no usable model."""


def default_model_spec() -> str:
    """The spec used when none is given."""
    spec = os.environ.get(MODEL_ENV, "").strip()
    if spec:
        return spec
    return DEFAULT_OPENAI_MODEL if os.environ.get("OPENAI_API_KEY") else "local"


def resolve_model(spec: str | BaseChatModel | None = None) -> BaseChatModel:
    """Return the chat model a spec names (models are cached per spec).

    Raises:
        ModelSpecError: The spec is malformed, names an unknown provider, needs an
            integration package that is not installed, or its model cannot be built.
    """
    if isinstance(spec, BaseChatModel):
        return spec
    if spec is not None and not isinstance(spec, str):
        raise ModelSpecError(BAD_SPEC.format(spec=spec))
    chosen = spec.strip() if spec and spec.strip() else default_model_spec()
    return _model_for(chosen, os.environ.get(MODEL_KWARGS_ENV, "").strip(), _running_loop())


def _running_loop() -> asyncio.AbstractEventLoop | None:
    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # the sync face: no loop, one model for every thread
        return None


@lru_cache(maxsize=16)
def _model_for(
    spec: str, kwargs_json: str, loop: asyncio.AbstractEventLoop | None
) -> BaseChatModel:
    provider, colon, name = spec.partition(":")
    if provider == "local":
        from reasoning_graphs.models.local import LocalChatModel

        # No disk access here: graphs resolve models inside async nodes, where a
        # file-system call would block the event loop. check_available() looks.
        return LocalChatModel(model_path=name or None)
    if not (colon and provider and name):
        raise ModelSpecError(BAD_SPEC.format(spec=spec))
    settings = _model_kwargs(kwargs_json)
    if provider == "openai" and loop is not None and "http_async_client" not in settings:
        from openai import DefaultAsyncHttpxClient

        settings["http_async_client"] = DefaultAsyncHttpxClient()  # this loop's own pool
    return _provider_model(spec, provider, name, settings)


def _model_kwargs(kwargs_json: str) -> dict[str, Any]:
    if not kwargs_json:
        return {}
    try:
        kwargs = json.loads(kwargs_json)
    except json.JSONDecodeError as error:
        raise ModelSpecError(BAD_MODEL_KWARGS.format(reason=error)) from error
    if not isinstance(kwargs, dict):
        raise ModelSpecError(BAD_MODEL_KWARGS.format(reason=f"got {type(kwargs).__name__}"))
    return kwargs


def _provider_model(spec: str, provider: str, name: str, kwargs: dict[str, Any]) -> BaseChatModel:
    """Build ``provider:name`` through ``init_chat_model``, without client-side retries.

    Retries belong to the graph's RetryPolicy, so ``max_retries=0`` goes to every
    class that declares it. Only to those: some classes reject unknown arguments and
    others forward them to the provider's API, so the class is built once to see it.
    """
    settings: dict[str, Any] = dict(kwargs)
    # Servers behind OPENAI_BASE_URL often need no key, but the client insists on one.
    if (
        provider == "openai"
        and os.environ.get("OPENAI_BASE_URL")
        and not os.environ.get("OPENAI_API_KEY")
        and "api_key" not in settings
    ):
        settings["api_key"] = "not-needed"
    model = _init(spec, provider, name, settings)
    if "max_retries" in type(model).model_fields and "max_retries" not in settings:
        model = _init(spec, provider, name, {**settings, "max_retries": 0})
    return model


def _init(spec: str, provider: str, name: str, settings: dict[str, Any]) -> BaseChatModel:
    """``init_chat_model`` with its errors turned into one-line ``ModelSpecError``s."""
    try:
        return init_chat_model(name, model_provider=provider, **settings)
    except ImportError as error:
        package = _missing_package(error)
        if package is None:
            raise ModelSpecError(
                UNUSABLE_SPEC.format(spec=spec, reason=_one_line(error))
            ) from error
        raise ModelSpecError(MISSING_PACKAGE.format(spec=spec, package=package)) from error
    except Exception as error:
        # Unknown providers (ValueError) and clients refusing their settings, such as
        # a missing API key (each SDK has its own error type), are spec errors to the user.
        raise ModelSpecError(UNUSABLE_SPEC.format(spec=spec, reason=_one_line(error))) from error


def _missing_package(error: ImportError) -> str | None:
    """The pip package an integration import failed on, as LangChain names it."""
    found = _PACKAGE_IN_MESSAGE.search(str(error))
    if found:
        return found.group(1).strip("`'\".,")
    cause = error.__cause__
    module = error.name or (cause.name if isinstance(cause, ImportError) else None)
    return module.split(".")[0].replace("_", "-") if module else None


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__


def check_available(model: BaseChatModel) -> None:
    """Fail early, with a clear message, when an embedded model cannot run here.

    Raises:
        LocalModelUnavailable: llama-cpp-python, the bundled GGUF or the given file is missing.
    """
    from reasoning_graphs.models.local import LocalChatModel, ensure_runnable

    if isinstance(model, LocalChatModel):
        ensure_runnable(model.model_path)
