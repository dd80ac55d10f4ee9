"""A real ``langgraph dev`` server for tests, and the calls they make to it.

:func:`dev_server` starts one on a free port, in a scratch folder (the server
writes ``.langgraph_api/`` into its working directory), with LangSmith and
analytics off so nothing leaves the machine.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from tests.helpers.openai_server import free_port

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient

REPO = Path(__file__).resolve().parents[2]
APP_CONFIG = REPO / "tests" / "server_app" / "langgraph.json"
STARTUP_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0
AT_REST = ("success", "interrupted")
"""A run's status once it ended or paused for a person: ``langgraph dev`` says ``success``
for both, Aegra ``interrupted`` for a pause."""
QUESTION = {"messages": [{"role": "user", "content": "write hello to notes.txt"}]}
"""A question the scripted app of ``tests/server_app`` answers by asking to write a file."""


@dataclass(frozen=True)
class DevServer:
    """A running ``langgraph dev`` process."""

    url: str
    workspace: Path
    log: Path

    def output(self, lines: int = 60) -> str:
        """The last lines the server printed, for failure messages."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def portable_config(config: Path, scratch: Path) -> Path:
    """Copy ``config`` with its local paths made absolute.

    ``langgraph dev`` resolves graph paths and dependencies against its working
    directory, which here is a scratch folder rather than the config's own.
    """
    data = json.loads(config.read_text())

    def absolute(path: str) -> str:
        return str((config.parent / path).resolve()) if path.startswith(".") else path

    def graph_spec(spec: str | dict[str, Any]) -> str | dict[str, Any]:
        if isinstance(spec, dict):
            return {**spec, "path": graph_spec(spec["path"])}
        location, _, variable = spec.rpartition(":")
        return f"{absolute(location)}:{variable}" if "/" in location else spec

    data["dependencies"] = [absolute(dep) for dep in data.get("dependencies", [])]
    if isinstance(data.get("env"), str):
        data["env"] = absolute(data["env"])
    data["graphs"] = {name: graph_spec(spec) for name, spec in data["graphs"].items()}
    if "app" in data.get("http", {}):
        data["http"] = {**data["http"], "app": graph_spec(data["http"]["app"])}
    if "path" in data.get("auth", {}):
        data["auth"] = {**data["auth"], "path": graph_spec(data["auth"]["path"])}
    copy = scratch / "langgraph.json"
    copy.write_text(json.dumps(data, indent=2))
    return copy


def server_env(workspace: Path, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment: no LangSmith, no analytics, no version check, our package importable,
    and the ``extra`` settings a test's deployment needs."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
    python_path = [str(REPO / "src"), env.get("PYTHONPATH", "")]
    env.update(
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGGRAPH_NO_VERSION_CHECK="true",
        PYTHONPATH=os.pathsep.join(p for p in python_path if p),
        REASONING_GRAPHS_WORKSPACE=str(workspace),
    )
    env.update(extra or {})
    return env


def wait_until_ready(process: subprocess.Popen[bytes], server: DevServer) -> None:
    """Poll ``GET /ok`` until it answers; fail early if the server dies or moves port."""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"langgraph dev exited with {process.returncode}:\n{server.output()}")
        if "is already in use" in server.output():
            pytest.fail(f"langgraph dev did not get the port it was given:\n{server.output()}")
        try:
            with urllib.request.urlopen(f"{server.url}/ok", timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.1)
    pytest.fail(f"langgraph dev did not answer within {STARTUP_TIMEOUT:.0f} s:\n{server.output()}")


def stop(process: subprocess.Popen[bytes], timeout: float = STOP_TIMEOUT) -> None:
    """Terminate a server's process group (it leads one), killing it if it lingers."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@contextmanager
def dev_server(
    config: Path, scratch: Path, env: Mapping[str, str] | None = None
) -> Iterator[DevServer]:
    """Run ``langgraph dev`` for ``config`` with ``scratch`` as its working directory
    (``env``: settings added to its environment)."""
    workspace = scratch / "workspace"
    workspace.mkdir(parents=True)
    port = free_port()
    server = DevServer(f"http://127.0.0.1:{port}", workspace, scratch / "server.log")
    command = [
        sys.executable,
        "-m",
        "langgraph_cli",
        "dev",
        "--no-browser",
        "--no-reload",
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--config",
        str(portable_config(config, scratch)),
    ]
    with server.log.open("wb") as log:
        process = subprocess.Popen(
            command,
            cwd=scratch,
            env=server_env(workspace, env),
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        wait_until_ready(process, server)
        yield server
    finally:
        stop(process)


async def run_to_rest(
    client: LangGraphClient,
    server: DevServer,
    thread_id: str,
    assistant: str = "react",
    **run: Any,
) -> dict:
    """Start a run on ``assistant``, wait for it and return the thread state."""
    created = await client.runs.create(thread_id, assistant, **run)
    await client.runs.join(thread_id, created["run_id"])
    finished = await client.runs.get(thread_id, created["run_id"])
    assert finished["status"] in AT_REST, server.output()
    return await client.threads.get_state(thread_id)


def approval_of(state: dict) -> dict:
    """The one pending approval request of a paused thread."""
    assert state["next"], "the run should be paused"
    [interrupt] = state["interrupts"]
    assert interrupt["value"]["kind"] == "approval"
    return interrupt["value"]


async def refusal(request: Any) -> str:
    """The 422 a request must end in, as its one-line reason."""
    import httpx

    with pytest.raises(httpx.HTTPStatusError) as refused:
        await request
    assert refused.value.response.status_code == 422
    detail = refused.value.response.json()["detail"]
    assert isinstance(detail, str)
    assert detail
    assert "\n" not in detail
    assert "Traceback" not in detail
    return detail
