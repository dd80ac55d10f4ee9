"""``reasoning-graphs bench``: every pattern on the same task suites, measured and charted.

The heavy modules load only when the command runs, so ``--help`` stays fast.
"""

from __future__ import annotations

import argparse
import shlex
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TextIO

from reasoning_graphs.bench.catalog import shipped_names
from reasoning_graphs.cli.errors import UsageError
from reasoning_graphs.cli.option_flags import add_option_flags, given_options
from reasoning_graphs.graphs import PATTERNS

ALL_PATTERNS = "all"
DEFAULT_OUT = "bench-out"

BAD_PATTERNS = "--patterns: unknown {names}; give 'all' or a comma list of: {available}"
NO_CELLS = "nothing to run: no task of the chosen suites suits the chosen patterns"
POSITIVE = "{flag} must be at least 1"
BENCH_OPTIONS = (
    "max_model_calls",
    "max_steps",
    "token_budget",
    "reflect_every",
    "reflect_on_failure",
)
"""The shared options a bench run sets for every question."""
NOT_NEGATIVE = "{flag} must not be negative"
EXECUTOR_FAILED = "the {executor} executor could not start: {error}"
ERRORS_NOTE = "{count} cell(s) raised an error; see 'error' in {path}"


def add_bench_parser(commands: Any) -> None:
    """Add the ``bench`` subcommand to the CLI's subparsers."""
    bench = commands.add_parser(
        "bench",
        help="compare the patterns on task suites",
        description="Run every (task, pattern, repeat) on a fresh thread and report success, "
        "model calls, tokens, tool calls, latency and cost per pattern.",
    )
    bench.add_argument(
        "--suite",
        action="append",
        required=True,
        metavar="SUITE",
        help=f"a shipped suite ({', '.join(shipped_names())}), 'all', "
        "a .jsonl suite file or a HotpotQA distractor .json file; repeatable",
    )
    bench.add_argument(
        "--patterns",
        default=ALL_PATTERNS,
        help=f"'all' or a comma list of: {', '.join(PATTERNS)} (default: all)",
    )
    bench.add_argument(
        "--model",
        default="oracle",
        help="'oracle' (follows each pattern's protocol from the gold answers), or a model "
        "spec: '<provider>:<model>' (e.g. 'openai:gpt-4o-mini'), 'local' or "
        "'local:<path.gguf>' (default: oracle)",
    )
    bench.add_argument("--repeat", type=int, default=1, help="runs of every cell (default 1)")
    bench.add_argument("--concurrency", type=int, default=1, help="cells run at once (default 1)")
    bench.add_argument(
        "--out",
        type=Path,
        default=Path(DEFAULT_OUT),
        help=f"folder for the results (default: ./{DEFAULT_OUT})",
    )
    bench.add_argument(
        "--executor",
        choices=("local", "ray"),
        default="local",
        help="'local': threads of this process; 'ray': Ray tasks (default: local)",
    )
    bench.add_argument(
        "--address", help="with --executor ray: the cluster to join (default: a local Ray)"
    )
    bench.add_argument(
        "--checkpointer",
        help="where every cell saves its checkpoints: a SQLite file, postgresql://…, or "
        "'memory' (default: checkpoints.sqlite in --out)",
    )
    bench.add_argument(
        "--prices",
        help="dollars per million input and output tokens, as 'IN,OUT' or a JSON file with "
        "'input' and 'output'; adds a cost column",
    )
    bench.add_argument(
        "--call-delay",
        type=float,
        default=0.1,
        metavar="SECONDS",
        help="the oracle's seconds per call, as a model's prompt processing (default 0.1)",
    )
    bench.add_argument(
        "--token-delay",
        type=float,
        default=0.001,
        metavar="SECONDS",
        help="the oracle's seconds per output token, as a model's generation (default 0.001)",
    )
    bench.add_argument("--limit", type=int, help="run only the first N tasks of each suite")
    bench.add_argument(
        "--samples", type=int, default=3, help="CoT self-consistency votes (default 3)"
    )
    add_option_flags(
        bench,
        BENCH_OPTIONS,
        notes={"max_model_calls": " (default 20 here)", "reflect_every": ""},
    )
    bench.add_argument("--no-charts", action="store_true", help="skip the PNG charts")


def run_bench(args: argparse.Namespace, argv: Sequence[str], usage_error: type[Exception]) -> int:
    """Run the bench the arguments describe; write its results to ``--out``.

    ``argv`` is the command line, written into ``results.md`` so a table says how it was made.
    """
    from reasoning_graphs.bench.catalog import resolve_suites
    from reasoning_graphs.bench.executors import run_local, run_ray
    from reasoning_graphs.bench.metrics import figures, parse_prices
    from reasoning_graphs.bench.report import (
        markdown_table,
        relative_table,
        write_charts,
        write_csv,
        write_record,
    )
    from reasoning_graphs.bench.runner import BenchSettings, Cell
    from reasoning_graphs.bench.suite import SuiteError

    if args.max_model_calls is None:
        args.max_model_calls = BenchSettings.max_model_calls
    for flag in ("repeat", "concurrency", "samples"):
        if getattr(args, flag) < 1:
            raise usage_error(POSITIVE.format(flag="--" + flag.replace("_", "-")))
    try:
        given_options(args, BENCH_OPTIONS)
    except UsageError as error:
        raise usage_error(str(error)) from error
    for flag in ("call_delay", "token_delay"):
        if getattr(args, flag) < 0:
            raise usage_error(NOT_NEGATIVE.format(flag="--" + flag.replace("_", "-")))
    patterns = _patterns(args.patterns, usage_error)
    try:
        suites = resolve_suites(args.suite, limit=args.limit)
        prices = parse_prices(args.prices) if args.prices else None
    except (SuiteError, ValueError) as error:
        raise usage_error(str(error)) from error
    cells = [
        Cell(suite=suite, task=task, pattern=pattern, repeat=repeat)
        for suite in suites
        for repeat in range(args.repeat)
        for task in suite.tasks
        for pattern in patterns
        if pattern in suite.patterns_for(task)
    ]
    if not cells:
        raise usage_error(NO_CELLS)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    (out / "workspaces").mkdir(exist_ok=True)
    settings = BenchSettings(
        model=args.model,
        call_delay=args.call_delay,
        token_delay=args.token_delay,
        checkpointer=args.checkpointer or str((out / "checkpoints.sqlite").resolve()),
        max_model_calls=args.max_model_calls,
        token_budget=args.token_budget,
        samples=args.samples,
        workspaces=str((out / "workspaces").resolve()),
        reflect_every=args.reflect_every,
        reflect_on_failure=bool(args.reflect_on_failure),
    )
    if args.executor == "ray":
        records_of = run_ray(cells, settings, args.concurrency, args.address)
    else:
        records_of = run_local(cells, settings, args.concurrency)
    started = time.perf_counter()
    records = []
    trajectories = out / "trajectories.jsonl"
    with trajectories.open("w", encoding="utf-8") as stream:
        progress = Progress(len(cells), sys.stderr)
        try:
            for record in records_of:
                write_record(stream, record)
                records.append(record)
                progress.advance(f"{record.suite}/{record.task} {record.pattern}")
        except (ModuleNotFoundError, ConnectionError) as error:  # no Ray, or no cluster there
            raise usage_error(
                EXECUTOR_FAILED.format(executor=args.executor, error=error)
            ) from error
        finally:
            progress.close()
    elapsed = time.perf_counter() - started
    order = {key: index for index, key in enumerate(cell.key for cell in cells)}
    records.sort(key=lambda record: order[record.key])
    rows = figures(records, prices)
    table = markdown_table(rows)
    relative = relative_table(rows)
    if relative:
        table += "\nRelative to ReAct (one tool call per turn), per suite:\n\n" + relative
    command = "reasoning-graphs " + shlex.join(argv)
    (out / "results.md").write_text(
        f"# Bench results\n\n`{command}`\n\n{len(cells)} cells in {elapsed:.1f} s "
        f"(model {args.model}, executor {args.executor}, concurrency {args.concurrency}).\n\n"
        + table,
        encoding="utf-8",
    )
    write_csv(out / "results.csv", rows)
    written = [out / "results.md", out / "results.csv", trajectories]
    if not args.no_charts:
        try:
            written += write_charts(out, rows, records)
        except ModuleNotFoundError as error:
            print(f"reasoning-graphs: {error}", file=sys.stderr)
    print(table)
    print(f"{len(cells)} cells in {elapsed:.1f} s; wrote " + ", ".join(str(p) for p in written))
    errors = sum(record.error is not None for record in records)
    if errors:
        print(ERRORS_NOTE.format(count=errors, path=trajectories), file=sys.stderr)
    return 0


def _patterns(value: str, usage_error: type[Exception]) -> list[str]:
    if value == ALL_PATTERNS:
        return list(PATTERNS)
    names = [name.strip() for name in value.split(",") if name.strip()]
    unknown = [name for name in names if name not in PATTERNS]
    if unknown or not names:
        raise usage_error(
            BAD_PATTERNS.format(names=", ".join(unknown) or "(none)", available=", ".join(PATTERNS))
        )
    return names


class Progress:
    """A one-line progress bar on a terminal; a line per tenth of the run elsewhere."""

    WIDTH = 30

    def __init__(self, total: int, stream: TextIO) -> None:
        self.total, self.done, self.stream = total, 0, stream
        self.live = stream.isatty()
        self.started = time.perf_counter()

    def advance(self, label: str) -> None:
        self.done += 1
        filled = self.WIDTH * self.done // self.total
        bar = "#" * filled + "." * (self.WIDTH - filled)
        elapsed = time.perf_counter() - self.started
        line = f"[{bar}] {self.done}/{self.total} cells, {elapsed:.0f} s  {label}"
        if self.live:
            self.stream.write("\r" + line[:100].ljust(100))
        elif self.done * 10 // self.total != (self.done - 1) * 10 // self.total:
            self.stream.write(line + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.live:
            self.stream.write("\n")
            self.stream.flush()
