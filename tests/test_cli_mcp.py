"""``reasoning-graphs run --mcp servers.json``: a real MCP server's tools in every tool-using
pattern, approvals for its destructive tools, the thread keeping its servers for a resume
in another process, and the servers closed when the command ends."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from reasoning_graphs.cli import exits, runs
from reasoning_graphs.graphs import PATTERNS
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from tests.helpers.cli_driver import run_cli, thread_id_from
from tests.helpers.mcp_servers import NotesLog, gone, stdio_servers
from tests.helpers.one_call import one_call
from tests.helpers.scripted_cli import run_process

TOOL_PATTERNS = [name for name, pattern in PATTERNS.items() if pattern.uses_tools]


@pytest.fixture
def notes(tmp_path: Path) -> NotesLog:
    return NotesLog(tmp_path / "notes.log")


@pytest.fixture
def servers_file(tmp_path: Path, notes: NotesLog) -> Path:
    path = tmp_path / "servers.json"
    path.write_text(json.dumps(stdio_servers(notes.path)))
    return path


@pytest.fixture
def env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    db = str(tmp_path / "threads.sqlite")
    monkeypatch.setenv("REASONING_GRAPHS_DB", db)
    monkeypatch.setenv("REASONING_GRAPHS_WORKSPACE", str(tmp_path))
    return {**os.environ, "REASONING_GRAPHS_DB": db}


def use_model(monkeypatch: pytest.MonkeyPatch, script: list[Any]) -> None:
    model = ScriptedChatModel(script=script)
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)


@pytest.mark.parametrize("pattern", TOOL_PATTERNS)
def test_every_tool_using_pattern_gets_the_servers_tools(
    env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    servers_file: Path,
    notes: NotesLog,
    pattern: str,
) -> None:
    script, _ = one_call(pattern, "add", {"a": 20, "b": 22}, "It is 42.")
    if pattern == "lats":  # three candidates: the call and two answers, each judged
        call, grade, answer, _ = script
        script = [call, answer, answer, grade, grade, grade]
    use_model(monkeypatch, script)

    code, out, err = run_cli(
        monkeypatch, capsys, "run", "--pattern", pattern, "--mcp", str(servers_file),
        "What is 20+22?",
    )  # fmt: skip

    assert code == exits.ANSWERED, err
    assert "Answer: It is 42." in out
    assert notes.ran("add 20 22") == 1
    assert all(gone(pid) for pid in notes.pids())  # closed when the command ended


def test_an_observation_of_content_blocks_shows_as_its_text(
    env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    servers_file: Path,
) -> None:
    use_model(monkeypatch, [tool_call("add", a=20, b=22), "42"])

    code, out, err = run_cli(monkeypatch, capsys, "run", "--mcp", str(servers_file), "20+22?")

    assert code == exits.ANSWERED, err
    assert "Observation: 42" in out.splitlines()


def test_a_destructive_tool_is_put_to_the_person_and_rejected_never_runs(
    env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    servers_file: Path,
    notes: NotesLog,
) -> None:
    use_model(monkeypatch, [tool_call("delete_note", title="todo"), "Kept it."])

    code, out, err = run_cli(
        monkeypatch, capsys, "run", "--mcp", str(servers_file), "--reject-all", "Delete todo."
    )

    assert code == exits.ANSWERED, err
    assert "delete_note" in out
    assert notes.ran("delete_note todo") == 0


def test_a_thread_resumed_in_another_process_gets_its_servers_back(
    env: dict[str, str], servers_file: Path, notes: NotesLog
) -> None:
    delete = [{"tool": "delete_note", "args": {"title": "todo"}}, "Deleted."]

    waiting = run_process(delete, "run", "--mcp", str(servers_file), "Delete todo.", env=env)

    assert waiting.returncode == exits.WAITING, waiting.stderr
    assert notes.ran("delete_note todo") == 0
    thread_id = thread_id_from(waiting.stdout)
    decisions = json.dumps([{"type": "approve"}])
    done = run_process(delete[1:], "resume", thread_id, "--decisions", decisions, env=env)

    assert done.returncode == exits.ANSWERED, done.stderr
    assert notes.ran("delete_note todo") == 1
    assert len(notes.pids()) == 2
    assert all(gone(pid) for pid in notes.pids())


@pytest.mark.parametrize(
    ("content", "problem"),
    [(None, "servers.json"), ("{", "servers.json"), ('{"mcpServers": {"x": {}}}', "'x'")],
)
def test_a_bad_servers_file_is_a_usage_error(
    env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    content: str | None,
    problem: str,
) -> None:
    path = tmp_path / "servers.json"
    if content is not None:
        path.write_text(content)
    use_model(monkeypatch, ["unused"])

    code, _, err = run_cli(monkeypatch, capsys, "run", "--mcp", str(path), "Hi.")

    assert code == exits.USAGE
    assert problem in err
    assert "Traceback" not in err
