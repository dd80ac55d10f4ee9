"""A chat model bound for one kind of request, built once per graph and reused.

Binding is work: ``bind_tools`` turns every tool's argument schema into the
provider's format, and ``with_structured_output`` the reply schema, each time
it is called. A graph asks the same model with the same tools again and again,
so its setup keeps its latest bindings (:class:`Bindings`) and reuses one for
as long as the model and the tools are the very same objects. A binding holds
no state of its own, so one may serve several runs at once; it does hold its
model, which is why they are kept per graph and only a few of them.
"""

from __future__ import annotations

import inspect
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import Any, NamedTuple

from langchain_core.language_models import BaseChatModel
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from pydantic import BaseModel

GRAMMAR_NEEDS_LLAMA = (
    "A grammar constrains only the embedded llama.cpp model ('local' or "
    "'local:<path.gguf>'), not {model}."
)
TYPED_WITH_OPTIONS = "A typed request takes neither stop sequences nor a grammar."
KEPT = 8
"""Bindings a graph keeps: every request kind of a pattern, for a model or two."""


class _Kept(NamedTuple):
    model: BaseChatModel
    tools: tuple[BaseTool, ...]
    binding: Runnable


class Bindings:
    """A graph's latest bindings. Each keeps its model and tools, so their ids, which
    the lookup goes by, cannot be reused by other objects while it is kept."""

    def __init__(self, size: int = KEPT) -> None:
        self._size = size
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[Any, ...], _Kept] = OrderedDict()

    def bound(
        self,
        model: BaseChatModel,
        *,
        tools: Sequence[BaseTool] = (),
        tool_choice: str | None = None,
        schema: type[BaseModel] | None = None,
        native: bool = False,
        stop: Sequence[str] | None = None,
        grammar: str | None = None,
    ) -> Runnable:
        """``model`` bound to ``tools`` (with ``tool_choice``), or answering in ``schema``
        (in the provider's own structured output when ``native`` and the model has one,
        see :func:`has_native_output`), with the stop sequences and the grammar (llama.cpp
        models only) applied."""
        native = native and schema is not None and has_native_output(model)
        key = (
            id(model),
            tuple(map(id, tools)),
            tool_choice,
            schema,
            native,
            tuple(stop or ()),
            grammar,
        )
        with self._lock:
            kept = self._kept.get(key)
            if kept is not None:
                self._kept.move_to_end(key)
                return kept.binding
        binding = _bind(model, tools, tool_choice, schema, native, stop, grammar)
        with self._lock:
            self._kept[key] = _Kept(model, tuple(tools), binding)
            while len(self._kept) > self._size:
                self._kept.popitem(last=False)
        return binding

    def supports_schema(self, model: BaseChatModel, schema: type[BaseModel]) -> bool:
        """Whether the model can give a typed reply; without it a pattern asks for text.
        The binding made to find out serves the call."""
        try:
            self.bound(model, schema=schema)
        except NotImplementedError:
            return False
        return True


def _bind(
    model: BaseChatModel,
    tools: Sequence[BaseTool],
    tool_choice: str | None,
    schema: type[BaseModel] | None,
    native: bool,
    stop: Sequence[str] | None,
    grammar: str | None,
) -> Runnable:
    options: dict[str, Any] = {}
    if stop:
        options["stop"] = list(stop)
    if grammar is not None:
        if not _is_llama(model):
            raise ValueError(GRAMMAR_NEEDS_LLAMA.format(model=type(model).__name__))
        options["gbnf"] = grammar
    if schema is not None:
        if options:
            raise ValueError(TYPED_WITH_OPTIONS)
        return _typed(model, schema, native)
    if tools:
        choice = {} if tool_choice is None else {"tool_choice": tool_choice}
        return model.bind_tools(list(tools), **choice).bind(**options)
    return model.bind(**options) if options else model


def has_native_output(model: BaseChatModel) -> bool:
    """Whether the model's profile says its provider writes structured output itself (as
    LangChain's ``create_agent`` decides between its ``ProviderStrategy`` and
    ``ToolStrategy``); a model without a profile (a local server's) has none."""
    profile = getattr(model, "profile", None) or {}
    return bool(profile.get("structured_output"))


def _typed(model: BaseChatModel, schema: type[BaseModel], native: bool) -> Runnable:
    """The model answering in ``schema``: through tool calling where the model lets us
    choose, or in the provider's own structured output (``json_schema``) when ``native``.

    Tool calling is what OpenAI-compatible servers support most widely:
    langchain-openai's default (``response_format`` of type ``json_schema``) is
    refused by llama.cpp's server, among others. A trace shows the call under the
    schema's name (``Plan``) rather than as a bare ``RunnableSequence``.
    """
    if "method" in inspect.signature(model.with_structured_output).parameters:
        method = "json_schema" if native else "function_calling"
        typed = model.with_structured_output(schema, include_raw=True, method=method)
    else:
        typed = model.with_structured_output(schema, include_raw=True)
    return typed.with_config(run_name=schema.__name__)


def _is_llama(model: BaseChatModel) -> bool:
    from reasoning_graphs.models.local import LocalChatModel

    return isinstance(model, LocalChatModel)
