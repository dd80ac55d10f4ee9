"""Merge a step's message writes into the conversation the way LangGraph does.

LangGraph's batch reducer for a :class:`~langgraph.channels.delta.DeltaChannel` of
messages, ``_messages_delta_reducer`` (langgraph.graph.message, since 1.2), is
private. This module is the one place that name is used;
tests/test_message_merge.py fails, naming the LangGraph version, when it is gone
or merges differently. Without it, the public ``add_messages`` merges one write
at a time: the same result, but each write indexes the whole conversation.
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence
from functools import reduce
from typing import Any

from langchain_core.messages import AnyMessage
from langgraph.graph.message import add_messages

from reasoning_graphs.private_names import messages_delta_reducer

NO_BATCH_REDUCER = (
    "This LangGraph version has no langgraph.graph.message._messages_delta_reducer, so "
    "the conversation merges each write with add_messages: the same messages, more slowly."
)


def _one_write_at_a_time(state: list[AnyMessage], writes: Sequence[Any]) -> list[AnyMessage]:
    # add_messages is typed over any message-like values; given a list, it returns a list
    return reduce(add_messages, writes, list(state))  # type: ignore[arg-type]


_batch_reducer = messages_delta_reducer
if _batch_reducer is None:
    warnings.warn(NO_BATCH_REDUCER, RuntimeWarning, stacklevel=2)
    _batch_reducer = _one_write_at_a_time


def merge_message_writes(state: list[AnyMessage], writes: Sequence[Any]) -> list[AnyMessage]:
    """The conversation after ``writes`` (each a message or a list of them): a message
    whose id is known replaces the old one, a ``RemoveMessage`` drops its id, anything
    else is appended. ``REMOVE_ALL_MESSAGES`` is not written here: the private reducer
    of LangGraph 1.2.13 to 1.2.20 ignores it."""
    return _batch_reducer(state, list(writes))
