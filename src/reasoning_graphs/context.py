"""Run-time options: what Studio shows as editable fields and any run may send.

Every field defaults to ``None``; ``None``, an empty string and an empty list
all mean "use the value the graph was built with", so a run (or a Studio
assistant) changes only what it names.

Any client of the dev server can send these options, so a run may only make a
graph stricter: its budgets may lower the graph's, never raise or remove them
(at build time ``max_steps=None`` and ``token_budget=None`` mean "no limit");
its ``approve`` and ``deny`` lists add to the graph's; its ``tools`` pick among
the graph's tools; a ``mode`` is a preset of budgets and tightens the same way.
Only ``model``, ``summary_model`` and the options that shape the prompt
(``context_*``, ``keep_messages``) replace the graph's choice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, TypeVar, get_args

BAD_CONTEXT = "Unknown run option(s) {names}; known options: {known}."
BAD_BUDGET = "Run option {name!r} must be a whole number, not {value!r}."
BAD_NAMES = "Run option {name!r} must be a list of tool names, not {value!r}."
BAD_MODEL = "Run option {name!r} must be a model spec string, not {value!r}."
BAD_CHOICE = "Run option {name!r} must be one of {choices}, not {value!r}."
BAD_FRACTION = "Run option {name!r} must be a number above 0 and at most 1, not {value!r}."
BAD_SECONDS = "Run option {name!r} must be a number of seconds above 0, not {value!r}."
BAD_COUNT = "Run option {name!r} must be a whole number of at least {least}, not {value!r}."
TOOLS_NOT_IN_GRAPH = "Run option {name!r} names {names}, which this graph does not enable: {known}."

Mode = Literal["chat", "agent"]
ContextStrategy = Literal["none", "window", "summary", "protective", "hybrid"]

BUDGETS = (
    "max_steps",
    "max_tool_rounds",
    "max_tool_calls_per_turn",
    "token_budget",
    "max_tool_calls",
    "time_budget",
    "repeat_failure_limit",
    "empty_result_streak",
    "stale_round_limit",
    "repeat_round_limit",
)
"""Limits a run may lower, never raise or remove."""
TIMEOUTS = ("model_timeout", "idle_timeout")
"""Seconds a run may lower, never raise or remove (fractions allowed)."""
DEFAULT_IDLE_TIMEOUT = 600.0
"""Seconds without any model or tool activity before a question stops (10 minutes)."""
LOWERED = (*BUDGETS, *TIMEOUTS)
"""Every option a run may only lower."""
CHOICES = {"mode": get_args(Mode), "context_strategy": get_args(ContextStrategy)}
"""Options that pick one of a few named values."""
PROMPT_OPTIONS = ("context_strategy", "context_window", "context_threshold", "keep_messages")
"""Options that shape the prompt, not what the agent may do: a run sets them freely."""
FREE_NUMBERS = ("context_window", "keep_messages")
"""Whole numbers a run may set freely: they shape the prompt, not what the agent may do."""
MODEL_OPTIONS = ("model", "summary_model")
"""Options that name a model by its spec."""

MODES: dict[str, dict[str, Any]] = {
    "chat": {"max_tool_rounds": 1, "max_steps": 2, "max_tool_calls_per_turn": 5, "retries": 3},
    "agent": {
        "max_tool_rounds": 20,
        "max_steps": 21,
        "max_tool_calls_per_turn": 5,
        "max_tool_calls": 200,
        "token_budget": 200_000,
        "retries": 5,
    },
}
"""Presets over the explicit options.

``chat``: one round of at most 5 tool calls, then the answer (2 model calls).
``agent``: 20 rounds of at most 5 calls, then the answer (21 model calls), 200 tool calls
and 200,000 tokens per question. The model call after the last round is asked with tools
off, and its reply is the answer (``max_tool_rounds``); ``max_steps`` bounds the model
calls of patterns that make no tool rounds alike. ``retries``: attempts of a model call
that failed for a transient reason (rate limit, timeout, server error): 3 and 5."""
PATTERN_LIMITS = {
    "max_replans": 0,
    "max_rounds": 1,
    "max_trials": 1,
    "candidates": 1,
    "samples": 1,
    "max_expansions": 1,
    "max_depth": 1,
}
"""Options of one pattern a run may lower, never raise (each bounds a question's work),
with the least value each takes."""
PATTERN_FRACTIONS = ("threshold",)
"""Options of one pattern a run sets freely within 0..1: how good an answer must be."""
ADDED_LISTS = ("approve", "deny")
"""Tool lists a run adds to, never takes from."""
TOOL_LISTS = (*ADDED_LISTS, "tools")


def run_option(description: str) -> Any:
    """A run option's field: unset by default (the graph's value), described for Studio."""
    return field(default=None, metadata={"description": description})


@dataclass(kw_only=True)
class AgentContext:
    """Per-run options for every reasoning-graphs pattern.

    Values of the wrong type are refused here, so a dev-server run fails at
    its start rather than a string of letters becoming a list of tool names.
    """

    model: str | None = field(
        default=None,
        metadata={
            "description": "Model spec: 'openai:<model>', 'local' or 'local:<path.gguf>'. "
            "Empty: the graph's model."
        },
    )
    summary_model: str | None = field(
        default=None,
        metadata={
            "description": "Model spec for the summaries that keep the prompt within the "
            "context window (a cheaper model may do). Empty: the graph's, else the run's model."
        },
    )
    max_steps: int | None = field(
        default=None,
        metadata={
            "description": "Model calls per question (in every step and trial; summaries "
            "that fit the prompt to the window are not counted) before the run must answer. "
            "May lower the graph's limit, not raise it."
        },
    )
    max_tool_rounds: int | None = field(
        default=None,
        metadata={
            "description": "Rounds of tool calls per question; the model call after the last "
            "is asked with tools off and its reply is the answer. "
            "May lower the graph's limit, not raise it."
        },
    )
    max_tool_calls_per_turn: int | None = field(
        default=None,
        metadata={
            "description": "Tool calls one model turn may make. "
            "May lower the graph's limit, not raise it."
        },
    )
    token_budget: int | None = field(
        default=None,
        metadata={
            "description": "Prompt plus completion tokens allowed per question. "
            "May lower the graph's budget, not raise it."
        },
    )
    approve: list[str] | None = field(
        default=None,
        metadata={
            "description": "Tools whose calls also need a person's approval, added to the "
            "graph's list and to dangerous tools; ['all'] for every tool."
        },
    )
    deny: list[str] | None = field(
        default=None,
        metadata={"description": "Tools blocked outright, added to the graph's list."},
    )
    tools: list[str] | None = field(
        default=None,
        metadata={
            "description": "Tools enabled for this run, among the graph's own. "
            "Empty: all of the graph's tools."
        },
    )
    mode: Mode | None = field(
        default=None,
        metadata={
            "description": "'chat' (one round of at most 5 tool calls, then the answer) or "
            "'agent' (20 rounds of 5, then the answer; 200 tool calls and 200k tokens per "
            "question): presets that only tighten the graph's limits."
        },
    )
    max_tool_calls: int | None = field(
        default=None,
        metadata={
            "description": "Tool calls per question, in every round, step and trial. "
            "May lower the graph's limit, not raise it."
        },
    )
    time_budget: int | None = field(
        default=None,
        metadata={
            "description": "Seconds of work (model calls and tool runs) per question; time "
            "spent waiting for a person does not count. May lower the graph's, not raise it."
        },
    )
    repeat_failure_limit: int | None = field(
        default=None,
        metadata={
            "description": "Consecutive rounds with the same failing call before the run "
            "stops with an explanation (default 2). May be lowered, not raised."
        },
    )
    empty_result_streak: int | None = field(
        default=None,
        metadata={
            "description": "Empty or 'not found' results in a row before the model is told "
            "to change strategy (default 3). May be lowered, not raised."
        },
    )
    stale_round_limit: int | None = field(
        default=None,
        metadata={
            "description": "Rounds that bring no new information before the model is asked "
            "to summarise and answer (default 5). May be lowered, not raised."
        },
    )
    repeat_round_limit: int | None = field(
        default=None,
        metadata={
            "description": "Rounds in a row made only of calls answered from an earlier "
            "identical call (nothing ran, nothing changed) before the model is asked to "
            "answer (default 2). May be lowered, not raised."
        },
    )
    context_strategy: ContextStrategy | None = field(
        default=None,
        metadata={
            "description": "How the prompt is kept within the model's window: 'none', "
            "'window' (last messages), 'summary', 'protective' (question and recent steps "
            "verbatim, the middle summarised) or 'hybrid' (each as the prompt grows; the "
            "default, active wherever the context window is known)."
        },
    )
    context_window: int | None = field(
        default=None,
        metadata={
            "description": "The model's context window in tokens (for 'hybrid'). Empty: what "
            "the model declares (its LangChain profile, the embedded model's n_ctx, or the "
            "context an OpenAI-compatible server reports)."
        },
    )
    context_threshold: float | None = field(
        default=None,
        metadata={
            "description": "Share of the context window a prompt may fill before it is "
            "compressed (default 0.8)."
        },
    )
    keep_messages: int | None = field(
        default=None,
        metadata={"description": "Recent messages the 'window' strategy keeps (default 20)."},
    )
    model_timeout: float | None = field(
        default=None,
        metadata={
            "description": "Seconds one model call may take before the question stops with "
            "an incomplete answer. May lower the graph's limit, not raise it."
        },
    )
    idle_timeout: float | None = field(
        default=None,
        metadata={
            "description": "Seconds a model call may send nothing, or a tool run, before the "
            "question stops with an incomplete answer (default 600). May be lowered, not raised."
        },
    )

    def __post_init__(self) -> None:
        for item in fields(self):
            value = getattr(self, item.name)
            if _is_unset(value):
                continue
            whole = item.name in BUDGETS or item.name in FREE_NUMBERS
            if whole and (not isinstance(value, int) or isinstance(value, bool)):
                raise ValueError(BAD_BUDGET.format(name=item.name, value=value))
            if item.name in CHOICES and value not in CHOICES[item.name]:
                raise ValueError(
                    BAD_CHOICE.format(name=item.name, choices=list(CHOICES[item.name]), value=value)
                )
            if item.name in TIMEOUTS and not _is_seconds(value):
                raise ValueError(BAD_SECONDS.format(name=item.name, value=value))
            least = PATTERN_LIMITS.get(item.name)
            if least is not None and not _is_count(value, least):
                raise ValueError(BAD_COUNT.format(name=item.name, least=least, value=value))
            fraction = item.name == "context_threshold" or item.name in PATTERN_FRACTIONS
            if fraction and not _is_fraction(value):
                raise ValueError(BAD_FRACTION.format(name=item.name, value=value))
            if item.name in TOOL_LISTS and (
                not isinstance(value, (list, tuple)) or not all(isinstance(n, str) for n in value)
            ):
                raise ValueError(BAD_NAMES.format(name=item.name, value=value))
            if item.name in MODEL_OPTIONS and not isinstance(value, str):
                raise ValueError(BAD_MODEL.format(name=item.name, value=value))


@dataclass(frozen=True)
class Limits:
    """Resolved limits and approval lists for one run (``None`` budgets: no limit)."""

    model: str | None = None
    max_steps: int | None = 10
    max_tool_rounds: int | None = None
    max_tool_calls_per_turn: int = 8
    token_budget: int | None = None
    max_tool_calls: int | None = None
    time_budget: int | None = None
    repeat_failure_limit: int = 2
    empty_result_streak: int = 3
    stale_round_limit: int = 5
    repeat_round_limit: int = 2
    approve: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    tools: tuple[str, ...] | None = None
    mode: Mode | None = None
    context_strategy: ContextStrategy = "hybrid"
    context_window: int | None = None
    context_threshold: float = 0.8
    keep_messages: int = 20
    summary_model: str | None = None
    model_timeout: float | None = None
    idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT

    @classmethod
    def preset(cls, mode: Mode | None) -> Limits:
        """The default limits, or ``mode``'s: what a graph built with ``mode`` starts from."""
        if mode is None:
            return cls()
        preset = {name: value for name, value in MODES[mode].items() if name in BUDGETS}
        return cls(mode=mode, **preset)

    def with_mode(self, mode: Mode | None) -> Limits:
        """These limits tightened by ``mode``'s preset; ``None`` leaves them as they are."""
        if mode is None:
            return self
        preset = {name: value for name, value in MODES[mode].items() if name in BUDGETS}
        return replace(self, mode=mode, **self._tightened(preset))

    def apply(self, context: AgentContext | dict[str, Any] | None) -> Limits:
        """These limits made no looser by the options a run's context names.

        A run's ``mode`` tightens like the budgets it presets; budgets the run
        names tighten further.
        """
        if context is None:
            return self
        if isinstance(context, dict):
            refuse_unknown_options(context, AgentContext)
            context = AgentContext(**context)
        limits = self.with_mode(context.mode)
        named = {
            item.name: getattr(context, item.name)
            for item in fields(AgentContext)
            if item.name != "mode" and not _is_unset(getattr(context, item.name))
        }  # the rest are the graph's values, as Studio leaves blank fields
        changes: dict[str, Any] = limits._tightened(
            {name: value for name, value in named.items() if name in LOWERED}
        )
        for name, value in named.items():
            if name in ADDED_LISTS:
                changes[name] = tuple(dict.fromkeys((*getattr(limits, name), *value)))
            elif name == "tools":
                changes[name] = limits._narrowed_tools(value)
            elif name not in LOWERED:
                changes[name] = value
        return replace(limits, **changes)

    def _tightened(self, budgets: dict[str, float]) -> dict[str, Any]:
        """``budgets`` as new values: each no looser than this one's (``None``: no limit)."""
        return {
            name: value if getattr(self, name) is None else min(getattr(self, name), value)
            for name, value in budgets.items()
        }

    def _narrowed_tools(self, enabled: list[str]) -> tuple[str, ...]:
        """A run's tool selection, refused if it names a tool the graph does not enable."""
        if self.tools is not None:
            outside = [name for name in enabled if name not in self.tools]
            if outside:
                raise ValueError(
                    TOOLS_NOT_IN_GRAPH.format(name="tools", names=outside, known=list(self.tools))
                )
        return tuple(enabled)


Setting = TypeVar("Setting", int, float)


def pattern_option(context: Any, name: str, built: Setting) -> Setting:
    """A pattern's option as a run's ``context`` sets it, no looser than the graph's ``built``.

    Counts in :data:`PATTERN_LIMITS` may only come down; anything else the run
    names replaces the graph's value. Values were checked when the context was made.
    """
    value = context.get(name) if isinstance(context, Mapping) else getattr(context, name, None)
    if _is_unset(value):
        return built
    return min(built, value) if name in PATTERN_LIMITS else value


def refuse_unknown_options(context: Mapping[str, Any], schema: type[AgentContext]) -> None:
    """A ``ValueError`` naming every option of ``context`` that ``schema`` lacks, and its own."""
    known = [item.name for item in fields(schema)]
    unknown = sorted(str(name) for name in context if name not in known)
    if unknown:
        raise ValueError(BAD_CONTEXT.format(names=unknown, known=known))


def _is_unset(value: Any) -> bool:
    """``None``, ``""`` and an empty list all mean "the graph's value"."""
    return value is None or (isinstance(value, (str, list, tuple)) and not value)


def _is_count(value: Any, least: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= least


def _is_seconds(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0


def _is_fraction(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and 0 < value <= 1
