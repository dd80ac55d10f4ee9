"""A user's graph for ``reasoning-graphs run --graph``: ReAct with one dangerous ``transfer``.

The model and the tool are those of :mod:`unknown_outcome_agent`: the model
calls ``transfer(amount=100)`` (call id ``pay-1``) and answers once it sees an
observation; the tool writes its side effect to ``$TRANSFER_LOG`` and, with
``$KILL=after_effect``, kills its own process before the result is saved.
A ``resume`` of such a thread finds the call possibly run.
"""

from __future__ import annotations

import os
from pathlib import Path

from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.graphs.react import build_graph
from tests.helpers.unknown_outcome_agent import logging_transfer, model_for

LOG_ENV = "TRANSFER_LOG"
CALL_ID = "pay-1"


def transfer() -> CompiledStateGraph:
    """The graph, its tool writing to the log ``$TRANSFER_LOG`` names."""
    tool = logging_transfer(Path(os.environ[LOG_ENV]), {"dangerous": True})
    return build_graph(model_for("react", {"amount": 100}), [tool])
