"""``run`` and ``resume``: drive a thread to its end, asking the person at each approval.

A thread keeps what a later command needs to go on as it began: the pattern,
model and limits of its graph, and the folders its tools work in. How a
command ended is its exit code (:mod:`reasoning_graphs.cli.exits`) and the
thread's status in the index, written against the checkpoint it ended on.
"""

from __future__ import annotations

import argparse
import inspect
import json
import logging
import os
import sys
import uuid
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any, TextIO, cast

from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command, Interrupt, StateSnapshot

from reasoning_graphs.cli import ctrl_c, exits
from reasoning_graphs.cli.endings import closing_note, nothing_read
from reasoning_graphs.cli.errors import UsageError
from reasoning_graphs.cli.option_flags import (
    FLAGGED,
    given_options,
    given_pattern_options,
    pattern_options,
)
from reasoning_graphs.cli.prompting import Mode, NoAnswer, answer, automatic
from reasoning_graphs.cli.render import Printer, answer_nodes
from reasoning_graphs.cli.status import (
    FAILED,
    INTERRUPTED,
    checkpoint_id,
    this_process,
    waiting_for,
)
from reasoning_graphs.cli.status_line import StatusLine
from reasoning_graphs.cli.store import Store
from reasoning_graphs.cli.threads import ThreadRecord
from reasoning_graphs.cli.user_graphs import graph_reference, is_graph_reference, load_graph
from reasoning_graphs.context import AgentContext
from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.models.resolve import check_available, default_model_spec, resolve_model
from reasoning_graphs.nodes.grounding.report import final_answer
from reasoning_graphs.option_bounds import renamed_options
from reasoning_graphs.question import latest_request, question_number
from reasoning_graphs.response_format import as_json, check_json_schema
from reasoning_graphs.review import ApprovalError, is_approval_request, parse_decisions
from reasoning_graphs.state import GroundingReport, Outcome
from reasoning_graphs.thread_lock import hold
from reasoning_graphs.tools.builtins import DOCS_ENV, default_tools, workspace_folder
from reasoning_graphs.tools.spec import ToolSpec

DEFAULT_PATTERN = "react"

logger = logging.getLogger(__name__)

NO_THREAD = "No thread {thread_id!r} in {db}; `reasoning-graphs threads` lists them."
UNKNOWN_THREAD = (
    "No thread {thread_id!r} in {db}; `reasoning-graphs threads` lists them, "
    "and --new-thread starts one by this id."
)
THREAD_EXISTS = "Thread {thread_id!r} already exists; leave out --new-thread to ask it a follow-up."
NEW_THREAD_ID = "--new-thread starts the thread that --thread names: give --thread ID."
EMPTY_THREAD_ID = "--thread needs a thread id."
WAITING_NOTE = (
    "Thread {thread_id} is waiting for a decision or an answer; "
    "give it with `reasoning-graphs resume {thread_id}`."
)
LEFT_HINT = (
    "{calls} may already have run, so --approve-all leaves the decision to a person: "
    "decide at the prompt of `reasoning-graphs resume {thread_id}` or with "
    "`reasoning-graphs resume {thread_id} --decisions '{decisions}'` "
    "(approve runs it again, respond tells the model what happened)."
)
FINISHED = "Thread {thread_id} has finished; nothing to resume."
RESUMING = "Thread {thread_id} ({pattern}), on: {question}"
BAD_DECISIONS = "--decisions must be JSON: a list of decisions or an object keyed by call id."
UNFIT_DECISIONS = "--decisions do not answer the pending calls: {error}"
NULL_DECISIONS = "--decisions null answers nothing; give the value the paused run asks for."
BAD_TRACE = "cannot write the trace file {path}: {error}"
NO_DECISIONS_NEEDED = "{flag} given, but thread {thread_id} waits for no decision or answer."
ANSWER_IS_NO_DECISION = (
    "--answer answers a question; thread {thread_id} waits for approval: "
    "give --decisions, --approve-all or --reject-all, or decide at the prompt."
)
PATTERN_FLAG = (
    "--{flag} sets up one of our patterns; a graph of your own brings its own model, "
    "tools and limits."
)
PATTERN_FLAGS = (
    "model",
    "workspace",
    "docs",
    "mcp",
    "no_builtin_tools",
    "max_model_calls",
    "token_budget",
    "time_budget",
    "model_timeout",
    "idle_timeout",
    "mode",
    "approve",
    "context",
    "context_window",
    "verify",
    "schema",
    "step_format",
    *pattern_options(),
    "reflect_every",
    "reflect_on_failure",
    "memory",
)
OWN_OPTIONS = ("step_format", *pattern_options())
"""Flags that set an option only some of our patterns take."""
NOT_AN_OPTION = "--{flag} is no option of the {pattern} pattern."
LOOP_OPTIONS = ("reflect_every", "reflect_on_failure")
"""Flags that set an option of the ReAct loop: only the patterns whose turn is it take them."""
BAD_SCHEMA_FILE = "--schema {path}: {why}"
BUILD_FLAGS = tuple(name for name in FLAGGED if name != "model")
"""The flags whose options the thread's graph is built with (``--model`` picks the model)."""
REPLACED = (
    "The MCP server {server!r} offers {tool}: it takes the place of the built-in {tool} "
    "(--no-builtin-tools leaves out every built-in tool)."
)
SUPPORT_TOOLS = frozenset({"read_observation"})
"""Built-in tools a run keeps with ``--no-builtin-tools``: they do none of the task's work
(``read_observation`` reads back a result that was cut)."""
OWN_MODEL = ""
"""The model a thread of a user's graph records: the graph brings its own."""


def run(store: Store, args: argparse.Namespace) -> int:
    """Ask ``args.question`` on a new thread, or on ``--thread`` as its next question."""
    given = given_options(args, BUILD_FLAGS)
    record = _thread_to_continue(store, args)
    if args.graph:
        pattern = graph_reference(args.graph)
    else:
        pattern = args.pattern or (record.pattern if record else DEFAULT_PATTERN)
    _refuse_pattern_flags(args, pattern)
    model_spec = (
        OWN_MODEL
        if is_graph_reference(pattern)
        else args.model or (record.model if record else None) or default_model_spec()
    )
    thread_id = args.thread or uuid.uuid4().hex[:12]
    flags = {
        **given,
        **given_pattern_options(args),
        **({"memory_user": args.memory, "memory_tools": True} if args.memory else {}),
        "response_format": None if args.schema is None else read_schema(args.schema),
    }
    limits = {
        **(_saved_limits(record)),
        **{key: value for key, value in flags.items() if value is not None},
    }
    workspace, docs = _folders(args, record, pattern)
    tools = ToolChoice(workspace, docs, _mcp_file(args, record), _builtins(args, record))
    graph, notes = _graph(store, pattern, model_spec, tools, limits)
    # one process at a time on the thread, from reading it to the run's end
    with hold(store.checkpointer, thread_id, wait=args.wait):
        config: RunnableConfig = {"configurable": {"thread_id": thread_id}}
        if graph.get_state(config).interrupts:
            raise UsageError(WAITING_NOTE.format(thread_id=thread_id))
        with _printer(args, pattern, thread_id) as printer:
            printer.notice(
                f"Thread {thread_id}",
                thread_id=thread_id,
                pattern=pattern,
                model=model_spec,
                workspace=workspace,
            )
            for note in notes:
                printer.notice(note)
            store.threads.save(
                thread_id,
                pattern=pattern,
                model=model_spec,
                question=args.question,
                status="running",
                limits=limits,
                workspace=workspace,
                docs=docs,
                owner=this_process(),
                mcp=tools.mcp,
                builtins=tools.builtins,
            )
            payload = {"messages": [HumanMessage(args.question)]}
            return _drive(store, graph, payload, thread_id, printer, args)


def resume(store: Store, args: argparse.Namespace) -> int:
    """Continue a thread that did not end: answer its pending approval, or run on from its
    last saved step."""
    config: RunnableConfig = {"configurable": {"thread_id": args.thread_id}}
    if store.latest(args.thread_id) is None:
        raise UsageError(NO_THREAD.format(thread_id=args.thread_id, db=store.label))
    record = store.threads.get(args.thread_id)
    pattern = record.pattern if record else DEFAULT_PATTERN
    _refuse_pattern_flags(args, pattern)
    model_spec = record.model if record else default_model_spec()
    workspace, docs = _folders(args, record, pattern)
    tools = ToolChoice(workspace, docs, _mcp_file(args, record), _builtins(args, record))
    graph, notes = _graph(store, pattern, model_spec, tools, _saved_limits(record))
    with hold(store.checkpointer, args.thread_id, wait=args.wait):
        snapshot = graph.get_state(config)
        decisions = _given_resume(args, snapshot.interrupts)
        with _printer(args, pattern, args.thread_id) as printer:
            question = _latest_question(snapshot, record)
            printer.notice(
                RESUMING.format(thread_id=args.thread_id, pattern=pattern, question=question),
                thread_id=args.thread_id,
                pattern=pattern,
                question=question,
            )
            for note in notes:
                printer.notice(note)
            printer.expect(_proposed_calls(snapshot))
            if not snapshot.tasks:  # nothing pending, not even a finished step left unsaved
                printer.notice(FINISHED.format(thread_id=args.thread_id))
                _close(printer, args, args.thread_id, "answered")
                return exits.ANSWERED
            if record is not None:
                store.threads.started(
                    args.thread_id,
                    owner=this_process(),
                    workspace=workspace,
                    docs=docs,
                    mcp=tools.mcp,
                    builtins=tools.builtins,
                )
            if decisions is not None:
                resume: Command[Any] = Command(resume=decisions)
                return _drive(store, graph, resume, args.thread_id, printer, args)
            # run on from the last saved step, once the person answered what it waits for
            pending = snapshot.interrupts
            return _drive(store, graph, None, args.thread_id, printer, args, pending)


def _latest_question(snapshot: StateSnapshot, record: ThreadRecord | None) -> str:
    """The question the thread works on: its latest person's message, else the index's."""
    asked = latest_request(snapshot.values.get("messages") or [])
    return asked or (record.question if record is not None else "")


def _proposed_calls(snapshot: StateSnapshot) -> list[Mapping[str, Any]]:
    """The calls a resumed thread may settle, proposed before this process: its latest model
    turn's and those its pending approvals list (a plan step's, in a subgraph)."""
    messages = snapshot.values.get("messages") or []
    latest = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
    calls: list[Mapping[str, Any]] = list(latest.tool_calls) if latest is not None else []
    for item in snapshot.interrupts:
        if is_approval_request(item.value):
            calls.extend(item.value["calls"])
    return calls


def _thread_to_continue(store: Store, args: argparse.Namespace) -> ThreadRecord | None:
    """The index's record of the thread ``--thread`` names (``None``: a new thread).

    A follow-up goes only to a thread that exists, and ``--new-thread`` starts
    only one that does not: a mistyped id never becomes a fresh conversation,
    and a new one never joins another's.
    """
    if args.thread is None:
        if args.new_thread:
            raise UsageError(NEW_THREAD_ID)
        return None
    if not args.thread:
        raise UsageError(EMPTY_THREAD_ID)
    record = store.threads.get(args.thread)
    exists = record is not None or store.latest(args.thread) is not None
    if exists and args.new_thread:
        raise UsageError(THREAD_EXISTS.format(thread_id=args.thread))
    if not exists and not args.new_thread:
        raise UsageError(UNKNOWN_THREAD.format(thread_id=args.thread, db=store.label))
    return record


def _refuse_pattern_flags(args: argparse.Namespace, pattern: str) -> None:
    """A flag that sets up our patterns, given for a user's graph, is a usage error:
    silently ignored, it would promise a limit or a folder the graph never gets."""
    if not is_graph_reference(pattern):
        return
    for flag in PATTERN_FLAGS:
        if getattr(args, flag, None) is not None:
            raise UsageError(PATTERN_FLAG.format(flag=flag.replace("_", "-")))


def _folders(
    args: argparse.Namespace, record: ThreadRecord | None, pattern: str
) -> tuple[str | None, str | None]:
    """The workspace and docs folder, absolute: the flags, else the thread's own, else (on
    a new thread) ``$REASONING_GRAPHS_WORKSPACE`` or the current folder and
    ``$REASONING_GRAPHS_DOCS``. A user's graph brings its own tools: it has neither."""
    if is_graph_reference(pattern):
        return None, None
    workspace = args.workspace or (record.workspace if record else None)
    docs = args.docs or (record.docs if record else os.environ.get(DOCS_ENV) or None)
    return str(workspace_folder(workspace)), str(workspace_folder(docs)) if docs else None


def _mcp_file(args: argparse.Namespace, record: ThreadRecord | None) -> str | None:
    """The MCP servers file, absolute: ``--mcp``, else the thread's own (a resumed thread
    gets the tools its pending calls were made with)."""
    given = getattr(args, "mcp", None)
    if given is not None:
        return str(Path(given).expanduser().resolve())
    return record.mcp if record else None


def _builtins(args: argparse.Namespace, record: ThreadRecord | None) -> bool:
    """Whether the run gets the built-in tools: not with ``--no-builtin-tools``, else as the
    thread's earlier runs did."""
    if getattr(args, "no_builtin_tools", False):
        return False
    return record is None or record.builtins is not False


def read_schema(path: Path) -> dict[str, Any]:
    """The JSON schema in the file ``--schema`` names; a :class:`UsageError` that says what is
    wrong with it otherwise."""
    try:
        schema = json.loads(path.read_text(encoding="utf-8"))
        return check_json_schema(schema)
    except OSError as error:
        raise UsageError(BAD_SCHEMA_FILE.format(path=path, why=error.strerror or error)) from None
    except ValueError as error:  # not JSON, or no JSON schema of an object
        raise UsageError(BAD_SCHEMA_FILE.format(path=path, why=error)) from None


def _saved_limits(record: ThreadRecord | None) -> dict[str, Any]:
    """The limits a thread's record keeps, each under its current name (a record an
    earlier release saved may hold ``max_steps``)."""
    renamed = renamed_options(AgentContext)
    return {
        renamed.get(name, name): value for name, value in (record.limits if record else {}).items()
    }


@dataclass(frozen=True)
class ToolChoice:
    """The tools a thread's runs get: the built-in ones in these folders (or none), and those
    of the MCP servers in ``mcp``."""

    workspace: str | None
    docs: str | None
    mcp: str | None
    builtins: bool


def _graph(
    store: Store,
    pattern: str,
    model_spec: str,
    tools: ToolChoice,
    limits: dict[str, Any] | None = None,
) -> tuple[CompiledStateGraph, list[str]]:
    """The pattern's graph with ``limits`` as its build options, or the user's graph that
    ``pattern`` names (:mod:`~reasoning_graphs.cli.user_graphs`); with the notes a person
    should read before the run (a built-in tool a server's took the place of).

    The CLI owns the graph, so its flags set the graph's own limits: run
    options could only lower them. The MCP servers' sessions close with ``store``,
    when the command ends. A thread started with ``--memory`` (its limits name a
    ``memory_user``) gets the store beside its checkpoints.
    """
    if is_graph_reference(pattern):
        return load_graph(pattern, store.checkpointer), []
    try:
        builder = graph_builder(pattern)
        _refuse_options_not_taken(builder, pattern, limits or {})
        model = resolve_model(model_spec)
        check_available(model)
        specs, notes = _tools(store, tools)
        memory = store.memory() if (limits or {}).get("memory_user") else None
        graph = builder(
            model=model,
            tools=specs,
            checkpointer=store.checkpointer,
            store=memory,
            **(limits or {}),
        )
        return graph, notes
    except (ValueError, RuntimeError, OSError, ImportError) as error:
        raise UsageError(str(error)) from error


def _tools(store: Store, choice: ToolChoice) -> tuple[list[ToolSpec], list[str]]:
    """The run's tools: the MCP servers' (open until the command ends), and the built-in
    ones the choice keeps and no server tool of the same name replaces; with a note for
    each built-in so replaced."""
    builtins = default_tools(choice.workspace, choice.docs)
    if not choice.builtins:
        builtins = [spec for spec in builtins if spec.name in SUPPORT_TOOLS]
    if choice.mcp is None:
        return builtins, []
    from reasoning_graphs.tools.mcp import McpTools  # the optional mcp extra

    served = store.resources.enter_context(McpTools(choice.mcp))
    offered = {spec.name for spec in served}
    notes = [
        REPLACED.format(tool=spec.name, server=served.server_of(spec.name))
        for spec in builtins
        if spec.name in offered
    ]
    kept = [spec for spec in builtins if spec.name not in offered]
    return [*kept, *served], notes


def _refuse_options_not_taken(
    builder: Callable[..., Any], pattern: str, options: Mapping[str, Any]
) -> None:
    """A flag for an option the pattern does not take (``--step-format`` for ``rewoo``) is a
    usage error, not a failure of the build."""
    takes = inspect.signature(builder).parameters
    for name in OWN_OPTIONS:
        if options.get(name) is not None and name not in takes:
            flag = name.replace("_", "-")
            raise UsageError(NOT_AN_OPTION.format(flag=flag, pattern=pattern))
    run_options = {item.name for item in fields(PATTERNS[pattern].load_context())}
    for name in LOOP_OPTIONS:
        if options.get(name) and name not in run_options:
            flag = name.replace("_", "-")
            raise UsageError(NOT_AN_OPTION.format(flag=flag, pattern=pattern))


@contextmanager
def _printer(args: argparse.Namespace, pattern: str, thread_id: str) -> Iterator[Printer]:
    """The run's printer, with the ``--trace`` file open while it runs."""
    trace = _open_trace(args.trace) if args.trace else None
    try:
        with _status_line(args) as status:
            printer = Printer(
                as_json=args.json,
                answer_nodes=answer_nodes(pattern),
                quiet=args.quiet,
                trace=trace,
                trace_fields={"thread_id": thread_id},
                status=status,
            )
            try:
                yield printer
            finally:
                printer.release()
    finally:
        if trace is not None:
            trace.close()


@contextmanager
def _status_line(args: argparse.Namespace) -> Iterator[StatusLine]:
    """The status line on stderr, which a forced exit after Ctrl-C erases too."""
    enabled = False if args.json else None  # JSON lines on a terminal are left unmixed
    with StatusLine(sys.stderr, enabled=enabled, every_s=args.progress_every) as status:
        ctrl_c.clear_line = status.stop
        try:
            yield status
        finally:
            ctrl_c.clear_line = None


def _open_trace(path: Path) -> TextIO:
    """The trace file, appended to so that a resume continues the run's trace."""
    try:
        return path.open("a", encoding="utf-8")
    except OSError as error:
        raise UsageError(BAD_TRACE.format(path=path, error=error)) from error


def _decision_mode(args: argparse.Namespace) -> Mode:
    if args.approve_all:
        return "approve"
    return "reject" if args.reject_all else "ask"


def _parse_decisions(text: str, request: Any) -> Any:
    """The ``--decisions`` value, checked before it reaches the graph.

    A value that does not answer the request is refused here, leaving the
    thread as it was: LangGraph fails on ``Command(resume=None)`` itself.
    """
    try:
        value = json.loads(text)
    except json.JSONDecodeError as error:
        raise UsageError(BAD_DECISIONS) from error
    if value is None:
        raise UsageError(NULL_DECISIONS)
    if is_approval_request(request):
        try:
            parse_decisions(value, request["calls"])
        except ApprovalError as error:
            raise UsageError(UNFIT_DECISIONS.format(error=error)) from error
    return value


def _read_stdin(prompt: str) -> str:
    print(prompt, end="", file=sys.stderr, flush=True)
    line = sys.stdin.readline()
    if not line:
        print(file=sys.stderr)  # the prompt's line ends: what follows is said on its own
        raise EOFError
    return line.rstrip("\n")


def _drive(
    store: Store,
    graph: CompiledStateGraph,
    payload: Any,
    thread_id: str,
    printer: Printer,
    args: argparse.Namespace,
    pending: Sequence[Interrupt] = (),
) -> int:
    """Stream the run, answering its interrupts until it ends or nobody can answer; each
    ending closes with the same note (:mod:`~reasoning_graphs.cli.endings`).

    ``pending``: interrupts the thread already waits on, asked before the run goes on.
    """
    # LangSmith groups the runs of one conversation by their metadata's thread_id
    config: RunnableConfig = {
        "configurable": {"thread_id": thread_id},
        "metadata": {"thread_id": thread_id},
    }
    mode = _decision_mode(args)
    ctrl_c.resume_hint = closing_note(thread_id, INTERRUPTED, args.db)
    try:
        while True:
            if pending:
                try:
                    payload = Command(resume=_ask(pending, mode, printer))
                except NoAnswer:
                    return _waiting(store, thread_id, printer, pending, args)
            pending = _stream(graph, payload, config, printer)
            if not pending:
                break
    except KeyboardInterrupt:
        ctrl_c.resume_hint = None  # said here; a forced exit need not say it again
        store.threads.set_status(thread_id, INTERRUPTED)
        _close(printer, args, thread_id, INTERRUPTED)
        return exits.INTERRUPTED
    except Exception as error:  # the user gets one line; the thread stays resumable
        logger.debug("thread %s failed", thread_id, exc_info=True)
        store.threads.set_status(thread_id, FAILED, ended=_latest(store, thread_id))
        printer.release()
        print(f"reasoning-graphs: error: {type(error).__name__}: {error}", file=sys.stderr)
        _close(printer, args, thread_id, FAILED)
        return exits.FAILED
    finally:
        ctrl_c.resume_hint = None
    values = graph.get_state(config).values
    answered: Outcome = {"status": "answered"}
    outcome: Outcome = values.get("outcome") or answered
    store.threads.set_status(thread_id, outcome["status"], ended=_latest(store, thread_id))
    typed = values.get("structured_response")
    printer.answer(final_answer(values.get("messages") or []), outcome, as_json(typed))
    if "verification" in outcome:
        printer.verification(outcome["verification"])
    if args.explain:
        printer.grounding(_this_questions_report(values))
    _close(printer, args, thread_id, outcome["status"])
    return exits.ANSWERED if outcome["status"] == "answered" else exits.INCOMPLETE


def _stream(
    graph: CompiledStateGraph, payload: Any, config: RunnableConfig, printer: Printer
) -> list[Interrupt]:
    """Run the graph from ``payload`` and print what it streams; the interrupts it stopped on."""
    pending: dict[str, Interrupt] = {}  # each task that stopped reports its own
    parts = graph.stream(
        payload,
        config,
        # messages: the answer's tokens, and every reply's for the status line;
        # custom: progress reports (a retry's wait, how far a search has come);
        # tasks: each step as it starts and ends, for the status line
        stream_mode=["updates", "messages", "custom", "tasks"],
        subgraphs=True,  # a pattern's inner ReAct steps stream too
        durability="sync",
    )
    # with subgraphs and a list of modes each part is (namespace, mode, chunk), which
    # LangGraph's overloads type as a dict
    for namespace, kind, chunk in cast(Iterator[tuple[tuple[str, ...], str, Any]], parts):
        if kind == "tasks":
            _follow_step(printer, namespace, chunk)
            continue
        if kind == "messages":
            message, metadata = chunk
            if printer.status is not None:
                printer.status.streamed(message, metadata)
            printer.token(message, metadata, inner=bool(namespace))
            continue
        if kind == "custom":
            printer.progress(chunk)
            continue
        for node, update in chunk.items():
            if node == "__interrupt__":
                pending.update((item.id, item) for item in update)
            else:
                printer.update(node, update, inner=bool(namespace))
    return list(pending.values())


def _close(printer: Printer, args: argparse.Namespace, thread_id: str, status: str) -> None:
    """The note every ending closes with: the thread and what to do next."""
    note = closing_note(thread_id, status, args.db)
    printer.notice(note, thread_id=thread_id, status=status)


def _follow_step(printer: Printer, namespace: tuple[str, ...], task: Mapping[str, Any]) -> None:
    """Tell the status line a step started or ended; an inner step is named with its parent's
    (``execute › think``)."""
    status = printer.status
    if status is None:
        return
    if "result" in task or "error" in task:
        status.finished(task["id"])
    else:
        path = [part.split(":")[0] for part in namespace] + [task["name"]]
        status.started(task["id"], " › ".join(path))


def _given_resume(args: argparse.Namespace, pending: Sequence[Interrupt]) -> Any:
    """The resume value ``--decisions`` or ``--answer`` gives, checked against what the
    thread waits for (``None``: neither flag, ask at the prompt)."""
    if args.decisions is None and args.answer is None:
        return None
    if not pending:
        flag = "--decisions" if args.decisions is not None else "--answer"
        raise UsageError(NO_DECISIONS_NEEDED.format(flag=flag, thread_id=args.thread_id))
    if args.decisions is not None:
        return _parse_decisions(args.decisions, pending[0].value)
    if any(is_approval_request(item.value) for item in pending):
        raise UsageError(ANSWER_IS_NO_DECISION.format(thread_id=args.thread_id))
    return _each(pending, lambda _question: args.answer)


def _ask(pending: Sequence[Interrupt], mode: Mode, printer: Printer) -> Any:
    """The person's decisions or answers to the pending interrupts.

    Raises:
        NoAnswer: Input ended first.
    """
    return _each(pending, lambda value: answer(value, mode=mode, printer=printer, read=_read_stdin))


def _each(pending: Sequence[Interrupt], reply: Callable[[Any], Any]) -> Any:
    """The resume value that gives each pending interrupt ``reply(its value)``: the value
    itself for one, a mapping by interrupt id for several (a bare value would go to all)."""
    if len(pending) == 1:
        return reply(pending[0].value)
    return {item.id: reply(item.value) for item in pending}


def _waiting(
    store: Store,
    thread_id: str,
    printer: Printer,
    pending: Sequence[Interrupt],
    args: argparse.Namespace,
) -> int:
    """Nobody could answer the pending interrupts (stdin ended): the thread waits for
    ``resume``, and stderr says so in a line of its own."""
    status = waiting_for([item.value for item in pending])
    store.threads.set_status(thread_id, status, ended=_latest(store, thread_id))
    print(f"reasoning-graphs: {nothing_read(thread_id, status, args.db)}", file=sys.stderr)
    left = _left_hint(thread_id, pending, _decision_mode(args))
    if left:
        printer.notice(left)
    _close(printer, args, thread_id, status)
    return exits.WAITING


def _left_hint(thread_id: str, pending: Sequence[Interrupt], mode: Mode) -> str | None:
    """How to answer the calls of one pending approval that ``--approve-all`` left to a
    person, naming them, with ``--decisions`` that reject them and approve the others
    (``None``: it left no call, or more than one interrupt waits)."""
    request = pending[0].value if len(pending) == 1 else None
    if mode != "approve" or not is_approval_request(request):
        return None
    taken = {call["id"]: automatic(call, mode) for call in request["calls"]}
    left = [call for call in request["calls"] if taken[call["id"]] is None]
    if not left:
        return None
    decisions = {
        call_id: (decision or {"type": "reject"})["type"] for call_id, decision in taken.items()
    }
    return LEFT_HINT.format(
        calls=", ".join(f"{call['name']} ({call['id']})" for call in left),
        thread_id=thread_id,
        decisions=json.dumps(decisions),
    )


def _latest(store: Store, thread_id: str) -> str | None:
    """The id of the thread's latest checkpoint: where its run ended."""
    return checkpoint_id(store.latest(thread_id))


def _this_questions_report(values: Mapping[str, Any]) -> GroundingReport | None:
    """The grounding report of the question just answered, not one left by an earlier question."""
    report = values.get("grounding")
    if report and report.get("turn") == question_number(values.get("messages", [])):
        return report
    return None
