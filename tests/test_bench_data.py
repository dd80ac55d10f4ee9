"""The bench's data: scorers, suite files, task tools, the HotpotQA adapter, the shipped suites.

The shipped suites are checked against their own tools: every gold trajectory is
run step by step (``#N`` filled in from earlier outputs) and must produce what
the gold answer needs, so an oracle that follows the gold can succeed.
"""

from __future__ import annotations

import json
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from reasoning_graphs.bench.catalog import SHIPPED, shipped_names
from reasoning_graphs.bench.hotpotqa import load_hotpotqa
from reasoning_graphs.bench.scorers import Score, score, unit_test_evaluator
from reasoning_graphs.bench.suite import Suite, SuiteError, Table, Task, load_suite
from reasoning_graphs.bench.tools import task_tools
from reasoning_graphs.graphs import PATTERNS
from reasoning_graphs.review import parse_decisions
from reasoning_graphs.tools.spec import ToolSpec


def task(answer: str, scorer: str = "exact", **fields: Any) -> Task:
    return Task(id="t", question="?", answer=answer, scorer=scorer, **fields)


# scorers


@pytest.mark.parametrize(
    ("answer", "gold", "correct"),
    [
        ("The Eiffel Tower!", "eiffel tower", True),
        ("  an   apple ", "Apple", True),
        ("Paris, France", "Paris", False),
        ("", "Paris", False),
    ],
)
def test_exact_match_is_normalised_but_strict(answer: str, gold: str, correct: bool) -> None:
    result = score(task(gold), answer)
    assert (result.correct, result.value) == (correct, float(correct))


def test_f1_gives_partial_credit_and_honours_the_threshold() -> None:
    partial = score(task("Agathe Hollin", "f1"), "Hollin")
    assert partial.value == pytest.approx(2 / 3)
    assert not partial.correct
    assert score(task("Agathe Hollin", "f1", scorer_options={"threshold": 0.6}), "Hollin").correct
    assert score(task("Agathe Hollin", "f1"), "agathe hollin.").value == 1.0


def test_f1_gives_yes_and_no_no_shared_credit() -> None:
    assert score(task("yes", "f1"), "no").value == 0.0
    assert score(task("yes", "f1"), "yes it is").value == 0.0
    assert score(task("yes", "f1"), "Yes.").correct


@pytest.mark.parametrize(
    ("answer", "gold", "correct"),
    [
        ("The answer is 395.", "395", True),
        ("23*17+4 = 395", "395", True),
        ("In total 1,853 pens", "1853", True),
        ("1853", "1,853", True),
        ("about 2.5 km/h", "2.5", True),
        ("126.0", "126", True),
        ("-7 degrees", "-7", True),
        ("It is 394.", "395", False),
        ("I do not know.", "395", False),
    ],
)
def test_numeric_reads_the_last_number(answer: str, gold: str, correct: bool) -> None:
    assert score(task(gold, "numeric"), answer).correct is correct


def test_numeric_tolerance_is_relative() -> None:
    loose = task("100", "numeric", scorer_options={"tolerance": 0.01})
    assert score(loose, "100.9").correct
    assert not score(loose, "101.5").correct


CODE_TESTS = "assert add(1, 2) == 3\nassert add(-1, 1) == 0\nassert add(2, 2) == 4\n"


def code_task(**options: Any) -> Task:
    return task("", "unit_tests", tests=CODE_TESTS, scorer_options=options)


def test_unit_tests_score_the_share_of_asserts_that_pass() -> None:
    right = score(code_task(), "Here it is:\n```python\ndef add(a, b):\n    return a + b\n```")
    assert (right.correct, right.value) == (True, 1.0)
    wrong = score(
        code_task(), "```python\ndef add(a, b):\n    return a - b if a > 1 else a + b\n```"
    )
    assert not wrong.correct
    assert wrong.value == pytest.approx(2 / 3)
    assert "add(2, 2)" in wrong.detail


def test_unit_tests_take_the_last_python_block_else_any_block_else_the_text() -> None:
    wrong, right = "def add(a, b):\n    return 0\n", "def add(a, b):\n    return a + b\n"
    blocks = f"```python\n{wrong}```\n```text\n{wrong}```\n```python\n{right}```"
    assert score(code_task(), blocks).correct
    assert score(code_task(), "```\ndef add(a, b):\n    return a + b\n```").correct
    assert score(code_task(), "def add(a, b):\n    return a + b\n").correct


def test_code_with_a_syntax_error_scores_zero() -> None:
    result = score(code_task(), "```python\ndef add(a, b)\n    return a + b\n```")
    assert (result.correct, result.value) == (False, 0.0)
    assert "SyntaxError" in result.detail


def test_an_endless_loop_hits_the_time_limit() -> None:
    started = time.perf_counter()
    result = score(code_task(timeout=1), "def add(a, b):\n    while True:\n        pass\n")
    assert time.perf_counter() - started < 5
    assert (result.correct, result.value) == (False, 0.0)


def test_code_can_neither_end_the_run_nor_write_where_the_bench_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    leaky = "open('leak.txt', 'w').write('x')\ndef add(a, b):\n    return a + b\n"
    assert score(code_task(), leaky).correct
    assert list(tmp_path.iterdir()) == []
    exits = score(code_task(), "import sys\nsys.exit(0)\n")
    assert (exits.correct, exits.value) == (False, 0.0)


def test_the_reflexion_evaluator_reports_the_fraction_and_every_failure() -> None:
    evaluate = unit_test_evaluator(code_task())
    graded = evaluate("write add", "def add(a, b):\n    return 0\n")
    assert graded["score"] == pytest.approx(1 / 3)
    assert "add(1, 2)" in graded["feedback"]
    assert "add(2, 2)" in graded["feedback"]
    assert evaluate("write add", "def add(a, b):\n    return a + b\n")["score"] == 1.0
    with pytest.raises(SuiteError):
        unit_test_evaluator(task("x"))


def test_a_user_scorer_may_return_a_bool_a_number_or_a_score(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "my_scorers.py").write_text(
        "from reasoning_graphs.bench.scorers import Score\n"
        "def shouting(task, answer):\n    return answer.isupper()\n"
        "def length(task, answer):\n    return len(answer) / 10\n"
        "def verdict(task, answer):\n    return Score(True, 0.5, 'half')\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    assert score(task("", "my_scorers:shouting"), "YES").correct
    assert not score(task("", "my_scorers:shouting"), "yes").correct
    full = score(task("", "my_scorers:length"), "x" * 10)
    assert (full.correct, full.value) == (True, 1.0)
    half = score(task("", "my_scorers:length"), "x" * 5)
    assert (half.correct, half.value) == (False, 0.5)
    assert score(task("", "my_scorers:verdict"), "") == Score(True, 0.5, "half")
    with pytest.raises(SuiteError):
        score(task("", "my_scorers:missing"), "")


@pytest.mark.parametrize(
    "broken",
    [
        task("x", "fuzzy"),
        task("x", "unit_tests"),
        task("many", "numeric"),
        task("x", "unit_tests", tests="assert (\n"),
    ],
)
def test_scorers_refuse_tasks_they_cannot_score(broken: Task) -> None:
    with pytest.raises(SuiteError):
        score(broken, "x")


# suite files


def suite_file(tmp_path: Path, *lines: Any) -> Path:
    path = tmp_path / "suite.jsonl"
    path.write_text(
        "\n".join(line if isinstance(line, str) else json.dumps(line) for line in lines) + "\n"
    )
    return path


GOOD = {"id": "a", "question": "What is 1+1?", "answer": "2", "scorer": "numeric"}


@pytest.mark.parametrize(
    ("lines", "where"),
    [
        ([GOOD, "{not json"], ":2:"),
        ([{"suite": {"name": "s"}}, GOOD, {**GOOD, "id": "b", "colour": "red"}], ":3:"),
        (
            [
                GOOD,
                {**GOOD, "id": "b", "trajectory": [{"tool": "calculator", "args": {"x": "#1"}}]},
            ],
            ":2:",
        ),
        ([GOOD, GOOD], ":2:"),
        ([GOOD, {**GOOD, "id": "b", "patterns": ["tree_of_thought"]}], ":2:"),
        ([GOOD, {**GOOD, "id": "b", "scorer": "fuzzy"}], ":2:"),
    ],
    ids=["bad-json", "unknown-field", "bad-reference", "duplicate-id", "unknown-pattern", "scorer"],
)
def test_load_suite_names_the_bad_line(tmp_path: Path, lines: list[Any], where: str) -> None:
    with pytest.raises(SuiteError, match=where):
        load_suite(suite_file(tmp_path, *lines))


@pytest.mark.parametrize(
    "header",
    [{"patterns": ["tree_of_thought"]}, {"tool_dealy": 1}, {"tables": {"t": {"argument": "x"}}}],
    ids=["unknown-pattern", "unknown-field", "incomplete-table"],
)
def test_load_suite_refuses_a_bad_header(tmp_path: Path, header: dict[str, Any]) -> None:
    with pytest.raises(SuiteError):
        load_suite(suite_file(tmp_path, {"suite": header}, GOOD))


def test_load_suite_reads_the_header(tmp_path: Path) -> None:
    header = {"name": "demo", "patterns": ["react"], "docs": "notes", "tool_delay": 0.5}
    suite = load_suite(suite_file(tmp_path, {"suite": header}, GOOD))
    assert (suite.name, suite.patterns, suite.docs, suite.tool_delay) == (
        "demo",
        ("react",),
        tmp_path / "notes",
        0.5,
    )
    assert load_suite(suite_file(tmp_path, GOOD)).tool_delay == 0.0


# task tools


def tools_by_name(suite: Suite, one: Task, workspace: Path) -> dict[str, ToolSpec]:
    return {spec.name: spec for spec in task_tools(suite, one, workspace)}


HEIGHTS = Table("peak_height", "Height of a peak.", "peak", {"Mount Arvel": "4,212 m"})


def test_a_table_is_a_safe_lookup_that_names_only_the_missing_key(tmp_path: Path) -> None:
    suite = Suite(name="s", tasks=(), tables={"peak_height": HEIGHTS})
    lookup = tools_by_name(suite, task("x", tools=("peak_height",)), tmp_path)["peak_height"]
    assert (lookup.concurrency_safe, lookup.dangerous) == (True, False)
    assert list(lookup.argument_schema()["properties"]) == ["peak"]
    assert lookup.tool.invoke({"peak": " mount  ARVEL "}) == "4,212 m"
    with pytest.raises(ValueError, match="Korran") as missing:
        lookup.tool.invoke({"peak": "Korran Peak"})
    assert "Arvel" not in str(missing.value)


async def test_tool_delay_slows_lookups_and_searches_alike(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "a.md").write_text("Mount Arvel is a peak.\n")
    suite = Suite(
        name="s", tasks=(), tables={"peak_height": HEIGHTS}, docs=tmp_path / "docs", tool_delay=0.1
    )
    tools = tools_by_name(suite, task("x", tools=("peak_height", "search_docs")), tmp_path)
    calls = [
        ("peak_height", {"peak": "Mount Arvel"}, "4,212 m"),
        ("search_docs", {"query": "Arvel"}, "a.md"),
    ]
    for name, args, expected in calls:
        started = time.perf_counter()
        assert expected in tools[name].tool.invoke(args)
        assert time.perf_counter() - started >= 0.1
        started = time.perf_counter()
        assert expected in await tools[name].tool.ainvoke(args)
        assert time.perf_counter() - started >= 0.1


def test_workspace_tools_are_bound_to_the_cell_workspace(tmp_path: Path) -> None:
    tools = tools_by_name(
        Suite(name="s", tasks=()), task("x", tools=("write_file", "read_file")), tmp_path
    )
    assert tools["write_file"].dangerous
    tools["write_file"].tool.invoke({"path": "a.txt", "content": "hi"})
    assert (tmp_path / "a.txt").read_text() == "hi"
    assert tools["read_file"].tool.invoke({"path": "a.txt"}) == "hi"


@pytest.mark.parametrize("name", ["teleport", "search_docs"])
def test_a_tool_that_cannot_be_built_is_a_suite_error(tmp_path: Path, name: str) -> None:
    with pytest.raises(SuiteError, match=name):
        task_tools(Suite(name="s", tasks=()), task("x", tools=(name,)), tmp_path)


# the shipped suites


SHIPPED_SUITES = {name: load_suite(SHIPPED / f"{name}.jsonl") for name in shipped_names()}
SHIPPED_TASKS = [
    pytest.param(suite, one, id=f"{suite.name}/{one.id}")
    for suite in SHIPPED_SUITES.values()
    for one in suite.tasks
]


def test_every_described_suite_is_shipped_with_three_to_eight_tasks() -> None:
    expected = {"arithmetic", "lookup", "parallel", "chain", "code", "approval", "game24"}
    assert set(SHIPPED_SUITES) == expected
    for name in expected - {"game24"}:  # the Game of 24 has twenty puzzles
        assert 3 <= len(SHIPPED_SUITES[name].tasks) <= 8, name
    assert len(SHIPPED_SUITES["game24"].tasks) == 20
    assert set(SHIPPED_SUITES["game24"].patterns) == {"tot", "cot"}
    assert set(SHIPPED_SUITES["arithmetic"].patterns) == set(PATTERNS)
    assert set(SHIPPED_SUITES["code"].patterns) == {"react", "reflexion", "lats", "cot"}
    for name in ("lookup", "parallel", "chain", "approval"):
        assert "cot" not in SHIPPED_SUITES[name].patterns
    for name in ("lookup", "parallel", "chain"):
        assert SHIPPED_SUITES[name].tool_delay > 0


@pytest.mark.parametrize(("suite", "one"), SHIPPED_TASKS)
def test_a_shipped_task_is_complete_and_its_tools_resolve(
    suite: Suite, one: Task, tmp_path: Path
) -> None:
    tools = tools_by_name(suite, one, tmp_path)
    assert set(tools) == set(one.tools)
    assert {step.tool for step in one.trajectory} <= set(one.tools)
    for step in one.trajectory:
        assert set(step.args) <= set(tools[step.tool].argument_schema()["properties"])
    assert score(one, one.answer).correct
    if "cot" in suite.patterns_for(one):
        assert one.reasoning


def run_gold(suite: Suite, one: Task, workspace: Path) -> list[str]:
    """Each gold step's output, the step run with its references filled in."""
    tools = tools_by_name(replace(suite, tool_delay=0.0), one, workspace)
    outputs: dict[int, str] = {}
    for number, step in enumerate(one.trajectory, 1):
        outputs[number] = str(tools[step.tool].tool.invoke(step.resolved(outputs)))
    return list(outputs.values())


@pytest.mark.parametrize("one", SHIPPED_SUITES["arithmetic"].tasks, ids=lambda t: t.id)
def test_arithmetic_gold_computes_the_answer(one: Task, tmp_path: Path) -> None:
    outputs = run_gold(SHIPPED_SUITES["arithmetic"], one, tmp_path)
    assert score(one, outputs[-1]).correct
    assert score(one, one.reasoning or "").correct


@pytest.mark.parametrize("one", SHIPPED_SUITES["lookup"].tasks, ids=lambda t: t.id)
def test_lookup_gold_finds_each_hop_first(one: Task, tmp_path: Path) -> None:
    outputs = run_gold(SHIPPED_SUITES["lookup"], one, tmp_path)
    firsts = [output.split("\n\n")[0] for output in outputs]
    assert one.answer in firsts[-1]
    bridge = one.trajectory[-1].args["query"]
    assert any(word in firsts[0] for word in bridge.split() if word[0].isupper()), firsts[0]


@pytest.mark.parametrize("one", SHIPPED_SUITES["chain"].tasks, ids=lambda t: t.id)
def test_chain_gold_ends_at_the_answer(one: Task, tmp_path: Path) -> None:
    assert len(one.trajectory) == 4
    assert [step.references() for step in one.trajectory[1:]] == [[1], [2], [3]]
    assert run_gold(SHIPPED_SUITES["chain"], one, tmp_path)[-1] == one.answer


def magnitude(value: str) -> float:
    return float(value.split()[0].replace(",", ""))


@pytest.mark.parametrize("one", SHIPPED_SUITES["parallel"].tasks, ids=lambda t: t.id)
def test_parallel_gold_compares_independent_lookups(one: Task, tmp_path: Path) -> None:
    assert 3 <= len(one.trajectory) <= 4
    assert all(not step.references() for step in one.trajectory)
    outputs = run_gold(SHIPPED_SUITES["parallel"], one, tmp_path)
    keys = [next(iter(step.args.values())) for step in one.trajectory]
    values = dict(zip(keys, map(magnitude, outputs), strict=True))
    pick = min if any(word in one.question for word in ("lowest", "first")) else max
    assert pick(values, key=values.__getitem__) == one.answer


@pytest.mark.parametrize("one", SHIPPED_SUITES["code"].tasks, ids=lambda t: t.id)
def test_code_gold_passes_and_the_draft_fails_plausibly(one: Task) -> None:
    assert score(one, one.answer).correct
    draft = score(one, one.draft or "")
    assert not draft.correct
    assert 0 < draft.value < 1


@pytest.mark.parametrize("one", SHIPPED_SUITES["approval"].tasks, ids=lambda t: t.id)
def test_approval_decisions_leave_the_expected_files(one: Task, tmp_path: Path) -> None:
    tools = tools_by_name(SHIPPED_SUITES["approval"], one, tmp_path)
    assert all(tools[step.tool].dangerous for step in one.trajectory)
    assert len(one.decisions) == len(one.trajectory)
    for step, resume in zip(one.trajectory, one.decisions, strict=True):
        call = {"id": "c1", "name": step.tool, "args": dict(step.args), "description": ""}
        call["allowed_decisions"] = ["approve", "edit", "reject", "respond"]
        (decision,) = parse_decisions(resume, [call])  # type: ignore[list-item]
        if decision["type"] != "reject":
            tools[step.tool].tool.invoke(decision.get("args", step.args))
    for name, text in one.expect_files.items():
        path = tmp_path / name
        assert (path.read_text() if path.exists() else None) == text
    rejected = any(d.get("type") == "reject" for resume in one.decisions for d in resume)
    assert score(one, "not saved" if rejected else "saved").correct


# HotpotQA


OFFICIAL = {
    "_id": "q-official",
    "question": "Which lake feeds the river that runs past the Corrow Glassworks?",
    "answer": "Lake Ismere",
    "type": "bridge",
    "level": "medium",
    "supporting_facts": [["Corrow Glassworks", 1], ["River Orra", 0], ["Corrow Glassworks", 0]],
    "context": [
        ["Dunmere Playhouse", ["The Dunmere Playhouse is a theatre.", " It seats 400 people."]],
        ["Corrow Glassworks", ["The Corrow Glassworks made lamps.", " It stood by the Orra."]],
        ["River Orra", ["The River Orra flows out of Lake Ismere.", " It is 978 km long."]],
        ["Orra Bridge", ["The Orra Bridge is a stone bridge over the river Orra."]],
    ],
}
PARAGRAPHS = {
    "id": "q-paragraphs",
    "question": "Were Mirela Stavrou and Ilse Marrow both composers?",
    "answer": "yes",
    "type": "comparison",
    "level": "easy",
    "supporting_facts": [
        {"title": "Mirela Stavrou", "sent_id": 0},
        {"title": "Ilse Marrow", "sent_id": 0},
    ],
    "paragraphs": [
        {"title": "Mirela Stavrou", "sentences": ["Mirela Stavrou was a composer of operas."]},
        {
            "title": "Ilse Marrow",
            "sentences": ["Ilse Marrow was a composer.", "She lived by the sea."],
        },
        {"title": "Port Calder", "sentences": ["Port Calder is a town where a composer was born."]},
    ],
}


@pytest.fixture
def hotpot(tmp_path: Path) -> Path:
    path = tmp_path / "hotpot_dev_distractor.json"
    path.write_text(json.dumps([OFFICIAL, PARAGRAPHS]))
    return path


def test_hotpotqa_reads_both_formats_as_closed_world_tasks(hotpot: Path) -> None:
    suite = load_hotpotqa(hotpot)
    official, paragraphs = suite.tasks
    assert (official.id, paragraphs.id) == ("q-official", "q-paragraphs")
    assert "cot" not in suite.patterns
    assert [doc.title for doc in official.documents][:2] == [
        "Dunmere Playhouse",
        "Corrow Glassworks",
    ]
    assert official.documents[1].text == "The Corrow Glassworks made lamps. It stood by the Orra."
    assert len(paragraphs.documents) == 3
    for one in suite.tasks:
        assert (one.tools, one.scorer) == (("search_docs",), "f1")
    assert [step.args for step in official.trajectory] == [
        {"query": "Corrow Glassworks"},
        {"query": "River Orra"},
    ]
    assert [step.args["query"] for step in paragraphs.trajectory] == [
        "Mirela Stavrou",
        "Ilse Marrow",
    ]
    assert len(load_hotpotqa(hotpot, limit=1).tasks) == 1


def test_hotpotqa_search_ranks_the_supporting_paragraph_first(hotpot: Path, tmp_path: Path) -> None:
    suite = load_hotpotqa(hotpot)
    for one in suite.tasks:
        search = tools_by_name(suite, one, tmp_path)["search_docs"]
        for step in one.trajectory:
            title = step.args["query"]
            found = search.tool.invoke(dict(step.args))
            assert found.startswith(f"[1] {title} ("), found
            other = next(t for t in suite.tasks if t is not one)
            assert not any(doc.title in found for doc in other.documents)


def test_hotpotqa_records_f1_and_exact_match(hotpot: Path) -> None:
    official = load_hotpotqa(hotpot).tasks[0]
    assert score(official, "Lake Ismere").correct
    partial = score(official, "Ismere")
    assert (partial.correct, partial.value) == (False, pytest.approx(2 / 3))
    assert "EM" in partial.detail


@pytest.mark.parametrize(
    "content",
    [
        "{not json",
        json.dumps({"data": []}),
        json.dumps([]),
        json.dumps([{k: v for k, v in OFFICIAL.items() if k != "question"}]),
        json.dumps([{**OFFICIAL, "context": [["Only a title"]]}]),
        json.dumps([{**OFFICIAL, "supporting_facts": [["Nowhere", 0]]}]),
        json.dumps([{k: v for k, v in PARAGRAPHS.items() if k != "paragraphs"}]),
    ],
    ids=["not-json", "not-a-list", "empty", "no-question", "bad-paragraph", "bad-fact", "no-text"],
)
def test_hotpotqa_refuses_a_malformed_file(tmp_path: Path, content: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(content)
    with pytest.raises(SuiteError):
        load_hotpotqa(path)
