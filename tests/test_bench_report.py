"""The bench's figures, tables and charts, computed from cell records alone."""

from __future__ import annotations

import csv
from dataclasses import replace

import pytest

from reasoning_graphs.bench.metrics import Prices, figures, parse_prices, percentile
from reasoning_graphs.bench.record import CellRecord
from reasoning_graphs.bench.report import (
    markdown_table,
    read_records,
    relative_table,
    write_charts,
    write_csv,
    write_record,
)


def record(pattern: str, task: str, **fields: object) -> CellRecord:
    values: dict[str, object] = {
        "suite": "demo",
        "task": task,
        "pattern": pattern,
        "repeat": 0,
        "model": "oracle",
        "thread_id": f"{pattern}-{task}",
    }
    values.update(fields)
    return CellRecord(**values)  # type: ignore[arg-type]


RECORDS = [
    record(
        "react",
        "a",
        correct=True,
        model_calls=3,
        prompt_tokens=300,
        completion_tokens=30,
        tool_calls=2,
        wall_s=1.0,
    ),
    record(
        "react",
        "b",
        correct=False,
        failure="budget stop",
        model_calls=5,
        prompt_tokens=500,
        completion_tokens=50,
        tool_calls=4,
        wall_s=3.0,
    ),
    record(
        "react",
        "c",
        correct=False,
        failure="wrong answer",
        model_calls=4,
        prompt_tokens=400,
        completion_tokens=40,
        tool_calls=3,
        wall_s=2.0,
    ),
    record(
        "rewoo",
        "a",
        correct=True,
        model_calls=2,
        prompt_tokens=100,
        completion_tokens=60,
        tool_calls=2,
        wall_s=0.5,
    ),
]


def test_figures_per_pattern_from_records() -> None:
    react, rewoo = figures(RECORDS, Prices(input=1.0, output=2.0))
    assert (react.pattern, react.cells, react.successes) == ("react", 3, 1)
    assert react.success_rate == pytest.approx(1 / 3)
    assert react.model_calls == pytest.approx(4.0)
    assert react.prompt_tokens == pytest.approx(400.0)
    assert react.tool_calls == pytest.approx(3.0)
    assert react.wall_median_s == pytest.approx(2.0)
    assert react.wall_p90_s == pytest.approx(2.8)
    assert dict(react.failures) == {"wrong answer": 1, "budget stop": 1}
    # mean cost per task: (400 * 1 + 40 * 2) / 1e6 dollars
    assert react.cost == pytest.approx(480 / 1_000_000)
    assert (rewoo.cells, rewoo.successes, rewoo.failures) == (1, 1, {})


def test_percentile_interpolates_between_ranks() -> None:
    assert percentile([5.0], 0.9) == 5.0
    assert percentile([1.0, 2.0, 3.0, 4.0, 5.0], 0.5) == 3.0
    assert percentile([1.0, 2.0], 0.9) == pytest.approx(1.9)


def test_prices_from_a_pair_or_a_file(tmp_path) -> None:
    assert parse_prices("0.15,0.6") == Prices(0.15, 0.6)
    table = tmp_path / "prices.json"
    table.write_text('{"input": 3, "output": 15}')
    assert parse_prices(str(table)) == Prices(3.0, 15.0)
    for bad in ("cheap", "1,2,3", str(tmp_path / "missing.json")):
        with pytest.raises(ValueError, match="dollars per million"):
            parse_prices(bad)


def test_markdown_and_csv_carry_every_pattern(tmp_path) -> None:
    rows = figures(RECORDS)
    table = markdown_table(rows).splitlines()
    assert len(table) == 2 + len(rows)
    assert "cost" not in table[0]  # no prices, no cost column
    react_row = next(line for line in table if "| react |" in line)
    assert "1/3" in react_row
    write_csv(tmp_path / "results.csv", rows)
    with (tmp_path / "results.csv").open() as stream:
        parsed = list(csv.DictReader(stream))
    assert [row["pattern"] for row in parsed] == ["react", "rewoo"]
    assert parsed[0]["budget_stop"] == "1"
    assert float(parsed[0]["success_rate"]) == pytest.approx(0.3333, abs=1e-3)
    priced = markdown_table(figures(RECORDS, Prices(1.0, 2.0)))
    assert "cost ($)" in priced.splitlines()[0]


def test_records_round_trip_through_jsonl(tmp_path) -> None:
    path = tmp_path / "trajectories.jsonl"
    with path.open("w") as stream:
        for item in RECORDS:
            write_record(stream, item)
    assert read_records(path) == RECORDS
    assert figures(read_records(path)) == figures(RECORDS)


def test_charts_are_png_files(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    paths = write_charts(tmp_path, figures(RECORDS), RECORDS)
    assert {path.name for path in paths} == {"success_vs_tokens.png", "latency.png"}
    for path in paths:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_relative_table_compares_each_pattern_with_react_on_its_suite() -> None:
    rows = figures(RECORDS)
    lines = relative_table(rows).splitlines()
    assert len(lines) == 3  # header, rule, rewoo
    # rewoo: 2 calls against react's mean 4, 160 tokens against 440, 0.5 s against 2.0 s
    assert "| demo | rewoo | 0.50× | 0.36× | 0.25× | 33% → 100% |" in lines
    only_rewoo = [row for row in rows if row.pattern == "rewoo"]
    assert relative_table(only_rewoo) == ""


def test_estimated_tokens_are_marked_in_the_table() -> None:
    estimated = [replace(item, tokens_estimated=item.pattern == "rewoo") for item in RECORDS]
    rows = figures(estimated)
    assert [row.tokens_estimated for row in rows] == [False, True]
    table = markdown_table(rows)
    assert "| 100 |" not in table  # rewoo's 100 prompt tokens are shown as an estimate
    assert "~100" in table
