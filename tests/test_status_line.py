"""The live status line: what it says while a step works, and that it never mixes with output.

The command runs as a user meets it, in a process of its own with stderr on a
pseudo-terminal, on a scripted model that streams its replies (typed ones
too) slowly enough for the line to be drawn while they are written.
"""

from __future__ import annotations

import io
import json
import os
import pty
import re
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.messages.tool import tool_call_chunk

from reasoning_graphs.cli.render import Printer
from reasoning_graphs.cli.status_line import WIPE, StatusLine
from tests.helpers import HELPERS
from tests.helpers.scripted_cli import run_process

SCRIPTED_CLI = HELPERS / "scripted_cli.py"
TOKENS = re.compile(r"(\d+) tokens")


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def status_on(stream: io.StringIO, clock: Clock) -> StatusLine:
    return StatusLine(stream, enabled=True, clock=clock)


def tokens_shown(text: str | None) -> int:
    found = TOKENS.search(text or "")
    return int(found.group(1)) if found else 0


def in_step(task_id: str) -> dict[str, str]:
    """The metadata LangGraph streams with a message of the step ``task_id``."""
    return {"langgraph_checkpoint_ns": f"node:{task_id}"}


def test_the_line_names_the_step_its_time_and_what_it_streamed() -> None:
    stream, clock = io.StringIO(), Clock()
    status = status_on(stream, clock)

    assert status.text() is None  # nothing runs: nothing to say
    status.started("t1", "think")
    clock.now += 12.4
    for word in ("The answer", " is", " 395."):
        status.streamed(AIMessageChunk(content=word, id="m1"), in_step("t1"))
    status.draw()

    assert stream.getvalue().startswith(WIPE + "… think · 12 s · ")
    assert tokens_shown(status.text()) == 5  # about four characters a token, until reported


def test_a_typed_reply_counts_as_its_arguments_stream() -> None:
    status = status_on(io.StringIO(), Clock())
    status.started("t1", "plan")
    counts = []
    for number, piece in enumerate(['{"steps": [', '{"tool": "calculator",', ' "args": {}}]}']):
        name = "Plan" if number == 0 else None
        part = tool_call_chunk(name=name, args=piece, id=None, index=0)
        status.streamed(AIMessageChunk(content="", id="m1", tool_call_chunks=[part]), in_step("t1"))
        counts.append(tokens_shown(status.text()))

    assert counts[0] > 0
    assert counts == sorted(counts)
    assert counts[-1] > counts[0]


def test_the_models_own_count_replaces_the_estimate() -> None:
    status = status_on(io.StringIO(), Clock())
    status.started("t1", "expand")
    status.streamed(AIMessageChunk(content="a" * 400, id="m1"), in_step("t1"))
    estimated = status.text()
    usage = {"input_tokens": 50, "output_tokens": 7, "total_tokens": 57}
    status.streamed(AIMessageChunk(content="", id="m1", usage_metadata=usage), in_step("t1"))

    assert tokens_shown(estimated) == 100
    assert "~" in estimated
    assert tokens_shown(status.text()) == 7
    assert "~" not in status.text()


def test_each_reply_counts_for_its_own_step_and_whole_messages_do_not_count() -> None:
    status = status_on(io.StringIO(), Clock())
    status.started("outer", "execute")
    status.started("inner", "execute › think")
    status.streamed(AIMessageChunk(content="abcd" * 3, id="m1"), in_step("inner"))
    status.streamed(AIMessage(content="a written message " * 20, id="m2"), in_step("inner"))
    status.finished("inner")

    assert tokens_shown(status.text()) == 0  # the tokens went with the step that wrote them

    status.streamed(AIMessageChunk(content="abcd", id="m3"))  # no step named: the line's own
    assert tokens_shown(status.text()) == 1


def test_the_runs_own_progress_is_shown_instead_of_a_repeat_number() -> None:
    err, out = io.StringIO(), io.StringIO()
    status = status_on(err, Clock())
    printer = Printer(as_json=False, out=out, status=status)
    for task in ("a", "b"):
        status.started(task, "expand")
        status.finished(task)
    status.started("c", "expand")
    assert status.text().startswith("… expand #3")

    printer.progress({"event": "progress", "text": "expansion 5 of 8", "done": 5, "total": 8})

    assert "expansion 5 of 8" in status.text()
    assert "#3" not in status.text()  # counted in this process, it could contradict the run's
    assert out.getvalue() == ""  # progress is the status line's, not a line of output


def test_progress_is_an_event_in_json_output_and_the_trace() -> None:
    out, trace = io.StringIO(), io.StringIO()
    printer = Printer(as_json=True, out=out, trace=trace)

    printer.progress({"event": "progress", "done": 2, "total": 8})

    event = json.loads(out.getvalue())
    assert (event["event"], event["done"], event["total"]) == ("progress", 2, 8)
    assert event["text"]  # a report without words still says how far
    assert json.loads(trace.getvalue())["done"] == 2


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


def run_on_terminal(
    script: list[Any], *argv: str, env: dict[str, str]
) -> tuple[subprocess.CompletedProcess[str], list[str]]:
    """``reasoning-graphs ARGV…`` on ``script`` with stderr on a pseudo-terminal: the finished
    process, and each status line drawn, in order."""
    controller, terminal = pty.openpty()
    command = [sys.executable, str(SCRIPTED_CLI), json.dumps(script), *argv]
    process = subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=terminal, stdin=subprocess.DEVNULL, env=env
    )
    os.close(terminal)
    received: list[bytes] = []

    def read() -> None:
        while True:
            try:
                data = os.read(controller, 4096)
            except OSError:  # the process closed its end
                return
            if not data:
                return
            received.append(data)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        out, _ = process.communicate(timeout=60)
    finally:
        reader.join(timeout=5)
        os.close(controller)
    err = b"".join(received).decode(errors="replace")
    drawn = [part.strip() for part in err.split(WIPE) if part.startswith("… ")]
    done = subprocess.CompletedProcess(command, process.returncode, out.decode(), err)
    return done, drawn


def terminal_env(tmp_path: Path, **model: Any) -> dict[str, str]:
    """A scripted model that streams every reply, typed ones too, at ``model`` speed; the
    status line redrawn often, so that each step is drawn many times."""
    return {
        **os.environ,
        "REASONING_GRAPHS_DB": str(tmp_path / "t.sqlite"),
        "SCRIPTED_MODEL_OPTIONS": json.dumps({"stream_tool_calls": True, **model}),
        "STATUS_INTERVAL_S": "0.03",
    }


def test_the_count_grows_while_a_typed_plan_is_written(tmp_path: Path) -> None:
    reason = "Multiply the two numbers with the calculator to get the exact product"
    step = {"reason": reason, "var": "E1", "tool": "calculator", "args": {"expression": "6*7"}}
    script = [{"steps": [step]}, "It is 42."]

    done, drawn = run_on_terminal(
        script, "run", "6*7?", "--pattern", "rewoo", env=terminal_env(tmp_path, token_delay=0.03)
    )

    assert done.returncode == 0, done.stderr
    assert "Answer: It is 42." in done.stdout
    counts = [tokens_shown(line) for line in drawn if line.startswith("… plan")]
    growing = sorted(set(counts) - {0})
    assert len(growing) >= 3, drawn  # drawn again and again while the plan was written
    assert counts == sorted(counts)


def test_a_search_shows_how_far_it_has_come(tmp_path: Path) -> None:
    calculate = {"tool": "calculator", "args": {"expression": "6*7"}}
    script = [
        *[calculate] * 3,  # expansion 1: three samples, one distinct action
        {"feedback": "Needs the answer.", "score": 0.5},
        *["It is 42."] * 3,  # expansion 2
        {"feedback": "Correct.", "score": 1.0},
    ]
    trace = tmp_path / "trace.jsonl"
    env = terminal_env(tmp_path, token_delay=0.02)

    done, drawn = run_on_terminal(
        script, "run", "6*7?", "--pattern", "lats", "--trace", str(trace), env=env
    )

    assert done.returncode == 0, done.stderr
    events = [json.loads(line) for line in trace.read_text().splitlines()]
    progress = [event for event in events if event["event"] == "progress"]
    assert [event["done"] for event in progress] == sorted(event["done"] for event in progress)
    assert {event["done"] for event in progress} == {1, 2}
    assert {event["total"] for event in progress} == {8}  # the search's own limit
    assert "progress" not in done.stdout  # the status line's, not a line of output
    shown = {event["text"] for event in progress}
    lines = [line for line in drawn if any(text in line for text in shown)]
    assert {line.split(" · ")[0] for line in lines} >= {"… expand", "… evaluate"}, drawn
    assert any(tokens_shown(line) for line in drawn if line.startswith("… evaluate")), drawn


def test_a_resumed_search_counts_on_from_where_it_was(tmp_path: Path) -> None:
    calculate = {"tool": "calculator", "args": {"expression": "6*7"}}
    write = {"tool": "write_file", "args": {"path": "answer.txt", "content": "42"}}
    judged = {"feedback": "Getting there.", "score": 0.5}
    trace = tmp_path / "trace.jsonl"
    env = {**os.environ, "REASONING_GRAPHS_DB": str(tmp_path / "t.sqlite")}
    flags = ["--trace", str(trace), "--workspace", str(tmp_path)]
    script = [*[calculate] * 3, judged, *[write] * 3]

    first = run_process(
        script, "run", "6*7?", "--pattern", "lats", "--max-model-calls", "20", *flags, env=env
    )
    assert first.returncode == 4, first.stderr  # waits for the write to be approved
    thread_id = re.search(r"resume (\w+)", first.stdout + first.stderr).group(1)
    before = trace.read_text().splitlines()

    resumed = run_process(
        [judged, *["It is 42."] * 3, {"feedback": "Correct.", "score": 1.0}],
        *["resume", thread_id, "--approve-all", *flags],
        env=env,
    )

    assert resumed.returncode == 0, resumed.stderr
    after = [json.loads(line) for line in trace.read_text().splitlines()[len(before) :]]
    done = [event["done"] for event in after if event["event"] == "progress"]
    assert done[0] == 2  # the second expansion, read from the saved tree, not counted afresh
    assert done[-1] == 3
