"""The ``reasoning-graphs`` command in a process of its own, on a scripted model.

Usage: python scripted_cli.py SCRIPT_JSON ARG…

SCRIPT_JSON is the model's replies in order: a string is a text reply,
``{"tool": NAME, "args": {...}}`` a call of one tool. The ARGs are the
command line, as a user would type it after ``reasoning-graphs``. Tests run
two of these on one database to show that a second process, or a second
machine, picks up the first one's thread.

``SCRIPTED_MODEL_OPTIONS`` (JSON) sets more fields of the scripted model, such as
``{"token_delay": 0.02, "stream_tool_calls": true}``; ``STATUS_INTERVAL_S`` sets
how often the status line is redrawn.

``CONSOLE=1`` runs the command as the console script does (Ctrl-C handled as
:func:`~reasoning_graphs.cli.main.entry` handles it).

``KILL_AT_PUT=N`` kills the process (SIGKILL, as ``kill -9`` would) when the
checkpointer is about to save its Nth checkpoint: the step before it has
finished and its writes are saved, but the checkpoint after it is not.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from reasoning_graphs.cli import main as cli
from reasoning_graphs.cli import runs, status_line
from reasoning_graphs.testing import ScriptedChatModel, tool_call


def reply(item: Any) -> Any:
    if isinstance(item, dict) and "tool" in item:
        return tool_call(item["tool"], **item["args"])
    return item  # text, or a structured reply as a dict


def run_command(
    command: list[str], env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``command`` as a process of its own, its output captured, nobody at its terminal."""
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=120,
        env=env,
        check=False,
    )


def command_line(script: list, *argv: str) -> list[str]:
    """The command line that runs ``reasoning-graphs ARGV…`` on ``script``."""
    return [sys.executable, str(Path(__file__)), json.dumps(script), *argv]


def run_process(
    script: list, *argv: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``reasoning-graphs ARGV…`` on ``script`` as a process of its own, nobody at its terminal."""
    return run_command(command_line(script, *argv), env)


def listed_threads(env: dict[str, str] | None = None) -> dict[str, dict[str, Any]]:
    """``reasoning-graphs threads --json`` as a process of its own: each thread's entry, by id."""
    done = run_process([], "threads", "--json", env=env)
    assert done.returncode == 0, done.stderr
    return {entry["thread_id"]: entry for entry in map(json.loads, done.stdout.splitlines())}


def ctrl_c(process: subprocess.Popen[str]) -> tuple[str, str]:
    """Press Ctrl-C once in ``process``; its output, after checking that it left with the
    interrupted exit code within 3 s."""
    from reasoning_graphs.cli import exits

    process.send_signal(signal.SIGINT)
    sent = time.monotonic()
    out, err = process.communicate(timeout=30)
    took = time.monotonic() - sent
    assert process.returncode == exits.INTERRUPTED, err[-2000:]
    assert took < 3.0, f"took {took:.1f} s to stop"
    return out, err


def kill_at_put(number: int) -> None:
    from langgraph.checkpoint.sqlite import SqliteSaver

    put, seen = SqliteSaver.put, []

    def put_or_die(self: SqliteSaver, *args: Any, **kwargs: Any) -> Any:
        seen.append(1)
        if len(seen) == number:
            os.kill(os.getpid(), signal.SIGKILL)
        return put(self, *args, **kwargs)

    SqliteSaver.put = put_or_die  # type: ignore[method-assign]


def main() -> int:
    script, argv = json.loads(sys.argv[1]), sys.argv[2:]
    if os.environ.get("KILL_AT_PUT"):
        kill_at_put(int(os.environ["KILL_AT_PUT"]))
    options = json.loads(os.environ.get("SCRIPTED_MODEL_OPTIONS") or "{}")
    if os.environ.get("STATUS_INTERVAL_S"):
        status_line.INTERVAL_S = float(os.environ["STATUS_INTERVAL_S"])
    model = ScriptedChatModel(script=[reply(item) for item in script], **options)
    runs.resolve_model = lambda spec: model
    if os.environ.get("CONSOLE"):
        sys.argv = ["reasoning-graphs", *argv]
        cli.entry()
    return cli.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
