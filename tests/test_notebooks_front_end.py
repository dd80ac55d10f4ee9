"""``pip install -e ".[notebooks]"`` brings a front end that opens the tutorials.

``jupyter lab notebooks`` is started as a user would start it (on a free port, with
a token, no browser, its settings in a scratch folder); through the server's own
HTTP and websocket APIs, as the browser uses them, the test opens a notebook and runs
code in its kernel. Skipped, with the install command, where JupyterLab is missing:
it is not part of ``.[test]``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import secrets
import subprocess
import sys
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.helpers.openai_server import free_port

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
INSTALL = 'pip install -e ".[notebooks]"'
STARTUP_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0
RUN_TIMEOUT = 60.0


@dataclass(frozen=True)
class Lab:
    """A running ``jupyter lab`` and the token it accepts."""

    url: str
    token: str
    log: Path

    def request(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, method=method)
        request.add_header("Authorization", f"token {self.token}")
        with urllib.request.urlopen(request, timeout=30) as response:
            text = response.read().decode()
            is_json = response.headers.get_content_type() == "application/json"
            return json.loads(text) if is_json and text else text


def test_the_notebooks_extra_names_a_front_end_and_a_kernel() -> None:
    tomllib = pytest.importorskip("tomllib")
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    wanted = project["optional-dependencies"].get("notebooks", [])
    names = {re.split(r"[\[<>=!~; ]", line, maxsplit=1)[0].lower() for line in wanted}
    assert {"jupyterlab", "ipykernel", "matplotlib"} <= names  # comparison.ipynb draws a chart


@pytest.fixture
def lab(tmp_path: Path) -> Iterator[Lab]:
    jupyter = Path(sys.executable).with_name("jupyter")
    if importlib.util.find_spec("jupyterlab") is None or not jupyter.exists():
        pytest.skip(f"JupyterLab is not installed in this environment: {INSTALL}")
    port, token = free_port(), secrets.token_hex(16)
    env = {
        **os.environ,
        "LANGSMITH_TRACING": "false",
        **{
            variable: str(tmp_path / folder)  # no setting of the machine's, none left behind
            for variable, folder in (
                ("JUPYTER_CONFIG_DIR", "config"),
                ("JUPYTER_DATA_DIR", "data"),
                ("JUPYTER_RUNTIME_DIR", "runtime"),
                ("IPYTHONDIR", "ipython"),
            )
        },
    }
    command = [str(jupyter), "lab", str(NOTEBOOKS), "--no-browser", "--ip=127.0.0.1"]
    command += [f"--port={port}", "--ServerApp.port_retries=0"]
    command += [f"--IdentityProvider.token={token}"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        command.append("--allow-root")  # a container's root, which jupyter refuses by default
    log = tmp_path / "lab.log"
    with log.open("w") as output:
        process = subprocess.Popen(
            command, cwd=tmp_path, env=env, stdout=output, stderr=subprocess.STDOUT
        )
    running = Lab(f"http://127.0.0.1:{port}", token, log)
    try:
        _wait_until_ready(running, process)
        yield running
    finally:
        process.terminate()
        try:
            process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _wait_until_ready(lab: Lab, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(f"jupyter lab exited:\n{lab.log.read_text()}", pytrace=False)
        try:
            lab.request("GET", "/api/status")
            return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.2)
    pytest.fail(f"jupyter lab did not answer:\n{lab.log.read_text()}", pytrace=False)


def run_in_kernel(lab: Lab, kernel_id: str, code: str) -> str:
    """What ``code`` prints when run in the kernel, sent over the websocket the browser uses."""
    import websocket  # websocket-client, a dependency of jupyter-server

    url = lab.url.replace("http", "ws", 1) + f"/api/kernels/{kernel_id}/channels"
    socket = websocket.create_connection(
        url, header=[f"Authorization: token {lab.token}"], timeout=RUN_TIMEOUT
    )
    request_id = uuid.uuid4().hex
    header = {"msg_id": request_id, "msg_type": "execute_request", "version": "5.3"}
    content = {"code": code, "silent": False, "store_history": False, "allow_stdin": False}
    message = {"header": {**header, "session": uuid.uuid4().hex, "username": ""}}
    message |= {"parent_header": {}, "metadata": {}, "content": content, "channel": "shell"}
    printed: list[str] = []
    try:
        socket.send(json.dumps(message))
        while True:
            reply = json.loads(socket.recv())
            if reply.get("parent_header", {}).get("msg_id") != request_id:
                continue
            kind, body = reply["msg_type"], reply["content"]
            if kind == "stream":
                printed.append(body["text"])
            elif kind == "error":
                pytest.fail("\n".join(body["traceback"]), pytrace=False)
            elif kind == "status" and body["execution_state"] == "idle":
                return "".join(printed)
    finally:
        socket.close()


def test_jupyter_lab_opens_a_notebook_in_a_kernel_of_this_environment(lab: Lab) -> None:
    before = sorted(NOTEBOOKS.iterdir())
    assert "<html" in lab.request("GET", "/lab").lower()  # the front end itself is served
    listing = lab.request("GET", "/api/contents")["content"]
    assert {item["name"] for item in listing} >= {path.name for path in before}

    session = lab.request(
        "POST",
        "/api/sessions",
        {"path": "quickstart.ipynb", "type": "notebook", "kernel": {"name": "python3"}},
    )
    try:
        code = "import sys, matplotlib, reasoning_graphs\nprint(sys.prefix)"
        assert run_in_kernel(lab, session["kernel"]["id"], code).strip() == sys.prefix
    finally:
        lab.request("DELETE", f"/api/sessions/{session['id']}")

    assert sorted(NOTEBOOKS.iterdir()) == before, "opening a notebook wrote into the repository"
