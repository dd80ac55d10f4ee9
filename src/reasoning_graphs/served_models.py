"""Which models a run that the LangGraph server starts may choose.

A run's ``model`` option picks its chat model (and ``summary_model`` the one that
writes its summaries). In Python that is the caller's
own choice. Over HTTP any client of the server sends it, so ``local:<path>``
would have llama.cpp open whatever file the client names (and answer, by its
errors, whether that file exists), and ``provider:model`` would move the
deployment onto a provider, and a bill, it never chose. So a served run may
name only:

- the spec the deployment runs by default
  (:func:`~reasoning_graphs.models.resolve.default_model_spec`:
  ``$REASONING_GRAPHS_MODEL``, else ``openai:gpt-4o-mini`` with an OpenAI key,
  else ``local``), and
- the specs listed, comma-separated, in ``$REASONING_GRAPHS_ALLOWED_MODELS``;
  set it in the server's environment or in ``langgraph.json``'s ``"env"``.

With no list, a served run cannot change the model. Any other spec gets one
refusal, the same whatever it names: specs are compared as strings and the
file system is never looked at.

The graph refuses such a run as it starts, whichever engine runs it: the served
graph (the one ``langgraph.json`` names, made by
:func:`~reasoning_graphs.nodes.wiring.pattern_builder.served`) always, and any
other graph of ours when langgraph-api started the run (:data:`SERVER_RUN_MARK`
in the run's metadata, set by that server after the client's own metadata, so a
client cannot leave it out). Under langgraph-api the server refuses it at its
door too, before the run is stored (:mod:`reasoning_graphs.server_checks`).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig, ensure_config

from reasoning_graphs.context import AgentContext
from reasoning_graphs.models.resolve import default_model_spec
from reasoning_graphs.option_bounds import ModelSpec, options_bounded_by
from reasoning_graphs.run_input import RunInputError

ALLOWED_MODELS_ENV = "REASONING_GRAPHS_ALLOWED_MODELS"
SERVER_RUN_MARK = "langgraph_api_version"
"""The metadata key langgraph-api sets on every run it starts."""
MODEL_NOT_ALLOWED = "Run option {name!r} may only name a model this server allows: {allowed}."


def allowed_models() -> list[str]:
    """The specs a served run may name: the deployment's default, then its list."""
    listed = os.environ.get(ALLOWED_MODELS_ENV, "").split(",")
    return list(dict.fromkeys([default_model_spec(), *(s.strip() for s in listed if s.strip())]))


def check_served_model(options: Any) -> None:
    """Raise :class:`RunInputError` when a served run's ``options`` name a model not allowed
    (as ``model`` or ``summary_model``).

    Unset (``None``, ``""``) means the graph's own model; a value that is not a
    string is the run-options check's to refuse.
    """
    for name in options_bounded_by(AgentContext, ModelSpec):
        chosen = options.get(name) if isinstance(options, Mapping) else getattr(options, name, None)
        if not isinstance(chosen, str) or not chosen.strip():
            continue
        allowed = allowed_models()
        if chosen.strip() not in allowed:
            raise RunInputError(MODEL_NOT_ALLOWED.format(name=name, allowed=allowed))


def is_server_run(config: RunnableConfig | None) -> bool:
    """Whether the LangGraph server started this run."""
    return bool(ensure_config(config).get("metadata", {}).get(SERVER_RUN_MARK))
