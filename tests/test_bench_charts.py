"""The bench's charts keep suites apart: suites differ in tool latency and task shape."""

from __future__ import annotations

import re
import sys

import pytest

from reasoning_graphs.bench.charts import latency_figure, latency_samples, success_figure
from reasoning_graphs.bench.metrics import figures
from reasoning_graphs.bench.record import CellRecord

pytest.importorskip("matplotlib")


def record(suite: str, pattern: str, task: str, wall_s: float, **fields: object) -> CellRecord:
    values: dict[str, object] = {
        "suite": suite,
        "task": task,
        "pattern": pattern,
        "repeat": 0,
        "model": "oracle",
        "thread_id": f"{suite}-{pattern}-{task}",
        "wall_s": wall_s,
    }
    values.update(fields)
    return CellRecord(**values)  # type: ignore[arg-type]


# arithmetic has no tool latency; lookup waits on every search, and cot does not run on it
RECORDS = [
    record("arithmetic", "react", "a", 0.3, correct=True, prompt_tokens=800, completion_tokens=20),
    record("arithmetic", "react", "b", 0.4, correct=False, prompt_tokens=900, completion_tokens=30),
    record("arithmetic", "rewoo", "a", 0.35, correct=True, prompt_tokens=900, completion_tokens=40),
    record("arithmetic", "cot", "a", 0.15, correct=True, prompt_tokens=200, completion_tokens=60),
    record("lookup", "react", "a", 1.4, correct=True, prompt_tokens=2300, completion_tokens=50),
    record("lookup", "react", "b", 1.6, correct=True, prompt_tokens=2500, completion_tokens=60),
    record("lookup", "rewoo", "a", 1.1, correct=False, prompt_tokens=1000, completion_tokens=90),
]


def test_latency_samples_are_grouped_by_suite_then_pattern() -> None:
    assert latency_samples(RECORDS) == {
        "arithmetic": {"react": [0.3, 0.4], "rewoo": [0.35], "cot": [0.15]},
        "lookup": {"react": [1.4, 1.6], "rewoo": [1.1]},
    }


def test_success_chart_has_one_series_per_pattern_and_suite() -> None:
    rows = figures(RECORDS)
    chart = success_figure(rows)

    assert [axes.get_title() for axes in chart.axes] == ["arithmetic", "lookup"]
    for axes in chart.axes:
        suite = axes.get_title()
        points = {
            collection.get_label(): [tuple(point) for point in collection.get_offsets()]
            for collection in axes.collections
        }
        assert points == {
            row.pattern: [(pytest.approx(row.tokens), pytest.approx(row.success_rate))]
            for row in rows
            if row.suite == suite
        }
    [legend] = chart.legends
    assert [text.get_text() for text in legend.get_texts()] == ["react", "rewoo", "cot"]
    assert re.search(r"\b2 suites\b", chart.get_suptitle())


def test_a_pattern_looks_the_same_in_every_panel() -> None:
    chart = success_figure(figures(RECORDS))
    looks: dict[str, set[tuple]] = {}
    for axes in chart.axes:
        for collection in axes.collections:
            colour = tuple(collection.get_facecolor()[0])
            marker = tuple(map(tuple, collection.get_paths()[0].vertices))
            looks.setdefault(collection.get_label(), set()).add((colour, marker))
    assert all(len(seen) == 1 for seen in looks.values()), looks
    assert len({next(iter(seen)) for seen in looks.values()}) == len(looks)


def test_latency_chart_has_one_panel_per_suite() -> None:
    chart = latency_figure(RECORDS)

    assert [axes.get_title() for axes in chart.axes] == ["arithmetic", "lookup"]
    ticks = [[label.get_text() for label in axes.get_xticklabels()] for axes in chart.axes]
    assert ticks == [["react", "rewoo", "cot"], ["react", "rewoo"]]
    arithmetic, lookup = chart.axes
    assert arithmetic.get_ylim()[1] < 1.0 < lookup.get_ylim()[1]  # each suite its own scale
    assert re.search(r"\b2 suites\b", chart.get_suptitle())


def test_a_single_suite_is_counted_in_the_singular() -> None:
    lookup = [item for item in RECORDS if item.suite == "lookup"]
    for chart in (latency_figure(lookup), success_figure(figures(lookup))):
        assert len(chart.axes) == 1
        assert re.search(r"\b1 suite\b", chart.get_suptitle())


@pytest.mark.filterwarnings("error")  # no complaint about a log scale of zero tokens
def test_many_suites_leave_no_empty_panel() -> None:
    many = [record(f"suite{n}", "react", "a", 0.1 * (n + 1)) for n in range(7)]  # no tokens
    assert len(latency_figure(many).axes) == 7
    assert len(success_figure(figures(many)).axes) == 7


def test_without_matplotlib_the_error_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    for module in ("matplotlib", "matplotlib.figure"):  # as if never installed
        monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ModuleNotFoundError, match=r"reasoning-graphs\[bench\]"):
        latency_figure(RECORDS)
