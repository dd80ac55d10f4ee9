"""LangSmith tracing: labels that make runs findable, and uploads that cannot hold up an exit.

Tracing is LangChain's and stays off unless the environment turns it on
(``LANGSMITH_TRACING=true`` with ``LANGSMITH_API_KEY``; under ``langgraph dev``
a key alone); nothing in this package turns it on. When it is on, a pattern's
run is named after the pattern and carries :func:`run_labels`, so one
pattern's runs can be filtered and compared. LangGraph adds the rest: node
runs are named after their nodes (metadata ``langgraph_node``,
``langgraph_step``), tool runs after their tools, and a run's ``thread_id``
is copied into its metadata, by which LangSmith groups threads.

LangSmith uploads runs from background threads that retry, and the interpreter
waits for those threads at exit: with refused connections a short CLI run
ended 12 s after its answer, and against an endpoint that accepts but never
answers, over six minutes. :func:`bounded_upload` keeps a command's wait for
its uploads to a few seconds.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from langchain_core.runnables import RunnableConfig
from langchain_core.tracers.langchain import get_client
from langgraph.graph.state import CompiledStateGraph
from langsmith.utils import tracing_is_enabled

logger = logging.getLogger(__name__)

LIBRARY_TAG = "reasoning-graphs"
UPLOAD_SECONDS = 5.0
"""How long a command waits at its end for its runs to reach LangSmith."""
EXIT_SAFE_UPLOADS = {
    # upload threads that the interpreter does not wait for at exit
    "LANGSMITH_USE_DAEMON": "true",
    # compressed uploads run on a thread pool that the interpreter joins at exit
    "LANGSMITH_DISABLE_RUN_COMPRESSION": "true",
}
"""LangSmith's settings under which no upload outlives :func:`bounded_upload`'s wait."""
NOT_UPLOADED = "LangSmith: %d trace operations not uploaded within %.0f s; giving up on them."


def run_labels(pattern: str) -> RunnableConfig:
    """The tags and metadata of a pattern's runs (and, inherited, of every run inside them)."""
    return {"tags": [LIBRARY_TAG, f"pattern:{pattern}"], "metadata": {"pattern": pattern}}


def labelled(graph: CompiledStateGraph, pattern: str) -> CompiledStateGraph:
    """``graph`` with :func:`run_labels` bound; its nodes and drawing are unchanged."""
    return graph.with_config(run_labels(pattern))


@contextmanager
def bounded_upload(seconds: float = UPLOAD_SECONDS) -> Iterator[None]:
    """Trace what runs inside, then wait at most ``seconds`` for the uploads.

    For a process that ends soon after: when tracing is on, it sets
    :data:`EXIT_SAFE_UPLOADS` (unless the environment sets them already) before
    LangSmith's client starts, so whatever is not uploaded by the deadline is
    dropped at exit instead of retried while the process waits. With tracing
    off it does nothing.
    """
    if not tracing_is_enabled():
        yield
        return
    for name, value in EXIT_SAFE_UPLOADS.items():
        os.environ.setdefault(name, value)
    try:
        yield
    finally:
        _flush(seconds)


def _flush(seconds: float) -> None:
    """Wait for the runs queued so far; tracing trouble never fails the command,
    and a Ctrl-C while it waits ends the wait.

    The flush runs on a daemon thread that is left behind at the deadline, so
    the bound holds on every langsmith version (``flush(timeout=)`` is recent).
    """
    try:
        client = get_client()
        flushing = threading.Thread(target=client.flush, name="langsmith-flush", daemon=True)
        flushing.start()
        flushing.join(seconds)
        queue = client.tracing_queue
        left = queue.unfinished_tasks if queue is not None else 0
    except KeyboardInterrupt:
        return
    except Exception:
        logger.warning("LangSmith: flushing the traces failed", exc_info=True)
        return
    if left:
        logger.warning(NOT_UPLOADED, left, seconds)
