"""No silent waits: progress lines when stderr is a file, a clear end when nobody can decide,
and a terminal's status line wiped before anything else is said.

Each run is a process of its own on a scripted model that takes its time, with its
output going to files, or to a pseudo-terminal as a person's shell would have it.
"""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
from pathlib import Path

from reasoning_graphs.cli import exits
from reasoning_graphs.cli.status_line import WIPE, StatusLine
from tests.helpers.cli_driver import Terminal, thread_id_from
from tests.helpers.scripted_cli import command_line

CALCULATE = {"tool": "calculator", "args": {"expression": "6*7"}}
LONG_SUM = {"tool": "calculator", "args": {"expression": "+".join(map(str, range(1, 30)))}}
SLOW_ANSWER = [LONG_SUM, "The sum is 435."]


def env_for(tmp_path: Path, **model: float | bool) -> dict[str, str]:
    """The thread store in ``tmp_path``, and a scripted model as slow as ``model`` says."""
    return {
        **os.environ,
        "REASONING_GRAPHS_DB": str(tmp_path / "threads.sqlite"),
        "REASONING_GRAPHS_WORKSPACE": str(tmp_path),
        "SCRIPTED_MODEL_OPTIONS": json.dumps(model),
    }


def run_to_files(
    tmp_path: Path, script: list, *argv: str, env: dict[str, str]
) -> tuple[int, str, str]:
    """``reasoning-graphs ARGV…`` with stdout and stderr going to files and nothing on stdin:
    its exit code and what it wrote to each file."""
    out_file, err_file = tmp_path / "out.txt", tmp_path / "err.txt"
    with out_file.open("w") as out, err_file.open("w") as err:
        done = subprocess.run(
            command_line(script, *argv),
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            env=env,
            timeout=120,
            check=False,
        )
    return done.returncode, out_file.read_text(), err_file.read_text()


def progress_lines(err: str, step: str) -> list[str]:
    """The lines of ``err`` that report ``step`` at work with its elapsed seconds."""
    return [line for line in err.splitlines() if step in line and re.search(r"\d+ s\b", line)]


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def written_at(status: StatusLine, clock: Clock, *times: float) -> list[float]:
    """The times among ``times`` at which ``status`` wrote a plain line."""
    stream = status.stream
    assert isinstance(stream, io.StringIO)
    written = []
    for now in times:
        clock.now = now
        before = stream.getvalue()
        status.write_if_due()
        if stream.getvalue() != before:
            written.append(now)
    return written


def test_a_long_step_is_reported_each_interval_of_its_work() -> None:
    clock, stream = Clock(), io.StringIO()
    status = StatusLine(stream, clock=clock, every_s=15)
    status.started("t1", "evaluate")

    assert written_at(status, clock, 10, 15, 20, 29, 30.5, 40) == [15, 30.5]
    assert stream.getvalue().splitlines()[0].startswith("… evaluate · 15 s")


def test_short_steps_add_up_and_a_wait_for_a_person_does_not_count() -> None:
    clock, stream = Clock(), io.StringIO()
    status = StatusLine(stream, clock=clock, every_s=15)
    for step, start in enumerate((0, 4, 8)):  # three steps of 4 s each, back to back
        clock.now = start
        status.started(f"t{step}", "expand")
        assert written_at(status, clock, start + 3) == []
        clock.now = start + 4
        status.finished(f"t{step}")
    assert written_at(status, clock, 50) == []  # no step runs: nothing to report
    clock.now = 100  # a person answered a prompt after 88 s
    status.started("t3", "act")

    assert written_at(status, clock, 102, 103, 110) == [103]  # 15 s of work at 103
    assert stream.getvalue().startswith("… act")


def test_plain_lines_are_off_on_a_terminal_and_at_0() -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    clock = Clock()
    for status in (
        StatusLine(Terminal(), clock=clock, every_s=15, enabled=False),  # --json on a terminal
        StatusLine(io.StringIO(), clock=clock, every_s=0),
    ):
        status.started("t1", "think")
        assert written_at(status, clock, 60) == []


def test_a_slow_step_writes_progress_lines_when_stderr_is_a_file(tmp_path: Path) -> None:
    env = env_for(tmp_path, delay=0.5, token_delay=0.05, stream_tool_calls=True)

    code, out, err = run_to_files(
        tmp_path, SLOW_ANSWER, "run", "1+2+…+29?", "--progress-every", "0.2", env=env
    )

    assert code == exits.ANSWERED, err
    lines = progress_lines(err, "think")
    assert lines, err
    assert any(re.search(r"\d+ tokens", line) for line in lines), err  # what it wrote so far
    assert "\x1b[" not in err  # plain lines, no terminal codes
    assert not progress_lines(out, "think")  # stdout keeps the run's own output


def test_a_search_says_which_step_it_is_in(tmp_path: Path) -> None:
    script = [
        *[CALCULATE] * 3,
        {"feedback": "Needs the answer.", "score": 0.5},
        *["It is 42."] * 3,
        {"feedback": "Correct.", "score": 1.0},
    ]
    env = env_for(tmp_path, delay=0.5)

    code, _, err = run_to_files(
        tmp_path, script, "run", "6*7?", "--pattern", "lats", "--progress-every", "0.2", env=env
    )

    assert code == exits.ANSWERED, err
    assert progress_lines(err, "expand"), err
    assert progress_lines(err, "evaluate"), err


def test_progress_every_0_writes_no_progress_lines(tmp_path: Path) -> None:
    env = env_for(tmp_path, delay=0.8)

    code, _, err = run_to_files(
        tmp_path, SLOW_ANSWER, "run", "1+2+…+29?", "--progress-every", "0", env=env
    )

    assert code == exits.ANSWERED, err
    assert not progress_lines(err, "think"), err


def test_a_negative_progress_interval_is_bad_input(tmp_path: Path) -> None:
    code, _, err = run_to_files(
        tmp_path, SLOW_ANSWER, "run", "1+2+…+29?", "--progress-every", "-1", env=env_for(tmp_path)
    )

    assert code == exits.USAGE
    assert len(err.strip().splitlines()) == 1, err


def test_on_a_terminal_the_status_line_is_drawn_instead(tmp_path: Path) -> None:
    env = {**env_for(tmp_path, delay=0.8), "STATUS_INTERVAL_S": "0.05"}
    terminal = Terminal(
        command_line(SLOW_ANSWER, "run", "1+2+…+29?", "--progress-every", "0.2"), env=env
    )

    code, output = terminal.finish()

    assert code == exits.ANSWERED, output
    drawn = output.split("… think")[1:]
    assert drawn, output
    assert output.count("… think") == output.count(WIPE + "… think")  # each drawn in place


def test_a_decision_nobody_can_give_says_so_and_names_the_resume_command(tmp_path: Path) -> None:
    script = [
        {"steps": ["Write the note."]},
        {"tool": "write_file", "args": {"path": "note.txt", "content": "hi"}},
        "The note is written.",
        {"response": "Done: note.txt holds 'hi'."},
    ]
    env = env_for(tmp_path)

    code, out, err = run_to_files(
        tmp_path, script[:2], "run", "write a note", "--pattern", "plan_execute", env=env
    )

    assert code == exits.WAITING, err
    thread_id = thread_id_from(out)
    said = [line for line in err.splitlines() if "stdin" in line]
    assert len(said) == 1, err
    command = re.search(r"`(reasoning-graphs resume [^`]*)`", said[0])
    assert command is not None, said
    assert command.group(1).split()[2] == thread_id
    assert said[0].startswith("reasoning-graphs:")  # a line of its own, after the prompt

    argv = [*command.group(1).split()[1:], "--approve-all"]  # the command as named, answered
    code, out, err = run_to_files(tmp_path, script[2:], *argv, env=env)

    assert code == exits.ANSWERED, err
    assert (tmp_path / "note.txt").read_text() == "hi"


def test_ctrl_c_wipes_the_status_line_before_the_resume_note(tmp_path: Path) -> None:
    # a search's samples run on worker threads that take their time to let go, so the
    # process leaves after the grace period, with the status line still on the screen
    script = [*[CALCULATE] * 3]
    env = {**env_for(tmp_path, delay=30), "STATUS_INTERVAL_S": "0.05", "CONSOLE": "1"}
    terminal = Terminal(command_line(script, "run", "6*7?", "--pattern", "lats"), env=env)
    terminal.wait_for("… expand")

    terminal.ctrl_c()
    code, output = terminal.finish()

    assert code == exits.INTERRUPTED, output
    thread_id = thread_id_from(output)
    shown = [line.split(WIPE)[-1].strip() for line in output.split("\n")]  # as on the screen
    resume = [line for line in shown if f"reasoning-graphs resume {thread_id}" in line]
    assert resume, output
    assert all(line.startswith("Note:") for line in resume), resume  # not after the status
