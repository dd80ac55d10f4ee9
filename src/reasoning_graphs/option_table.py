"""Every shared option, declared once: what it means, its types, its default and its bound.

The classes that use the options are derived from this table, not written beside
it: the run-option schema (:class:`~reasoning_graphs.context.AgentContext`, and
:class:`~reasoning_graphs.context.ReactLoopContext` for the loop's own), the
build options (:class:`~reasoning_graphs.nodes.model.setup.AgentOptions`), a run's
resolved limits (:class:`~reasoning_graphs.context.Limits`) and the command line's
flags (:mod:`reasoning_graphs.cli.option_flags`). The three classes are written out
in :mod:`reasoning_graphs.option_classes` by :mod:`reasoning_graphs.option_codegen`
so that type checkers see them; a test keeps that file equal to what this table gives.

An option with a ``bound`` is a run option (the bound says how a run may change it);
one with a ``build`` type is a build option; one with a ``limit`` type is a field of
the resolved limits, with ``default`` as the graph's value when the build names none.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from reasoning_graphs.option_bounds import (
    BOUND,
    AddsTools,
    AnswerShape,
    Bound,
    Fraction,
    FreeCount,
    LowerOnly,
    ModelSpec,
    NarrowsTools,
    OneOf,
    OnOnly,
    PlainName,
    RenamedTo,
)

Mode = Literal["chat", "agent"]
ContextStrategy = Literal["none", "window", "summary", "protective", "hybrid"]
StepFormat = Literal["free", "structured"]
"""How a ReAct step is written: ``free``, the pattern's own way (native tool calls in
``react``, Thought/Action text in ``react_text``), or ``structured``, a typed reply
(:mod:`~reasoning_graphs.nodes.steps.typed_step`)."""

DEFAULT_MEMORY_USER = "default"
"""Whose memory a run uses when neither the graph nor the run names a user."""

DEFAULT_IDLE_TIMEOUT = 600.0
"""Seconds without any model or tool activity before a question stops (10 minutes)."""


@dataclass(frozen=True)
class Flag:
    """How the command line gives an option: ``--`` and its name with dashes, unless
    ``name`` says otherwise; ``note`` is what the flag adds to the option's meaning."""

    name: str | None = None
    metavar: str | None = None
    note: str = ""


@dataclass(frozen=True)
class Option:
    """One option and every place it appears.

    Attributes:
        name: Its name, the same everywhere.
        about: What it means, said once (the run schema adds what a run may do with it,
            from its bound; the build docs add its default).
        build: Its type as a build option; ``None``: not one.
        run: Its type as a run option (unset means ``None``), when it has a ``bound``;
            ``None``: the same as ``build``'s, without ``None``.
        bound: How a run may change it; ``None``: a run cannot.
        limit: Its type in the resolved limits; ``None``: not a limit.
        default: The graph's value when the build names none.
        default_text: How the build docs say the default, when ``default`` is not it.
        build_note: What the build option adds to ``about`` (other forms, ``None``).
        loop: A run option of the ReAct loop only (react, react_text, plan_react).
        flag: How the command line gives it; ``None``: it does not.
    """

    name: str
    about: str
    build: str | None = None
    run: str | None = None
    bound: Bound | None = None
    limit: str | None = None
    default: Any = None
    default_text: str = ""
    build_note: str = ""
    loop: bool = False
    flag: Flag | None = None

    @property
    def run_type(self) -> str:
        """Its type as a run option."""
        if self.run is not None:
            return self.run
        assert self.build is not None, self.name
        return self.build.removesuffix(" | None")

    @property
    def run_description(self) -> str:
        """What Studio shows for it: its meaning, and what a run may do with it."""
        return f"{self.about}{self.bound.note if self.bound else ''}"

    @property
    def build_description(self) -> str:
        """What the build docs say of it: its meaning and its default."""
        default = self.default_text or (
            f"Default {self.default!r}." if self.default not in (None, ()) else ""
        )
        return " ".join(part for part in (self.about, self.build_note, default) if part)


OPTIONS: tuple[Option, ...] = (
    Option(
        "model",
        "Model spec: '<provider>:<model>' for any provider LangChain's init_chat_model knows "
        "and whose package is installed (e.g. 'openai:gpt-4o-mini', with $OPENAI_BASE_URL "
        "for an OpenAI-compatible server; 'anthropic:<model>', 'ollama:<model>'), 'local' "
        "(the embedded SmolLM2-135M) or 'local:<path.gguf>'.",
        run="str",
        bound=ModelSpec(),
        limit="str | None",
        flag=Flag(),
    ),
    Option(
        "summary_model",
        "The model that writes the summaries keeping the prompt within the context window "
        "(a cheaper model may do), as a model spec.",
        build_note="Or a chat model.",
        build="BaseChatModel | str | None",
        run="str",
        bound=ModelSpec(),
        limit="str | None",
        default_text="Default: the run's model.",
    ),
    Option(
        "max_model_calls",
        "Model calls per question, in every step and trial (the summaries that fit a prompt "
        "to the window are not counted), before an incomplete answer.",
        build_note="None: no limit.",
        build="int | None",
        bound=LowerOnly(least=1),
        limit="int | None",
        default=10,
        flag=Flag(),
    ),
    Option(
        "max_tool_rounds",
        "Rounds of tool calls per question; the model call after the last is asked with tools "
        "off and its reply is the answer.",
        build_note="None: no limit.",
        build="int | None",
        bound=LowerOnly(least=0),
        limit="int | None",
    ),
    Option(
        "max_tool_calls_per_turn",
        "Tool calls one model turn may make; extra calls are refused.",
        build="int",
        bound=LowerOnly(least=0),
        limit="int",
        default=8,
    ),
    Option(
        "token_budget",
        "Prompt plus completion tokens allowed per question.",
        build_note="None: no limit.",
        build="int | None",
        bound=LowerOnly(least=1),
        limit="int | None",
        flag=Flag(),
    ),
    Option(
        "approve",
        "Tools whose calls also need a person's approval, besides dangerous ones (['all']: "
        "every tool).",
        build_note="Also a mapping in the interrupt_on shape of LangChain's "
        "HumanInTheLoopMiddleware: per tool True, False or its allowed_decisions, description "
        "and when (see reasoning_graphs.tools.asking).",
        build="Sequence[str] | Mapping[str, Any]",
        run="list[str]",
        bound=AddsTools(),
        limit="tuple[str, ...]",
        default=(),
        flag=Flag(metavar="TOOL"),
    ),
    Option(
        "deny",
        "Tools blocked outright.",
        build="Sequence[str]",
        run="list[str]",
        bound=AddsTools(),
        limit="tuple[str, ...]",
        default=(),
    ),
    Option(
        "tools",
        "Tools enabled, among the graph's own. Empty: all of the graph's tools.",
        run="list[str]",
        bound=NarrowsTools(),
        limit="tuple[str, ...] | None",
    ),
    Option(
        "mode",
        "'chat' (one round of at most 5 tool calls, then the answer) or 'agent' (20 rounds "
        "of 5, then the answer; 200 tool calls and 200k tokens per question): presets that "
        "only tighten the limits, and set how often a failed model call is tried again.",
        build="Mode | None",
        bound=OneOf(("chat", "agent")),
        limit="Mode | None",
        flag=Flag(note=" (kept with the thread)"),
    ),
    Option(
        "max_tool_calls",
        "Tool calls per question, in every round, step and trial.",
        build_note="None: no limit.",
        build="int | None",
        bound=LowerOnly(least=0),
        limit="int | None",
    ),
    Option(
        "time_budget",
        "Seconds of work (model calls and tool runs) per question; time spent waiting for a "
        "person does not count.",
        build_note="None: no limit.",
        build="int | None",
        bound=LowerOnly(least=1),
        limit="int | None",
        flag=Flag(metavar="SECONDS"),
    ),
    Option(
        "repeat_failure_limit",
        "Consecutive rounds with the same failing call before the run stops with an explanation.",
        build="int",
        bound=LowerOnly(least=1),
        limit="int",
        default=2,
    ),
    Option(
        "empty_result_streak",
        "Empty or 'not found' results in a row before the model is told to change strategy.",
        build="int",
        bound=LowerOnly(least=1),
        limit="int",
        default=3,
    ),
    Option(
        "stale_round_limit",
        "Rounds that bring no new information before the model is asked to summarise and answer.",
        build="int",
        bound=LowerOnly(least=1),
        limit="int",
        default=5,
    ),
    Option(
        "repeat_round_limit",
        "Rounds in a row made only of pure tools' calls answered from an earlier identical "
        "call (nothing ran, nothing could change) before the model's next call is made with "
        "tools off, for its answer.",
        build="int",
        bound=LowerOnly(least=1),
        limit="int",
        default=2,
    ),
    Option(
        "context_strategy",
        "How the prompt is kept within the model's window: 'none', 'window' (last messages), "
        "'summary', 'protective' (question and recent steps verbatim, the middle summarised) "
        "or 'hybrid' (each as the prompt grows; active wherever the context window is known).",
        build="ContextStrategy",
        bound=OneOf(("none", "window", "summary", "protective", "hybrid")),
        limit="ContextStrategy",
        default="hybrid",
        flag=Flag(name="--context", metavar="STRATEGY"),
    ),
    Option(
        "context_window",
        "The model's context window in tokens (for 'hybrid'); by default what the model "
        "declares (its LangChain profile, the embedded model's n_ctx, or the context an "
        "OpenAI-compatible server reports).",
        build="int | None",
        bound=FreeCount(),
        limit="int | None",
        flag=Flag(metavar="N"),
    ),
    Option(
        "context_threshold",
        "Share of the context window a prompt may fill before it is compressed.",
        build="float",
        bound=Fraction(),
        limit="float",
        default=0.8,
    ),
    Option(
        "keep_messages",
        "Recent messages the 'window' strategy keeps.",
        build="int",
        bound=FreeCount(),
        limit="int",
        default=20,
    ),
    Option(
        "model_timeout",
        "Seconds one model call may take before the question stops with an incomplete answer.",
        build_note="None: no limit.",
        build="float | None",
        bound=LowerOnly(seconds=True),
        limit="float | None",
        flag=Flag(metavar="SECONDS"),
    ),
    Option(
        "idle_timeout",
        "Seconds a model call may send nothing, or a tool run, before the question stops "
        "with an incomplete answer.",
        build_note="None: no limit.",
        build="float | None",
        bound=LowerOnly(seconds=True),
        limit="float | None",
        default=DEFAULT_IDLE_TIMEOUT,
        flag=Flag(metavar="SECONDS"),
    ),
    Option(
        "verify",
        "After the answer, one more model call lists its claims, each backed by a quote of a "
        "tool observation (checked) or inferred.",
        build="bool",
        bound=OnOnly(),
        limit="bool",
        default=False,
        flag=Flag(note=" (kept with the thread)"),
    ),
    Option(
        "memory_user",
        "Whose memory runs read and write in the store (Reflexion's lessons, the remember and "
        "recall tools): letters, digits, '_', '@' or '-'. A server that authenticates users "
        "uses the signed-in user instead.",
        build="str",
        bound=PlainName(),
        limit="str",
        default=DEFAULT_MEMORY_USER,
    ),
    Option(
        "response_format",
        "The shape of the final answer: once the question is answered, one more model call "
        "writes the answer in it, kept as structured_response: an object's JSON schema (a "
        "run's is ignored by a graph built with a response format of its own).",
        build_note=(
            "Or a Pydantic model class, a TypedDict class, a provider's {'type': "
            "'json_schema', ...} dict, or LangChain's ToolStrategy or ProviderStrategy of one: "
            "then the loop's own calls give it, as create_agent's do."
        ),
        build="AnswerFormat | None",
        run="dict[str, Any]",
        bound=AnswerShape(),
        limit="dict[str, Any] | None",
    ),
    Option(
        "max_steps",
        "Deprecated: the former name of max_model_calls, read as it (with a "
        "DeprecationWarning) for one more release.",
        build="int | None",
        bound=RenamedTo("max_model_calls"),
        flag=Flag(),
    ),
    Option(
        "tool_timeout",
        "Seconds before a tool call is abandoned, for every tool whose spec sets no timeout. "
        "None: no limit.",
        build="float | None",
        default_text="Default 30.",
    ),
    Option(
        "max_observation_chars",
        "Length beyond which a tool's result is cut, for every tool whose spec sets none.",
        build="int",
        default_text="Default 4000.",
    ),
    Option("rules", "Checks that may block a call before anyone is asked.", build="Sequence[Rule]"),
    Option(
        "system_prompt",
        "The model's instructions, above each step's own (patterns bring their own default).",
        build="str",
    ),
    Option(
        "memory_tools",
        "Offer the model remember and recall, which keep notes in the run's store across "
        "threads (only offered when the run has a store).",
        build="bool",
        default_text="Default False.",
    ),
    Option(
        "middleware",
        "LangChain AgentMiddleware, first outermost, as create_agent takes it: its "
        "wrap_model_call hooks wrap every model call the pattern makes, its wrap_tool_call "
        "hooks every tool run (inside the approval boundary), its before_model/after_model "
        "hooks each model turn, its before_agent/after_agent hooks each question's start "
        "and end; its tools join the graph's and its state fields the pattern's (see "
        "reasoning_graphs.middleware).",
        build="Sequence[AgentMiddleware]",
    ),
    Option(
        "state_schema",
        "A state class (a TypedDict, as create_agent takes it) whose fields join the pattern's "
        "state and input, as a middleware's state_schema does.",
        build="type",
    ),
    Option(
        "context_schema",
        "The class of what a run's context carries for the user's own code (middleware, "
        "tools: runtime.context), as create_agent takes it; the run options of ours then "
        "come from the keys of that context that name them.",
        build="type",
    ),
    Option(
        "transformers",
        "Stream transformer factories, each called with a scope, as create_agent takes them: "
        "they join the graph's v3 stream (stream_events(version='v3')) after its own and its "
        "middleware's (see reasoning_graphs.nodes.model.stream_transformers).",
        build="Sequence[TransformerFactory]",
    ),
    Option(
        "step_format",
        "How each step is written: 'free' (the pattern's own way: native tool calls in react, "
        "Thought/Action text in react_text) or 'structured' (a typed reply with thought, "
        "action, input, confidence and needs_more_info).",
        run="StepFormat",
        bound=OneOf(("free", "structured")),
        loop=True,
        flag=Flag(note=" (react, react_text and plan_react; kept with the thread)"),
    ),
    Option(
        "reflect_every",
        "Tool rounds between the model's reflections on what the latest observations gave "
        "(shown in its next prompt).",
        build_note="None: no reflections.",
        build="int | None",
        bound=LowerOnly(least=1),
        loop=True,
        flag=Flag(metavar="N", note=" (react, react_text and plan_react; kept with the thread)"),
    ),
    Option(
        "reflect_on_failure",
        "Reflect after a round with a failed call (a tool error, a refused or invalid call, "
        "a timeout).",
        build="bool",
        bound=OnOnly(),
        loop=True,
        default_text="Default False.",
        flag=Flag(note=" (react, react_text and plan_react)"),
    ),
)

OPTION: dict[str, Option] = {option.name: option for option in OPTIONS}


def run_field(name: str) -> Any:
    """The run-option field of option ``name``: unset by default (the graph's value),
    described for Studio, and bounded."""
    option = OPTION[name]
    return field(
        default=None, metadata={"description": option.run_description, BOUND: option.bound}
    )


def limit_field(name: str) -> Any:
    """The resolved-limits field of option ``name``, with the graph's default."""
    option = OPTION[name]
    assert option.limit is not None, name
    hashable = not option.limit.startswith("dict")  # a frozen dataclass hashes its fields
    return field(default=option.default, hash=None if hashable else False)
