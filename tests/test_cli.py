"""The command line, in-process with a scripted model: streaming, approvals, threads, errors."""

from __future__ import annotations

import io
import json
import sqlite3
import time
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.tools import tool
from langgraph.config import get_stream_writer

from reasoning_graphs.cli import exits, runs
from reasoning_graphs.cli import main as cli
from reasoning_graphs.cli.render import Printer
from reasoning_graphs.cli.store import Store, StoreError
from reasoning_graphs.testing import ScriptedChatModel, tool_call, tool_calls
from tests.helpers.cli_driver import run_cli, thread_id_from


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "threads.sqlite"
    monkeypatch.setenv(cli.DB_ENV, str(path))
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "ws"
    folder.mkdir()
    return folder


def use_model(monkeypatch: pytest.MonkeyPatch, *script) -> ScriptedChatModel:
    model = ScriptedChatModel(script=list(script))
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)
    return model


def test_run_streams_thought_action_observation_answer(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch, tool_call("calculator", expression="23*17+4"), "23*17+4 = 395")

    code, out, err = run_cli(monkeypatch, capsys, "run", "What is 23*17+4?", "--model", "local")

    assert code == 0, err
    lines = out.splitlines()
    assert "Action: calculator(expression='23*17+4')" in lines
    assert "Observation: 395" in lines
    assert "Answer: 23*17+4 = 395" in lines
    thread_id = thread_id_from(out)
    code, listing, _ = run_cli(monkeypatch, capsys, "threads")
    assert thread_id in listing
    assert "answered" in listing


def test_json_lines(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch, tool_call("calculator", expression="2+2"), "4")

    code, out, _ = run_cli(monkeypatch, capsys, "run", "2+2?", "--json")

    assert code == 0
    events = [json.loads(line) for line in out.splitlines()]
    kinds = [e["event"] for e in events]
    assert kinds == ["note", "action", "observation", "token", "answer", "note"]
    assert events[1]["args"] == {"expression": "2+2"}
    assert events[4]["outcome"] == {"status": "answered"}


STREAMED_ANSWER = "23*17+4 is 395, as the calculator says."


def test_json_streams_the_answer_as_tokens_before_the_answer_event(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch, tool_call("calculator", expression="23*17+4"), STREAMED_ANSWER)

    code, out, _ = run_cli(monkeypatch, capsys, "run", "What is 23*17+4?", "--json")

    assert code == 0
    events = [json.loads(line) for line in out.splitlines()]
    tokens = [e for e in events if e["event"] == "token"]
    answer = next(e for e in events if e["event"] == "answer")
    assert len(tokens) > 1
    assert "".join(t["text"] for t in tokens) == answer["text"] == STREAMED_ANSWER
    assert {t["node"] for t in tokens} == {"think"}
    assert events.index(tokens[-1]) < events.index(answer)


def test_plain_output_has_one_answer_line_written_by_the_stream(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch, tool_call("calculator", expression="23*17+4"), STREAMED_ANSWER)

    code, out, _ = run_cli(monkeypatch, capsys, "run", "What is 23*17+4?")

    assert code == 0
    answers = [line for line in out.splitlines() if line.startswith("Answer:")]
    assert answers == [f"Answer: {STREAMED_ANSWER}"]
    assert out.splitlines()[-1].startswith("Note: Thread: ")


def test_an_incomplete_answer_streams_then_gets_its_note(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch, tool_call("calculator", expression="23*17+4"), "It is 395.")

    code, out, _ = run_cli(monkeypatch, capsys, "run", "What is 23*17+4?", "--max-model-calls", "1")

    assert code == exits.INCOMPLETE
    lines = out.splitlines()
    answers = [line for line in lines if line.startswith("Answer:")]
    assert answers == ["Answer: It is 395."]
    note = lines[lines.index("Answer: It is 395.") + 1]  # the note follows the answer
    assert note.startswith("Note: [")
    assert "395" in note


def test_the_printer_reports_answer_tokens_as_json_events_and_never_as_plain_lines() -> None:
    finish = {"langgraph_node": "finish"}
    call = {"name": "calculator", "args": '{"expression": "1+1"}', "id": "c1", "index": 0}
    plain, lines = io.StringIO(), io.StringIO()
    for printer in (
        Printer(as_json=False, out=plain, answer_nodes={"finish"}),
        Printer(as_json=True, out=lines, answer_nodes={"finish"}),
    ):
        printer.token(AIMessageChunk(content=" It", id="m1"), finish)
        printer.token(AIMessageChunk(content="plan", id="m2"), {"langgraph_node": "plan"})
        printer.token(AIMessageChunk(content="step", id="m3"), finish, inner=True)
        printer.token(AIMessageChunk(content="", id="m1", tool_call_chunks=[call]), finish)

    assert plain.getvalue() == ""  # the answer is printed once the run has finished
    assert [json.loads(line)["text"] for line in lines.getvalue().splitlines()] == [" It"]


def test_only_the_answer_streams(db, monkeypatch, capsys) -> None:
    """Plans and the joiner's verdict are structured; tool calls are not text."""
    from reasoning_graphs.graphs.llm_compiler.dag import TaskPlan, TaskSchema
    from reasoning_graphs.graphs.llm_compiler.join import JoinDecision

    plan = TaskPlan(tasks=[TaskSchema(id=1, tool="calculator", args={"expression": "6*7"})])
    use_model(monkeypatch, plan, JoinDecision(answer="42"))

    code, out, _ = run_cli(
        monkeypatch, capsys, "run", "6*7?", "--pattern", "llm_compiler", "--json"
    )

    assert code == 0
    events = [json.loads(line) for line in out.splitlines()]
    assert [e for e in events if e["event"] == "token"] == []
    assert [e["text"] for e in events if e["event"] == "answer"] == ["42"]


def test_the_person_approves_at_the_terminal(db, workspace, monkeypatch, capsys) -> None:
    use_model(monkeypatch, tool_call("write_file", path="a.txt", content="hi"), "written")

    code, out, _ = run_cli(
        monkeypatch, capsys, "run", "write", "--workspace", str(workspace), stdin="a\n"
    )

    assert code == 0
    assert (workspace / "a.txt").read_text() == "hi"
    assert "Approval: write_file(path='a.txt', content='hi')" in out


def test_the_person_edits_at_the_terminal(db, workspace, monkeypatch, capsys) -> None:
    use_model(monkeypatch, tool_call("write_file", path="a.txt", content="hi"), "written")

    run_cli(
        monkeypatch,
        capsys,
        "run",
        "write",
        "--workspace",
        str(workspace),
        stdin='e\nnot json\n{"path": "b.txt", "content": "edited"}\n',
    )

    assert not (workspace / "a.txt").exists()
    assert (workspace / "b.txt").read_text() == "edited"


def test_reject_all_never_writes(db, workspace, monkeypatch, capsys) -> None:
    use_model(monkeypatch, tool_call("write_file", path="a.txt", content="hi"), "ok, not written")

    code, out, _ = run_cli(
        monkeypatch, capsys, "run", "write", "--workspace", str(workspace), "--reject-all"
    )

    assert code == 0
    assert not (workspace / "a.txt").exists()
    assert "Decision: reject" in out


def test_no_one_at_the_terminal_then_resume(db, workspace, monkeypatch, capsys) -> None:
    use_model(monkeypatch, tool_call("write_file", path="a.txt", content="hi"), "done")

    code, out, _ = run_cli(monkeypatch, capsys, "run", "write", "--workspace", str(workspace))
    thread_id = thread_id_from(out)

    assert code == exits.WAITING
    assert f"reasoning-graphs resume {thread_id}" in out
    assert not (workspace / "a.txt").exists()
    _, listing, _ = run_cli(monkeypatch, capsys, "threads")
    assert "waiting for approval" in listing

    use_model(monkeypatch, "done")
    code, out, _ = run_cli(
        monkeypatch, capsys, "resume", thread_id, "--workspace", str(workspace), "--approve-all"
    )
    assert code == 0
    assert (workspace / "a.txt").read_text() == "hi"
    assert "Answer: done" in out

    code, out, _ = run_cli(monkeypatch, capsys, "resume", thread_id)
    assert code == 0
    assert "nothing to resume" in out


def test_resume_with_decisions_as_json(db, workspace, monkeypatch, capsys) -> None:
    use_model(monkeypatch, tool_call("write_file", path="a.txt", content="hi"), "done")
    _, out, _ = run_cli(monkeypatch, capsys, "run", "write", "--workspace", str(workspace))

    decisions = json.dumps([{"type": "respond", "content": "I wrote it myself."}])
    use_model(monkeypatch, "thanks")
    code, out, _ = run_cli(
        monkeypatch, capsys, "resume", thread_id_from(out), "--decisions", decisions
    )

    assert code == 0
    assert "Responded: write_file(path='a.txt', content='hi') → I wrote it myself." in out
    assert "Action: write_file" not in out  # a person answered in its place: it never ran
    assert not (workspace / "a.txt").exists()


def test_a_new_question_on_an_existing_thread_sees_earlier_turns(db, monkeypatch, capsys) -> None:
    model = use_model(monkeypatch, "Nice to meet you, Ada.", "You are Ada.")

    _, out, _ = run_cli(monkeypatch, capsys, "run", "I am Ada.")
    code, out, _ = run_cli(monkeypatch, capsys, "run", "Who am I?", "--thread", thread_id_from(out))

    assert code == 0
    assert "I am Ada." in [m.content for m in model.prompts[1]]


@pytest.mark.parametrize(
    "argv",
    [
        ["run", "q", "--pattern", "no_such_pattern"],
        ["run", "q", "--model", "nonsense:spec"],
        ["run", "q", "--max-model-calls", "zero"],
        ["run", "q", "--max-model-calls", "0"],
        ["run"],
        ["resume", "no-such-thread"],
        ["frobnicate"],
    ],
)
def test_bad_input_is_one_clear_line_and_exit_code_2(db, capsys, argv) -> None:
    code = cli.main(argv)

    out, err = capsys.readouterr()
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err + out


def test_bad_decisions_json(db, workspace, monkeypatch, capsys) -> None:
    use_model(monkeypatch, tool_call("write_file", path="a.txt", content="hi"), "done")
    _, out, _ = run_cli(monkeypatch, capsys, "run", "write", "--workspace", str(workspace))

    code, _, err = run_cli(monkeypatch, capsys, "resume", thread_id_from(out), "--decisions", "{")

    assert code == 2
    assert "--decisions" in err


@pytest.mark.parametrize(
    "decisions", ["null", '"maybe"', "[]", '["approve", "approve"]', '{"other-call": "approve"}']
)
def test_decisions_that_answer_nothing_are_refused_and_the_thread_waits(
    db, workspace, monkeypatch, capsys, decisions
) -> None:
    use_model(monkeypatch, tool_call("write_file", path="a.txt", content="hi"), "done")
    _, out, _ = run_cli(monkeypatch, capsys, "run", "write", "--workspace", str(workspace))
    thread_id = thread_id_from(out)

    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "resume",
        thread_id,
        "--workspace",
        str(workspace),
        "--decisions",
        decisions,
    )

    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err + out
    _, listing, _ = run_cli(monkeypatch, capsys, "threads")
    assert "waiting for approval" in listing
    code, out, _ = run_cli(
        monkeypatch,
        capsys,
        "resume",
        thread_id,
        "--workspace",
        str(workspace),
        "--decisions",
        '["approve"]',
    )
    assert code == 0
    assert (workspace / "a.txt").read_text() == "hi"


def test_max_model_calls_may_exceed_the_default(db, monkeypatch, capsys) -> None:
    steps = [tool_call("calculator", expression=f"{n}+1") for n in range(11)]
    use_model(monkeypatch, *steps, "Counted.")

    code, out, _ = run_cli(monkeypatch, capsys, "run", "Count.", "--max-model-calls", "12")

    assert code == 0
    assert "Answer: Counted." in out.splitlines()


def test_a_resume_keeps_the_runs_approvals(db, monkeypatch, capsys) -> None:
    use_model(
        monkeypatch,
        tool_call("calculator", expression="1+1"),
        tool_call("calculator", expression="2+2"),
        "done",
    )
    _, out, _ = run_cli(monkeypatch, capsys, "run", "Add.", "--approve", "calculator")
    thread_id = thread_id_from(out)

    code, out, _ = run_cli(monkeypatch, capsys, "resume", thread_id, "--decisions", '["approve"]')

    assert code == exits.WAITING
    assert "Observation: 2" in out.splitlines()
    assert "Observation: 4" not in out.splitlines()  # the second call waits for a person too
    assert f"reasoning-graphs resume {thread_id}" in out


def test_a_thread_file_from_before_limits_were_kept_still_opens(db, monkeypatch, capsys) -> None:
    with sqlite3.connect(db) as conn:
        conn.execute(
            "CREATE TABLE rg_threads (thread_id TEXT PRIMARY KEY, pattern TEXT NOT NULL, "
            "model TEXT NOT NULL, question TEXT NOT NULL, status TEXT NOT NULL, "
            "created TEXT NOT NULL, updated TEXT NOT NULL)"
        )
        conn.execute(
            "INSERT INTO rg_threads VALUES ('old1', 'react', 'local', 'q', 'answered', '', '')"
        )
    conn.close()

    code, out, _ = run_cli(monkeypatch, capsys, "threads", "--json")

    assert code == 0
    assert json.loads(out)["limits"] == {}


def test_a_failing_model_is_one_line_and_the_thread_survives(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch, ValueError("the server said no"))

    code, out, err = run_cli(monkeypatch, capsys, "run", "hi")

    assert code == 1
    assert err.strip().splitlines() == ["reasoning-graphs: error: ValueError: the server said no"]
    use_model(monkeypatch, "hello")
    code, out, _ = run_cli(monkeypatch, capsys, "resume", thread_id_from(out))
    assert code == 0
    assert "Answer: hello" in out


def test_docs_folder_enables_search(db, tmp_path, monkeypatch, capsys) -> None:
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "budget.md").write_text("The travel budget for 2026 is 4,000 euros.")
    use_model(monkeypatch, tool_call("search_docs", query="travel budget"), "4,000 euros")

    code, out, _ = run_cli(monkeypatch, capsys, "run", "budget?", "--docs", str(docs))

    assert code == 0
    observation = out[out.index("Observation:") : out.index("Answer:")]
    assert "budget.md" in observation
    assert "The travel budget for 2026 is 4,000 euros." in observation


def test_plan_execute_streams_its_inner_steps_and_asks_for_approval(
    db, workspace, monkeypatch, capsys
) -> None:
    from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan

    use_model(
        monkeypatch,
        Plan(steps=["Write the note."]),
        tool_call("write_file", path="note.txt", content="hi"),
        "The note is written.",
        Replan(response="Done: note.txt holds 'hi'."),
    )

    code, out, _ = run_cli(
        monkeypatch,
        capsys,
        "run",
        "write a note",
        "--pattern",
        "plan_execute",
        "--workspace",
        str(workspace),
        stdin="a\n",
    )

    assert code == 0
    assert "Action: write_file(path='note.txt', content='hi')" in out
    assert "Approval: write_file(path='note.txt', content='hi')" in out
    assert (workspace / "note.txt").read_text() == "hi"
    answers = [line for line in out.splitlines() if line.startswith("Answer:")]
    assert answers == ["Answer: Done: note.txt holds 'hi'."]
    assert "Result: The note is written." in out


@pytest.mark.parametrize(
    ("pattern", "script"),
    [
        (
            "rewoo",
            [
                {
                    "steps": [
                        {
                            "var": "E1",
                            "tool": "calculator",
                            "args": {"expression": "6*7"},
                            "reason": "multiply",
                        }
                    ]
                },
                "42",
            ],
        ),
        ("llm_compiler", "compiler"),
    ],
)
def test_planning_patterns_run_from_the_cli(db, monkeypatch, capsys, pattern, script) -> None:
    if script == "compiler":
        from reasoning_graphs.graphs.llm_compiler.dag import TaskPlan, TaskSchema
        from reasoning_graphs.graphs.llm_compiler.join import JoinDecision

        plan = TaskPlan(tasks=[TaskSchema(id=1, tool="calculator", args={"expression": "6*7"})])
        script = [plan, JoinDecision(answer="42")]
    use_model(monkeypatch, *script)

    code, out, _ = run_cli(monkeypatch, capsys, "run", "6*7?", "--pattern", pattern)

    assert code == 0
    assert "Action: calculator(expression='6*7')" in out
    assert "Observation: 42" in out
    assert [line for line in out.splitlines() if line.startswith("Answer:")] == ["Answer: 42"]


@pytest.mark.parametrize(
    ("pattern", "script"),
    [
        ("cot", ["6 times 7 is 42.\nAnswer: 42"]),
        ("reflexion", ["42", "judge:1.0"]),
        ("lats", ["42", "42", "42", "judge:1.0"]),
    ],
)
def test_reflective_and_search_patterns_run_from_the_cli(
    db, monkeypatch, capsys, pattern, script
) -> None:
    from reasoning_graphs.nodes.steps.judge import Judgement

    replies = [
        Judgement(feedback="Correct.", score=float(item.split(":")[1]))
        if item.startswith("judge:")
        else item
        for item in script
    ]
    use_model(monkeypatch, *replies)

    code, out, err = run_cli(monkeypatch, capsys, "run", "6*7?", "--pattern", pattern)

    assert code == 0, err
    answers = [line for line in out.splitlines() if line.startswith("Answer:")]
    assert answers == ["Answer: 42"]


def test_mode_chat_limits_the_run_and_stays_with_the_thread(db, monkeypatch, capsys) -> None:
    rounds = [tool_call("calculator", expression=f"{n}+1") for n in range(3)]
    use_model(monkeypatch, *rounds, "Counted.")
    code, out, _ = run_cli(monkeypatch, capsys, "run", "Count.")
    assert code == 0
    assert "Answer: Counted." in out.splitlines()

    use_model(monkeypatch, *rounds, "Counted.")
    code, out, _ = run_cli(monkeypatch, capsys, "run", "Count.", "--mode", "chat")
    thread_id = thread_id_from(out)

    assert code == exits.INCOMPLETE
    assert "Answer: Counted." not in out.splitlines()
    _, listing, _ = run_cli(monkeypatch, capsys, "threads", "--json")
    record = next(r for r in map(json.loads, listing.splitlines()) if r["thread_id"] == thread_id)
    assert record["status"] == "incomplete"
    assert record["limits"]["mode"] == "chat"

    use_model(monkeypatch, *rounds, "Counted.")
    code, out, _ = run_cli(monkeypatch, capsys, "run", "Again.", "--thread", thread_id)
    assert code == exits.INCOMPLETE
    assert "Answer: Counted." not in out.splitlines()  # the follow-up keeps the thread's mode


def test_an_unknown_mode_is_a_usage_error(db, capsys) -> None:
    code = cli.main(["run", "q", "--mode", "turbo"])

    _, err = capsys.readouterr()
    assert code == 2
    assert len(err.strip().splitlines()) == 1


def test_quiet_shows_progress_and_the_answer_only(db, monkeypatch, capsys) -> None:
    thinking = tool_calls(("calculator", {"expression": "23*17+4"}), content="I should compute.")
    use_model(monkeypatch, thinking, "23*17+4 = 395")

    code, out, err = run_cli(monkeypatch, capsys, "run", "What is 23*17+4?", "--quiet")

    assert code == 0, err
    lines = out.splitlines()
    assert [line for line in lines if "calculator" in line] == ["Ran calculator."]
    assert [line for line in lines if "395" in line] == ["Answer: 23*17+4 = 395"]
    assert not [line for line in lines if line.startswith(("Thought", "Observation"))]
    assert lines[0].startswith("Note: Thread ")  # how to find the thread again

    use_model(monkeypatch, thinking, "23*17+4 = 395")
    _, out, _ = run_cli(monkeypatch, capsys, "run", "What is 23*17+4?")
    assert "Thought: I should compute." in out.splitlines()  # the default shows thoughts


def test_quiet_still_asks_for_approval(db, workspace, monkeypatch, capsys) -> None:
    use_model(monkeypatch, tool_call("write_file", path="a.txt", content="hi"), "written")

    code, out, _ = run_cli(
        monkeypatch, capsys, "run", "write", "--workspace", str(workspace), "--quiet", stdin="a\n"
    )

    assert code == 0
    assert "Approval: write_file(path='a.txt', content='hi')" in out
    assert (workspace / "a.txt").read_text() == "hi"


@tool
def flaky_lookup(topic: str) -> str:
    """Look a topic up; reports a retry while it waits."""
    get_stream_writer()({"event": "retry", "text": "retrying in 2 s", "delay": 2})
    return f"{topic}: found"


@pytest.mark.parametrize("quiet", [[], ["--quiet"]])
def test_progress_reports_are_shown(db, monkeypatch, capsys, quiet) -> None:
    use_model(monkeypatch, tool_call("flaky_lookup", topic="tides"), "Tides: found.")
    monkeypatch.setattr(runs, "default_tools", lambda workspace, docs: [flaky_lookup])

    code, out, _ = run_cli(monkeypatch, capsys, "run", "tides?", *quiet)

    assert code == 0
    assert "retrying in 2 s" in out.splitlines()
    use_model(monkeypatch, tool_call("flaky_lookup", topic="tides"), "Tides: found.")
    _, out, _ = run_cli(monkeypatch, capsys, "run", "tides?", "--json", *quiet)
    retry = next(e for e in map(json.loads, out.splitlines()) if e["event"] == "retry")
    assert retry["delay"] == 2


def read_trace(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def test_trace_holds_every_event_even_when_quiet(db, tmp_path, monkeypatch, capsys) -> None:
    trace = tmp_path / "trace.jsonl"
    use_model(monkeypatch, tool_call("calculator", expression="2+2"), "4")
    code, shown, _ = run_cli(monkeypatch, capsys, "run", "2+2?", "--json")
    assert code == 0

    use_model(monkeypatch, tool_call("calculator", expression="2+2"), "4")
    code, out, _ = run_cli(monkeypatch, capsys, "run", "2+2?", "--quiet", "--trace", str(trace))

    assert code == 0
    events = read_trace(trace)
    kinds = [json.loads(line)["event"] for line in shown.splitlines()]
    assert [e["event"] for e in events] == kinds
    assert "Observation" not in out
    observation = next(e for e in events if e["event"] == "observation")
    assert observation["text"] == "4"
    assert {e["thread_id"] for e in events} == {thread_id_from(out)}


def test_trace_of_plain_output_has_the_answer_and_a_resume_appends(
    db, workspace, tmp_path, monkeypatch, capsys
) -> None:
    trace = tmp_path / "trace.jsonl"
    use_model(monkeypatch, tool_call("write_file", path="a.txt", content="hi"), STREAMED_ANSWER)
    _, out, _ = run_cli(
        monkeypatch, capsys, "run", "write", "--workspace", str(workspace), "--trace", str(trace)
    )
    thread_id = thread_id_from(out)
    first_run = read_trace(trace)
    assert first_run[-1]["event"] == "note"  # waiting for a person

    use_model(monkeypatch, STREAMED_ANSWER)
    code, _, _ = run_cli(
        monkeypatch,
        capsys,
        "resume",
        thread_id,
        "--workspace",
        str(workspace),
        "--approve-all",
        "--trace",
        str(trace),
    )

    assert code == 0
    events = read_trace(trace)
    assert events[: len(first_run)] == first_run
    assert "decision" in [e["event"] for e in events[len(first_run) :]]
    answer = next(e for e in events if e["event"] == "answer")
    assert answer["text"] == STREAMED_ANSWER
    tokens = [e["text"] for e in events if e["event"] == "token"]
    assert "".join(tokens) == STREAMED_ANSWER
    assert all(e["thread_id"] == thread_id for e in events)


def test_a_trace_file_that_cannot_be_written_is_a_usage_error(db, tmp_path, capsys) -> None:
    code = cli.main(["run", "q", "--trace", str(tmp_path)])

    out, err = capsys.readouterr()
    assert code == 2
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err + out


GROUNDED_ANSWER = "Lyon had 522,250 inhabitants, says Marie."
REPORT = {
    "turn": 1,
    "claims": [
        {
            "text": "522,250",
            "kind": "number",
            "supported": True,
            "found_in": "observation",
            "support": {"call_id": "c1", "tool": "population", "excerpt": "Lyon: 522,250"},
        },
        {
            "text": "Marie",
            "kind": "name",
            "supported": False,
            "found_in": "answer",
            "support": None,
        },
    ],
    "supported": 1,
    "unsupported": 1,
}


def reporting_graph(report: dict | None):
    """A one-node graph that answers and leaves ``report`` in state, as a pattern would."""
    from langgraph.graph import END, START, StateGraph

    from reasoning_graphs.state import AgentState

    def answer(state: AgentState) -> dict:
        update = {"messages": [AIMessage(GROUNDED_ANSWER)], "outcome": {"status": "answered"}}
        return {**update, "grounding": report} if report is not None else update

    def build(*, model, tools, checkpointer, **limits):
        graph = StateGraph(AgentState)
        graph.add_node("answer", answer)
        graph.add_edge(START, "answer")
        graph.add_edge("answer", END)
        return graph.compile(checkpointer=checkpointer)

    return lambda pattern: build


@pytest.mark.parametrize("output", [[], ["--quiet"]])
def test_explain_shows_each_claim_and_its_observation(db, monkeypatch, capsys, output) -> None:
    use_model(monkeypatch)
    monkeypatch.setattr(runs, "graph_builder", reporting_graph(REPORT))

    code, out, err = run_cli(monkeypatch, capsys, "run", "Lyon?", "--explain", *output)

    assert code == 0, err
    lines = out.splitlines()
    backed = next(line for line in lines if "522,250" in line and "population" in line)
    assert "c1" in backed
    assert "Lyon: 522,250" in backed
    unbacked = next(
        line for line in lines if "Marie" in line and line != f"Answer: {GROUNDED_ANSWER}"
    )
    assert "population" not in unbacked
    assert lines.index(backed) > lines.index(f"Answer: {GROUNDED_ANSWER}")

    use_model(monkeypatch)
    _, plain, _ = run_cli(monkeypatch, capsys, "run", "Lyon?", *output)
    assert "population" not in plain  # only asked for


@pytest.mark.parametrize("output", [[], ["--quiet"]])
def test_explain_as_json_carries_the_report(db, monkeypatch, capsys, output) -> None:
    use_model(monkeypatch)
    monkeypatch.setattr(runs, "graph_builder", reporting_graph(REPORT))

    code, out, _ = run_cli(monkeypatch, capsys, "run", "Lyon?", "--explain", "--json", *output)

    assert code == 0
    grounding = next(e for e in map(json.loads, out.splitlines()) if e["event"] == "grounding")
    assert grounding["report"] == REPORT


def test_explain_never_shows_an_earlier_questions_report(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch)
    monkeypatch.setattr(runs, "graph_builder", reporting_graph(REPORT))
    _, out, _ = run_cli(monkeypatch, capsys, "run", "Lyon?")

    monkeypatch.setattr(runs, "graph_builder", reporting_graph(None))
    code, out, _ = run_cli(
        monkeypatch, capsys, "run", "And Paris?", "--thread", thread_id_from(out), "--explain"
    )

    assert code == 0
    assert "Lyon: 522,250" not in out
    assert "No grounding report" in out


def test_the_library_logs_and_never_prints() -> None:
    import ast

    import reasoning_graphs

    package = Path(reasoning_graphs.__file__).parent
    printing = [
        f"{path.relative_to(package)}:{node.lineno}"
        for path in package.rglob("*.py")
        if "cli" not in path.relative_to(package).parts
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "print"
    ]
    assert printing == []


def test_log_level_debug_shows_why_a_run_failed(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch, ValueError("the server said no"))

    code, _, err = run_cli(monkeypatch, capsys, "--log-level", "debug", "run", "hi")

    assert code == 1
    assert "Traceback" in err
    assert "the server said no" in err


def test_a_model_call_past_the_timeout_stops_the_run_honestly(db, monkeypatch, capsys) -> None:
    model = ScriptedChatModel(script=["never shown"], delay=30)
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)

    started = time.monotonic()
    _, out, err = run_cli(monkeypatch, capsys, "run", "hi", "--model-timeout", "0.3")

    assert time.monotonic() - started < 10
    assert "0.3 s" in out  # the answer says why it stopped
    assert "never shown" not in out
    assert "Traceback" not in err
    assert len(model.calls) == 1


def test_a_retried_model_call_is_announced(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch, TimeoutError("read timed out"), "fine")

    code, out, _ = run_cli(monkeypatch, capsys, "run", "hi", "--quiet")

    assert code == 0
    assert any(line.startswith("retrying in ") for line in out.splitlines())
    assert "Answer: fine" in out.splitlines()


@pytest.mark.parametrize("flag", ["--model-timeout", "--idle-timeout", "--time-budget"])
def test_timeouts_must_be_positive(db, monkeypatch, capsys, flag) -> None:
    code, _, err = run_cli(monkeypatch, capsys, "run", "hi", flag, "0")

    assert code == 2
    assert flag in err


def test_the_workspace_travels_with_the_thread(db, workspace, tmp_path, monkeypatch, capsys):
    use_model(monkeypatch, tool_call("write_file", path="a.txt", content="hi"), "done")
    code, out, _ = run_cli(monkeypatch, capsys, "run", "write", "--workspace", str(workspace))
    thread_id = thread_id_from(out)

    assert code == exits.WAITING
    assert f"at {workspace.resolve() / 'a.txt'}" in out  # the person sees where it writes
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # resumed from another folder, without --workspace

    code, _, _ = run_cli(monkeypatch, capsys, "resume", thread_id, "--decisions", '["approve"]')

    assert code == exits.ANSWERED
    assert (workspace / "a.txt").read_text() == "hi"
    assert not (elsewhere / "a.txt").exists()

    use_model(monkeypatch, tool_call("write_file", path="b.txt", content="again"), "done")
    follow_up = ("run", "again", "--thread", thread_id, "--approve-all")
    code, _, _ = run_cli(monkeypatch, capsys, *follow_up)

    assert code == exits.ANSWERED
    assert (workspace / "b.txt").exists()
    assert not (elsewhere / "b.txt").exists()


def test_labels_are_not_doubled(db, monkeypatch, capsys) -> None:
    plan = {"steps": [{"var": "E1", "tool": "calculator", "args": {"expression": "1+1"}}]}
    plan["steps"][0]["reason"] = "add"
    use_model(monkeypatch, plan, "It is 2.")
    _, out, _ = run_cli(monkeypatch, capsys, "run", "1+1?", "--pattern", "rewoo")

    plan_lines = [line for line in out.splitlines() if line.startswith("Plan:")]
    assert plan_lines
    assert not any(line.startswith("Plan: Plan:") for line in plan_lines)

    use_model(monkeypatch, "")
    _, out, _ = run_cli(monkeypatch, capsys, "run", "hi")
    assert "Answer" not in out.splitlines()  # never a bare label
    assert any(line.startswith("Answer: ") for line in out.splitlines())


def test_a_rejection_without_a_reason_says_none_was_given(db, workspace, monkeypatch, capsys):
    use_model(monkeypatch, tool_call("write_file", path="a.txt", content="hi"), "ok")

    _, out, _ = run_cli(
        monkeypatch, capsys, "run", "write", "--workspace", str(workspace), stdin="r\n\n"
    )

    (observation,) = [line for line in out.splitlines() if line.startswith("Rejected:")]
    assert observation.count("rejected") == 1


def test_reflexion_prints_its_answer_once(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch, "It is 2.", {"score": 0.9, "feedback": "Right."})

    _, out, _ = run_cli(monkeypatch, capsys, "run", "1+1?", "--pattern", "reflexion")

    assert [line for line in out.splitlines() if "It is 2." in line] == ["Answer: It is 2."]


def test_a_step_result_that_is_not_the_answer_is_still_shown(db, monkeypatch, capsys) -> None:
    script = [{"steps": ["Add 1+1.", "Report."]}, "2", "The sum is 2.", {"response": "It is 2."}]
    use_model(monkeypatch, *script)

    _, out, _ = run_cli(monkeypatch, capsys, "run", "1+1?", "--pattern", "plan_execute")

    lines = out.splitlines()
    assert "Result: 2" in lines
    assert "Result: The sum is 2." in lines
    assert lines.index("Result: The sum is 2.") < lines.index("Answer: It is 2.")


def test_a_store_that_keeps_nothing_is_refused() -> None:
    with pytest.raises(StoreError, match="memory"):
        Store("memory")
