"""Ctrl-C while a shell call runs: the command line stops at once and takes the call along.

The shell tool runs each command in a session of its own, out of the
terminal's reach, so that it can kill everything the command started. So the
command line's exit after Ctrl-C must kill those sessions too, or a ``sleep``
(or a build, or a server) runs on after the agent is gone.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from tests.helpers.scripted_cli import ctrl_c

REPO = Path(__file__).resolve().parents[1]
CONSOLE_COMMAND = f"""
import json, sys
sys.path.insert(0, {str(REPO)!r})
from tests.helpers.scripted_cli import reply
from reasoning_graphs.cli import main, runs
from reasoning_graphs.testing import ScriptedChatModel
model = ScriptedChatModel(script=[reply(item) for item in json.loads(sys.argv.pop(1))])
runs.resolve_model = lambda spec: model
main.entry()
"""
"""The installed console command (its Ctrl-C handling included) on a scripted model."""


def alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie waiting to be reaped is not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def test_ctrl_c_during_a_shell_call_stops_at_once_and_kills_what_the_command_started(
    tmp_path: Path,
) -> None:
    marker = tmp_path / "sleeper.pid"
    command = f"sleep 60 & echo $! > {marker}; wait"
    script = [{"tool": "shell", "args": {"command": command}}, "Done."]
    env = {**os.environ, "REASONING_GRAPHS_DB": str(tmp_path / "threads.sqlite")}
    argv = ["run", "Sleep a while.", "--approve-all", "--workspace", str(tmp_path)]
    process = subprocess.Popen(
        [sys.executable, "-c", CONSOLE_COMMAND, json.dumps(script), *argv],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    deadline = time.monotonic() + 60
    while not (marker.exists() and marker.read_text().strip()):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline, "the shell call never started"
        time.sleep(0.05)
    sleeper = int(marker.read_text())
    assert alive(sleeper)

    ctrl_c(process)

    gone_by = time.monotonic() + 2
    while alive(sleeper) and time.monotonic() < gone_by:
        time.sleep(0.05)
    assert not alive(sleeper), "the command's child outlived the command line"
