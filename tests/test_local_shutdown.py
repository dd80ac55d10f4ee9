"""The embedded model at exit: a generation left running by a timeout is never freed under it."""

from __future__ import annotations

import subprocess
import sys
import threading

import pytest

from reasoning_graphs.models import local
from reasoning_graphs.models.local import local_model_available

AVAILABLE, MISSING = local_model_available()


class FakeLlama:
    def __init__(self) -> None:
        self.closed = False

    def close(self) -> None:
        self.closed = True


def test_exit_frees_idle_models_and_leaves_a_busy_one(monkeypatch: pytest.MonkeyPatch) -> None:
    idle, busy = FakeLlama(), FakeLlama()
    busy_lock = threading.Lock()
    models = {("idle", 1, 1): (idle, threading.Lock()), ("busy", 1, 1): (busy, busy_lock)}
    monkeypatch.setattr(local, "_MODELS", models)
    monkeypatch.setattr(local, "CLOSE_WAIT_S", 0.05)

    with busy_lock:  # a generation holds the model
        local._close_models()

    assert idle.closed
    assert not busy.closed
    assert local._MODELS == {}


ABANDONED_CALL = """
from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.tools.builtins import calculator
graph = build_graph("local", tools=[calculator()], model_timeout=0.5)
state = graph.invoke({"messages": [("user", "What is 23*17+4?")]})
print(state["outcome"]["status"])
"""


@pytest.mark.local_model
@pytest.mark.skipif(not AVAILABLE, reason=f"embedded model not installed: {MISSING}")
def test_a_process_that_timed_out_a_generation_exits_cleanly() -> None:
    done = subprocess.run(
        [sys.executable, "-c", ABANDONED_CALL], capture_output=True, text=True, timeout=120
    )

    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["incomplete"]
