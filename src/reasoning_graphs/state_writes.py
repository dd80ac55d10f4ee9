"""What a client may write into a thread's state: the conversation, and nothing the runtime keeps.

Anyone who can reach a thread can write its state: ``update_state`` in Python,
the server's ``POST /threads/{id}/state``, a run's ``Command(update=...)``. The
runtime's own records live in that state too — the calls cleared to run, the
rejections a person made, the work that counts against the budgets, plans,
search trees, outcomes — and a write to them could clear a rejection, give back
spent budget or line up a call for ``act``. So every graph of ours
(:class:`~reasoning_graphs.nodes.wiring.checked_graph.CheckedGraph`) refuses, before
LangGraph applies anything:

- a write to any state key but the open ones (``messages``: a person may still
  edit or add messages, e.g. through Studio);
- a client's ``Command`` that routes (``goto``, including a ``Send`` to a node)
  or addresses a parent graph.

A person's decision is protected a second way, where the call runs: see
:mod:`reasoning_graphs.nodes.steps.seal`. Nested runs (a plan step's graph fed by
its pattern) are the runtime's own writes and are not checked here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from typing import Any

from langgraph.types import Command

from reasoning_graphs.run_input import RunInputError

OPEN_KEYS = frozenset({"messages"})
"""State keys a client may write: everything else is the runtime's record."""

PROTECTED_KEYS = (
    "A client may not write {names} to a thread's state: the runtime keeps its decisions, "
    "budgets and plans there. Only {open} may be written."
)
NOT_A_WRITE = "A state write must be an object of state keys, not {kind}."
NO_ROUTING = (
    "A run's command may not choose the graph's next step ({what}); send a resume, or "
    "an update of {open}."
)


class StateWriteError(RunInputError):
    """A client's write to a thread's state touches what the runtime keeps; nothing was written."""


def check_write(values: Any, open_keys: Collection[str] = OPEN_KEYS) -> None:
    """Refuse a state write (``update_state``'s values, a command's update) that names a key
    other than ``open_keys``; ``None`` writes nothing and is fine."""
    if values is None:
        return
    if isinstance(values, Mapping):
        names = [str(key) for key in values]
    elif isinstance(values, Sequence) and not isinstance(values, (str, bytes)):
        if not all(isinstance(pair, Sequence) and len(pair) == 2 for pair in values):
            raise StateWriteError(NOT_A_WRITE.format(kind=type(values).__name__))
        names = [str(key) for key, _ in values]
    else:
        raise StateWriteError(NOT_A_WRITE.format(kind=type(values).__name__))
    closed = sorted({name for name in names if name not in open_keys})
    if closed:
        raise StateWriteError(PROTECTED_KEYS.format(names=closed, open=sorted(open_keys)))


def check_command(command: Command, open_keys: Collection[str] = OPEN_KEYS) -> None:
    """Refuse a client's command that routes the graph or writes what the runtime keeps."""
    if command.goto:
        what = f"goto {command.goto!r}"
        raise StateWriteError(NO_ROUTING.format(what=what[:120], open=sorted(open_keys)))
    if command.graph is not None:
        raise StateWriteError(
            NO_ROUTING.format(what=f"graph {command.graph!r}", open=sorted(open_keys))
        )
    check_write(command.update, open_keys)
