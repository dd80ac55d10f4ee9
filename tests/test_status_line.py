"""The live status line: what it says while a step works, and that it never mixes with output."""

from __future__ import annotations

import io
import os
from pathlib import Path

from langchain_core.messages import AIMessageChunk

from reasoning_graphs.cli.render import Printer
from reasoning_graphs.cli.status_line import WIPE, StatusLine
from scripted_cli import run_process


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def status_on(stream: io.StringIO, clock: Clock) -> StatusLine:
    return StatusLine(stream, enabled=True, clock=clock)


def test_the_line_names_the_step_its_time_and_what_it_streamed() -> None:
    stream, clock = io.StringIO(), Clock()
    status = status_on(stream, clock)

    assert status.text() is None  # nothing runs: nothing to say
    status.started("t1", "think")
    clock.now += 12.4
    for _ in range(3):
        status.streamed()
    status.draw()

    assert stream.getvalue() == WIPE + "… think · 12 s · 3 pieces streamed"


def test_a_step_that_runs_again_is_numbered() -> None:
    status = status_on(io.StringIO(), Clock())

    for task in ("a", "b", "c"):
        status.started(task, "expand")
        status.finished(task)
    status.started("d", "expand")

    assert status.text().startswith("… expand #4 ·")


def test_the_printer_wipes_the_line_before_it_prints() -> None:
    err, out, clock = io.StringIO(), io.StringIO(), Clock()
    status = status_on(err, clock)
    printer = Printer(as_json=False, out=out, status=status)
    status.started("t1", "act")
    status.draw()

    printer.emit("observation", "395")

    assert err.getvalue().endswith(WIPE)
    assert out.getvalue() == "Observation: 395\n"


def test_the_line_waits_while_an_answer_streams() -> None:
    err, out = io.StringIO(), io.StringIO()
    status = status_on(err, Clock())
    printer = Printer(as_json=False, out=out, answer_nodes={"think"}, status=status)
    status.started("t1", "think")
    status.draw()

    printer.token(AIMessageChunk(content="It is", id="m1"), {"langgraph_node": "think"})
    status.draw()

    assert err.getvalue().endswith(WIPE)  # wiped for the answer line, then not drawn over it
    assert err.getvalue().count("… think") == 1
    assert out.getvalue() == "Answer: It is"


def test_nothing_is_drawn_on_a_stream_that_is_not_a_terminal() -> None:
    stream = io.StringIO()
    status = StatusLine(stream)
    status.started("t1", "think")

    status.draw()

    assert not status.enabled
    assert stream.getvalue() == ""


def test_a_run_with_output_to_files_has_no_terminal_codes(tmp_path: Path) -> None:
    script = [{"tool": "calculator", "args": {"expression": "1+1"}}, "It is 2."]
    env = {**os.environ, "REASONING_GRAPHS_DB": str(tmp_path / "t.sqlite")}
    done = run_process(script, "run", "1+1?", env=env)

    assert done.returncode == 0, done.stderr
    assert "\x1b[" not in done.stdout + done.stderr
