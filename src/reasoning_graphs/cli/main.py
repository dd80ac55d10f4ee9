"""``reasoning-graphs``: ask a question, watch the steps, approve calls, resume threads.

This module only reads the command line: what a command needs (LangGraph, the
patterns, the models) is imported when that command runs, so that ``--help``,
a bad flag and ``threads`` answer at once.
"""

from __future__ import annotations

import argparse
import logging
import sys
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

from reasoning_graphs.cli import ctrl_c, exits
from reasoning_graphs.cli.bench import add_bench_parser
from reasoning_graphs.cli.errors import UsageError
from reasoning_graphs.cli.option_flags import FLAGGED, add_option_flags, add_pattern_flags
from reasoning_graphs.cli.store import DB_ENV
from reasoning_graphs.context import DEFAULT_MEMORY_USER
from reasoning_graphs.graphs import PATTERNS
from reasoning_graphs.option_bounds import PlainName

USAGE_ERROR = exits.USAGE
FORMER_FLAG = "--max-steps is now called --max-model-calls; the old name goes in a later release"
BOTH_FLAGS = "--max-steps is the former name of --max-model-calls: give only --max-model-calls"
BAD_NAMESPACE = (
    "{name!r}: a namespace is 1 to 64 letters, digits, '_', '@' or '-', starting with a "
    "letter or digit"
)
LIBRARY_LOGGER = "reasoning_graphs"
LOG_LEVELS = ("debug", "info", "warning", "error")
LOG_FORMAT = "%(levelname)s %(name)s: %(message)s"
PROGRESS_EVERY_S = 15.0
MCP_HELP = (
    'a JSON file of MCP servers ({"mcpServers": {...}}) whose tools the run gets too (a '
    "server's tool takes the place of a built-in one of the same name); a server entry's "
    '"approve" key says which of its tools ask: "annotations" (the default), '
    '"unless-read-only" or "all"; a thread keeps the file for its later runs'
)
NO_BUILTINS_HELP = (
    "leave out the built-in tools (calculator, read_file, write_file, shell, search_docs): "
    "the run gets the MCP servers' tools alone (kept with the thread)"
)
"""Seconds of work between progress lines when stderr is no terminal."""
BUSY = "thread {thread_id} is busy: another process is running it; try again later or pass --wait"
EXIT_CODES = (
    "exit codes: 0 answered, 1 failed, 2 bad input (a flag, --graph, --decisions, --answer), "
    "3 stopped without an answer, 4 waiting for a decision or an answer (give it with resume), "
    "5 thread busy in another process (--wait waits), 130 stopped by Ctrl-C"
)


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="reasoning-graphs",
        description="Ask a question, watch the steps, approve calls, resume threads.",
        epilog=EXIT_CODES,
    )
    _global_options(parser, default="warning")
    commands = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)

    run = _command(commands, "run", help="ask a question and stream the steps")
    run.add_argument("question")
    graph = run.add_mutually_exclusive_group()
    graph.add_argument(
        "--pattern", help=f"one of: {', '.join(PATTERNS)} (see: reasoning-graphs patterns)"
    )
    graph.add_argument(
        "--graph",
        metavar="GRAPH",
        help=(
            "your own graph instead: module:attr, path/to/file.py:attr, "
            "or a name in ./langgraph.json"
        ),
    )
    run.add_argument(
        "--thread",
        metavar="ID",
        help="ask on this existing thread (an unknown id is an error: see --new-thread)",
    )
    run.add_argument(
        "--new-thread",
        action="store_true",
        help="start the thread --thread names (an error if it exists already)",
    )
    run.add_argument("--workspace", type=Path, help="folder for the file and shell tools")
    run.add_argument("--docs", type=Path, help="folder of .txt/.md files for search_docs")
    run.add_argument("--mcp", type=Path, help=MCP_HELP)
    run.add_argument("--no-builtin-tools", action="store_true", default=None, help=NO_BUILTINS_HELP)
    add_option_flags(run, FLAGGED)
    add_pattern_flags(run)
    run.add_argument(
        "--memory",
        nargs="?",
        const=DEFAULT_MEMORY_USER,
        type=_namespace,
        metavar="NAMESPACE",
        help=(
            "memory across threads, kept beside the threads in --db under NAMESPACE (default "
            f"'{DEFAULT_MEMORY_USER}'): reflexion recalls its lessons of similar questions, and "
            "the model gets remember and recall tools (kept with the thread)"
        ),
    )
    run.add_argument(
        "--schema",
        type=Path,
        metavar="FILE",
        help=(
            "a JSON schema (of an object): the answer is also written in that shape and "
            "printed as JSON (kept with the thread)"
        ),
    )
    _decision_flags(run)

    resume = _command(commands, "resume", help="continue a stopped or interrupted thread")
    resume.add_argument("thread_id")
    resume.add_argument("--workspace", type=Path, help="folder for the file and shell tools")
    resume.add_argument("--docs", type=Path, help="folder of .txt/.md files for search_docs")
    resume.add_argument("--mcp", type=Path, help=MCP_HELP)
    resume.add_argument(
        "--no-builtin-tools", action="store_true", default=None, help=NO_BUILTINS_HELP
    )
    answer = resume.add_mutually_exclusive_group()
    answer.add_argument("--decisions", help="decisions as JSON instead of asking")
    answer.add_argument(
        "--answer", metavar="TEXT", help="the answer to a question the graph asked, as text"
    )
    _decision_flags(resume)

    threads = _command(commands, "threads", help="list threads and how each stands")
    threads.add_argument("--json", action="store_true", help="one JSON object per line")
    add_bench_parser(commands)
    _command(commands, "patterns", help="list the patterns and what each does")
    return parser


def _global_options(parser: argparse.ArgumentParser, default: str | None) -> None:
    """``--db`` and ``--log-level``, before the command or after it.

    After it they default to ``SUPPRESS``, so that the value given before the
    command is not overwritten by the subcommand's default.
    """
    keep = argparse.SUPPRESS if default is None else None
    parser.add_argument(
        "--db",
        default=keep,
        help=(
            "SQLite file or postgresql:// connection string for threads "
            f"(default: ${DB_ENV} or the user data directory)"
        ),
    )
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default=keep or default,
        help="what the library logs to stderr (default: warning)",
    )


def _command(commands: Any, name: str, **options: Any) -> argparse.ArgumentParser:
    command: argparse.ArgumentParser = commands.add_parser(name, epilog=EXIT_CODES, **options)
    _global_options(command, default=None)
    return command


def _decision_flags(parser: argparse.ArgumentParser) -> None:
    group = parser.add_mutually_exclusive_group()
    group.add_argument(
        "--approve-all",
        action="store_true",
        help="approve every dangerous call, except one that may already have run (asked)",
    )
    group.add_argument("--reject-all", action="store_true", help="reject every dangerous call")
    parser.add_argument(
        "--wait",
        action="store_true",
        help="if another process is running the thread, wait for it to end (default: exit 5)",
    )
    parser.add_argument("--json", action="store_true", help="print events as JSON lines")
    parser.add_argument(
        "--progress-every",
        type=_seconds_or_zero,
        default=PROGRESS_EVERY_S,
        metavar="SECONDS",
        help=(
            "when stderr is no terminal, write a line there each SECONDS of work: the step, "
            f"its seconds and tokens (default {PROGRESS_EVERY_S:g}; 0: never)"
        ),
    )
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


def _seconds_or_zero(text: str) -> float:
    """A number of seconds, 0 or more (argparse reports the error as a usage error)."""
    try:
        seconds = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
    if not seconds >= 0:  # NaN too
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {text}")
    return seconds


def _namespace(text: str) -> str:
    """A memory namespace, checked as a run's ``memory_user`` is (argparse reports the error)."""
    try:
        PlainName().check("memory_user", text)
    except ValueError:
        raise argparse.ArgumentTypeError(BAD_NAMESPACE.format(name=text)) from None
    return text


def main(argv: Sequence[str] | None = None) -> int:
    """Run the ``reasoning-graphs`` command; returns its exit code (see :mod:`~.exits`)."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        args = build_parser().parse_args(argv)
        _read_former_flags(args)
        if args.command == "patterns":
            return print_patterns()
        if args.command == "bench":
            from reasoning_graphs.cli.bench import run_bench

            with _library_logs(args.log_level):
                return run_bench(args, argv, UsageError)
        from reasoning_graphs.cli import listing
        from reasoning_graphs.cli.store import (
            MissingStore,
            Store,
            StoreError,
            database_errors,
            db_spec,
            default_db,
        )
        from reasoning_graphs.thread_lock import ThreadBusyError

        spec = db_spec(args.db)
        try:
            # only `run` writes a new thread; the other commands never create a database
            with _library_logs(args.log_level), Store(spec, create=args.command == "run") as store:
                if args.command == "threads":
                    return listing.list_threads(store, as_json=args.json)
                return _run_or_resume(store, args)
        except MissingStore as error:
            if args.command == "threads" and spec == default_db():  # nothing was run here yet
                return listing.print_threads([], as_json=args.json)
            raise UsageError(str(error)) from error
        except StoreError as error:
            raise UsageError(str(error)) from error
        except ThreadBusyError as error:
            busy = BUSY.format(thread_id=error.thread_id)
            print(f"reasoning-graphs: error: {busy}", file=sys.stderr)
            return exits.BUSY
        except database_errors() as error:  # the store broke mid-command
            print(f"reasoning-graphs: error: {' '.join(str(error).split())}", file=sys.stderr)
            return exits.FAILED
    except UsageError as error:
        print(f"reasoning-graphs: error: {error}", file=sys.stderr)
        return exits.USAGE


def print_patterns() -> int:
    """One line a pattern: its name and what it does."""
    width = max(map(len, PATTERNS))
    for pattern in PATTERNS.values():
        print(f"{pattern.name:<{width}}  {pattern.summary}")
    return exits.ANSWERED


def _read_former_flags(args: argparse.Namespace) -> None:
    """``--max-steps``, the former name of ``--max-model-calls``, read as it for one more
    release (with a ``DeprecationWarning``); the two with different values are a usage error."""
    former = getattr(args, "max_steps", None)
    if former is None:
        return
    if args.max_model_calls is not None and args.max_model_calls != former:
        raise UsageError(BOTH_FLAGS)
    warnings.warn(FORMER_FLAG, DeprecationWarning, stacklevel=2)
    args.max_model_calls = former
    args.max_steps = None


def entry() -> None:
    """The console command: :func:`main`, leaving at once after Ctrl-C.

    A model still generating on a worker thread would otherwise hold the
    process until its reply is written (see :mod:`~.ctrl_c`).
    """
    ctrl_c.install()
    code = main()
    if code == exits.INTERRUPTED:
        ctrl_c.leave(code)
    raise SystemExit(code)


def _run_or_resume(store: Any, args: argparse.Namespace) -> int:
    from reasoning_graphs.cli import runs
    from reasoning_graphs.tracing import bounded_upload

    with bounded_upload():  # traced runs reach LangSmith, or are dropped, in seconds
        return runs.run(store, args) if args.command == "run" else runs.resume(store, args)


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


if __name__ == "__main__":
    entry()
