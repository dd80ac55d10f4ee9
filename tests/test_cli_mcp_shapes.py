"""MCP servers shaped as the published filesystem and git servers, from the command line:
a server's tool takes the place of a built-in one of the same name (with a note), the
built-ins can be left out, a server entry's ``approve`` setting says which of its tools ask
a person, and the approval prompt names the server."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from reasoning_graphs.cli import exits, runs
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from tests.helpers import HELPERS
from tests.helpers.cli_driver import run_cli, thread_id_from
from tests.helpers.mcp_servers import NotesLog

SERVER = HELPERS / "mcp_shapes_server.py"


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> NotesLog:
    monkeypatch.setenv("REASONING_GRAPHS_DB", str(tmp_path / "threads.sqlite"))
    monkeypatch.setenv("REASONING_GRAPHS_WORKSPACE", str(tmp_path))
    return NotesLog(tmp_path / "server.log")


def servers(tmp_path: Path, log: NotesLog, kind: str, **entry: Any) -> str:
    path = tmp_path / f"{kind}.json"
    command = {"command": sys.executable, "args": [str(SERVER), str(log.path), kind]}
    path.write_text(json.dumps({"mcpServers": {kind: {**command, **entry}}}))
    return str(path)


def use_model(monkeypatch: pytest.MonkeyPatch, *script: object) -> ScriptedChatModel:
    model = ScriptedChatModel(script=list(script))
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)
    return model


def test_a_servers_tool_takes_the_place_of_the_built_in_of_its_name(
    tmp_path, log, monkeypatch, capsys
) -> None:
    (tmp_path / "a.txt").write_text("from the built-in")
    model = use_model(monkeypatch, tool_call("read_file", path="a.txt"), "Read.")

    code, out, err = run_cli(
        monkeypatch, capsys, "run", "Read a.txt", "--mcp", servers(tmp_path, log, "fs")
    )

    assert code == exits.ANSWERED, err
    assert log.ran("read_file a.txt") == 1  # the server's read_file ran, not ours
    assert "from the fs server" in out
    notes = [line for line in out.splitlines() if "'fs'" in line and "built-in" in line]
    assert len(notes) == 2  # read_file and write_file, each said once
    offered = model.calls[0].tools
    assert offered.count("read_file") == 1
    assert "calculator" in offered  # the other built-ins stay


def test_the_built_ins_can_be_left_out_and_a_thread_keeps_that(
    tmp_path, log, monkeypatch, capsys
) -> None:
    model = use_model(monkeypatch, tool_call("write_file", path="b.txt", content="x"), "Done.")
    fs = servers(tmp_path, log, "fs")

    code, out, _ = run_cli(monkeypatch, capsys, "run", "Write b", "--mcp", fs, "--no-builtin-tools")

    assert code == exits.WAITING  # the server's write_file is destructive: it asks
    offered = set(model.calls[0].tools)
    assert {"read_file", "write_file", "list_directory"} <= offered
    assert not offered & {"calculator", "shell"}
    assert "'fs'" not in "".join(line for line in out.splitlines() if "built-in" in line)

    resumed = use_model(monkeypatch, "Done.")
    code, _, err = run_cli(monkeypatch, capsys, "resume", thread_id_from(out), stdin="a\n")

    assert code == exits.ANSWERED, err
    assert log.ran("write_file b.txt") == 1
    assert not set(resumed.calls[0].tools) & {"calculator", "shell"}


def test_git_tools_marked_not_destructive_run_unasked_by_default(
    tmp_path, log, monkeypatch, capsys
) -> None:
    use_model(monkeypatch, tool_call("git_commit", repo_path=".", message="wip"), "Done.")

    code, _, err = run_cli(
        monkeypatch, capsys, "run", "Commit", "--mcp", servers(tmp_path, log, "git")
    )

    assert code == exits.ANSWERED, err
    assert log.ran("git_commit . wip") == 1


@pytest.mark.parametrize(
    ("approve", "asks"),
    [("unless-read-only", {"git_commit"}), ("all", {"git_commit", "git_status"})],
)
def test_a_servers_approve_setting_says_which_tools_ask(
    tmp_path, log, monkeypatch, capsys, approve: str, asks: set[str]
) -> None:
    git = servers(tmp_path, log, "git", approve=approve)
    for tool, args in (("git_status", {}), ("git_commit", {"message": "wip"})):
        use_model(monkeypatch, tool_call(tool, repo_path=".", **args), "Done.")

        code, out, err = run_cli(monkeypatch, capsys, "run", f"Use {tool}", "--mcp", git)

        ran = any(line.startswith(tool) for line in log.lines())
        if tool in asks:
            assert code == exits.WAITING, err
            assert not ran
            asked = next(line for line in out.splitlines() if line.startswith("Approval:"))
            assert "MCP server 'git'" in asked  # the person sees where the call goes
        else:
            assert code == exits.ANSWERED, err
            assert ran


def test_an_unknown_approve_setting_is_a_usage_error(tmp_path, log, monkeypatch, capsys) -> None:
    use_model(monkeypatch, "Never asked.")
    git = servers(tmp_path, log, "git", approve="sometimes")

    code, _, err = run_cli(monkeypatch, capsys, "run", "Commit", "--mcp", git)

    assert code == exits.USAGE
    assert "approve" in err
    assert "sometimes" in err


def test_a_servers_own_log_lines_never_reach_the_terminal(
    tmp_path, log, monkeypatch, capfd
) -> None:
    git = servers(tmp_path, log, "git")
    use_model(monkeypatch, tool_call("git_status", repo_path="."), "Clean.")

    code, out, err = run_cli(monkeypatch, capfd, "run", "Status?", "--mcp", git)

    assert code == exits.ANSWERED, err
    assert log.ran("git_status .") == 1
    assert "Processing request" not in out + err

    use_model(monkeypatch, tool_call("git_status", repo_path="."), "Clean.")
    code, _, err = run_cli(
        monkeypatch, capfd, "--log-level", "info", "run", "Status?", "--mcp", git
    )

    assert code == exits.ANSWERED, err
    assert "Processing request" in err  # asked for, they are log records of ours
