"""``reasoning-graphs``: ask a question, watch the steps, approve calls, resume threads."""

from __future__ import annotations

import argparse
import json
import logging
import sys
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn, TextIO

from langchain_core.messages import HumanMessage
from langgraph.graph.state import CompiledStateGraph
from langgraph.types import Command

from reasoning_graphs.cli.bench import add_bench_parser, run_bench
from reasoning_graphs.cli.prompting import Mode, NoAnswer, decide
from reasoning_graphs.cli.render import ANSWER_NODES, Printer
from reasoning_graphs.cli.store import DB_ENV, Store, StoreError, database_errors, db_spec
from reasoning_graphs.context import MODES
from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.models.resolve import check_available, default_model_spec, resolve_model
from reasoning_graphs.nodes.turn import turn_number
from reasoning_graphs.review import APPROVAL_KIND, ApprovalError, parse_decisions
from reasoning_graphs.state import GroundingReport
from reasoning_graphs.tools.builtins import default_tools
from reasoning_graphs.tracing import bounded_upload

DEFAULT_PATTERN = "react"
USAGE_ERROR = 2
LIBRARY_LOGGER = "reasoning_graphs"
LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"

logger = logging.getLogger(__name__)

NO_THREAD = "No thread {thread_id!r} in {db}; `reasoning-graphs threads` lists them."
WAITING = (
    "Thread {thread_id} is waiting for approval; "
    "answer it with `reasoning-graphs resume {thread_id}`."
)
RESUME_HINT = "Resume with: reasoning-graphs resume {thread_id}"
CONTINUE_HINT = "Thread: {thread_id} (ask a follow-up with --thread {thread_id})"
FINISHED = "Thread {thread_id} has finished; nothing to resume."
BAD_DECISIONS = "--decisions must be JSON: a list of decisions or an object keyed by call id."
UNFIT_DECISIONS = "--decisions do not answer the pending calls: {error}"
NULL_DECISIONS = "--decisions null answers nothing; give the value the paused run asks for."
BAD_TRACE = "cannot write the trace file {path}: {error}"


class UsageError(Exception):
    """A bad command line, pattern, model or thread: one line, exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="reasoning-graphs", description=__doc__)
    parser.add_argument(
        "--db",
        help=(
            "SQLite file or postgresql:// connection string for threads "
            f"(default: ${DB_ENV} or the user data directory)"
        ),
    )
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default="warning",
        help="what the library logs to stderr (default: warning)",
    )
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = commands.add_parser("run", help="ask a question and stream the steps")
    run.add_argument("question")
    run.add_argument("--pattern", help=f"one of: {', '.join(PATTERNS)}")
    run.add_argument("--model", help="'openai:<model>', 'local' or 'local:<path.gguf>'")
    run.add_argument("--thread", help="continue the conversation of an existing thread")
    run.add_argument("--workspace", type=Path, help="folder for the file and shell tools")
    run.add_argument("--docs", type=Path, help="folder of .txt/.md files for search_docs")
    run.add_argument("--max-steps", type=int, help="model steps before an incomplete answer")
    run.add_argument("--token-budget", type=int, help="tokens allowed for this question")
    run.add_argument(
        "--time-budget", type=int, metavar="SECONDS", help="seconds of work for this question"
    )
    run.add_argument(
        "--model-timeout",
        type=float,
        metavar="SECONDS",
        help="seconds one model call may take before the question stops",
    )
    run.add_argument(
        "--idle-timeout",
        type=float,
        metavar="SECONDS",
        help="seconds a model call may send nothing before the question stops (default 600)",
    )
    run.add_argument(
        "--mode",
        choices=list(MODES),
        help="'chat': one round of tool calls; 'agent': up to 20 rounds (kept with the thread)",
    )
    run.add_argument(
        "--approve",
        action="append",
        metavar="TOOL",
        help="also require approval for TOOL ('all' for every tool)",
    )
    _decision_flags(run)

    resume = commands.add_parser("resume", help="continue a stopped or interrupted thread")
    resume.add_argument("thread_id")
    resume.add_argument("--workspace", type=Path, help="folder for the file and shell tools")
    resume.add_argument("--docs", type=Path, help="folder of .txt/.md files for search_docs")
    resume.add_argument("--decisions", help="decisions as JSON instead of asking")
    _decision_flags(resume)

    threads = commands.add_parser("threads", help="list threads")
    threads.add_argument("--json", action="store_true", help="one JSON object per line")
    add_bench_parser(commands)
    return parser


def _decision_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument("--approve-all", action="store_true", help="approve every dangerous call")
    group.add_argument("--reject-all", action="store_true", help="reject every dangerous call")
    parser.add_argument("--json", action="store_true", help="print events as JSON lines")
    parser.add_argument(
        "--quiet", action="store_true", help="show only progress lines and the final answer"
    )
    parser.add_argument(
        "--trace", type=Path, metavar="FILE", help="append every event to FILE as JSON lines"
    )
    parser.add_argument(
        "--explain",
        action="store_true",
        help="after the answer, show which of its claims a tool observation backs",
    )


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``reasoning-graphs`` command."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
        if args.command == "bench":
            with _library_logs(args.log_level):
                return run_bench(args, argv, UsageError)
        with _library_logs(args.log_level), Store(db_spec(args.db)) as store:
            if args.command == "threads":
                return _list_threads(store, as_json=args.json)
            with bounded_upload():  # traced runs reach LangSmith, or are dropped, in seconds
                if args.command == "run":
                    return _run(store, args)
                return _resume(store, args)
    except (UsageError, StoreError) as error:
        print(f"reasoning-graphs: error: {error}", file=sys.stderr)
        return USAGE_ERROR
    except database_errors() as error:  # the store broke mid-command
        print(f"reasoning-graphs: error: {' '.join(str(error).split())}", file=sys.stderr)
        return 1


@contextmanager
def _library_logs(level: str) -> Iterator[None]:
    """Show the library's log records at ``level`` and above on stderr while the command runs."""
    library = logging.getLogger(LIBRARY_LOGGER)
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter(LOG_FORMAT))
    previous = library.level
    library.setLevel(level.upper())
    library.addHandler(handler)
    try:
        yield
    finally:
        library.removeHandler(handler)
        library.setLevel(previous)


@contextmanager
def _printer(args: argparse.Namespace, pattern: str, thread_id: str) -> Iterator[Printer]:
    """The run's printer, with the ``--trace`` file open while it runs."""
    trace = _open_trace(args.trace) if args.trace else None
    try:
        yield Printer(
            as_json=args.json,
            answer_nodes=ANSWER_NODES.get(pattern, ()),
            quiet=args.quiet,
            trace=trace,
            trace_fields={"thread_id": thread_id},
        )
    finally:
        if trace is not None:
            trace.close()


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


def _graph(
    store: Store,
    pattern: str,
    model_spec: str,
    args: argparse.Namespace,
    limits: dict[str, Any] | None = None,
) -> CompiledStateGraph:
    """The pattern's graph with ``limits`` as its build options.

    The CLI owns the graph, so its flags set the graph's own limits: run
    options could only lower them.
    """
    try:
        builder = graph_builder(pattern)
        model = resolve_model(model_spec)
        check_available(model)
        tools = default_tools(args.workspace, args.docs)
    except (ValueError, RuntimeError, OSError) as error:
        raise UsageError(str(error)) from error
    return builder(model=model, tools=tools, checkpointer=store.checkpointer, **(limits or {}))


def _run(store: Store, args: argparse.Namespace) -> int:
    if args.max_steps is not None and args.max_steps < 1:
        raise UsageError("--max-steps must be at least 1")
    for flag in ("time_budget", "model_timeout", "idle_timeout"):
        value = getattr(args, flag)
        if value is not None and value <= 0:
            raise UsageError(f"--{flag.replace('_', '-')} must be above 0")
    record = store.threads.get(args.thread) if args.thread else None
    pattern = args.pattern or (record.pattern if record else DEFAULT_PATTERN)
    model_spec = args.model or (record.model if record else default_model_spec())
    thread_id = args.thread or uuid.uuid4().hex[:12]
    flags = {
        "max_steps": args.max_steps,
        "token_budget": args.token_budget,
        "time_budget": args.time_budget,
        "model_timeout": args.model_timeout,
        "idle_timeout": args.idle_timeout,
        "approve": args.approve,
        "mode": args.mode,
    }
    limits = {
        **(record.limits if record else {}),
        **{key: value for key, value in flags.items() if value is not None},
    }
    graph = _graph(store, pattern, model_spec, args, limits)
    config = {"configurable": {"thread_id": thread_id}}
    if graph.get_state(config).interrupts:
        raise UsageError(WAITING.format(thread_id=thread_id))
    with _printer(args, pattern, thread_id) as printer:
        printer.notice(
            f"Thread {thread_id}", thread_id=thread_id, pattern=pattern, model=model_spec
        )
        store.threads.save(
            thread_id,
            pattern=pattern,
            model=model_spec,
            question=args.question,
            status="running",
            limits=limits,
        )
        payload = {"messages": [HumanMessage(args.question)]}
        return _drive(store, graph, payload, thread_id, printer, args)


def _resume(store: Store, args: argparse.Namespace) -> int:
    config = {"configurable": {"thread_id": args.thread_id}}
    if store.checkpointer.get_tuple(config) is None:
        raise UsageError(NO_THREAD.format(thread_id=args.thread_id, db=store.label))
    record = store.threads.get(args.thread_id)
    pattern = record.pattern if record else DEFAULT_PATTERN
    model_spec = record.model if record else default_model_spec()
    graph = _graph(store, pattern, model_spec, args, record.limits if record else None)
    with _printer(args, pattern, args.thread_id) as printer:
        return _continue(store, graph, printer, args)


def _continue(
    store: Store, graph: CompiledStateGraph, printer: Printer, args: argparse.Namespace
) -> int:
    """Resume a thread: answer its pending approval, then drive it to its end."""
    config = {"configurable": {"thread_id": args.thread_id}}
    snapshot = graph.get_state(config)
    if not snapshot.next:
        printer.notice(FINISHED.format(thread_id=args.thread_id))
        return 0
    payload: Any = None
    if snapshot.interrupts:
        if args.decisions:
            decisions = _parse_decisions(args.decisions, snapshot.interrupts[0].value)
        else:
            try:
                decisions = decide(
                    snapshot.interrupts[0].value,
                    mode=_decision_mode(args),
                    printer=printer,
                    read=_read_stdin,
                )
            except NoAnswer:
                printer.notice(RESUME_HINT.format(thread_id=args.thread_id))
                return 0
        payload = Command(resume=decisions)
    return _drive(store, graph, payload, args.thread_id, printer, args)


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
    if isinstance(request, Mapping) and request.get("kind") == APPROVAL_KIND:
        try:
            parse_decisions(value, request["calls"])
        except ApprovalError as error:
            raise UsageError(UNFIT_DECISIONS.format(error=error)) from error
    return value


def _read_stdin(prompt: str) -> str:
    print(prompt, end="", file=sys.stderr, flush=True)
    line = sys.stdin.readline()
    if not line:
        raise EOFError
    return line.rstrip("\n")


def _drive(
    store: Store,
    graph: CompiledStateGraph,
    payload: Any,
    thread_id: str,
    printer: Printer,
    args: argparse.Namespace,
) -> int:
    """Stream the run, answering approval interrupts until it ends or nobody can answer."""
    # LangSmith groups the runs of one conversation by their metadata's thread_id
    config = {"configurable": {"thread_id": thread_id}, "metadata": {"thread_id": thread_id}}
    mode = _decision_mode(args)
    try:
        while True:
            request = None
            for namespace, kind, chunk in graph.stream(
                payload,
                config,
                # messages: the answer's tokens; custom: progress reports (a retry's wait)
                stream_mode=["updates", "messages", "custom"],
                subgraphs=True,  # a pattern's inner ReAct steps stream too
                durability="sync",
            ):
                if kind == "messages":
                    message, metadata = chunk
                    printer.token(message, metadata, inner=bool(namespace))
                    continue
                if kind == "custom":
                    printer.progress(chunk)
                    continue
                for node, update in chunk.items():
                    if node == "__interrupt__":
                        request = update[0].value
                    else:
                        printer.update(node, update, inner=bool(namespace))
            if request is None:
                break
            try:
                payload = Command(
                    resume=decide(request, mode=mode, printer=printer, read=_read_stdin)
                )
            except NoAnswer:
                store.threads.set_status(thread_id, "waiting for approval")
                printer.notice(RESUME_HINT.format(thread_id=thread_id))
                return 0
    except KeyboardInterrupt:
        store.threads.set_status(thread_id, "stopped")
        printer.notice(RESUME_HINT.format(thread_id=thread_id))
        return 130
    except Exception as error:  # the user gets one line; the thread stays resumable
        logger.debug("thread %s failed", thread_id, exc_info=True)
        store.threads.set_status(thread_id, "failed")
        print(f"reasoning-graphs: error: {type(error).__name__}: {error}", file=sys.stderr)
        printer.notice(RESUME_HINT.format(thread_id=thread_id))
        return 1
    values = graph.get_state(config).values
    outcome = values.get("outcome") or {"status": "answered"}
    store.threads.set_status(thread_id, outcome["status"])
    if args.explain:
        printer.grounding(_this_questions_report(values))
    printer.notice(CONTINUE_HINT.format(thread_id=thread_id), thread_id=thread_id)
    return 0


def _this_questions_report(values: Mapping[str, Any]) -> GroundingReport | None:
    """The grounding report of the question just answered, not one left by an earlier question."""
    report = values.get("grounding")
    if report and report.get("turn") == turn_number(values.get("messages", [])):
        return report
    return None


def _list_threads(store: Store, *, as_json: bool) -> int:
    records = store.threads.all()
    for record in records:
        if as_json:
            print(json.dumps(record.__dict__))
        else:
            question = record.question if len(record.question) <= 60 else record.question[:59] + "…"
            print(
                f"{record.thread_id}  {record.updated}  {record.pattern:<12} "
                f"{record.status:<22} {question}"
            )
    if not records and not as_json:
        print("No threads yet.")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
