"""Turn a model spec into a chat model.

Specs: ``openai:<model>`` (langchain-openai; honours ``OPENAI_API_KEY`` and
``OPENAI_BASE_URL``, so vLLM, Ollama, llama.cpp server and other
OpenAI-compatible servers work), ``local`` (the embedded SmolLM2) or
``local:<path.gguf>``, or a ready ``BaseChatModel``. With no spec:
``$REASONING_GRAPHS_MODEL``, else ``openai:gpt-4o-mini`` when an OpenAI key is
set, else ``local``.
"""

from __future__ import annotations

import os
from functools import lru_cache

from langchain_core.language_models import BaseChatModel

MODEL_ENV = "REASONING_GRAPHS_MODEL"
DEFAULT_OPENAI_MODEL = "openai:gpt-4o-mini"
BAD_SPEC = (
    "Unknown model spec {spec!r}: use 'openai:<model>', 'local', 'local:<path.gguf>' "
    "or pass a chat model object."
)


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
        ModelSpecError: The spec is malformed.
    """
    if isinstance(spec, BaseChatModel):
        return spec
    if spec is not None and not isinstance(spec, str):
        raise ModelSpecError(BAD_SPEC.format(spec=spec))
    return _model_for(spec.strip() if spec and spec.strip() else default_model_spec())


@lru_cache(maxsize=16)
def _model_for(spec: str) -> BaseChatModel:
    provider, _, name = spec.partition(":")
    if provider == "openai" and name:
        return _openai_model(name)
    if provider == "local":
        from reasoning_graphs.models.local import LocalChatModel

        # No disk access here: graphs resolve models inside async nodes, where a
        # file-system call would block the event loop. check_available() looks.
        return LocalChatModel(model_path=name or None)
    raise ModelSpecError(BAD_SPEC.format(spec=spec))


def _openai_model(name: str) -> BaseChatModel:
    from langchain_openai import ChatOpenAI

    # Servers behind OPENAI_BASE_URL often need no key, but the client insists on one.
    needs_placeholder_key = not os.environ.get("OPENAI_API_KEY") and os.environ.get(
        "OPENAI_BASE_URL"
    )
    # Retries belong to the graph's RetryPolicy, so the client must not retry on its own.
    return ChatOpenAI(
        model=name,
        max_retries=0,
        api_key="not-needed" if needs_placeholder_key else None,
    )


def check_available(model: BaseChatModel) -> None:
    """Fail early, with a clear message, when an embedded model cannot run here.

    Raises:
        LocalModelUnavailable: llama-cpp-python, the bundled GGUF or the given file is missing.
    """
    from reasoning_graphs.models.local import LocalChatModel, ensure_runnable

    if isinstance(model, LocalChatModel):
        ensure_runnable(model.model_path)
