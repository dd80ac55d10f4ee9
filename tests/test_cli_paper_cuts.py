"""The command line's small promises: an unknown thread is an error, read commands create no
database, ``threads`` has a header, every ending closes with the same note, and a result
that ends a sentence gets no second period."""

from __future__ import annotations

import json
import shlex
import sqlite3
from pathlib import Path

import pytest

from reasoning_graphs.cli import exits, runs
from reasoning_graphs.cli import main as cli
from reasoning_graphs.nodes.guards.honest import incomplete_note
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from tests.helpers.cli_driver import run_cli, thread_id_from

CALCULATE = tool_call("calculator", expression="6*7")
WRITE = tool_call("write_file", path="hi.txt", content="hello there!")


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "threads.sqlite"
    monkeypatch.setenv(cli.DB_ENV, str(path))
    monkeypatch.setenv("REASONING_GRAPHS_WORKSPACE", str(tmp_path))
    return path


def use_model(monkeypatch: pytest.MonkeyPatch, *script: object) -> None:
    model = ScriptedChatModel(script=list(script))
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)


def listed(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> dict[str, dict]:
    code, out, err = run_cli(monkeypatch, capsys, "threads", "--json")
    assert code == exits.ANSWERED, err
    return {entry["thread_id"]: entry for entry in map(json.loads, out.splitlines())}


# --- run --thread on a thread that does not exist


def test_a_follow_up_on_an_unknown_thread_is_refused(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch, "It is 42.")
    run_cli(monkeypatch, capsys, "run", "first", "--thread", "known", "--new-thread")

    code, out, err = run_cli(monkeypatch, capsys, "run", "6*7?", "--thread", "knwon")

    assert code == exits.USAGE
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert "knwon" in err
    assert set(listed(monkeypatch, capsys)) == {"known"}  # nothing started under the typo


def test_new_thread_starts_a_thread_with_the_id_given(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch, "It is 42.", "Still 42.")

    code, out, err = run_cli(monkeypatch, capsys, "run", "6*7?", "--thread", "t1", "--new-thread")

    assert code == exits.ANSWERED, err
    assert thread_id_from(out) == "t1"
    code, _, err = run_cli(monkeypatch, capsys, "run", "sure?", "--thread", "t1")
    assert code == exits.ANSWERED, err  # and it is a thread to follow up on


def test_new_thread_never_joins_an_existing_thread(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch, "It is 42.")
    run_cli(monkeypatch, capsys, "run", "6*7?", "--thread", "t1", "--new-thread")

    code, _, err = run_cli(monkeypatch, capsys, "run", "other", "--thread", "t1", "--new-thread")

    assert code == exits.USAGE
    assert len(err.strip().splitlines()) == 1
    assert "t1" in err
    assert listed(monkeypatch, capsys)["t1"]["question"] == "6*7?"


@pytest.mark.parametrize(
    "argv", [["--new-thread"], ["--thread", "", "--new-thread"], ["--thread", ""]]
)
def test_new_thread_needs_a_thread_id(db, monkeypatch, capsys, argv) -> None:
    use_model(monkeypatch, "It is 42.")

    code, out, err = run_cli(monkeypatch, capsys, "run", "6*7?", *argv)

    assert code == exits.USAGE
    assert out == ""
    assert len(err.strip().splitlines()) == 1


def test_the_help_says_what_thread_and_new_thread_do(monkeypatch, capsys) -> None:
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    shown = " ".join(capsys.readouterr().out.split())

    assert "--new-thread" in shown
    assert "--thread" in shown


# --- read commands and a database that does not exist


def test_threads_on_a_missing_database_is_an_error_and_creates_nothing(
    tmp_path, monkeypatch, capsys
) -> None:
    missing = tmp_path / "missing" / "dir" / "x.sqlite"

    code, out, err = run_cli(monkeypatch, capsys, "threads", "--db", str(missing))

    assert code != exits.ANSWERED
    assert out == ""
    assert len(err.strip().splitlines()) == 1
    assert str(missing) in err
    assert not (tmp_path / "missing").exists()


def test_resume_on_a_missing_database_creates_nothing(tmp_path, monkeypatch, capsys) -> None:
    missing = tmp_path / "x.sqlite"
    monkeypatch.setenv(cli.DB_ENV, str(missing))

    code, _, err = run_cli(monkeypatch, capsys, "resume", "t1")

    assert code == exits.USAGE
    assert len(err.strip().splitlines()) == 1
    assert not missing.exists()


def test_threads_before_any_run_lists_none_and_creates_nothing(
    tmp_path, monkeypatch, capsys
) -> None:
    monkeypatch.delenv(cli.DB_ENV, raising=False)
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "data"))  # the default location

    code, out, _ = run_cli(monkeypatch, capsys, "threads")

    assert code == exits.ANSWERED
    assert len(out.strip().splitlines()) == 1  # one line saying there are none
    assert not (tmp_path / "data").exists()


def test_run_still_creates_its_database(tmp_path, monkeypatch, capsys) -> None:
    path = tmp_path / "new" / "threads.sqlite"
    use_model(monkeypatch, "It is 42.")

    code, _, err = run_cli(monkeypatch, capsys, "run", "6*7?", "--db", str(path))

    assert code == exits.ANSWERED, err
    assert sqlite3.connect(path).execute("SELECT count(*) FROM rg_threads").fetchone() == (1,)


# --- the threads listing


def test_threads_has_a_header_over_its_columns(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch, "It is 42.", "Hello.")
    run_cli(monkeypatch, capsys, "run", "6*7?", "--thread", "a-long-thread-name", "--new-thread")
    run_cli(monkeypatch, capsys, "run", "hi", "--pattern", "cot")

    code, out, _ = run_cli(monkeypatch, capsys, "threads")

    assert code == exits.ANSWERED
    header, *rows = out.splitlines()
    assert len(rows) == 2
    assert not any(thread_id in header for thread_id in listed(monkeypatch, capsys))
    labels = header.split()
    assert len(labels) == 5  # thread, updated, pattern, status, question
    starts = [header.index(label) for label in labels]
    for row in rows:  # each column starts under its label
        assert all(row[start - 1] == " " for start in starts[1:]), (header, row)
        assert all(row[start] != " " for start in starts), (header, row)


# --- how each ending closes


def closing(out: str) -> str:
    return out.strip().splitlines()[-1]


ENDINGS = {
    "answered": ([CALCULATE, "It is 42."], [], exits.ANSWERED),
    "incomplete": ([CALCULATE, CALCULATE, "x"], ["--max-model-calls", "1"], exits.INCOMPLETE),
    "ctrl-c": ([KeyboardInterrupt()], [], exits.INTERRUPTED),
    "waiting": ([WRITE], [], exits.WAITING),
    "error": ([], [], exits.FAILED),
}
RESUMABLE = {"ctrl-c", "waiting", "error"}


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_every_ending_closes_with_a_note_naming_the_thread_and_what_next(
    db, monkeypatch, capsys, ending
) -> None:
    script, flags, expected = ENDINGS[ending]
    use_model(monkeypatch, *script)

    code, out, err = run_cli(monkeypatch, capsys, "run", "6*7?", *flags)

    assert code == expected, err
    thread_id = thread_id_from(out)
    last = closing(out)
    assert last.startswith("Note:"), out
    assert thread_id in last
    if ending in RESUMABLE:
        assert f"reasoning-graphs resume {thread_id}" in last
    else:
        assert f"--thread {thread_id}" in last
    assert "Traceback" not in err


def test_every_ending_names_its_thread_the_same_way(db, monkeypatch, capsys) -> None:
    heads = set()
    for script, flags, _ in ENDINGS.values():
        use_model(monkeypatch, *script)
        _, out, _ = run_cli(monkeypatch, capsys, "run", "6*7?", *flags)
        last, thread_id = closing(out), thread_id_from(out)
        heads.add(last[: last.index(thread_id) + len(thread_id)].replace(thread_id, "ID"))

    assert len(heads) == 1, heads


@pytest.mark.parametrize("ending", list(ENDINGS))
def test_every_ending_closes_with_a_note_event_in_json(db, monkeypatch, capsys, ending) -> None:
    script, flags, expected = ENDINGS[ending]
    use_model(monkeypatch, *script)

    code, out, err = run_cli(monkeypatch, capsys, "run", "6*7?", "--json", *flags)

    assert code == expected, err
    events = [json.loads(line) for line in out.splitlines()]
    assert events[-1]["event"] == "note"
    assert events[-1]["thread_id"] == events[0]["thread_id"]


def test_the_incomplete_note_comes_before_the_closing_note(db, monkeypatch, capsys) -> None:
    script, flags, _ = ENDINGS["incomplete"]
    use_model(monkeypatch, *script)

    _, out, _ = run_cli(monkeypatch, capsys, "run", "6*7?", *flags)

    notes = [line for line in out.splitlines() if line.startswith("Note:")]
    assert "6*7" in notes[-2]
    assert "42" in notes[-2]


def test_ctrl_c_at_the_resume_prompt_closes_like_any_interruption(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch, WRITE)
    code, out, _ = run_cli(monkeypatch, capsys, "run", "write")
    thread_id = thread_id_from(out)
    assert code == exits.WAITING

    class CtrlC:
        def readline(self) -> str:
            raise KeyboardInterrupt

    monkeypatch.setattr("sys.stdin", CtrlC())
    try:
        code = cli.main(["resume", thread_id])
    except KeyboardInterrupt:
        pytest.fail("Ctrl-C at the prompt escaped the command as a traceback")
    out, err = capsys.readouterr()

    assert code == exits.INTERRUPTED, err
    assert f"reasoning-graphs resume {thread_id}" in closing(out)
    assert listed(monkeypatch, capsys)[thread_id]["status"] == "waiting for approval"


def test_the_decision_line_without_stdin_ends_the_prompt_line(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch, WRITE)

    code, out, err = run_cli(monkeypatch, capsys, "run", "write")

    assert code == exits.WAITING
    thread_id = thread_id_from(out)
    said = [line for line in err.splitlines() if "stdin" in line]
    assert len(said) == 1, err
    assert said[0].startswith("reasoning-graphs:")
    assert f"reasoning-graphs resume {thread_id}" in said[0]


def test_resume_names_the_database_it_was_given(tmp_path, monkeypatch, capsys) -> None:
    path = tmp_path / "my threads.sqlite"
    monkeypatch.delenv(cli.DB_ENV, raising=False)
    use_model(monkeypatch, WRITE, "Written.")

    code, out, _err = run_cli(monkeypatch, capsys, "--db", str(path), "run", "write")

    assert code == exits.WAITING
    assert f"--db {shlex.quote(str(path))}" in closing(out)  # as the shell must be given it


# --- a result that already ends a sentence


@pytest.mark.parametrize("result", ["Wrote 13 bytes to hi.txt.", "Is it?", "Done!", "cut…"])
def test_a_result_that_ends_with_a_mark_gets_no_second_one(result: str) -> None:
    note = incomplete_note("reached the limit", [("write_file(path='hi.txt')", result)])

    assert f"returned {result}]" in note


def test_a_result_without_a_mark_is_closed_with_a_period() -> None:
    note = incomplete_note("reached the limit", [("calculator(expression='6*7')", "42")])

    assert note.endswith("returned 42.]")


def test_the_cli_shows_a_written_file_with_one_period(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch, WRITE, WRITE, "x")

    code, out, _ = run_cli(
        monkeypatch, capsys, "run", "write", "--max-model-calls", "1", "--approve-all"
    )

    assert code == exits.INCOMPLETE
    assert "hi.txt." in out
    assert "hi.txt.." not in out
