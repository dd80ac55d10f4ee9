"""A hostile scripted model, recording tools and approval decisions as hypothesis strategies.

The model routes each call by what is bound to it: a typed reply (a plan, a
join, a replan) comes from the queue of that schema, a free reply (tool calls
or text) from the ``act`` queue; an empty queue gives a harmless default, so
a run that keeps calling past its script is caught by the budget, not by a
crash. Free replies reuse tool-call ids (twice in one reply, across turns,
empty) and message ids, as careless providers and proxies do.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hypothesis import strategies as st
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from pydantic import Field, PrivateAttr

from reasoning_graphs.graphs.llm_compiler.join import JoinDecision
from reasoning_graphs.graphs.plan_execute.plan import Replan
from reasoning_graphs.testing import RecordedCall, ScriptedChatModel
from reasoning_graphs.tools.spec import ToolSpec, tool_spec

DANGEROUS = ("deploy", "wipe")
"""``deploy`` is dangerous by its spec, ``wipe`` because the run's policy names it."""
FREE_ITEM = "a"
"""The item ``wipe`` may take unasked: the policy's ``when`` asks only about the others."""
TOOL_NAMES = (*DANGEROUS, "lookup")
PLANNED_TOOLS = (*TOOL_NAMES, "shell")
"""What a plan may name: the tools, and one that does not exist."""
ITEMS = ("a", "b")
CALL_IDS = ("c1", "c2", "")
MESSAGE_IDS = (None, "m1")
ACT = "act"


class HostileModel(ScriptedChatModel):
    """A scripted model with one reply queue per schema name and one for free replies.

    Attributes:
        replies: Queues by schema name (``"Plan"``, ``"JoinDecision"`` …) or ``"act"``.
        defaults: What a queue answers once empty (``"done"`` when not given).
    """

    replies: dict[str, list[Any]] = Field(default_factory=dict)
    defaults: dict[str, Any] = Field(default_factory=dict)

    _queues: dict[str, list[Any]] | None = PrivateAttr(default=None)

    def load(self, replies: Mapping[str, Sequence[Any]]) -> None:
        """Start over with a new script, forgetting earlier calls (one model, many runs)."""
        with self._lock:
            self.replies = {kind: list(items) for kind, items in replies.items()}
            self._queues = None
            self.calls.clear()

    def _next_reply(self, record: RecordedCall) -> Any:
        with self._lock:
            if self._queues is None:
                self._queues = {kind: list(items) for kind, items in self.replies.items()}
            self.calls.append(record)
            kind = _kind(record.tools, self.defaults)
            queue = self._queues.get(kind) or []
            return queue.pop(0) if queue else self.defaults.get(kind, "done")


def _kind(tools: Sequence[str], typed: Mapping[str, Any]) -> str:
    """A call bound to exactly one known schema is a typed call; anything else is free."""
    return tools[0] if len(tools) == 1 and tools[0] in typed else ACT


def signature(name: str, args: Mapping[str, Any]) -> str:
    """One call as a comparable key: tool name plus canonical arguments."""
    return f"{name}:{json.dumps(dict(args), sort_keys=True, default=str)}"


@dataclass
class RunLog:
    """What really ran, what a person cleared or rejected, and how far the question has got."""

    runs: list[str] = field(default_factory=list)
    cleared: Counter[str] = field(default_factory=Counter)
    rejected: set[str] = field(default_factory=set)
    calls_before: int = 0
    """Model calls made before the current question."""
    steps: int = 0
    """Streamed updates of the current question."""

    def clear(self) -> None:
        self.runs.clear()
        self.cleared.clear()
        self.rejected.clear()
        self.calls_before = 0
        self.steps = 0

    def dangerous_runs(self) -> Counter[str]:
        free = signature("wipe", {"item": FREE_ITEM})
        return Counter(
            run for run in self.runs if run.split(":", 1)[0] in DANGEROUS and run != free
        )


def recording_tools(log: RunLog) -> list[ToolSpec | Any]:
    """Dangerous ``deploy`` (a spec), ``wipe`` (a plain LangChain tool, asked about by
    :data:`WIPE_SETTING`) and a safe ``lookup``."""

    def deploy(item: str) -> str:
        """Deploy one item to production."""
        log.runs.append(signature("deploy", {"item": item}))
        return f"deployed {item}"

    @tool
    def wipe(item: str) -> str:
        """Erase one item."""
        log.runs.append(signature("wipe", {"item": item}))
        return f"wiped {item}"

    def lookup(item: str) -> str:
        """Look one item up."""
        log.runs.append(signature("lookup", {"item": item}))
        return f"found {item}"

    return [
        tool_spec(deploy, dangerous=True),
        wipe,
        tool_spec(lookup, concurrency_safe=True),
    ]


@st.composite
def act_reply(draw: st.DrawFn) -> AIMessage | str:
    """A free reply: text, or up to three tool calls with clashing ids and maybe a broken one."""
    count = draw(st.integers(0, 3))
    broken = draw(st.integers(0, 1))
    if count + broken == 0:
        return "done"
    calls = [
        {
            "name": draw(st.sampled_from(TOOL_NAMES)),
            "args": {"item": draw(st.sampled_from(ITEMS))},
            "id": draw(st.sampled_from(CALL_IDS)),
            "type": "tool_call",
        }
        for _ in range(count)
    ]
    invalid = [
        {
            "name": draw(st.sampled_from(DANGEROUS)),
            "args": '{"item": ',
            "id": draw(st.sampled_from(CALL_IDS)),
            "error": "unterminated JSON",
            "type": "invalid_tool_call",
        }
        for _ in range(broken)
    ]
    message_id = draw(st.sampled_from(MESSAGE_IDS))
    return AIMessage(content="", tool_calls=calls, invalid_tool_calls=invalid, id=message_id)


act_script = st.lists(act_reply(), max_size=4)


@st.composite
def rewoo_plan(draw: st.DrawFn) -> dict[str, Any]:
    """A ReWOO plan of one to three steps that may use other steps' results, even later ones."""
    steps = []
    for number in range(1, draw(st.integers(1, 3)) + 1):
        steps.append(
            {
                "var": f"E{number}",
                "tool": draw(st.sampled_from(PLANNED_TOOLS)),
                "reason": "needed",
                "args": {"item": draw(st.sampled_from((*ITEMS, "#E1", "#E2")))},
            }
        )
    return {"steps": steps}


@st.composite
def compiler_plan(draw: st.DrawFn) -> dict[str, Any]:
    """An LLM Compiler plan of one to three tasks that may use other tasks' results.

    Ids may repeat and references may point forward or nowhere, as a careless planner writes.
    """
    tasks = []
    for number in range(1, draw(st.integers(1, 3)) + 1):
        item = draw(st.sampled_from((*ITEMS, "$1", "$2")))
        tasks.append(
            {
                "id": draw(st.sampled_from((number, 1))),
                "tool": draw(st.sampled_from(PLANNED_TOOLS)),
                "args": {"item": item},
                "deps": [int(item[1:])] if item.startswith("$") else [],
            }
        )
    return {"tasks": tasks}


join_decision = st.sampled_from(
    [JoinDecision(replan=True, reason="need more"), JoinDecision(answer="done")]
)
plan_steps = st.lists(st.sampled_from(["step one", "step two"]), min_size=1, max_size=2)
replan = st.one_of(st.just(Replan(response="done")), plan_steps.map(lambda s: Replan(steps=s)))


def normal_decision(item: Any) -> dict[str, Any]:
    """A valid decision in its long form (bare strings are shorthand)."""
    return {"type": item} if isinstance(item, str) else item


def decisions(calls: Sequence[Mapping[str, Any]]) -> st.SearchStrategy[tuple[Any, list | None]]:
    """A resume value for ``calls`` and the decisions it means, or ``None`` when malformed."""
    count = len(calls)
    one = st.one_of(
        st.sampled_from(["approve", "reject", {"type": "approve"}]),
        st.sampled_from([{"type": "reject", "reason": "no"}, {"type": "respond", "content": "hi"}]),
        st.sampled_from([{"item": "a"}, {"item": "z"}, {"item": "#E1"}, {"item": "$1"}, {}]).map(
            lambda args: {"type": "edit", "args": args}
        ),
    )
    as_list = st.lists(one, min_size=count, max_size=count)
    valid = as_list.map(lambda items: (items, [normal_decision(i) for i in items]))
    ids = [call["id"] for call in calls]
    if len(set(ids)) == count:
        valid |= as_list.map(
            lambda items: (dict(zip(ids, items, strict=True)), [normal_decision(i) for i in items])
        )
    if count == 1:
        valid |= st.sampled_from(["approve", {"type": "approve"}]).map(
            lambda item: (item, [normal_decision(item)])
        )
    malformed = st.sampled_from(
        [
            None,
            [],
            42,
            [None] * count,
            [{"type": "maybe"}] * count,
            [{"type": "edit"}] * count,
            [{"type": "edit", "args": "item=a"}] * count,
            [{"type": "respond"}] * count,
            [{"type": "respond", "content": 5}] * count,
            [{"type": "approve"}] * (count + 1),
            {"nope": "approve"},
            *([] if count == 1 else ["approve", {"type": "approve"}]),
        ]
    ).map(lambda value: (value, None))
    return st.one_of(valid, malformed)


def _wipes_more(request: Any) -> bool:
    return bool(request.tool_call["args"].get("item") != FREE_ITEM)


WIPE_SETTING = {
    "wipe": {"allowed_decisions": ["approve", "edit", "reject", "respond"], "when": _wipes_more}
}
"""``approve=`` for the hostile runs: a person decides every ``wipe`` but of :data:`FREE_ITEM`."""
