"""Make ``durability="sync"`` the default of a compiled graph.

LangGraph takes ``durability`` only per call (``invoke``/``stream``/``astream``);
compile() and the Pregel constructor have no such argument. When a call passes
none, ``Pregel._defaults`` (langgraph/pregel/main.py) reads the mode from the
run config under ``CONFIG_KEY_DURABILITY``, a name that lives only in
``langgraph._internal._constants``. This module is the one place that private
name is used; tests/test_durability_default.py fails when LangGraph changes it.
"""

from __future__ import annotations

import warnings

from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.private_names import CONFIG_KEY_DURABILITY

NO_DURABILITY_KEY = (
    "This LangGraph version has no langgraph._internal._constants.CONFIG_KEY_DURABILITY, "
    "so graphs keep LangGraph's default durability ('async'): a hard kill can repeat a "
    "finished tool call on resume. Pass durability='sync' to invoke/stream to avoid it."
)


def with_sync_durability(graph: CompiledStateGraph) -> CompiledStateGraph:
    """A copy of ``graph`` that saves each checkpoint before its next step starts.

    A call that passes ``durability`` still wins, and subgraphs follow the mode
    their parent runs with. Falls back to LangGraph's default, with a warning,
    when the private key is gone, so an upgrade weakens crash safety instead of
    breaking every graph.
    """
    if CONFIG_KEY_DURABILITY is None:
        warnings.warn(NO_DURABILITY_KEY, RuntimeWarning, stacklevel=2)
        return graph
    return graph.with_config(configurable={CONFIG_KEY_DURABILITY: "sync"})
