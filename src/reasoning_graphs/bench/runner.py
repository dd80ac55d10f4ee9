"""One bench cell: a task, a pattern and a repeat, run on a fresh thread and recorded.

A cell builds the pattern's graph on the task's tools, asks the question on a new
thread of the bench's checkpointer, answers every approval pause with the
decisions the task scripts, then scores the answer and counts the cost. The
counts come from LangChain callbacks — every model call and tool run the graph
makes, in plan steps and trials too — so they measure what happened rather than
what the pattern says about itself. :func:`run_cell` is a plain function of
picklable values, so an executor can ship it to another process or machine.
"""

from __future__ import annotations

import inspect
import shutil
import tempfile
import threading
import time
import traceback
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langchain_core.outputs import LLMResult
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.types import Command

from reasoning_graphs.bench.record import CellRecord
from reasoning_graphs.bench.scorers import score, unit_test_evaluator
from reasoning_graphs.bench.suite import Suite, Task
from reasoning_graphs.bench.tools import task_tools
from reasoning_graphs.checkpointers import open_checkpointer
from reasoning_graphs.graphs import graph_builder
from reasoning_graphs.graphs.react_text.think import PARSE_LEVEL
from reasoning_graphs.metadata import format_error_of, outcome_of
from reasoning_graphs.models.resolve import resolve_model

ORACLE = "oracle"
"""The model spec of the oracle (:mod:`reasoning_graphs.bench.oracle`)."""

UNSCRIPTED_PAUSE = (
    "the run paused for approval {count} time(s) but the task scripts {scripted} decision(s)"
)
MISSING_FILE = "{path} should hold {expected!r} but does not exist"
WRONG_FILE = "{path} holds {actual!r}, not {expected!r}"
UNWANTED_FILE = "{path} should not exist"


@dataclass(frozen=True)
class BenchSettings:
    """How every cell of a bench run is run.

    Attributes:
        model: ``oracle`` or any model spec :func:`resolve_model` reads (``local``, ``openai:…``).
        call_delay, token_delay: The oracle's seconds per call and per output token.
        checkpointer: The saver every cell writes to (a spec :func:`open_checkpointer`
            reads: a SQLite file, ``postgresql://…``, ``memory``).
        max_model_calls: Model calls per question.
        token_budget: Prompt plus completion tokens per question (``None``: no limit).
        samples: Chain-of-Thought's self-consistency votes.
        reflect_every, reflect_on_failure: Reflection inside the ReAct loop
            (:mod:`~reasoning_graphs.nodes.steps.reflect`; default off).
        workspaces: The folder each cell's workspace is made in (``None``: a temporary one).
    """

    model: str = ORACLE
    call_delay: float = 0.0
    token_delay: float = 0.0
    checkpointer: str = "memory"
    max_model_calls: int = 20
    token_budget: int | None = None
    samples: int = 3
    workspaces: str | None = None
    reflect_every: int | None = None
    reflect_on_failure: bool = False


@dataclass(frozen=True)
class Cell:
    """One (task, pattern, repeat) of a bench run; picklable, so it can travel to a worker."""

    suite: Suite
    task: Task
    pattern: str
    repeat: int = 0

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.suite.name, self.task.id, self.pattern, self.repeat)


class UsageCounter(BaseCallbackHandler):
    """Counts model calls, their token usage and tool runs, from LangChain's callbacks.

    Model calls report usage on their messages. Some servers report none on a
    streamed reply (llama.cpp's OpenAI-compatible server among them); such calls
    are counted in :attr:`calls_without_usage`, and the cell's tokens then come
    from the pattern's own trajectory, marked as estimated.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.model_calls = 0
        self.prompt_tokens = 0
        self.completion_tokens = 0
        self.tool_calls = 0
        self.calls_without_usage = 0
        self._tool_runs: set[UUID] = set()

    def on_chat_model_start(self, serialized: Any, messages: Any, **kwargs: Any) -> None:
        """Counted at its end. Defined so LangChain does not write the prompt out as text."""

    def on_llm_end(self, response: LLMResult, **kwargs: Any) -> None:
        usage = [
            getattr(generation, "message", None)
            for generations in response.generations
            for generation in generations
        ]
        reported = [getattr(m, "usage_metadata", None) for m in usage]
        with self._lock:
            self.model_calls += 1
            if not any(reported):
                self.calls_without_usage += 1
            for metadata in filter(None, reported):
                self.prompt_tokens += metadata.get("input_tokens", 0)
                self.completion_tokens += metadata.get("output_tokens", 0)

    def on_tool_start(
        self,
        serialized: dict[str, Any],
        input_str: str,
        *,
        run_id: UUID,
        parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:
        """Count a tool run unless a tool started it: a wrapped tool is one call, not two."""
        with self._lock:
            self._tool_runs.add(run_id)
            if parent_run_id not in self._tool_runs:
                self.tool_calls += 1


_models: dict[str, BaseChatModel] = {}
_savers: dict[str, BaseCheckpointSaver] = {}
_shared_lock = threading.Lock()


def model_for(cell: Cell, settings: BenchSettings) -> BaseChatModel:
    """The oracle made for the cell, or the one model of the spec this process shares."""
    if settings.model == ORACLE:
        from reasoning_graphs.bench.oracle import OracleChatModel

        return OracleChatModel(
            task=cell.task,
            pattern=cell.pattern,
            delay=settings.call_delay,
            token_delay=settings.token_delay,
        )
    with _shared_lock:
        if settings.model not in _models:
            _models[settings.model] = resolve_model(settings.model)
        return _models[settings.model]


def saver_for(spec: str) -> BaseCheckpointSaver:
    """One open saver per spec and process: cells on the same worker share its connection."""
    with _shared_lock:
        if spec not in _savers:
            _savers[spec] = open_checkpointer(spec)
        return _savers[spec]


def pattern_options(cell: Cell, settings: BenchSettings) -> dict[str, Any]:
    """The build options a pattern takes for this cell besides the shared budgets and the
    loop's reflection: the bench's ``samples`` for a pattern that samples, and the task's
    unit tests as the evaluator of a pattern that takes one."""
    options: dict[str, Any] = {"max_model_calls": settings.max_model_calls}
    if settings.token_budget is not None:
        options["token_budget"] = settings.token_budget
    if settings.reflect_every is not None:
        options["reflect_every"] = settings.reflect_every
    if settings.reflect_on_failure:
        options["reflect_on_failure"] = True
    takes = inspect.signature(graph_builder(cell.pattern)).parameters
    if "samples" in takes:
        options["samples"] = settings.samples
    if "evaluator" in takes and cell.task.tests is not None:
        options["evaluator"] = unit_test_evaluator(cell.task)
    return options


def run_cell(cell: Cell, settings: BenchSettings) -> CellRecord:
    """Run one cell to its end and record it; an exception becomes the record's ``error``."""
    thread_id = (
        f"bench-{cell.suite.name}-{cell.task.id}-{cell.pattern}-{cell.repeat}-"
        + (uuid.uuid4().hex[:8])
    )
    record = CellRecord(
        suite=cell.suite.name,
        task=cell.task.id,
        pattern=cell.pattern,
        repeat=cell.repeat,
        model=settings.model,
        thread_id=thread_id,
    )
    workspace = Path(tempfile.mkdtemp(prefix="cell-", dir=settings.workspaces))
    counter = UsageCounter()
    started = time.perf_counter()
    try:
        state = _ask(cell, settings, workspace, thread_id, counter, record)
        record.wall_s = time.perf_counter() - started
        _judge(cell.task, state, workspace, record)
    except Exception as error:  # the bench reports a broken cell and goes on
        record.wall_s = time.perf_counter() - started
        record.error = f"{type(error).__name__}: {error}"
        record.detail = traceback.format_exc(limit=4)
        record.failure = "error"
    finally:
        shutil.rmtree(workspace, ignore_errors=True)
    record.model_calls = counter.model_calls
    record.tool_calls = counter.tool_calls
    if counter.calls_without_usage:
        record.tokens_estimated = True
        thoughts = [event for event in record.trajectory if event.get("kind") == "thought"]
        record.prompt_tokens = sum(event["input_tokens"] for event in thoughts)
        record.completion_tokens = sum(event["output_tokens"] for event in thoughts)
    else:
        record.prompt_tokens = counter.prompt_tokens
        record.completion_tokens = counter.completion_tokens
    return record


def _ask(
    cell: Cell,
    settings: BenchSettings,
    workspace: Path,
    thread_id: str,
    counter: UsageCounter,
    record: CellRecord,
) -> dict[str, Any]:
    checkpointer = saver_for(settings.checkpointer)
    graph = graph_builder(cell.pattern)(
        model_for(cell, settings),
        tools=task_tools(cell.suite, cell.task, workspace),
        checkpointer=checkpointer,
        **pattern_options(cell, settings),
    )
    config: RunnableConfig = {"configurable": {"thread_id": thread_id}, "callbacks": [counter]}
    step: Any = {"messages": [HumanMessage(cell.task.question)]}
    while True:
        graph.invoke(step, config)
        snapshot = graph.get_state(config)
        if not snapshot.interrupts:
            return snapshot.values
        if record.approvals >= len(cell.task.decisions):
            raise RuntimeError(
                UNSCRIPTED_PAUSE.format(
                    count=record.approvals + 1, scripted=len(cell.task.decisions)
                )
            )
        step = Command(resume=cell.task.decisions[record.approvals])
        record.approvals += 1


def _judge(task: Task, state: Mapping[str, Any], workspace: Path, record: CellRecord) -> None:
    messages: list[BaseMessage] = state.get("messages", [])
    final = messages[-1] if messages else AIMessage("")
    outcome = outcome_of(final) or state.get("outcome") or {}
    record.answer = final.text
    record.status = outcome.get("status", "answered")
    record.reason = outcome.get("reason", "")
    record.trajectory = [dict(event) for event in state.get("trajectory", [])]
    record.format_errors = _format_errors(messages, record.trajectory)
    verdict = score(task, record.answer)
    record.score, record.detail = verdict.value, verdict.detail
    effect = _effect_problem(task, workspace)
    record.correct = verdict.correct and record.status == "answered" and effect is None
    if record.correct:
        return
    if record.format_errors:
        record.failure = "format drift"
    elif record.status != "answered":
        record.failure = "budget stop"
    elif not verdict.correct:
        record.failure = "wrong answer"
    else:
        record.failure = "wrong effect"
        record.detail = effect or ""


def _format_errors(messages: list[BaseMessage], trajectory: list[dict[str, Any]]) -> int:
    """Replies the pattern could not read as its format: text-format errors, prose taken as
    the answer for want of any label, tool calls whose arguments could not be read."""
    text_errors = sum(1 for message in messages if format_error_of(message))
    prose_answers = sum(
        1
        for event in trajectory
        if event.get("kind") == "thought" and event.get(PARSE_LEVEL) == "fallback"
    )
    unreadable_calls = sum(
        len(message.invalid_tool_calls) for message in messages if isinstance(message, AIMessage)
    )
    invalid_actions = sum(
        1
        for event in trajectory
        if event.get("kind") == "action" and event["decision"] == "invalid"
    )
    return text_errors + prose_answers + unreadable_calls + invalid_actions


def _effect_problem(task: Task, workspace: Path) -> str | None:
    """What is wrong with the files the run left, against the task's ``expect_files``."""
    for name, expected in task.expect_files.items():
        path = workspace / name
        if expected is None:
            if path.exists():
                return UNWANTED_FILE.format(path=name)
            continue
        if not path.is_file():
            return MISSING_FILE.format(path=name, expected=expected)
        actual = path.read_text(encoding="utf-8")
        if actual != expected:
            return WRONG_FILE.format(path=name, actual=actual, expected=expected)
    return None
