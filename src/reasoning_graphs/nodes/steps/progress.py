"""How far a run has come, told to whoever watches it: a ``progress`` event.

A long search or a long plan prints nothing for minutes. A pattern that can
say how far it has come writes a small event on LangGraph's ``custom`` stream,
computed from its state, so it holds after a resume too:
``{"event": "progress", "text": "expansion 3 of 8", "done": 3, "total": 8}``.
The CLI shows its text on the status line; any other client reads the stream.
Writing it costs nothing when nobody streams ``custom``, and outside a graph
run it does nothing.

Examples:
    >>> send_progress(3, 8, text="expansion 3 of 8")  # outside a run: nothing happens
    >>> def done_so_far(state):
    ...     return Progress(len(state["steps"]), 5, f"step {len(state['steps'])} of 5")
    >>> node = with_progress(lambda state: {"steps": [*state["steps"], "x"]}, done_so_far)
    >>> node({"steps": ["a"]})
    {'steps': ['a', 'x']}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple, TypeVar

from langgraph.config import get_stream_writer

PROGRESS_EVENT = "progress"

S = TypeVar("S")
R = TypeVar("R")


class Progress(NamedTuple):
    """How far a run has come: ``done`` of ``total`` (``None``: no known end), in words."""

    done: int
    total: int | None
    text: str


def send_progress(done: int, total: int | None = None, *, text: str) -> None:
    """Write a progress report on the run's ``custom`` stream (see the module docstring)."""
    try:
        write = get_stream_writer()
    except RuntimeError:  # outside a graph run: nobody to tell
        return
    write({"event": PROGRESS_EVENT, "text": text, "done": done, "total": total})


def with_progress(
    node: Callable[[S], R], progress: Callable[[S], Progress | None]
) -> Callable[[S], R]:
    """``node``, sending ``progress(state)`` before it works (nothing when that is ``None``).

    Wraps a plain node function or an effect node's body factory alike.
    """

    def reported(state: S) -> R:
        now = progress(state)
        if now is not None:
            send_progress(now.done, now.total, text=now.text)
        return node(state)

    reported.__name__ = getattr(node, "__name__", "reported")
    return reported
