"""A router's fresh read of the state that copies only what it reads.

LangGraph gives a router (a conditional edge) the state with its step's writes
applied: it copies every channel of the graph, writes the step's values into
each copy and reads the router's keys from the copies. Only the keys the
router reads need it, and of those only the ones the step wrote need a copy;
the rest is read as it is. :func:`cheap_fresh_reads` gives a compiled graph's
routers that read, which returns the same values; a read set up in a way it
does not know is left to LangGraph.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.channels import BinaryOperatorAggregate, LastValue
from langgraph.channels.delta import DeltaChannel
from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.private_names import (
    CONF,
    CONFIG_KEY_READ,
    ChannelRead,
    RunnableCallable,
    local_read,
)

UNMOVED_BY_NOTHING = (LastValue, BinaryOperatorAggregate, DeltaChannel)
"""Channels an update of no values leaves as they are; LangGraph's fresh read updates every
channel it copies, so any other kind is copied and updated here too."""


def cheap_fresh_reads(graph: CompiledStateGraph) -> None:
    """Give every router of ``graph`` the read of :func:`fresh_read`."""
    if RunnableCallable is None or ChannelRead is None:  # pragma: no cover - LangGraph's version
        return
    for node in graph.nodes.values():
        for writer in node.writers:
            if not isinstance(writer, RunnableCallable):
                continue
            reader = writer.kwargs.get("reader")
            if (
                isinstance(reader, partial)
                and reader.func is ChannelRead.do_read
                and reader.keywords.get("fresh")
                and isinstance(reader.keywords.get("select"), list)
            ):
                writer.kwargs["reader"] = partial(fresh_read, **reader.keywords)


def fresh_read(
    config: RunnableConfig, *, select: list[str], fresh: bool, mapper: Any = None
) -> Any:
    """The keys ``select`` of the state with the step's own writes applied, as LangGraph's
    fresh read returns them, copying only the channels the step wrote among them."""
    read = config[CONF][CONFIG_KEY_READ]
    if not (isinstance(read, partial) and read.func is local_read and len(read.args) == 4):
        return ChannelRead.do_read(config, select=select, fresh=fresh, mapper=mapper)
    _, channels, managed, task = read.args
    if any(key in managed for key in select):
        return ChannelRead.do_read(config, select=select, fresh=fresh, mapper=mapper)
    values = _read(channels, select, task.writes)
    return mapper(values) if mapper else values


def _read(
    channels: Mapping[str, Any], select: Sequence[str], writes: Sequence[tuple[str, Any]]
) -> dict[str, Any]:
    written: dict[str, list[Any]] = defaultdict(list)
    for key, value in writes:
        if key in channels:
            written[key].append(value)
    values: dict[str, Any] = {}
    for key in select:
        channel = channels[key]
        if key in written or not isinstance(channel, UNMOVED_BY_NOTHING):
            channel = channel.copy()
            channel.update(written.get(key, []))
        if channel.is_available():
            values[key] = channel.get()
    return values
