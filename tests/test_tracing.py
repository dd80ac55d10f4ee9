"""LangSmith tracing, offline: what runs are named and labelled, and that a traced CLI ends.

Runs are collected with langchain-core's run collector, which sees exactly what
the LangSmith tracer would upload. The exit tests run the real command line in
its own process with tracing on and its uploads sent to loopback endpoints that
refuse them, take the connection and never answer, or answer ``/info`` and then
stall every upload.
"""

from __future__ import annotations

import email
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextvars import ContextVar
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tracers.context import register_configure_hook
from langchain_core.tracers.run_collector import RunCollectorCallbackHandler
from langchain_core.tracers.schemas import Run
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.cli import main as cli
from reasoning_graphs.cli import runs
from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.graphs.plan_execute import build_graph as build_plan_execute
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.graphs.react import build_graph as build_react
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.builtins import calculator
from reasoning_graphs.tracing import LIBRARY_TAG, UPLOAD_SECONDS
from tests.helpers import HELPERS
from tests.helpers.crash_harness import agent_env

DRIVER = HELPERS / "traced_cli.py"
QUESTION = "What is 23*17+4?"
ANSWER = "23*17+4 is 395."
SCRIPT = json.dumps([{"tool": "calculator", "args": {"expression": "23*17+4"}}, ANSWER])

ambient_collector: ContextVar[RunCollectorCallbackHandler | None] = ContextVar(
    "ambient_collector", default=None
)
# attached to every run started while set, and inherited by the runs inside, as the
# tracer LANGSMITH_TRACING turns on is
register_configure_hook(ambient_collector, inheritable=True)


def ask(question: str = QUESTION) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def traced(graph: CompiledStateGraph, config: dict[str, Any] | None = None) -> Run:
    """The root run of one question, with every run inside it."""
    collector = RunCollectorCallbackHandler()
    graph.invoke(ask(), {**(config or {}), "callbacks": [collector]})
    [root] = collector.traced_runs
    return root


def walk(run: Run) -> Iterator[Run]:
    yield run
    for child in sorted(run.child_runs, key=lambda r: r.dotted_order or ""):
        yield from walk(child)


def metadata(run: Run) -> dict[str, Any]:
    return (run.extra or {}).get("metadata", {})


def node_steps(run: Run) -> list[tuple[str, str, int]]:
    """Each node run directly under ``run``: its name, node and step as the metadata says."""
    children = sorted(run.child_runs, key=lambda r: r.dotted_order or "")
    return [
        (c.name, metadata(c)["langgraph_node"], metadata(c)["langgraph_step"]) for c in children
    ]


def test_react_runs_carry_pattern_thread_nodes_steps_and_tools() -> None:
    model = ScriptedChatModel(script=[tool_call("calculator", expression="23*17+4"), "395"])
    graph = build_react(model, tools=[calculator()], checkpointer=InMemorySaver())

    root = traced(graph, {"configurable": {"thread_id": "t-react"}})

    assert root.name == "react"
    assert {LIBRARY_TAG, "pattern:react"} <= set(root.tags or [])
    assert metadata(root)["pattern"] == "react"
    assert metadata(root)["thread_id"] == "t-react"
    assert node_steps(root) == [
        ("think", "think", 1),
        ("act", "act", 2),
        ("think", "think", 3),
    ]
    runs = list(walk(root))
    tools = [r for r in runs if r.run_type == "tool"]
    assert [(t.name, metadata(t)["langgraph_node"]) for t in tools] == [("calculator", "act")]
    models = [r for r in runs if r.run_type == "llm"]
    assert [metadata(m)["langgraph_node"] for m in models] == ["think", "think"]
    # every run inside inherits the labels, so a filter on any of them finds the question
    assert all(metadata(r)["pattern"] == "react" for r in runs)
    assert all("pattern:react" in (r.tags or []) for r in runs)


def test_plan_execute_steps_run_under_the_pattern_that_runs_them() -> None:
    model = ScriptedChatModel(
        script=[
            Plan(steps=["Compute 23*17+4 with the calculator."]),
            tool_call("calculator", expression="23*17+4"),
            "23*17+4 = 395",
            Replan(response="395"),
        ]
    )
    graph = build_plan_execute(model, tools=[calculator()])

    root = traced(graph)

    assert root.name == "plan_execute"
    assert {LIBRARY_TAG, "pattern:plan_execute"} <= set(root.tags or [])
    assert [name for name, _, _ in node_steps(root)] == ["plan", "execute", "replan", "report"]
    runs = list(walk(root))
    assert all(metadata(r)["pattern"] == "plan_execute" for r in runs)
    assert not any("pattern:react" in (r.tags or []) for r in runs)
    # the typed calls are named after what they return
    typed = {r.name: metadata(r)["langgraph_node"] for r in runs if r.name in {"Plan", "Replan"}}
    assert typed == {"Plan": "plan", "Replan": "replan"}
    # the step's ReAct run is a subgraph of execute, with its own nodes and steps
    [step] = [r for r in runs if r.name == "react"]
    assert metadata(step)["langgraph_node"] == "execute"
    assert [name for name, _, _ in node_steps(step)] == ["think", "act", "think"]
    [tool] = [r for r in runs if r.run_type == "tool"]
    assert (tool.name, metadata(tool)["langgraph_node"]) == ("calculator", "act")


@pytest.mark.parametrize("pattern", list(PATTERNS))
def test_every_pattern_names_and_labels_its_root_run(pattern: str) -> None:
    model = ScriptedChatModel(script=["It is 395."], cycle=True)
    graph = graph_builder(pattern)(model=model, tools=[calculator()])
    collector = RunCollectorCallbackHandler()
    graph.invoke(ask(), {"callbacks": [collector]})

    [root] = collector.traced_runs
    assert root.name == pattern
    assert {LIBRARY_TAG, f"pattern:{pattern}"} <= set(root.tags or [])
    assert metadata(root)["pattern"] == pattern


def test_the_cli_puts_the_thread_into_the_run_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.setenv(cli.DB_ENV, str(tmp_path / "threads.sqlite"))
    model = ScriptedChatModel(script=[tool_call("calculator", expression="23*17+4"), "395"])
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)

    collector = RunCollectorCallbackHandler()
    token = ambient_collector.set(collector)
    try:
        code = cli.main(["run", QUESTION, "--pattern", "react"])
    finally:
        ambient_collector.reset(token)

    out = capsys.readouterr().out
    assert code == 0
    thread_id = out.splitlines()[0].split()[-1]
    [root] = collector.traced_runs
    assert root.name == "react"
    assert [name for name, _, _ in node_steps(root)][:3] == ["think", "act", "think"]
    assert metadata(root)["thread_id"] == thread_id
    assert all(metadata(r)["thread_id"] == thread_id for r in walk(root))


# --- the command line in its own process -------------------------------------------------------


def untraced_env(tmp_path: Path) -> dict[str, str]:
    """The test's environment without any LangSmith or LangChain setting."""
    env = {k: v for k, v in agent_env().items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
    env["REASONING_GRAPHS_DB"] = str(tmp_path / "threads.sqlite")
    return env


def traced_env(tmp_path: Path, endpoint: str) -> dict[str, str]:
    return {
        **untraced_env(tmp_path),
        "LANGSMITH_TRACING": "true",
        "LANGSMITH_API_KEY": "fake",
        "LANGSMITH_ENDPOINT": endpoint,
    }


def driver_facts(stdout: str) -> dict[str, Any]:
    return json.loads(stdout.strip().splitlines()[-1])


def test_without_langsmith_settings_nothing_is_traced_or_contacted(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, str(DRIVER), SCRIPT, "run", QUESTION],
        env=untraced_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert f"Answer: {ANSWER}" in done.stdout.splitlines()
    facts = driver_facts(done.stdout)
    assert facts["tracing"] is False
    assert facts["clients"] == 0
    assert facts["connections"] == 0
    # and the upload settings are left alone when there is nothing to upload
    assert facts["settings"] == dict.fromkeys(facts["settings"])


@dataclass
class Exit:
    """How one traced CLI process ended."""

    code: int
    total: float
    after_answer: float
    stdout: str


def start(tmp_path: Path, endpoint: str) -> tuple[subprocess.Popen[str], float]:
    process = subprocess.Popen(
        [sys.executable, str(DRIVER), SCRIPT, "run", QUESTION],
        env=traced_env(tmp_path, endpoint),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,  # LangSmith reports every failed upload there
        text=True,
    )
    return process, time.monotonic()


def finish(process: subprocess.Popen[str], started: float, limit: float = 60.0) -> Exit:
    """Read the output as it comes, noting when the answer appears; wait for the exit."""
    timer = threading.Timer(limit, process.kill)
    timer.start()
    lines, answered = [], None
    assert process.stdout is not None
    for line in process.stdout:
        lines.append(line)
        if line.startswith("Answer:"):
            answered = time.monotonic()
    code = process.wait()
    ended = time.monotonic()
    timer.cancel()
    assert answered is not None, "".join(lines)
    return Exit(code, ended - started, ended - answered, "".join(lines))


class StallingLangSmith(BaseHTTPRequestHandler):
    """Answers ``/info`` with compressed uploads switched on, then never answers an upload."""

    release: ClassVar[threading.Event] = threading.Event()
    uploads: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        flags = {"zstd_compression_enabled": True}
        body = json.dumps({"version": "0.10.0", "instance_flags": flags})
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body.encode())

    def do_POST(self) -> None:
        self.uploads.append(self.path)
        self.release.wait(60)

    def log_message(self, *args: Any) -> None:
        pass


class RecordingLangSmith(BaseHTTPRequestHandler):
    """Answers ``/info`` and takes every upload, keeping the runs it was sent, by id."""

    runs: ClassVar[dict[str, dict[str, Any]]] = {}

    def do_GET(self) -> None:
        self.reply()

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers["content-length"]))
        head = f"Content-Type: {self.headers['content-type']}\r\n\r\n".encode()
        for part in email.message_from_bytes(head + body).get_payload():
            kind, run_id, *field = part.get_param("name", header="content-disposition").split(".")
            value = json.loads(part.get_payload(decode=True))
            run = self.runs.setdefault(run_id, {})
            if kind == "post":
                run.update({field[0]: value} if field else value)
        self.reply()

    def reply(self) -> None:
        self.send_response(200)
        self.send_header("content-type", "application/json")
        self.send_header("content-length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def recording_endpoint() -> Iterator[tuple[str, dict[str, dict[str, Any]]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), RecordingLangSmith)
    server.daemon_threads = True
    RecordingLangSmith.runs = {}
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", RecordingLangSmith.runs
    server.shutdown()
    server.server_close()


def test_a_reachable_langsmith_gets_the_labelled_runs_before_the_cli_exits(
    tmp_path: Path, recording_endpoint: tuple[str, dict[str, dict[str, Any]]]
) -> None:
    endpoint, runs = recording_endpoint

    ended = finish(*start(tmp_path, endpoint))

    assert ended.code == 0
    assert ended.after_answer < UPLOAD_SECONDS  # it waited for the uploads, not for the bound
    thread_id = ended.stdout.splitlines()[0].split()[-1]
    [root] = [r for r in runs.values() if r.get("name") == "react" and not r.get("parent_run_id")]
    assert {LIBRARY_TAG, "pattern:react"} <= set(root["tags"])
    assert root["extra"]["metadata"]["pattern"] == "react"
    assert root["extra"]["metadata"]["thread_id"] == thread_id
    tools = [r for r in runs.values() if r.get("run_type") == "tool"]
    assert [t["name"] for t in tools] == ["calculator"]
    assert all(r.get("trace_id") == root["id"] for r in runs.values())


@pytest.fixture
def stalling_endpoint() -> Iterator[tuple[str, list[str]]]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), StallingLangSmith)
    server.daemon_threads = True
    StallingLangSmith.release.clear()
    StallingLangSmith.uploads = []
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", StallingLangSmith.uploads
    StallingLangSmith.release.set()
    server.shutdown()
    server.server_close()


@pytest.fixture
def refusing_endpoint() -> Iterator[str]:
    """A loopback port that is bound but not listening: every connection is refused."""
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        yield f"http://127.0.0.1:{held.getsockname()[1]}"


@pytest.fixture
def silent_endpoint() -> Iterator[tuple[str, socket.socket]]:
    """A loopback port that takes connections (the kernel's backlog) and never answers."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        yield f"http://127.0.0.1:{listener.getsockname()[1]}", listener


def test_a_traced_cli_ends_within_seconds_whatever_the_endpoint_does(
    tmp_path: Path,
    refusing_endpoint: str,
    silent_endpoint: tuple[str, socket.socket],
    stalling_endpoint: tuple[str, list[str]],
) -> None:
    silent, listener = silent_endpoint
    stalling, uploads = stalling_endpoint
    endpoints = {"refusing": refusing_endpoint, "silent": silent, "stalling": stalling}
    started = {}
    for name, url in endpoints.items():  # all at once: the test waits for the slowest only
        (tmp_path / name).mkdir()
        started[name] = start(tmp_path / name, url)
    with ThreadPoolExecutor() as pool:  # one reader each, so each answer is timed as it comes
        waits = {name: pool.submit(finish, *process) for name, process in started.items()}
        exits = {name: wait.result() for name, wait in waits.items()}

    for name, ended in exits.items():
        assert ended.code == 0, name
        assert f"Answer: {ANSWER}" in ended.stdout.splitlines(), name
        assert ended.after_answer < UPLOAD_SECONDS + 3, (name, ended)
        assert ended.total < 15, (name, ended)
        facts = driver_facts(ended.stdout)
        assert facts["tracing"] is True, name
        assert facts["clients"] == 1, name
        assert facts["connections"] > 0, name
    # the runs were really on their way: the silent port was connected to, uploads reached
    # the stalling endpoint
    listener.settimeout(1)
    connection, _ = listener.accept()
    connection.close()
    assert uploads
