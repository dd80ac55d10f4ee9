"""``reasoning-graphs run --memory``: lessons and notes kept beside the threads, per namespace."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from reasoning_graphs.cli import exits, runs
from reasoning_graphs.cli import main as cli
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from tests.helpers.cli_driver import run_cli, thread_id_from
from tests.test_memory import ADVICE, MARS, MARS_AGAIN, failing_then_fixed


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "threads.sqlite"
    monkeypatch.setenv(cli.DB_ENV, str(path))
    return path


def use_model(monkeypatch: pytest.MonkeyPatch, model: ScriptedChatModel) -> ScriptedChatModel:
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)
    return model


def first_prompt(model: ScriptedChatModel) -> str:
    return "\n".join(str(message.content) for message in model.prompts[0])


def answered_at_once() -> ScriptedChatModel:
    return ScriptedChatModel(script=["2", Judgement(feedback="Right.", score=1.0)])


def test_memory_carries_a_lesson_to_a_new_thread_in_its_namespace_only(db, monkeypatch, capsys):
    use_model(monkeypatch, failing_then_fixed())
    code, _, err = run_cli(monkeypatch, capsys, "run", MARS, "--pattern", "reflexion", "--memory")
    assert code == exits.ANSWERED, err

    later = use_model(monkeypatch, answered_at_once())
    code, _, err = run_cli(
        monkeypatch, capsys, "run", MARS_AGAIN, "--pattern", "reflexion", "--memory"
    )
    assert code == exits.ANSWERED, err
    assert ADVICE in first_prompt(later)

    for flags in (["--memory", "alice"], []):  # another namespace, and no memory at all
        other = use_model(monkeypatch, answered_at_once())
        code, _, err = run_cli(
            monkeypatch, capsys, "run", MARS_AGAIN, "--pattern", "reflexion", *flags
        )
        assert code == exits.ANSWERED, err
        assert ADVICE not in first_prompt(other)

    with sqlite3.connect(db) as conn:  # the store's tables sit beside the checkpoints
        assert conn.execute("SELECT count(*) FROM store").fetchone() == (1,)


def test_memory_gives_the_model_remember_and_recall(db, monkeypatch, capsys) -> None:
    writer = ScriptedChatModel(script=[tool_call("remember", note="Prefers metric units."), "Ok."])
    use_model(monkeypatch, writer)
    code, out, err = run_cli(monkeypatch, capsys, "run", "I prefer metric units.", "--memory", "bo")
    assert code == exits.ANSWERED, err
    assert {"remember", "recall"} <= set(writer.calls[0].tools)

    use_model(
        monkeypatch, ScriptedChatModel(script=[tool_call("recall", query="units"), "Metric."])
    )
    code, out, err = run_cli(monkeypatch, capsys, "run", "Which units?", "--memory", "bo")
    assert code == exits.ANSWERED, err
    assert "Observation: [1] Prefers metric units." in out.splitlines()

    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT prefix FROM store").fetchall() == [
            ("reasoning_graphs.bo.notes",)
        ]

    plain = use_model(monkeypatch, ScriptedChatModel(script=["Hi."]))
    run_cli(monkeypatch, capsys, "run", "Hello")
    assert "recall" not in plain.calls[0].tools


@pytest.mark.parametrize("name", ["../x", "a.b", "a b"])
def test_a_hostile_namespace_is_a_usage_error(db, monkeypatch, capsys, name) -> None:
    model = use_model(monkeypatch, answered_at_once())
    code, _, err = run_cli(monkeypatch, capsys, "run", MARS, "--memory", name)
    assert code == exits.USAGE
    assert "--memory" in err
    assert model.calls == []
    assert not db.exists()


def test_a_thread_with_memory_resumes_with_it(db, tmp_path, monkeypatch, capsys) -> None:
    first = ScriptedChatModel(
        script=[
            tool_call("remember", note="The report is due on Friday."),
            tool_call("write_file", path="notes.txt", content="Friday"),
        ]
    )
    use_model(monkeypatch, first)
    argv = ["run", "Note the deadline.", "--memory", "--workspace", str(tmp_path)]
    code, out, _ = run_cli(monkeypatch, capsys, *argv)
    assert code == exits.WAITING
    thread_id = thread_id_from(out)

    use_model(
        monkeypatch,
        ScriptedChatModel(script=[tool_call("recall", query="report due"), "Friday."]),
    )
    code, out, err = run_cli(monkeypatch, capsys, "resume", thread_id, "--approve-all")
    assert code == exits.ANSWERED, err
    assert "Observation: [1] The report is due on Friday." in out.splitlines()


def test_a_recalled_lesson_shows_on_screen_in_json_and_in_the_trace(
    db, tmp_path, monkeypatch, capsys
) -> None:
    use_model(monkeypatch, failing_then_fixed())
    run_cli(monkeypatch, capsys, "run", MARS, "--pattern", "reflexion", "--memory")

    use_model(monkeypatch, answered_at_once())
    code, out, err = run_cli(
        monkeypatch, capsys, "run", MARS_AGAIN, "--pattern", "reflexion", "--memory"
    )
    assert code == exits.ANSWERED, err
    (line,) = [line for line in out.splitlines() if line.startswith("Recalled:")]
    assert MARS in line  # the lesson's task, first of its lines
    assert ADVICE in out

    trace = tmp_path / "trace.jsonl"
    use_model(monkeypatch, answered_at_once())
    code, out, err = run_cli(
        monkeypatch, capsys, "run", MARS_AGAIN, "--pattern", "reflexion", "--memory",
        "--json", "--trace", str(trace),
    )  # fmt: skip
    assert code == exits.ANSWERED, err
    for lines in (out.splitlines(), trace.read_text().splitlines()):
        events = [json.loads(line) for line in lines]
        (recalled,) = [event for event in events if event["event"] == "recalled"]
        assert recalled["lesson"]["advice"] == ADVICE
