"""The parameters every pattern's ``build_graph`` takes, declared and documented once.

A pattern writes only what is its own::

    @pattern_builder(context=LatsContext)
    def build_graph(
        shared: SharedArgs, *, candidates: int, exploration: float = 1.0
    ) -> CompiledStateGraph:
        \"\"\"Build the LATS graph.

        Args:
            exploration: The UCT constant.
        \"\"\"

and callers get ``build_graph(model=None, tools=None, checkpointer=None, *,
candidates=3, exploration=1.0, store=None, retry=None, **options)``, with the shared
parameters' Args lines in its docstring and its signature (``help()`` and
``inspect.signature`` show them). An option that a run may set too (``candidates``) is
declared once, in the pattern's run-option class (:mod:`reasoning_graphs.pattern_options`):
its default, its Args line and its check come from there, and the keyword only gives
its type. :func:`served` is the other face: the checkpointer-free graph that
``langgraph.json`` names, built when the server first asks for it.
"""

from __future__ import annotations

import functools
import inspect
import threading
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, TypeGuard, cast, overload

from langchain_core.language_models import BaseChatModel
from langchain_core.tools import BaseTool
from langgraph.graph import StateGraph
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import RetryPolicy

from reasoning_graphs.checkpointers import CheckpointerSpec
from reasoning_graphs.middleware import check_turns_run
from reasoning_graphs.nodes.model.setup import AgentOptions, AgentSetup, agent_setup
from reasoning_graphs.nodes.wiring.tool_loop import compile_agent
from reasoning_graphs.pattern_options import OwnOption, built_values, own_options
from reasoning_graphs.stores import StoreSpec
from reasoning_graphs.tools.builtins import server_tools
from reasoning_graphs.tools.spec import ToolSpec

Tools = Iterable[BaseTool | Callable[..., Any] | ToolSpec]

SHARED_ARGS_BEFORE = """\
model: A chat model, a model spec (``"openai:gpt-4o-mini"``, ``"local"``) or
    ``None`` to resolve the default at run time.
tools: Tools or tool specs; ``None`` for the built-in tools.
checkpointer: Where runs are saved so they can pause and resume.
    A saver, or a string naming one (see :mod:`reasoning_graphs.checkpointers`)."""
SHARED_ARGS_AFTER = """\
store: Memory that outlives a thread (Reflexion's lessons, the ``remember`` and
    ``recall`` tools): a LangGraph ``BaseStore``, or a string naming one
    (see :mod:`reasoning_graphs.stores`); the dev server brings its own.
retry: Retry policy for model calls (default: backoff on transient errors).
**options: Budgets, approval lists, block rules, the system prompt and the
    answer's ``response_format`` (see :class:`~reasoning_graphs.nodes.model.setup.AgentOptions`)."""
UNKNOWN_OPTIONS = "{builder}() takes no option {names}: its own are {own}, the rest AgentOptions'"
UNDECLARED = (
    "{builder}.build_graph must take the option {name!r} its run-option class declares, as a "
    "keyword without a default (the default is the declaration's)"
)
SECTIONS = ("Raises:", "Returns:", "Examples:")
"""Docstring sections that follow ``Args:``."""
INDENT = "    "


@dataclass
class SharedArgs:
    """What every pattern is built from, as its caller gave it (``tools`` as a list, so
    that a pattern may read them twice)."""

    model: BaseChatModel | str | None
    tools: list[BaseTool | Callable[..., Any] | ToolSpec] | None
    checkpointer: CheckpointerSpec | None
    retry: RetryPolicy | None
    options: AgentOptions
    store: StoreSpec | None = None

    def setup(self) -> AgentSetup:
        """The setup a pattern's nodes share, from these arguments."""
        return agent_setup(self.model, self.tools, self.retry, **self.options)

    def compile(self, builder: StateGraph, name: str, setup: AgentSetup) -> CompiledStateGraph:
        """``builder`` compiled as the pattern ``name`` with these arguments' checkpointer
        and store; a run's options may name the tools of ``setup``."""
        return compile_agent(builder, self.checkpointer, name, setup=setup, store=self.store)


class PatternBuilder:
    """A pattern's ``build_graph``: the shared parameters, then the pattern's own options."""

    def __init__(
        self,
        wire: Callable[..., CompiledStateGraph],
        model_turns: bool = False,
        context: type | None = None,
    ) -> None:
        functools.update_wrapper(self, wire)
        self._wire = wire
        self.model_turns = model_turns
        """Whether the pattern's model calls are turns of one conversation, around which
        the middleware's ``before_model`` and ``after_model`` hooks run."""
        declared = own_options(context) if context is not None else ()
        self._declared = declared
        own = list(inspect.signature(wire).parameters.values())[1:]
        _check_declared(wire, own, declared)
        defaults = {option.name: option.default for option in declared}
        own = [
            parameter.replace(default=defaults[parameter.name])
            if parameter.name in defaults
            else parameter
            for parameter in own
        ]
        self._own_options = frozenset(parameter.name for parameter in own)
        lines = [option.doc for option in declared]
        self.__doc__ = with_shared_args(inspect.getdoc(wire) or "", lines)
        self.__signature__ = _signature(own)

    @property
    def _pattern(self) -> str:
        """The pattern's name as its package names it (a server may load the module by path)."""
        parts = self._wire.__module__.split(".")
        return parts[-2] if len(parts) > 1 else parts[0]

    def __call__(
        self,
        model: BaseChatModel | str | None = None,
        tools: Tools | None = None,
        checkpointer: CheckpointerSpec | None = None,
        *,
        store: StoreSpec | None = None,
        retry: RetryPolicy | None = None,
        **options: Any,
    ) -> CompiledStateGraph:
        own = {name: options.pop(name) for name in self._own_options & options.keys()}
        unknown = options.keys() - AgentOptions.__optional_keys__ - AgentOptions.__required_keys__
        if unknown:
            names = ", ".join(sorted(unknown))
            own_names = ", ".join(sorted(self._own_options)) or "(none)"
            raise TypeError(
                UNKNOWN_OPTIONS.format(
                    builder=f"{self._wire.__module__}.{self._wire.__qualname__}",
                    names=names,
                    own=own_names,
                )
            )
        if not self.model_turns:
            check_turns_run(options.get("middleware", ()), self._pattern)
        tool_list = None if tools is None else list(tools)
        shared = SharedArgs(
            model, tool_list, checkpointer, retry, cast(AgentOptions, options), store
        )
        own.update(built_values(self._declared, own))
        return self._wire(shared, **own)


@overload
def pattern_builder(wire: Callable[..., CompiledStateGraph]) -> PatternBuilder: ...
@overload
def pattern_builder(
    *, model_turns: bool = False, context: type | None = None
) -> Callable[[Callable[..., CompiledStateGraph]], PatternBuilder]: ...
def pattern_builder(
    wire: Callable[..., CompiledStateGraph] | None = None,
    *,
    model_turns: bool = False,
    context: type | None = None,
) -> PatternBuilder | Callable[[Callable[..., CompiledStateGraph]], PatternBuilder]:
    """Give ``wire(shared, *, own options)`` the shared parameters (see the module docstring);
    ``model_turns``: the pattern runs the middleware's ``before_model``/``after_model`` hooks
    (a pattern that does not refuses a middleware that writes them); ``context``: the
    pattern's run-option class, which declares the options a run may set too."""
    if wire is None:
        return lambda given: PatternBuilder(given, model_turns, context)
    return PatternBuilder(wire)


def _check_declared(
    wire: Callable[..., CompiledStateGraph],
    own: list[inspect.Parameter],
    declared: tuple[OwnOption, ...],
) -> None:
    """Refuse a pattern whose ``build_graph`` keywords and run-option class disagree: every
    option the class declares is a keyword, without a default of its own."""
    keywords = {parameter.name: parameter for parameter in own}
    for option in declared:
        parameter = keywords.get(option.name)
        if parameter is None or parameter.default is not parameter.empty:
            raise TypeError(UNDECLARED.format(builder=wire.__module__, name=option.name))


def with_shared_args(doc: str, declared: Sequence[str] = ()) -> str:
    """``doc`` with the shared parameters' lines around the pattern's own in ``Args:``, the
    ``declared`` lines (of the options its run-option class declares) first among its own."""
    lines = doc.splitlines()
    before = [INDENT + line for line in [*SHARED_ARGS_BEFORE.splitlines(), *declared]]
    after = [INDENT + line for line in SHARED_ARGS_AFTER.splitlines()]
    if "Args:" in lines:
        start = lines.index("Args:") + 1
        end = next((i for i in range(start, len(lines)) if not lines[i].strip()), len(lines))
        return "\n".join([*lines[:start], *before, *lines[start:end], *after, *lines[end:]])
    at = next((i for i, line in enumerate(lines) if line in SECTIONS), len(lines))
    return "\n".join([*lines[:at], "Args:", *before, *after, "", *lines[at:]])


def _signature(own: list[inspect.Parameter]) -> inspect.Signature:
    """The signature callers see: the shared parameters around the pattern's own."""
    shared = inspect.signature(PatternBuilder.__call__).parameters.values()
    positional = [p for p in shared if p.kind is p.POSITIONAL_OR_KEYWORD and p.name != "self"]
    keywords = [p for p in shared if p.kind is not p.POSITIONAL_OR_KEYWORD]  # store, retry, …
    return inspect.Signature([*positional, *own, *keywords], return_annotation=CompiledStateGraph)


SERVED_MARK = "reasoning_graphs_served_factory"
"""The attribute that marks a factory :func:`served` made."""


def served(build: Callable[..., CompiledStateGraph]) -> Callable[[], CompiledStateGraph]:
    """The factory of the checkpointer-free graph that ``langgraph.json`` names.

    A plain function of no arguments, the one form every engine reads (LangGraph
    Server and ``langgraph dev`` call it per run, Aegra once, after reading its type
    hints). It builds the pattern's graph with
    :func:`~reasoning_graphs.tools.builtins.server_tools` (a folder per thread) on
    first use, so importing a pattern's ``graph`` module builds nothing, and marks it
    served: its runs may name only the models the deployment allows, whichever engine
    starts them (:mod:`reasoning_graphs.served_models`).
    """
    built: list[CompiledStateGraph] = []
    lock = threading.Lock()

    def graph() -> CompiledStateGraph:
        """The served graph, built on the first call."""
        with lock:
            if not built:
                compiled = build(tools=server_tools())
                compiled.served = True  # type: ignore[attr-defined]  # a CheckedGraph's flag
                built.append(compiled)
            return built[0]

    setattr(graph, SERVED_MARK, True)
    return graph


def is_served_factory(value: Any) -> TypeGuard[Callable[[], CompiledStateGraph]]:
    """Whether ``value`` is a factory :func:`served` made (an engine's registry holds it)."""
    return callable(value) and getattr(value, SERVED_MARK, False) is True
