"""The command line, in-process with a scripted model: streaming, approvals, threads, errors."""

from __future__ import annotations

import io
import json
import sqlite3
from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, AIMessageChunk

from reasoning_graphs.cli import main as cli
from reasoning_graphs.cli.render import Printer
from reasoning_graphs.testing import ScriptedChatModel, tool_call


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
    monkeypatch.setattr(cli, "resolve_model", lambda spec: model)
    return model


def run_cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, *argv: str, stdin: str = ""
) -> tuple[int, str, str]:
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def thread_id_from(out: str) -> str:
    return out.splitlines()[0].split()[-1]


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

    code, out, _ = run_cli(monkeypatch, capsys, "run", "What is 23*17+4?", "--max-steps", "1")

    assert code == 0
    lines = out.splitlines()
    answers = [line for line in lines if line.startswith("Answer:")]
    assert answers == ["Answer: It is 395."]
    note = lines[lines.index("Answer: It is 395.") + 2]
    assert note.startswith("[")
    assert "395" in note


def test_the_printer_writes_each_token_as_it_arrives_and_completes_the_line() -> None:
    out = io.StringIO()
    printer = Printer(as_json=False, out=out, answer_nodes={"finish"})
    finish = {"langgraph_node": "finish"}

    printer.token(AIMessageChunk(content=" It", id="m1"), finish)
    assert out.getvalue() == "Answer: It"
    printer.token(AIMessageChunk(content=" is 395. ", id="m1"), finish)
    assert out.getvalue() == "Answer: It is 395. "
    printer.token(AIMessageChunk(content="plan", id="m2"), {"langgraph_node": "plan"})
    printer.token(AIMessageChunk(content="step", id="m3"), finish, inner=True)
    assert out.getvalue() == "Answer: It is 395. "

    final = AIMessage("It is 395.\n\n[Stopped early.]", response_metadata={"outcome": {}})
    printer.update("finish", {"messages": [final]})
    assert out.getvalue() == "Answer: It is 395. \n\n[Stopped early.]\n"


def test_text_before_a_tool_call_ends_the_streamed_line() -> None:
    out = io.StringIO()
    printer = Printer(as_json=False, out=out, answer_nodes={"think"})
    think = {"langgraph_node": "think"}

    printer.token(AIMessageChunk(content="Let me add.", id="m1"), think)
    call = {"name": "calculator", "args": '{"expression": "1+1"}', "id": "c1", "index": 0}
    printer.token(AIMessageChunk(content="", id="m1", tool_call_chunks=[call]), think)

    assert out.getvalue() == "Answer: Let me add.\n"


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

    assert code == 0
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
    assert "Observation: I wrote it myself." in out
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
        ["run", "q", "--max-steps", "zero"],
        ["run", "q", "--max-steps", "0"],
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


def test_max_steps_may_exceed_the_default(db, monkeypatch, capsys) -> None:
    steps = [tool_call("calculator", expression=f"{n}+1") for n in range(11)]
    use_model(monkeypatch, *steps, "Counted.")

    code, out, _ = run_cli(monkeypatch, capsys, "run", "Count.", "--max-steps", "12")

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

    assert code == 0
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
    from reasoning_graphs.nodes.judge import Judgement

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
