"""LangChain's call-limit middleware, read as budgets of ours that every pattern keeps.

``ModelCallLimitMiddleware`` and ``ToolCallLimitMiddleware`` count with
``before_model``/``after_model`` hooks and state of their own under ``create_agent``,
so they could only count the model turns of a conversation loop. Given to any
pattern here, they are read once, when the graph is built (:func:`read_call_limits`),
into :class:`CallLimit` settings of the run's limits, and counted from the
question's record like every other budget: every model call of every step, plan,
join, judgement and trial (the summaries that fit a prompt to the window aside),
and every tool call that really ran.

- ``run_limit`` counts per question: a resume after a person's decision continues
  the question, so it does not start the count again (``create_agent`` counts per
  invocation). ``thread_limit`` counts every question of the thread.
- A model-call limit is hard: once reached, no model call is made, not even the
  closing one other budgets allow; the question ends incomplete, naming the limit
  (``exit_behavior="end"``), or :class:`ModelCallLimitExceededError` is raised
  (``"error"``).
- A tool-call limit is checked where a turn's calls are triaged, before any runs:
  a call past it is answered without running and the question goes on
  (``"continue"``); nothing of the turn runs and the question ends incomplete
  (``"end"``); or :class:`ToolCallLimitExceededError` is raised (``"error"``).
  Calls of one turn count in the model's order; a call a person then rejects
  does not count afterwards, since it never ran.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from langchain.agents.middleware import ModelCallLimitMiddleware, ToolCallLimitMiddleware
from langchain.agents.middleware.model_call_limit import ModelCallLimitExceededError
from langchain.agents.middleware.tool_call_limit import ToolCallLimitExceededError

from reasoning_graphs.state import Outcome, Work

MODEL = "model"
"""The count of model calls (summaries aside)."""
TOOLS = "tools"
"""The count of every tool call that ran."""

MODEL_LIMIT_REACHED = "{middleware}: {scope} limit exceeded ({limit} model calls per {unit})"
TOOL_LIMIT_REACHED = "{middleware}: {scope} limit exceeded ({limit} {what} per {unit})"
NOT_RUN = "Not run: Tool call limit exceeded ({what}). Do not call {whom} again."
SCOPE_WORDS = {"question": ("run", "question"), "thread": ("thread", "thread")}
"""Each scope as the middleware's own parameter names it (``run_limit``, ``thread_limit``)
and the unit it counts in."""

Exit = Literal["end", "error", "continue"]
Scope = Literal["question", "thread"]


def tool_key(name: str) -> str:
    """The count of the calls of tool ``name`` that ran."""
    return f"tool:{name}"


@dataclass(frozen=True)
class CallLimit:
    """One call limit a middleware set.

    Attributes:
        middleware: The middleware's name, as a stop's reason gives it.
        key: What it counts: :data:`MODEL`, :data:`TOOLS` or :func:`tool_key`.
        per_question: Calls per question (its ``run_limit``), or ``None``.
        per_thread: Calls per thread (its ``thread_limit``), or ``None``.
        exit: What reaching it does: ``"end"``, ``"error"`` or (tools only) ``"continue"``.
    """

    middleware: str
    key: str
    per_question: int | None
    per_thread: int | None
    exit: Exit

    @property
    def tool(self) -> str | None:
        """The one tool counted, when the limit counts one."""
        return self.key.removeprefix("tool:") if self.key.startswith("tool:") else None

    def counts(self, name: str) -> bool:
        """Whether a call of tool ``name`` counts against this limit."""
        return self.key == TOOLS or self.key == tool_key(name)

    def reached(self, counts: Counts, more: int = 0) -> Scope | None:
        """Which of its limits ``counts`` (with ``more`` calls besides) have reached."""
        return next((scope for scope, left in self._left(counts, more) if left <= 0), None)

    def room(self, counts: Counts) -> int:
        """How many more calls it allows after ``counts``."""
        return max(0, min(left for _, left in self._left(counts)))

    def _left(self, counts: Counts, more: int = 0) -> list[tuple[Scope, int]]:
        """The calls each of its limits has left (LangChain's class sets at least one)."""
        done = counts.question[self.key] + more
        left: list[tuple[Scope, int]] = []
        if self.per_question is not None:
            left.append(("question", self.per_question - done))
        if self.per_thread is not None:
            left.append(("thread", self.per_thread - counts.before[self.key] - done))
        return left

    def reason(self, scope: Scope) -> str:
        """Why the question stops here, for its outcome."""
        limit = self.per_question if scope == "question" else self.per_thread
        word, unit = SCOPE_WORDS[scope]
        if self.key == MODEL:
            return MODEL_LIMIT_REACHED.format(
                middleware=self.middleware, limit=limit, scope=word, unit=unit
            )
        return TOOL_LIMIT_REACHED.format(
            middleware=self.middleware, limit=limit, what=self._what(), scope=word, unit=unit
        )

    def refusal(self) -> str:
        """The observation of a call past this limit (the model has no notion of threads)."""
        tool = self.tool
        return NOT_RUN.format(what=self._what(), whom=f"{tool!r}" if tool else "any tool")

    def error(self, counts: Counts, more: int = 0) -> Exception:
        """LangChain's own exception for ``exit_behavior="error"``, with the counts."""
        question = counts.question[self.key] + more
        thread = counts.before[self.key] + question
        if self.key == MODEL:
            return ModelCallLimitExceededError(
                thread_count=thread,
                run_count=question,
                thread_limit=self.per_thread,
                run_limit=self.per_question,
            )
        return ToolCallLimitExceededError(
            thread_count=thread + 1,
            run_count=question + 1,
            thread_limit=self.per_thread,
            run_limit=self.per_question,
            tool_name=self.tool,
        )

    def _what(self) -> str:
        tool = self.tool
        return f"{tool!r} calls" if tool else "tool calls"


def read_call_limits(middleware: Sequence[Any]) -> tuple[tuple[CallLimit, ...], tuple[Any, ...]]:
    """The call limits the ``middleware`` set, and the middleware left to run as hooks."""
    limits: list[CallLimit] = []
    rest: list[Any] = []
    for m in middleware:
        if isinstance(m, ModelCallLimitMiddleware):
            key = MODEL
        elif isinstance(m, ToolCallLimitMiddleware):
            key = TOOLS if m.tool_name is None else tool_key(m.tool_name)
        else:
            rest.append(m)
            continue
        limits.append(CallLimit(m.name, key, m.run_limit, m.thread_limit, m.exit_behavior))
    return tuple(limits), tuple(rest)


@dataclass(frozen=True)
class Counts:
    """What the limits count, read from a state.

    Attributes:
        question: The question's calls so far, by key.
        before: The calls of the thread's earlier questions, by key.
    """

    question: Counter[str]
    before: Counter[str]


def work_counts(work: Iterable[Work]) -> Counter[str]:
    """The calls ``work`` made, by the keys the limits count."""
    counts: Counter[str] = Counter()
    for item in work:
        if item["kind"] == "thought":
            counts[MODEL] += not item.get("summary")
        else:
            counts[TOOLS] += 1
            counts[tool_key(item.get("tool", ""))] += 1
    return counts


def model_limit_stop(model_limits: Sequence[CallLimit], counts: Counts) -> Outcome | None:
    """Why no more model calls may be made, when one of ``model_limits`` is reached.

    Raises:
        ModelCallLimitExceededError: The limit reached says ``exit_behavior="error"``.
    """
    for limit in model_limits:
        scope = limit.reached(counts)
        if scope is None:
            continue
        if limit.exit == "error":
            raise limit.error(counts)
        return {"status": "incomplete", "reason": limit.reason(scope)}
    return None


def model_calls_room(model_limits: Sequence[CallLimit], counts: Counts) -> int:
    """How many more model calls ``model_limits`` allow after ``counts``."""
    return min(limit.room(counts) for limit in model_limits)


@dataclass
class Tally:
    """The tool calls a triage has let through so far, by key, on top of a state's counts:
    the calls of one turn, or of one LLM Compiler plan settled task by task (its tasks may
    be settled at once on several threads, hence the lock).

    Attributes:
        limits: The tool-call limits counted.
        counts: What the state had counted.
        taken: The calls let through since, by key.
        ending: The limit with ``exit_behavior="end"`` a call reached, once one has: no
            call is let through after it.
        ended: Why the question ends then.
    """

    limits: tuple[CallLimit, ...]
    counts: Counts
    taken: Counter[str] = field(default_factory=Counter)
    ending: CallLimit | None = None
    ended: str | None = None
    lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self, name: str) -> CallLimit | None:
        """Count a call of tool ``name``, or give the limit it would pass (and count nothing).

        Raises:
            ToolCallLimitExceededError: That limit says ``exit_behavior="error"``.
        """
        counted = [limit for limit in self.limits if limit.counts(name)]
        with self.lock:
            if self.ending is not None:
                return self.ending
            for limit in counted:
                scope = limit.reached(self.counts, self.taken[limit.key])
                if scope is None:
                    continue
                if limit.exit == "error":
                    raise limit.error(self.counts, self.taken[limit.key])
                if limit.exit == "end":
                    self.ending, self.ended = limit, limit.reason(scope)
                return limit
            self._count(counted)
            return None

    def count_cleared(self, name: str) -> None:
        """Count a call of ``name`` let through before (a person cleared it), whatever the
        limits say now."""
        with self.lock:
            self._count([limit for limit in self.limits if limit.counts(name)])

    def _count(self, counted: Sequence[CallLimit]) -> None:
        for limit in counted:
            self.taken[limit.key] += 1


def split_limits(
    limits: Sequence[CallLimit],
) -> tuple[tuple[CallLimit, ...], tuple[CallLimit, ...]]:
    """``limits`` as the model-call limits and the tool-call limits."""
    model = tuple(limit for limit in limits if limit.key == MODEL)
    return model, tuple(limit for limit in limits if limit.key != MODEL)
