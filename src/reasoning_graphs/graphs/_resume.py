"""A resume that answers nothing asks again instead of reaching LangGraph.

LangGraph 1.2 fails inside its run loop (an ``UnboundLocalError``) when given
``Command(resume=None)``, as any client of the dev server can send. The same
``None`` addressed to each pending interrupt by id is an answer our approval
step already handles: it does not fit, so the run stops again at the same
approval with an ``error`` field. So that is what such a resume becomes. With
nothing pending, it is refused with :class:`~reasoning_graphs.approval.ApprovalError`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from typing import Any

from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, StateSnapshot

from reasoning_graphs.approval import ApprovalError

NOTHING_PENDING = "Command(resume=None) answers nothing, and this thread waits for no decision."


class ResumeCheckedGraph(CompiledStateGraph):
    """A compiled graph whose runs turn an empty resume into a re-ask."""

    def stream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Iterator[Any]:
        if _answers_nothing(input):
            input = _addressed(self.get_state(config or {}))
        return super().stream(input, config, **kwargs)

    async def astream(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> AsyncIterator[Any]:
        if _answers_nothing(input):
            input = _addressed(await self.aget_state(config or {}))
        async for chunk in super().astream(input, config, **kwargs):
            yield chunk


def resume_checked(graph: CompiledStateGraph) -> CompiledStateGraph:
    """``graph`` as a :class:`ResumeCheckedGraph` (same nodes, channels and config)."""
    graph.__class__ = ResumeCheckedGraph
    return graph


def _answers_nothing(value: Any) -> bool:
    return (
        isinstance(value, Command)
        and value.resume is None
        and value.goto == ()
        and value.update is None
        and value.graph is None
    )


def _addressed(snapshot: StateSnapshot) -> Command:
    """``None`` for every pending interrupt, by id: each is asked again with an error."""
    if not snapshot.interrupts:
        raise ApprovalError(NOTHING_PENDING)
    return Command(resume={pending.id: None for pending in snapshot.interrupts})
