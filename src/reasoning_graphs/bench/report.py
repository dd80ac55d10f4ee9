"""A bench run's results as files: a Markdown table, a CSV, JSONL trajectories and charts."""

from __future__ import annotations

import csv
import json
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import IO

from reasoning_graphs.bench.charts import latency_figure, success_figure
from reasoning_graphs.bench.metrics import PatternFigures
from reasoning_graphs.bench.record import FAILURES, CellRecord

COLUMNS = (
    "suite",
    "pattern",
    "success",
    "model calls",
    "prompt tokens",
    "completion tokens",
    "tool calls",
    "wall median (s)",
    "wall p90 (s)",
    "cost ($)",
    "failures",
)


def write_record(stream: IO[str], record: CellRecord) -> None:
    """Append one cell's record to a ``trajectories.jsonl`` stream as it finishes."""
    stream.write(json.dumps(record.to_json(), ensure_ascii=False, default=str) + "\n")
    stream.flush()


def read_records(path: str | Path) -> list[CellRecord]:
    """The records of a saved ``trajectories.jsonl``."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()
    return [CellRecord.from_json(json.loads(line)) for line in lines if line.strip()]


def _row(figure: PatternFigures) -> list[str]:
    failures = ", ".join(f"{kind} {count}" for kind, count in figure.failures.items())
    about = "~" if figure.tokens_estimated else ""  # the provider reported no usage
    return [
        figure.suite,
        figure.pattern,
        f"{figure.successes}/{figure.cells}",
        f"{figure.model_calls:.1f}",
        f"{about}{figure.prompt_tokens:.0f}",
        f"{about}{figure.completion_tokens:.0f}",
        f"{figure.tool_calls:.1f}",
        f"{figure.wall_median_s:.2f}",
        f"{figure.wall_p90_s:.2f}",
        "" if figure.cost is None else f"{figure.cost:.5f}",
        failures or "-",
    ]


def markdown_table(rows: Sequence[PatternFigures]) -> str:
    """One row per suite and pattern: success, mean calls and tokens, wall times, failures."""
    columns = [c for c in COLUMNS if c != "cost ($)" or any(r.cost is not None for r in rows)]
    lines = ["| " + " | ".join(columns) + " |"]
    left = {"suite", "pattern", "failures"}
    lines.append("|" + "|".join("---" if c in left else "---:" for c in columns) + "|")
    for figure in rows:
        cells = dict(zip(COLUMNS, _row(figure), strict=True))
        lines.append("| " + " | ".join(cells[column] for column in columns) + " |")
    return "\n".join(lines) + "\n"


def write_csv(path: Path, rows: Iterable[PatternFigures]) -> None:
    """The figures unrounded, one failure kind per column, for a spreadsheet or pandas."""
    with path.open("w", newline="", encoding="utf-8") as stream:
        writer = csv.writer(stream)
        writer.writerow(
            [
                "suite",
                "pattern",
                "cells",
                "successes",
                "success_rate",
                "model_calls",
                "prompt_tokens",
                "completion_tokens",
                "tool_calls",
                "approvals",
                "wall_median_s",
                "wall_p90_s",
                "cost",
                "tokens_estimated",
                *(kind.replace(" ", "_") for kind in FAILURES),
            ]
        )
        for f in rows:
            writer.writerow(
                [
                    f.suite,
                    f.pattern,
                    f.cells,
                    f.successes,
                    round(f.success_rate, 4),
                    round(f.model_calls, 3),
                    round(f.prompt_tokens, 1),
                    round(f.completion_tokens, 1),
                    round(f.tool_calls, 3),
                    round(f.approvals, 3),
                    round(f.wall_median_s, 4),
                    round(f.wall_p90_s, 4),
                    "" if f.cost is None else round(f.cost, 8),
                    f.tokens_estimated,
                    *(f.failures.get(kind, 0) for kind in FAILURES),
                ]
            )


def write_charts(
    out: Path, rows: Sequence[PatternFigures], records: Sequence[CellRecord]
) -> list[Path]:
    """``success_vs_tokens.png`` and ``latency.png``, each with a panel per suite.

    Raises:
        ModuleNotFoundError: matplotlib is not installed (the message says how to get it).
    """
    charts = {
        "success_vs_tokens.png": success_figure(rows),
        "latency.png": latency_figure(records),
    }
    for name, figure in charts.items():
        figure.savefig(out / name, dpi=120)
    return [out / name for name in charts]


BASELINE = "react"
"""The pattern the others are compared with: one tool call per model turn, as in the
ReAct paper (Yao et al., 2023), the sequential baseline the planning papers measure against."""


def relative_table(rows: Sequence[PatternFigures], baseline: str = BASELINE) -> str:
    """Each pattern's calls, tokens and median wall time as ratios to ``baseline`` on the
    same suite, with both success rates; empty when the baseline did not run."""
    lines = [
        f"| suite | pattern | calls vs {baseline} | tokens vs {baseline} "
        f"| wall vs {baseline} | success ({baseline} → pattern) |",
        "|---|---|---:|---:|---:|---|",
    ]
    bases = {row.suite: row for row in rows if row.pattern == baseline}
    for row in rows:
        base = bases.get(row.suite)
        if base is None or row.pattern == baseline:
            continue
        lines.append(
            f"| {row.suite} | {row.pattern} | {_ratio(row.model_calls, base.model_calls)} "
            f"| {_ratio(row.tokens, base.tokens)} "
            f"| {_ratio(row.wall_median_s, base.wall_median_s)} "
            f"| {base.success_rate:.0%} → {row.success_rate:.0%} |"
        )
    return "\n".join(lines) + "\n" if len(lines) > 2 else ""


def _ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}×" if base else "-"
