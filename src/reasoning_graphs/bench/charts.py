"""The bench's two charts, one panel per suite.

Suites differ in task shape and tool latency (a lookup waits on every search, arithmetic
does not), so their points and wall times are drawn apart, never pooled. A pattern keeps
one colour and marker in every panel, and one legend names them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

from reasoning_graphs.bench.metrics import PatternFigures
from reasoning_graphs.bench.record import CellRecord

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

NO_MATPLOTLIB = (
    "charts skipped: matplotlib is not installed (pip install 'reasoning-graphs[bench]')"
)
MARKERS = "osD^vP*X"
PANEL_COLUMNS = 3
PANEL_SIZE = (4.2, 3.2)  # inches per panel


def latency_samples(records: Iterable[CellRecord]) -> dict[str, dict[str, list[float]]]:
    """Wall times per suite, then per pattern, in the order they first appear."""
    samples: dict[str, dict[str, list[float]]] = {}
    for record in records:
        samples.setdefault(record.suite, {}).setdefault(record.pattern, []).append(record.wall_s)
    return samples


def success_figure(rows: Sequence[PatternFigures]) -> Figure:
    """Success rate against mean tokens per task: a panel per suite, a point per pattern.

    Raises:
        ModuleNotFoundError: matplotlib is not installed (the message says how to get it).
    """
    suites = list(dict.fromkeys(row.suite for row in rows))
    styles = _pattern_styles(row.pattern for row in rows)
    figure, panels = _panels(suites)
    for axes, suite in zip(panels, suites, strict=True):
        mine = [row for row in rows if row.suite == suite]
        for row in mine:
            axes.scatter(
                [row.tokens],
                [row.success_rate],
                label=row.pattern,
                s=50,
                alpha=0.8,
                **styles[row.pattern],
            )
        if all(row.tokens > 0 for row in mine):  # a cell that failed before any call has none
            _log_token_axis(axes)
        axes.set_ylim(-0.05, 1.05)
        axes.set_title(suite)
    drawn = {points.get_label(): points for axes in panels for points in axes.collections}
    figure.legend([drawn[pattern] for pattern in styles], list(styles), loc="outside right upper")
    figure.supxlabel("tokens per task (prompt + completion, mean)")
    figure.supylabel("success rate")
    figure.suptitle(f"Success against tokens per pattern ({_suites(len(suites))})")
    return figure


def latency_figure(records: Sequence[CellRecord]) -> Figure:
    """Wall time per task as a box per pattern, a panel per suite with its own scale.

    Raises:
        ModuleNotFoundError: matplotlib is not installed (the message says how to get it).
    """
    samples = latency_samples(records)
    figure, panels = _panels(list(samples))
    for axes, (suite, walls) in zip(panels, samples.items(), strict=True):
        axes.boxplot(list(walls.values()), tick_labels=list(walls))
        axes.set_title(suite)
        axes.tick_params(axis="x", labelrotation=30)
    figure.supylabel("wall time per task (s)")
    figure.suptitle(f"Latency per pattern ({_suites(len(samples))})")
    return figure


def _panels(suites: Sequence[str]) -> tuple[Figure, list[Axes]]:
    """A figure with one axes per suite, the unused cells of its last row removed.

    A bare ``Figure``, not pyplot: drawing the charts changes no backend and leaves no
    figure open in the caller's session (a notebook's, say).
    """
    try:
        from matplotlib.figure import Figure
    except ModuleNotFoundError:
        raise ModuleNotFoundError(NO_MATPLOTLIB) from None
    columns = min(PANEL_COLUMNS, len(suites)) or 1
    rows = max(1, math.ceil(len(suites) / columns))
    width, height = PANEL_SIZE
    figure = Figure(figsize=(width * columns + 1.5, height * rows + 0.8), layout="constrained")
    grid = figure.subplots(rows, columns, squeeze=False)
    cells = list(grid.flat)
    for unused in cells[len(suites) :]:
        unused.remove()
    return figure, cells[: len(suites)]


def _log_token_axis(axes: Axes) -> None:
    """A log scale labelled in plain numbers at 1, 2 and 5 of each decade, which stay legible
    in a narrow panel."""
    from matplotlib.ticker import LogLocator, NullFormatter, StrMethodFormatter

    axes.set_xscale("log")
    axes.xaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    axes.xaxis.set_major_formatter(StrMethodFormatter("{x:,.0f}"))
    axes.xaxis.set_minor_formatter(NullFormatter())


def _pattern_styles(patterns: Iterable[str]) -> dict[str, dict[str, Any]]:
    """A colour and marker per pattern, the same in every panel."""
    order = dict.fromkeys(patterns)
    return {
        pattern: {"color": f"C{index % 10}", "marker": MARKERS[index % len(MARKERS)]}
        for index, pattern in enumerate(order)
    }


def _suites(count: int) -> str:
    return f"{count} suite" if count == 1 else f"{count} suites"
