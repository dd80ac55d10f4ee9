"""The CLI on a PostgreSQL database: threads are listed, and another process resumes them."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
from urllib.parse import urlsplit

import pytest

from reasoning_graphs.cli import exits, runs
from reasoning_graphs.cli import main as cli
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from tests.helpers.cli_driver import thread_id_from
from tests.helpers.crash_harness import agent_env
from tests.helpers.scripted_cli import run_process

WRITE = {"tool": "write_file", "args": {"path": "a.txt", "content": "hi"}}


def run_cli(monkeypatch, capsys, *argv: str, script: list) -> tuple[int, str, str]:
    model = ScriptedChatModel(script=script)
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def cli_process(script: list, *argv: str) -> subprocess.CompletedProcess[str]:
    """``reasoning-graphs ARGV…`` as a process of its own, with nobody at its terminal."""
    return run_process(script, *argv, env=agent_env())


def listed(url: str, capsys: pytest.CaptureFixture) -> dict[str, dict]:
    """The threads ``reasoning-graphs threads`` lists, by id (in this process: it is quicker)."""
    assert cli.main(["--db", url, "threads", "--json"]) == 0
    return {
        record["thread_id"]: record
        for record in map(json.loads, capsys.readouterr().out.splitlines())
    }


def test_a_question_on_postgres_is_answered_and_listed(postgres_url, monkeypatch, capsys) -> None:
    script = [tool_call("calculator", expression="23*17+4"), "It is 395."]
    code, out, err = run_cli(
        monkeypatch, capsys, "--db", postgres_url, "run", "What is 23*17+4?", script=script
    )
    assert code == 0, err
    assert "Observation: 395" in out.splitlines()
    thread_id = thread_id_from(out)

    monkeypatch.setenv(cli.DB_ENV, postgres_url)  # the environment names the same database
    code, listing, _ = run_cli(monkeypatch, capsys, "threads", "--json", script=[])
    (record,) = map(json.loads, listing.splitlines())
    assert record["thread_id"] == thread_id
    assert record["status"] == "answered"
    assert record["question"] == "What is 23*17+4?"

    import psycopg

    with psycopg.connect(postgres_url) as conn:  # both live in the one database
        saved = conn.execute("SELECT count(*) FROM checkpoints WHERE thread_id = %s", (thread_id,))
        assert saved.fetchone()[0] > 0
        indexed = conn.execute("SELECT status FROM rg_threads WHERE thread_id = %s", (thread_id,))
        assert indexed.fetchone() == ("answered",)


@pytest.mark.parametrize(
    ("decision", "written", "answer"),
    [
        (["--approve-all"], "hi", "Written."),
        (["--decisions", '[{"type": "reject", "reason": "not today"}]'], None, "Not written."),
    ],
)
def test_a_second_process_resumes_the_first_ones_thread(
    postgres_url, tmp_path, capsys, decision: list[str], written: str | None, answer: str
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    place = ["--workspace", str(workspace)]

    first = cli_process([WRITE], "--db", postgres_url, "run", "Write a.txt.", *place)
    assert first.returncode == exits.WAITING, first.stderr
    thread_id = thread_id_from(first.stdout)
    assert not (workspace / "a.txt").exists()
    assert listed(postgres_url, capsys)[thread_id]["status"] == "waiting for approval"

    second = cli_process([answer], "--db", postgres_url, "resume", thread_id, *place, *decision)

    assert second.returncode == 0, second.stderr
    assert f"Answer: {answer}" in second.stdout.splitlines()
    if written is None:
        assert not (workspace / "a.txt").exists()
    else:
        assert (workspace / "a.txt").read_text() == written
    assert listed(postgres_url, capsys)[thread_id]["status"] == "answered"


def test_a_thread_table_from_before_limits_were_kept_is_migrated(
    postgres_url, monkeypatch, capsys
) -> None:
    import psycopg

    with psycopg.connect(postgres_url, autocommit=True) as conn:
        conn.execute(
            "CREATE TABLE rg_threads (thread_id TEXT PRIMARY KEY, pattern TEXT NOT NULL, "
            "model TEXT NOT NULL, question TEXT NOT NULL, status TEXT NOT NULL, "
            "created TEXT NOT NULL, updated TEXT NOT NULL)"
        )
        conn.execute(
            "INSERT INTO rg_threads VALUES ('old1', 'react', 'local', 'q', 'done', '', '')"
        )

    code, out, err = run_cli(
        monkeypatch, capsys, "--db", postgres_url, "threads", "--json", script=[]
    )

    assert code == 0, err
    assert json.loads(out)["limits"] == {}


def test_an_unknown_thread_names_the_database_without_its_password(
    postgres_url, monkeypatch, capsys
) -> None:
    parts = urlsplit(postgres_url)  # the test server trusts local users: any password will do
    netloc = f"{parts.username}:hunter2@{parts.hostname}:{parts.port}"
    with_password = parts._replace(netloc=netloc).geturl()
    code, _, err = run_cli(monkeypatch, capsys, "--db", with_password, "resume", "nope", script=[])

    assert code == cli.USAGE_ERROR
    assert "nope" in err
    assert "hunter2" not in err


def test_without_the_postgres_extra_the_cli_says_what_to_install(monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "psycopg", None)  # what an uninstalled package looks like
    code, out, err = run_cli(
        monkeypatch, capsys, "--db", "postgresql://u@localhost/db", "threads", script=[]
    )

    assert code == cli.USAGE_ERROR
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "[postgres]" in err


def test_a_refused_connection_is_one_line(monkeypatch, capsys) -> None:
    pytest.importorskip("psycopg", reason="pip install '.[postgres]'")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    monkeypatch.setenv(cli.DB_ENV, f"postgres://u@127.0.0.1:{port}/db")

    code, out, err = run_cli(monkeypatch, capsys, "threads", script=[])

    assert code == cli.USAGE_ERROR
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert f"127.0.0.1:{port}" in err
