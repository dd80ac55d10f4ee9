"""The figures of a bench run, computed from its cell records alone.

Everything a table or chart shows is derived here from the records (the lines
of ``trajectories.jsonl``), so a saved run can be re-reported without running
it again, and the in-process and Ray executors are compared on equal terms.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path

from reasoning_graphs.bench.record import FAILURES, CellRecord, Failure

BAD_PRICES = (
    "prices are two numbers, dollars per million input and output tokens "
    "(e.g. 0.15,0.60), or a JSON file with 'input' and 'output'; got {value!r}"
)


@dataclass(frozen=True)
class Prices:
    """Dollars per million prompt and completion tokens."""

    input: float
    output: float

    def cost(self, prompt_tokens: float, completion_tokens: float) -> float:
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1_000_000


@dataclass(frozen=True)
class PatternFigures:
    """One pattern on one suite, over every task and repeat.

    Token, call and cost figures are means per cell; wall times are the median and
    the 90th percentile of the cells' wall times. ``tokens_estimated``: some cell's
    provider reported no usage, so its tokens are the pattern's estimates.
    """

    suite: str
    pattern: str
    cells: int
    successes: int
    model_calls: float
    prompt_tokens: float
    completion_tokens: float
    tool_calls: float
    approvals: float
    wall_median_s: float
    wall_p90_s: float
    cost: float | None
    failures: Mapping[Failure, int] = field(default_factory=dict)
    tokens_estimated: bool = False

    @property
    def success_rate(self) -> float:
        return self.successes / self.cells if self.cells else 0.0

    @property
    def tokens(self) -> float:
        return self.prompt_tokens + self.completion_tokens


def figures(records: Iterable[CellRecord], prices: Prices | None = None) -> list[PatternFigures]:
    """Per (suite, pattern), in the order the pairs first appear among the records."""
    groups: dict[tuple[str, str], list[CellRecord]] = {}
    for record in records:
        groups.setdefault((record.suite, record.pattern), []).append(record)
    return [_figures(suite, pattern, rows, prices) for (suite, pattern), rows in groups.items()]


def _figures(
    suite: str, pattern: str, rows: list[CellRecord], prices: Prices | None
) -> PatternFigures:
    def mean(values: Iterable[float]) -> float:
        return statistics.fmean(values)

    prompt = mean(row.prompt_tokens for row in rows)
    completion = mean(row.completion_tokens for row in rows)
    kinds = Counter(row.failure for row in rows if row.failure is not None)
    return PatternFigures(
        suite=suite,
        pattern=pattern,
        cells=len(rows),
        successes=sum(row.correct for row in rows),
        model_calls=mean(row.model_calls for row in rows),
        prompt_tokens=prompt,
        completion_tokens=completion,
        tool_calls=mean(row.tool_calls for row in rows),
        approvals=mean(row.approvals for row in rows),
        wall_median_s=statistics.median(row.wall_s for row in rows),
        wall_p90_s=percentile([row.wall_s for row in rows], 0.9),
        cost=prices.cost(prompt, completion) if prices else None,
        failures={kind: kinds[kind] for kind in FAILURES if kinds[kind]},
        tokens_estimated=any(row.tokens_estimated for row in rows),
    )


def percentile(values: list[float], fraction: float) -> float:
    """The ``fraction`` quantile by linear interpolation between the closest ranks."""
    ordered = sorted(values)
    position = (len(ordered) - 1) * fraction
    low = int(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def parse_prices(value: str) -> Prices:
    """``"0.15,0.60"`` or a JSON file path holding ``{"input": …, "output": …}``.

    Raises:
        ValueError: Neither form.
    """
    try:
        if "," in value:
            given, taken = (float(part) for part in value.split(","))
            return Prices(given, taken)
        data = json.loads(Path(value).read_text(encoding="utf-8"))
        return Prices(float(data["input"]), float(data["output"]))
    except (ValueError, OSError, KeyError, TypeError):
        raise ValueError(BAD_PRICES.format(value=value)) from None
