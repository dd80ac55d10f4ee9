"""The compiled graph every pattern returns: its runs are checked before LangGraph starts them.

- A new input and the run's options are checked first
  (:mod:`reasoning_graphs.run_input`), so a malformed run fails with a clear
  error and writes nothing to its thread.
- A resume is addressed to the pending interrupts by id, and answers only the
  question it was given for (:mod:`.resume`); the thread's state lists only the
  questions really pending (:mod:`.open_questions`).
- A client's state write or command may touch only the conversation
  (:mod:`reasoning_graphs.state_writes`).
- A run of the served graph (the one ``langgraph.json`` names), or any run the
  LangGraph server started, may choose only the models its deployment allows
  (:mod:`reasoning_graphs.served_models`), whichever engine runs it.
- No served run is less durable than ``"sync"`` (:func:`durable`).
- The run options' schema, which Studio draws as a form, lists the graph's own
  tool names for the options that name tools.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator, Mapping, Sequence
from functools import partial
from typing import Any, cast

from langchain_core.runnables import RunnableConfig, ensure_config
from langgraph.checkpoint.base import BaseCheckpointSaver, CheckpointTuple
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, StateSnapshot, StateUpdate

from reasoning_graphs.nodes.grounding.report import state_after
from reasoning_graphs.nodes.wiring.fresh_read import cheap_fresh_reads
from reasoning_graphs.nodes.wiring.open_questions import may_be_stale, open_only
from reasoning_graphs.nodes.wiring.resume import addressed, is_resume, still_pending
from reasoning_graphs.nodes.wiring.routed import Router, in_config, routed_write
from reasoning_graphs.run_input import (
    TOOL_OPTIONS,
    check_context,
    check_input,
    tool_choices,
    with_message_ids,
)
from reasoning_graphs.served_models import check_served_model, is_server_run
from reasoning_graphs.state_writes import check_command, check_write
from reasoning_graphs.thread_lock import arun_held, run_held


class CheckedGraph(CompiledStateGraph):
    """A compiled graph whose runs are checked first; see the module docstring."""

    def __init__(
        self, *, tool_names: Sequence[str] = (), served: bool = False, **kwargs: Any
    ) -> None:
        """``tool_names``: the tools the graph was built with, all that a run's options may
        name; ``served``: the graph ``langgraph.json`` names, whose runs may choose only
        the models the deployment allows. (LangGraph's copies, e.g. ``with_config``, pass
        every attribute back in.)"""
        super().__init__(**kwargs)
        self.tool_names = tuple(tool_names)
        self.served = served

    def check_run(
        self, input: Any, context: Any = None, config: RunnableConfig | None = None
    ) -> None:
        """Raise :class:`~reasoning_graphs.run_input.RunInputError` for a run that cannot start.

        A run inside another graph's step (a plan step, or this graph as a node of a
        user's graph) gets its input from that graph, which LangGraph fits to the input
        schema itself; only a run's own caller is checked.
        """
        if not _nested(config):
            if isinstance(input, Command):
                check_command(input)
            else:
                check_input(input, self.input_fields)
        check_context(context, self.context_schema, self.tool_names)
        if self._served_run(config) and not _nested(config):
            check_served_model(context)

    def _served_run(self, config: RunnableConfig | None) -> bool:
        """Whether any client may have sent this run: a run of the served graph, or one the
        LangGraph server started. A Python caller's run is their own choice."""
        return self.served or is_server_run(config)

    def check_write(self, values: Any, as_node: str | None = None) -> None:
        """Raise :class:`~reasoning_graphs.state_writes.StateWriteError` for a client's state
        write that touches what the runtime keeps (any key but the conversation).
        ``as_node`` is accepted as the write names it; it changes nothing here."""
        check_write(values)

    def check_command(self, command: Command) -> None:
        """Raise :class:`~reasoning_graphs.state_writes.StateWriteError` for a client's command
        that routes the graph or writes what the runtime keeps."""
        check_command(command)

    def bulk_update_state(
        self, config: RunnableConfig, supersteps: Sequence[Sequence[StateUpdate]]
    ) -> RunnableConfig:
        _check_supersteps(supersteps)
        saver = self._routing_saver(config)
        if saver is None:
            return super().bulk_update_state(config, supersteps)
        for superstep in supersteps:  # each routed on the state the one before left
            updates = [StateUpdate(*update) for update in superstep]
            nodes = self._written_as(updates, saver.get_tuple(config))
            if any(node in self._routes() for node in nodes):
                updates = self._routed(updates, nodes, self.get_state(config).values, config)
            config = super().bulk_update_state(config, [updates])
        return config

    async def abulk_update_state(
        self, config: RunnableConfig, supersteps: Sequence[Sequence[StateUpdate]]
    ) -> RunnableConfig:
        _check_supersteps(supersteps)
        saver = self._routing_saver(config)
        if saver is None:
            return await super().abulk_update_state(config, supersteps)
        for superstep in supersteps:
            updates = [StateUpdate(*update) for update in superstep]
            nodes = self._written_as(updates, await saver.aget_tuple(config))
            if any(node in self._routes() for node in nodes):
                state = (await self.aget_state(config)).values
                updates = self._routed(updates, nodes, state, config)
            config = await super().abulk_update_state(config, [updates])
        return config

    def _routes(self) -> Mapping[str, Router]:
        return getattr(self.builder, "routes", {})

    def _routing_saver(self, config: RunnableConfig) -> BaseCheckpointSaver | None:
        """The saver to read a write's node from, when a node of this graph routes itself
        (a write to a subgraph's state is routed by the subgraph's own graph)."""
        saver = self.checkpointer
        if not self._routes() or _nested(config) or not isinstance(saver, BaseCheckpointSaver):
            return None
        return saver

    def _written_as(
        self, updates: Sequence[StateUpdate], saved: CheckpointTuple | None
    ) -> list[str | None]:
        """The node each update is written as: its ``as_node``, or for a lone update
        without one the node LangGraph infers from the checkpoint."""
        nodes = [update.as_node for update in updates]
        if len(updates) == 1 and nodes[0] is None and saved is not None:
            nodes = [self._infer_as_node(saved.checkpoint["versions_seen"])]
        return nodes

    def _routed(
        self,
        updates: list[StateUpdate],
        nodes: list[str | None],
        state: Any,
        config: RunnableConfig,
    ) -> list[StateUpdate]:
        """``updates`` with each write as a node that routes itself made a ``Command`` to
        where the node's router sends the state after the write: LangGraph routes a write
        as a node with a conditional edge that way."""
        routed = []
        for update, node in zip(updates, nodes, strict=True):
            route = self._routes().get(node) if node is not None else None
            if route is None or isinstance(update.values, Command):
                routed.append(update)
                continue
            values = dict(update.values or {})
            write = partial(routed_write, values, route)
            command = in_config(ensure_config(config), write, state_after(state, values))
            routed.append(StateUpdate(cast(Any, command), node, update.task_id))
        return routed

    @property
    def input_fields(self) -> frozenset[str]:
        """The keys a new input may hold (the input schema's)."""
        schema = self.builder.input_schema
        return frozenset(
            getattr(schema, "__required_keys__", set())
            | getattr(schema, "__optional_keys__", set())
            | getattr(self.builder, "unread_input", set())
        )

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        self.check_run(input, kwargs.get("context"), config)
        if self._served_run(config):
            kwargs = durable(kwargs)
        stream = super().stream
        nested = _nested(config)
        thread_held = run_held(self.checkpointer, config, nested=nested)

        def held_run() -> Iterator[Any]:
            # a resume answers what was pending as its run started (read before the lock)...
            resume = is_resume(input)
            command = input if nested else with_message_ids(input)
            if resume:
                command = addressed(input, self.get_state(config or {}))
            with thread_held:  # one run at a time on the thread
                if resume:  # ...if that is still pending once the run holds it
                    snapshot = self.get_state(config or {}, subgraphs=True)
                    command = still_pending(command, snapshot, _run_id(config))
                yield from stream(command, config, **kwargs)

        return held_run()

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        self.check_run(input, kwargs.get("context"), config)
        if self._served_run(config):
            kwargs = durable(kwargs)
        resume = is_resume(input)
        # a resume answers what was pending as its run started (read before the lock)...
        if resume:
            input = addressed(input, await self.aget_state(config or {}))
        elif not _nested(config):
            input = with_message_ids(input)
        async with arun_held(self.checkpointer, config, nested=_nested(config)):
            if resume:  # ...if that is still pending once the run holds the thread
                snapshot = await self.aget_state(config or {}, subgraphs=True)
                input = still_pending(input, snapshot, _run_id(config))
            async for chunk in super().astream(input, config, **kwargs):
                yield chunk

    def get_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot:
        """The thread's state, listing only the questions really pending (see
        :mod:`.open_questions`)."""
        snapshot = super().get_state(config, subgraphs=subgraphs)
        if not may_be_stale(snapshot):
            return snapshot
        nested = snapshot if subgraphs else super().get_state(config, subgraphs=True)
        return open_only(snapshot, nested)

    async def aget_state(self, config: RunnableConfig, *, subgraphs: bool = False) -> StateSnapshot:
        snapshot = await super().aget_state(config, subgraphs=subgraphs)
        if not may_be_stale(snapshot):
            return snapshot
        nested = snapshot if subgraphs else await super().aget_state(config, subgraphs=True)
        return open_only(snapshot, nested)

    def get_context_jsonschema(self) -> dict[str, Any] | None:
        schema = super().get_context_jsonschema()
        if not schema or not self.tool_names:
            return schema
        for name in TOOL_OPTIONS:
            names = tool_choices(name, self.tool_names)
            for branch in schema.get("properties", {}).get(name, {}).get("anyOf", []):
                if branch.get("type") == "array":
                    branch["items"] = {"type": "string", "enum": names}
        return schema


def durable(kwargs: dict[str, Any]) -> dict[str, Any]:
    """A run's keyword arguments with no durability weaker than ``"sync"``.

    The call journal and the one-question-per-decision rule count on each step's
    checkpoint being saved before the next step starts. An engine lets any client
    choose ``"async"`` or ``"exit"`` per run (Aegra, LangGraph Server), and a client
    may tighten the graph's guarantees, never loosen them.
    """
    if kwargs.get("durability") in (None, "sync"):
        return kwargs
    return {**kwargs, "durability": "sync"}


def checked(graph: CompiledStateGraph, tool_names: Sequence[str] = ()) -> CheckedGraph:
    """``graph`` as a :class:`CheckedGraph` (same nodes, channels and config)."""
    graph.__class__ = CheckedGraph
    checked_graph: CheckedGraph = graph  # type: ignore[assignment]  # its class, changed above
    checked_graph.tool_names = tuple(tool_names)
    checked_graph.served = False
    cheap_fresh_reads(checked_graph)
    return checked_graph


def _check_supersteps(supersteps: Sequence[Sequence[StateUpdate]]) -> None:
    """Check every write of a bulk update (``update_state`` makes one of a single write)."""
    for superstep in supersteps:
        for update in superstep:
            check_write(StateUpdate(*update).values)


def _nested(config: RunnableConfig | None) -> bool:
    """Whether the run is part of another graph's step (its checkpoints have a namespace)."""
    return bool(ensure_config(config).get("configurable", {}).get("checkpoint_ns"))


def _run_id(config: RunnableConfig | None) -> Any:
    """The engine's id of this run (LangGraph Server and Aegra give one), if any."""
    config = ensure_config(config)
    return config.get("metadata", {}).get("run_id") or config.get("configurable", {}).get("run_id")
