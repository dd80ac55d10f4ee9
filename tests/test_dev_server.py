"""The `langgraph dev` face: the repo's langgraph.json and approvals over the server's HTTP API.

Each fixture starts a real ``langgraph dev`` process on a free port, in a
scratch folder (the server writes ``.langgraph_api/`` into its working
directory), with LangSmith and analytics off so nothing leaves the machine.
"""

from __future__ import annotations

import ast
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
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from reasoning_graphs.graphs import PATTERNS
from reasoning_graphs.models.local import local_model_available

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient

INMEM = "`langgraph dev` is not installed: pip install 'langgraph-cli[inmem]'"
pytest.importorskip("langgraph_cli", reason=INMEM)
pytest.importorskip("langgraph_api", reason=INMEM)
get_client = pytest.importorskip("langgraph_sdk", reason="needs langgraph-sdk").get_client

pytestmark = pytest.mark.server

REPO = Path(__file__).resolve().parents[1]
APP_CONFIG = REPO / "tests" / "server_app" / "langgraph.json"
STUDIO_CONFIG = REPO / "tests" / "studio_app" / "langgraph.json"
REPO_CONFIG = REPO / "langgraph.json"
STARTUP_TIMEOUT = 60.0
STOP_TIMEOUT = 15.0
CONTEXT_FIELDS = {
    "model",
    "max_steps",
    "max_tool_calls_per_turn",
    "token_budget",
    "approve",
    "deny",
    "tools",
    "mode",
    "time_budget",
    "model_timeout",
    "idle_timeout",
}
SUBGRAPHS = {"plan_execute": "execute", "reflexion": "act"}
"""Patterns that run a ReAct graph inside one node, and that node's name."""


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


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


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
    copy = scratch / "langgraph.json"
    copy.write_text(json.dumps(data, indent=2))
    return copy


def server_env(workspace: Path) -> dict[str, str]:
    """The environment: no LangSmith, no analytics, no version check, our package importable."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("LANGSMITH_", "LANGCHAIN_"))}
    python_path = [str(REPO / "src"), env.get("PYTHONPATH", "")]
    env.update(
        LANGGRAPH_CLI_NO_ANALYTICS="1",
        LANGGRAPH_NO_VERSION_CHECK="true",
        PYTHONPATH=os.pathsep.join(p for p in python_path if p),
        REASONING_GRAPHS_WORKSPACE=str(workspace),
    )
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


@contextmanager
def dev_server(config: Path, scratch: Path) -> Iterator[DevServer]:
    """Run ``langgraph dev`` for ``config`` with ``scratch`` as its working directory."""
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
            env=server_env(workspace),
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


@pytest.fixture(scope="module")
def app_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """The scripted file-writing app of ``tests/server_app``."""
    with dev_server(APP_CONFIG, tmp_path_factory.mktemp("app_server")) as server:
        yield server


@pytest.fixture(scope="module")
def studio_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """Each pattern on a scripted model that proposes one dangerous write (tests/studio_app)."""
    with dev_server(STUDIO_CONFIG, tmp_path_factory.mktemp("studio_server")) as server:
        yield server


@pytest.fixture(scope="module")
def repo_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """The graphs the repo's own ``langgraph.json`` names."""
    with dev_server(REPO_CONFIG, tmp_path_factory.mktemp("repo_server")) as server:
        yield server


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
    assert finished["status"] == "success", server.output()
    return await client.threads.get_state(thread_id)


async def ask_to_write(
    client: LangGraphClient, server: DevServer, text: str, path: str
) -> tuple[str, dict]:
    """Ask the app to write a file; return the thread id and its paused state."""
    thread = await client.threads.create()
    question = {"messages": [{"role": "user", "content": f"write {text} to {path}"}]}
    state = await run_to_rest(client, server, thread["thread_id"], input=question)
    return thread["thread_id"], state


def approval_of(state: dict) -> dict:
    """The one pending approval request of a paused thread."""
    assert state["next"], "the run should be paused"
    [interrupt] = state["interrupts"]
    assert interrupt["value"]["kind"] == "approval"
    return interrupt["value"]


async def test_approved_write_happens_only_after_approval(app_server: DevServer) -> None:
    client = get_client(url=app_server.url)
    thread_id, paused = await ask_to_write(client, app_server, "hello", "notes.txt")

    [call] = approval_of(paused)["calls"]
    assert (call["name"], call["args"]) == ("write_file", {"path": "notes.txt", "content": "hello"})
    assert "approve" in call["allowed_decisions"]
    target = app_server.workspace / "notes.txt"
    assert not target.exists()

    approve = {"resume": [{"type": "approve"}]}
    state = await run_to_rest(client, app_server, thread_id, command=approve)

    assert target.read_text() == "hello"
    assert not state["next"]
    assert not state["interrupts"]
    tool_message, answer = state["values"]["messages"][-2:]
    assert tool_message["type"] == "tool"
    assert tool_message["tool_call_id"] == call["id"]
    assert answer["type"] == "ai"
    assert answer["content"] == "Finished. The tool said: Wrote 5 bytes to notes.txt."
    assert state["values"]["outcome"] == {"status": "answered"}


async def test_the_readme_server_snippet_runs_as_written(app_server: DevServer) -> None:
    from test_readme import SERVER_URL, server_snippets

    (snippet,) = server_snippets()
    code = compile(
        snippet.replace(SERVER_URL, app_server.url),
        "README.md",
        "exec",
        flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT,
    )
    namespace: dict[str, Any] = {}

    await eval(code, namespace)  # the README's own code: its awaits are top-level

    assert namespace["pending"]["value"]["calls"][0]["name"] == "write_file"
    assert (app_server.workspace / "notes.txt").read_text() == "hello"


async def test_rejected_write_never_happens(app_server: DevServer) -> None:
    client = get_client(url=app_server.url)
    thread_id, paused = await ask_to_write(client, app_server, "secrets", "draft.txt")
    [call] = approval_of(paused)["calls"]

    reject = {"resume": [{"type": "reject", "reason": "not in this folder"}]}
    state = await run_to_rest(client, app_server, thread_id, command=reject)

    assert not (app_server.workspace / "draft.txt").exists()
    assert not state["interrupts"]
    tool_message, answer = state["values"]["messages"][-2:]
    assert tool_message["type"] == "tool"
    assert tool_message["tool_call_id"] == call["id"]
    assert "rejected" in tool_message["content"]
    assert "not in this folder" in tool_message["content"]
    assert answer["type"] == "ai"
    assert tool_message["content"] in answer["content"]


async def assistant_for(client: LangGraphClient, server: DevServer, graph_id: str) -> str:
    """The id of the one assistant the server made for ``graph_id``."""
    assistants = await client.assistants.search(graph_id=graph_id)
    assert [a["graph_id"] for a in assistants] == [graph_id], server.output()
    return assistants[0]["assistant_id"]


@pytest.mark.parametrize("graph_id", list(PATTERNS))
async def test_repo_config_serves_every_pattern_for_studio(
    repo_server: DevServer, graph_id: str
) -> None:
    client = get_client(url=repo_server.url)
    assistant_id = await assistant_for(client, repo_server, graph_id)

    graph = importlib.import_module(f"{PATTERNS[graph_id]}.graph").graph
    for xray in (False, True):  # xray: the nodes of subgraphs too, as Studio can expand them
        drawing = await client.assistants.get_graph(assistant_id, xray=xray)
        local = graph.get_graph(xray=xray)
        assert {node["id"] for node in drawing["nodes"]} == set(local.nodes)
        edges = {(edge["source"], edge["target"]) for edge in drawing["edges"]}
        assert edges == {(edge.source, edge.target) for edge in local.edges}

    schemas = await client.assistants.get_schemas(assistant_id)
    context = schemas["context_schema"]
    # the pattern's own options too (tests/test_pattern_options.py names them)
    assert set(context["properties"]) == set(graph.get_context_jsonschema()["properties"])
    assert set(context["properties"]) >= CONTEXT_FIELDS
    undescribed = [
        name for name, field in context["properties"].items() if not field.get("description")
    ]
    assert not undescribed, f"run options without a description: {undescribed}"
    assert schemas["input_schema"] is not None, repo_server.output()
    assert set(schemas["input_schema"]["properties"]) == {"messages"}


LOCAL_AVAILABLE, LOCAL_MISSING = local_model_available()


@pytest.mark.local_model
@pytest.mark.skipif(not LOCAL_AVAILABLE, reason=f"embedded model not installed: {LOCAL_MISSING}")
@pytest.mark.parametrize("graph_id", list(PATTERNS))
async def test_every_pattern_runs_on_the_server_with_the_embedded_model(
    repo_server: DevServer, graph_id: str, tmp_path: Path
) -> None:
    client = get_client(url=repo_server.url)
    thread = await client.threads.create()
    question = {"messages": [{"role": "user", "content": "What is 23*17+4?"}]}
    # small budgets: this checks that each pattern runs end to end, not what a 135M model knows
    context = {"model": "local", "max_steps": 3, "token_budget": 3000, "deny": ["shell"]}

    created = await client.runs.create(
        thread["thread_id"], graph_id, input=question, context=context
    )
    await client.runs.join(thread["thread_id"], created["run_id"])

    finished = await client.runs.get(thread["thread_id"], created["run_id"])
    assert finished["status"] == "success", repo_server.output()
    state = await client.threads.get_state(thread["thread_id"])
    if state["next"]:  # stopped for a person: the approval request is well formed
        assert approval_of(state)["calls"]
        return
    assert state["values"]["outcome"]["status"] in {"answered", "incomplete"}
    assert state["values"]["messages"][-1]["type"] == "ai"
    assert state["values"]["messages"][-1]["content"].strip()


@pytest.mark.parametrize("graph_id", list(SUBGRAPHS))
async def test_studio_can_expand_the_subgraph_of_a_pattern(
    repo_server: DevServer, graph_id: str
) -> None:
    client = get_client(url=repo_server.url)
    assistant_id = await assistant_for(client, repo_server, graph_id)

    drawing = await client.assistants.get_graph(assistant_id, xray=True)

    inner = {node["id"] for node in drawing["nodes"] if ":" in node["id"]}
    prefix = SUBGRAPHS[graph_id]
    assert {f"{prefix}:think", f"{prefix}:approve", f"{prefix}:act"} <= inner


TOOL_PATTERNS = [pattern for pattern in PATTERNS if pattern != "cot"]


@pytest.mark.parametrize("graph_id", TOOL_PATTERNS)
async def test_every_pattern_pauses_for_studios_approval_panel_and_keeps_its_history(
    studio_server: DevServer, graph_id: str
) -> None:
    client = get_client(url=studio_server.url)
    thread = await client.threads.create()
    question = {"messages": [{"role": "user", "content": "Please write the file."}]}
    paused = await run_to_rest(client, studio_server, thread["thread_id"], graph_id, input=question)

    request = approval_of(paused)
    expected = {"path": f"{graph_id}.txt", "content": f"hello from {graph_id}"}
    [action] = request["action_requests"]
    assert (action["name"], action["args"]) == ("write_file", expected)
    assert action["description"]
    [review] = request["review_configs"]
    assert review["action_name"] == "write_file"
    assert {"approve", "edit", "reject"} <= set(review["allowed_decisions"])
    assert [i["value"] for task in paused["tasks"] for i in task["interrupts"]] == [request]
    target = studio_server.workspace / f"{graph_id}.txt"
    assert not target.exists()

    approve = {"resume": {"decisions": [{"type": "approve"}]}}
    done = await run_to_rest(client, studio_server, thread["thread_id"], graph_id, command=approve)

    assert target.read_text() == expected["content"]
    assert (done["next"], done["interrupts"]) == ([], [])
    assert done["values"]["outcome"] == {"status": "answered"}
    history = await client.threads.get_history(thread["thread_id"], limit=200)
    assert history[0]["checkpoint"]["checkpoint_id"] == done["checkpoint"]["checkpoint_id"]
    waiting = [h for h in history if h["interrupts"]]
    assert waiting, "the paused checkpoint is in the history"
    earlier = await client.threads.get_state(
        thread["thread_id"], checkpoint_id=waiting[0]["checkpoint"]["checkpoint_id"]
    )
    assert earlier["next"]
    assert earlier["values"]["messages"][0]["content"] == "Please write the file."


async def test_run_options_in_an_assistants_context_apply_to_its_runs(
    studio_server: DevServer,
) -> None:
    client = get_client(url=studio_server.url)
    question = {"messages": [{"role": "user", "content": "What is 2+2?"}]}
    one_sample = await client.assistants.create("cot", context={"samples": 1})
    no_writes = await client.assistants.create("react", context={"deny": ["write_file"]})
    target = studio_server.workspace / "react.txt"
    target.unlink(missing_ok=True)

    default_run = await run_to_rest(
        client, studio_server, (await client.threads.create())["thread_id"], "cot", input=question
    )
    narrowed = await run_to_rest(
        client,
        studio_server,
        (await client.threads.create())["thread_id"],
        one_sample["assistant_id"],
        input=question,
    )
    denied = await run_to_rest(
        client,
        studio_server,
        (await client.threads.create())["thread_id"],
        no_writes["assistant_id"],
        input={"messages": [{"role": "user", "content": "Please write the file."}]},
    )

    assert default_run["values"]["agreement"] == "3/3"
    assert narrowed["values"]["agreement"] == "1/1"
    assert not denied["interrupts"]
    [observation] = [m for m in denied["values"]["messages"] if m["type"] == "tool"]
    assert observation["status"] == "error"
    assert (
        not (studio_server.workspace / "react.txt").exists() or "denied" in observation["content"]
    )


QUESTION = {"messages": [{"role": "user", "content": "write hello to notes.txt"}]}
MALFORMED_RUNS = {
    "messages not a list": ({"messages": 5}, None),
    "unknown input field": ({"question": "write hello to notes.txt"}, None),
    "input not an object": ("write hello to notes.txt", None),
    "unknown message role": ({"messages": [{"role": "alien", "content": "hi"}]}, None),
    "no message": ({"messages": []}, None),
    "unknown run option": (QUESTION, {"bogus": 1}),
    "ill-typed run option": (QUESTION, {"max_steps": "ten"}),
    "tool the graph lacks": (QUESTION, {"tools": ["no_such_tool"]}),
    "misspelt approval": (QUESTION, {"approve": ["write-file"]}),
}


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


@pytest.mark.parametrize(("run_input", "context"), MALFORMED_RUNS.values(), ids=MALFORMED_RUNS)
async def test_a_malformed_run_is_refused_before_it_starts_and_the_thread_stays_usable(
    app_server: DevServer, run_input: Any, context: dict | None
) -> None:
    client = get_client(url=app_server.url)
    thread_id = (await client.threads.create())["thread_id"]

    await refusal(client.runs.create(thread_id, "react", input=run_input, context=context))
    await refusal(client.runs.wait(thread_id, "react", input=run_input, context=context))

    assert await client.runs.list(thread_id) == []
    untouched = await client.threads.get_state(thread_id)
    assert untouched["values"] == {}
    assert not untouched["next"]
    paused = await run_to_rest(client, app_server, thread_id, input=QUESTION)
    assert approval_of(paused)["calls"][0]["name"] == "write_file"


async def test_unknown_options_are_refused_with_the_known_ones_by_assistant_and_by_run(
    app_server: DevServer,
) -> None:
    client = get_client(url=app_server.url)
    react = (await client.assistants.search(graph_id="react"))[0]["assistant_id"]
    schema = (await client.assistants.get_schemas(react))["context_schema"]
    known = set(schema["properties"])

    detail = await refusal(client.assistants.create("react", context={"max_step": 3}))
    assert "max_step" in detail
    assert all(name in detail for name in known)
    assistant = await client.assistants.create("react", context={"max_steps": 3})
    await refusal(client.assistants.update(assistant["assistant_id"], context={"bogus": 1}))
    await refusal(  # a stored assistant's graph is found by its id
        client.runs.wait(None, assistant["assistant_id"], input=QUESTION, context={"bogus": 1})
    )
    batch = [{"assistant_id": "react", "input": {"messages": 5}}]
    await refusal(client.runs.create_batch(batch))


async def test_studios_tool_fields_list_the_graphs_tools(app_server: DevServer) -> None:
    client = get_client(url=app_server.url)
    react = (await client.assistants.search(graph_id="react"))[0]["assistant_id"]
    schema = (await client.assistants.get_schemas(react))["context_schema"]

    def choices(option: str) -> set[str]:
        [array] = [b for b in schema["properties"][option]["anyOf"] if b.get("type") == "array"]
        return set(array["items"]["enum"])

    assert choices("tools") == {"write_file", "read_observation"}
    assert choices("deny") == {"write_file", "read_observation"}
    assert choices("approve") == {"write_file", "read_observation", "all"}


async def test_each_served_thread_writes_in_its_own_folder_inside_the_workspace_root(
    app_server: DevServer,
) -> None:
    client = get_client(url=app_server.url)
    written = {}
    for text in ("first", "second"):
        thread_id = (await client.threads.create())["thread_id"]
        question = {"messages": [{"role": "user", "content": f"write {text} to own.txt"}]}
        paused = await run_to_rest(client, app_server, thread_id, "served", input=question)
        folder = app_server.workspace / thread_id
        assert str(folder / "own.txt") in json.dumps(approval_of(paused))  # where it acts
        await run_to_rest(
            client, app_server, thread_id, "served", command={"resume": [{"type": "approve"}]}
        )
        written[folder / "own.txt"] = text

    for path, text in written.items():
        assert path.read_text() == text
    assert not (app_server.workspace / "own.txt").exists()
    assert not (app_server.log.parent / "own.txt").exists()  # never the server's own folder
