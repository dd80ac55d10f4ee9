"""A user's own graph through the command line: ``--graph``, and a question a tool asks.

The graphs (:mod:`asking_agent`) are ReAct with a plain LangChain tool that
calls ``interrupt()``: the person's answer is what the tool returns, so the
observation and the answer show that it arrived. An approval request stays ours
to handle as before; any other interrupt is a question, answered with a line of text.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reasoning_graphs.cli import exits
from reasoning_graphs.cli import main as cli
from tests.helpers import HELPERS
from tests.helpers.asking_agent import CHOICES, QUESTION
from tests.helpers.cli_driver import run_cli, thread_id_from

AGENT = HELPERS / "asking_agent.py"
TEXT_GRAPH = f"{AGENT}:text_question"
DICT_GRAPH = f"{AGENT}:dict_question"
APPROVED_GRAPH = f"{AGENT}:approved_question"
DEPLOYED = "deployed shop from {branch}"


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "threads.sqlite"
    monkeypatch.setenv(cli.DB_ENV, str(path))
    return path


def questions_in(out: str) -> list[str]:
    return [
        line.removeprefix("Question: ")
        for line in out.splitlines()
        if line.startswith("Question: ")
    ]


def thread_status(monkeypatch, capsys, thread_id: str) -> str:
    _, out, _ = run_cli(monkeypatch, capsys, "threads", "--json")
    return next(e for e in map(json.loads, out.splitlines()) if e["thread_id"] == thread_id)[
        "status"
    ]


def test_a_tools_text_question_is_asked_and_the_answer_reaches_the_tool(
    db, monkeypatch, capsys
) -> None:
    code, out, err = run_cli(
        monkeypatch, capsys, "run", "Deploy the shop.", "--graph", TEXT_GRAPH, stdin="main\n"
    )

    assert code == exits.ANSWERED, err
    assert questions_in(out) == [QUESTION]
    lines = out.splitlines()
    assert f"Observation: {DEPLOYED.format(branch='main')}" in lines
    assert f"Answer: Done: {DEPLOYED.format(branch='main')}" in lines
    assert thread_status(monkeypatch, capsys, thread_id_from(out)) == "answered"


def test_a_dict_question_is_shown_as_json(db, monkeypatch, capsys) -> None:
    code, out, err = run_cli(
        monkeypatch, capsys, "run", "Deploy the shop.", "--graph", DICT_GRAPH, stdin="release\n"
    )

    assert code == exits.ANSWERED, err
    [question] = questions_in(out)
    assert json.loads(question) == {"question": QUESTION, "choices": CHOICES}
    assert f"Answer: Done: {DEPLOYED.format(branch='release')}" in out.splitlines()


def test_nobody_to_answer_leaves_the_thread_waiting_then_resume_answers(
    db, monkeypatch, capsys
) -> None:
    code, out, err = run_cli(monkeypatch, capsys, "run", "Deploy the shop.", "--graph", TEXT_GRAPH)
    thread_id = thread_id_from(out)

    assert code == exits.WAITING, err
    assert "Traceback" not in err
    assert f"reasoning-graphs resume {thread_id} --answer" in out
    assert thread_status(monkeypatch, capsys, thread_id) == "waiting for an answer"

    # still nobody: the thread keeps waiting
    code, out, _ = run_cli(monkeypatch, capsys, "resume", thread_id)
    assert code == exits.WAITING
    assert questions_in(out) == [QUESTION]

    code, out, err = run_cli(monkeypatch, capsys, "resume", thread_id, stdin="hotfix\n")
    assert code == exits.ANSWERED, err
    assert f"Answer: Done: {DEPLOYED.format(branch='hotfix')}" in out.splitlines()
    assert thread_status(monkeypatch, capsys, thread_id) == "answered"


def test_quiet_output_still_asks_the_question(db, monkeypatch, capsys) -> None:
    code, out, _ = run_cli(
        monkeypatch,
        capsys,
        "run",
        "Deploy the shop.",
        "--graph",
        TEXT_GRAPH,
        "--quiet",
        stdin="main\n",
    )

    assert code == exits.ANSWERED
    assert questions_in(out) == [QUESTION]
    assert f"Answer: Done: {DEPLOYED.format(branch='main')}" in out.splitlines()


def test_resume_takes_the_answer_from_a_flag(db, monkeypatch, capsys) -> None:
    _, out, _ = run_cli(monkeypatch, capsys, "run", "Deploy the shop.", "--graph", DICT_GRAPH)

    code, out, err = run_cli(monkeypatch, capsys, "resume", thread_id_from(out), "--answer", "main")

    assert code == exits.ANSWERED, err
    assert f"Observation: {DEPLOYED.format(branch='main')}" in out.splitlines()


def test_resume_decisions_give_an_answer_as_json(db, monkeypatch, capsys) -> None:
    _, out, _ = run_cli(monkeypatch, capsys, "run", "Deploy the shop.", "--graph", TEXT_GRAPH)

    code, out, err = run_cli(
        monkeypatch, capsys, "resume", thread_id_from(out), "--decisions", '{"branch": "main"}'
    )

    assert code == exits.ANSWERED, err
    assert f"Observation: {DEPLOYED.format(branch={'branch': 'main'})}" in out.splitlines()


def test_questions_asked_at_once_each_get_their_own_answer(db, monkeypatch, capsys) -> None:
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        "Order a shirt.",
        "--graph",
        f"{AGENT}:two_questions",
        stdin="first\nsecond\n",
    )

    assert code == exits.ANSWERED, err
    asked = questions_in(out)
    assert sorted(asked) == ["Which colour?", "Which size?"]
    replies = [line for line in out.splitlines() if line.startswith(("Draft: ", "Answer: "))]
    assert {line.split(": ", 1)[1] for line in replies} == {
        f"{asked[0]} first",
        f"{asked[1]} second",
    }
    assert len([line for line in replies if line.startswith("Answer: ")]) == 1  # the last reply


def test_json_output_carries_the_question_and_how_to_answer_it(db, monkeypatch, capsys) -> None:
    code, out, _ = run_cli(
        monkeypatch, capsys, "run", "Deploy the shop.", "--graph", DICT_GRAPH, "--json"
    )
    events = [json.loads(line) for line in out.splitlines()]
    thread_id = events[0]["thread_id"]

    assert code == exits.WAITING
    [question] = [e for e in events if e["event"] == "question"]
    assert question["value"] == {"question": QUESTION, "choices": CHOICES}
    assert f"reasoning-graphs resume {thread_id} --answer" in events[-1]["text"]

    code, out, _ = run_cli(monkeypatch, capsys, "resume", thread_id, "--json", "--answer", "main")
    events = [json.loads(line) for line in out.splitlines()]
    assert code == exits.ANSWERED
    [answer] = [e for e in events if e["event"] == "answer"]
    assert answer["text"] == f"Done: {DEPLOYED.format(branch='main')}"


def test_an_approval_is_asked_as_before_then_the_tools_question(db, monkeypatch, capsys) -> None:
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "run",
        "Deploy the shop.",
        "--graph",
        APPROVED_GRAPH,
        stdin="a\nmain\n",
    )

    assert code == exits.ANSWERED, err
    lines = out.splitlines()
    assert "Approval: deploy(service='shop')" in lines
    assert "Decision: approve" in lines
    assert questions_in(out) == [QUESTION]
    assert f"Answer: Done: {DEPLOYED.format(branch='main')}" in lines


def test_an_answer_is_not_a_decision(db, monkeypatch, capsys) -> None:
    _, out, _ = run_cli(monkeypatch, capsys, "run", "Deploy the shop.", "--graph", APPROVED_GRAPH)
    thread_id = thread_id_from(out)
    assert thread_status(monkeypatch, capsys, thread_id) == "waiting for approval"

    code, _, err = run_cli(monkeypatch, capsys, "resume", thread_id, "--answer", "main")
    assert code == exits.USAGE
    assert len(err.strip().splitlines()) == 1

    # --approve-all settles the approval; the tool's question still needs a person
    code, out, _ = run_cli(monkeypatch, capsys, "resume", thread_id, "--approve-all")
    assert code == exits.WAITING
    assert "Decision: approve" in out.splitlines()
    assert thread_status(monkeypatch, capsys, thread_id) == "waiting for an answer"
    code, out, _ = run_cli(monkeypatch, capsys, "resume", thread_id, "--answer", "main")
    assert code == exits.ANSWERED
    assert f"Answer: Done: {DEPLOYED.format(branch='main')}" in out.splitlines()


@pytest.mark.parametrize(
    "argv",
    [
        ["--graph", "no_such_module_here:graph"],
        ["--graph", f"{HELPERS / 'no_such_file.py'}:graph"],
        ["--graph", f"{AGENT}:no_such_graph"],
        ["--graph", f"{AGENT}:QUESTION"],
        ["--graph", f"{AGENT}:deploy"],
        ["--graph", "deployer"],  # no langgraph.json here
        ["--graph", TEXT_GRAPH, "--model", "local"],
        ["--graph", TEXT_GRAPH, "--pattern", "react"],
        ["--graph", TEXT_GRAPH, "--max-model-calls", "3"],
    ],
    ids=[
        "no-module",
        "no-file",
        "no-attribute",
        "a-string",
        "a-tool-not-a-graph",
        "no-langgraph-json",
        "with-model",
        "with-pattern",
        "with-limits",
    ],
)
def test_a_graph_that_cannot_load_is_one_line_and_exit_code_2(
    db, tmp_path, monkeypatch, capsys, argv
) -> None:
    monkeypatch.chdir(tmp_path)

    code, out, err = run_cli(monkeypatch, capsys, "run", "Deploy the shop.", *argv)

    assert code == exits.USAGE
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err + out


def test_a_name_langgraph_json_does_not_hold_is_refused(db, tmp_path, monkeypatch, capsys):
    (tmp_path / "langgraph.json").write_text(json.dumps({"graphs": {"deployer": TEXT_GRAPH}}))
    monkeypatch.chdir(tmp_path)

    code, _, err = run_cli(monkeypatch, capsys, "run", "Deploy the shop.", "--graph", "other")

    assert code == exits.USAGE
    assert "deployer" in err  # the names it does hold
    assert len(err.strip().splitlines()) == 1


# The console command, each call a process of its own, in the user's folder.


def console(
    *argv: str, cwd: Path, env: dict[str, str], stdin: str = ""
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "reasoning_graphs", *argv],
        cwd=cwd,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "REASONING_GRAPHS_DB": str(tmp_path / "threads.sqlite")}


def test_a_module_importable_from_the_current_folder_runs_then_resumes_elsewhere(
    env, tmp_path
) -> None:
    waiting = console(
        "run", "Deploy the shop.", "--graph", "asking_agent:dict_question", cwd=HELPERS, env=env
    )
    thread_id = thread_id_from(waiting.stdout)

    assert waiting.returncode == exits.WAITING, waiting.stderr
    assert "Traceback" not in waiting.stderr
    assert json.loads(questions_in(waiting.stdout)[0])["choices"] == CHOICES

    answered = console("resume", thread_id, cwd=HELPERS, env=env, stdin="release\n")
    assert answered.returncode == exits.ANSWERED, answered.stderr
    assert f"Observation: {DEPLOYED.format(branch='release')}" in answered.stdout.splitlines()


def test_a_graph_named_in_langgraph_json_runs_and_resumes_from_another_folder(
    env, tmp_path
) -> None:
    project = tmp_path / "project"
    project.mkdir()
    (project / "agent.py").write_text(AGENT.read_text())
    (project / "langgraph.json").write_text(
        json.dumps({"graphs": {"deployer": "./agent.py:text_question"}})
    )

    waiting = console("run", "Deploy the shop.", "--graph", "deployer", cwd=project, env=env)
    thread_id = thread_id_from(waiting.stdout)
    assert waiting.returncode == exits.WAITING, waiting.stderr
    assert questions_in(waiting.stdout) == [QUESTION]

    # the thread remembers which file its graph came from
    answered = console("resume", thread_id, "--answer", "main", cwd=tmp_path, env=env)
    assert answered.returncode == exits.ANSWERED, answered.stderr
    assert f"Answer: Done: {DEPLOYED.format(branch='main')}" in answered.stdout.splitlines()
