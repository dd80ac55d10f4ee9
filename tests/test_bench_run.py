"""The bench end to end: cells on fresh threads, honest failure kinds, the command, Ray.

Every run here uses the oracle with no sleeps, so the figures are exact and the
tests fast (the Ray executor has its own file).
"""

from __future__ import annotations

import csv
import json
from dataclasses import replace
from pathlib import Path

import pytest

from reasoning_graphs.bench import runner
from reasoning_graphs.bench.catalog import resolve_suites
from reasoning_graphs.bench.executors import run_local
from reasoning_graphs.bench.runner import BenchSettings, Cell, run_cell
from reasoning_graphs.bench.suite import Suite
from reasoning_graphs.checkpointers import open_checkpointer
from reasoning_graphs.cli.main import main
from reasoning_graphs.testing import ScriptedChatModel

FAST = BenchSettings(call_delay=0.0, token_delay=0.0)


def shipped(name: str, limit: int | None = None) -> Suite:
    return resolve_suites([name], limit=limit)[0]


def cell(suite: Suite, pattern: str, index: int = 0) -> Cell:
    return Cell(suite=suite, task=suite.tasks[index], pattern=pattern)


def thoughts(record: runner.CellRecord) -> int:
    return sum(1 for event in record.trajectory if event["kind"] == "thought")


@pytest.mark.parametrize("pattern", ["react", "rewoo", "llm_compiler", "plan_execute"])
def test_a_cell_counts_what_the_graph_did(pattern: str) -> None:
    suite = shipped("chain")
    record = run_cell(cell(suite, pattern), FAST)
    assert record.correct, record
    assert record.failure is None
    # the callbacks saw every call the pattern recorded in its own trajectory
    assert record.model_calls == thoughts(record) > 0
    assert record.tool_calls == len(suite.tasks[0].trajectory)
    assert record.prompt_tokens > 0
    assert record.completion_tokens > 0


def test_planning_patterns_make_fewer_calls_than_react_on_a_chain() -> None:
    suite = shipped("chain")
    calls = {p: run_cell(cell(suite, p), FAST).model_calls for p in ("react", "rewoo")}
    hops = len(suite.tasks[0].trajectory)
    assert calls == {"react": hops + 1, "rewoo": 2}


def test_an_approval_cell_resumes_with_the_scripted_decisions() -> None:
    suite = shipped("approval")
    for index, one in enumerate(suite.tasks):
        record = run_cell(cell(suite, "react", index), FAST)
        assert record.correct, record
        assert record.approvals == len(one.decisions) > 0


def test_a_wrong_answer_is_reported_as_one(monkeypatch: pytest.MonkeyPatch) -> None:
    guesser = ScriptedChatModel(script=["It is 7."])
    monkeypatch.setattr(runner, "model_for", lambda cell, settings: guesser)
    record = run_cell(cell(shipped("arithmetic"), "react"), FAST)
    assert (record.correct, record.failure, record.answer) == (False, "wrong answer", "It is 7.")


def test_a_spent_step_budget_is_a_budget_stop() -> None:
    suite = shipped("chain")
    record = run_cell(cell(suite, "react"), replace(FAST, max_model_calls=2))
    assert (record.correct, record.failure, record.status) == (False, "budget stop", "incomplete")
    assert record.reason


def test_an_unscripted_pause_is_an_error_not_a_hang() -> None:
    suite = shipped("approval")
    silent = replace(suite.tasks[0], decisions=())
    record = run_cell(Cell(suite=suite, task=silent, pattern="react"), FAST)
    assert record.failure == "error"
    assert "approval" in (record.error or "")


def test_unreadable_model_output_is_format_drift(monkeypatch: pytest.MonkeyPatch) -> None:
    junk = ScriptedChatModel(script=["I would like to maybe use a tool, perhaps."], cycle=True)
    monkeypatch.setattr(runner, "model_for", lambda cell, settings: junk)
    record = run_cell(cell(shipped("arithmetic"), "react_text"), replace(FAST, max_model_calls=3))
    assert record.format_errors > 0
    assert record.failure == "format drift"


def test_a_broken_checkpointer_is_an_error_record(tmp_path: Path) -> None:
    settings = replace(FAST, checkpointer=str(tmp_path / "no-such-folder" / "x.sqlite"))
    record = run_cell(cell(shipped("arithmetic"), "react"), settings)
    assert record.failure == "error"
    assert record.error


def test_every_cell_gets_its_own_thread_in_the_named_saver(tmp_path: Path) -> None:
    saver = tmp_path / "bench.sqlite"
    suite = shipped("arithmetic", limit=2)
    cells = [Cell(suite=suite, task=t, pattern=p) for t in suite.tasks for p in ("react", "cot")]
    records = list(run_local(cells, replace(FAST, checkpointer=str(saver)), concurrency=2))
    threads = {record.thread_id for record in records}
    assert len(threads) == len(cells)
    stored = {c.config["configurable"]["thread_id"] for c in open_checkpointer(saver).list(None)}
    assert threads <= stored


def test_reflexion_gains_on_the_code_task_where_react_keeps_its_draft() -> None:
    suite = shipped("code")
    react = run_cell(cell(suite, "react"), FAST)
    reflexion = run_cell(cell(suite, "reflexion"), FAST)
    assert (react.correct, react.failure) == (False, "wrong answer")
    assert reflexion.correct
    assert reflexion.model_calls > react.model_calls


def test_the_command_writes_tables_trajectories_and_charts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    argv = ["bench", "--suite", "arithmetic", "--suite", "parallel", "--patterns", "react,rewoo"]
    argv += ["--limit", "2", "--out", str(out), "--call-delay", "0", "--token-delay", "0"]
    argv += ["--concurrency", "2", "--prices", "0.15,0.60"]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "| parallel | rewoo |" in printed
    lines = (out / "trajectories.jsonl").read_text().splitlines()
    assert len(lines) == 2 * 2 * 2
    assert all(json.loads(line)["correct"] for line in lines)
    with (out / "results.csv").open() as stream:
        rows = list(csv.DictReader(stream))
    assert {(row["suite"], row["pattern"]) for row in rows} == {
        (s, p) for s in ("arithmetic", "parallel") for p in ("react", "rewoo")
    }
    assert all(float(row["cost"]) > 0 for row in rows)
    assert "bench --suite arithmetic" in (out / "results.md").read_text()
    for chart in ("success_vs_tokens.png", "latency.png"):
        assert (out / chart).read_bytes()[:4] == b"\x89PNG"
    assert (out / "checkpoints.sqlite").is_file()


@pytest.mark.parametrize(
    "argv",
    [
        ["--suite", "nonesuch"],
        ["--suite", "arithmetic", "--patterns", "react,telepathy"],
        ["--suite", "arithmetic", "--repeat", "0"],
        ["--suite", "code", "--patterns", "rewoo"],
        ["--suite", "arithmetic", "--prices", "free"],
    ],
)
def test_bad_bench_arguments_are_one_line_errors(
    argv: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", *argv, "--out", str(tmp_path)]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("reasoning-graphs: error:")
    assert "\n" not in error


def test_hotpotqa_data_runs_as_a_closed_world_suite(tmp_path: Path) -> None:
    question = {
        "_id": "q1",
        "question": "Which river runs through the town where Mirela Okand was born?",
        "answer": "Vesk",
        "type": "bridge",
        "level": "hard",
        "supporting_facts": [["Mirela Okand", 0], ["Tarrow", 0]],
        "context": [
            ["Mirela Okand", ["Mirela Okand is a painter born in Tarrow."]],
            ["Tarrow", ["Tarrow is a market town on the river Vesk."]],
            ["Okand Prize", ["The Okand Prize is awarded for landscape painting."]],
        ],
    }
    data = tmp_path / "hotpot.json"
    data.write_text(json.dumps([question]))
    out = tmp_path / "out"
    argv = ["bench", "--suite", str(data), "--patterns", "react,llm_compiler", "--out", str(out)]
    assert main([*argv, "--call-delay", "0", "--token-delay", "0", "--no-charts"]) == 0
    records = [json.loads(line) for line in (out / "trajectories.jsonl").read_text().splitlines()]
    assert [r["correct"] for r in records] == [True, True]
    assert all(r["tool_calls"] == 2 for r in records)
