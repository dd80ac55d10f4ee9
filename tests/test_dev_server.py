"""The `langgraph dev` face: the repo's langgraph.json and approvals over the server's HTTP API.

Each fixture starts a real ``langgraph dev`` process (:mod:`dev_server`), one per module.
"""

from __future__ import annotations

import asyncio
import importlib
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from reasoning_graphs.graphs import PATTERNS
from reasoning_graphs.models.local import local_model_available
from tests.helpers.dev_server import (
    APP_CONFIG,
    AT_REST,
    QUESTION,
    REPO,
    DevServer,
    approval_of,
    dev_server,
    refusal,
    run_to_rest,
)

if TYPE_CHECKING:
    from langgraph_sdk.client import LangGraphClient

INMEM = "`langgraph dev` is not installed: pip install 'langgraph-cli[inmem]'"
pytest.importorskip("langgraph_cli", reason=INMEM)
pytest.importorskip("langgraph_api", reason=INMEM)
get_client = pytest.importorskip("langgraph_sdk", reason="needs langgraph-sdk").get_client

pytestmark = pytest.mark.server

STUDIO_CONFIG = REPO / "tests" / "studio_app" / "langgraph.json"
REPO_CONFIG = REPO / "langgraph.json"
CONTEXT_FIELDS = {
    "model",
    "max_model_calls",
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
SCRIPT_TIMEOUT = 120
"""Seconds the docs' SDK script may take: two runs of a scripted model on a local server."""
"""Patterns that run a ReAct graph inside one node, and that node's name."""


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


async def ask_to_write(
    client: LangGraphClient, server: DevServer, text: str, path: str
) -> tuple[str, dict]:
    """Ask the app to write a file; return the thread id and its paused state."""
    thread = await client.threads.create()
    question = {"messages": [{"role": "user", "content": f"write {text} to {path}"}]}
    state = await run_to_rest(client, server, thread["thread_id"], input=question)
    return thread["thread_id"], state


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


async def test_the_readme_server_snippet_runs_as_written(
    app_server: DevServer, tmp_path: Path
) -> None:
    from tests.test_readme import SERVER_URL, server_snippets

    (snippet,) = server_snippets()
    script = tmp_path / "approve.py"
    script.write_text(snippet.replace(SERVER_URL, app_server.url), encoding="utf-8")

    # the docs' own code, as a script in its own process with its own event loop
    done = await asyncio.to_thread(
        subprocess.run,
        [sys.executable, str(script)],
        capture_output=True,
        text=True,
        timeout=SCRIPT_TIMEOUT,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    written = next(app_server.workspace.rglob("notes.txt"))
    assert written.read_text() == "hello"
    lines = done.stdout.splitlines()
    (approving,) = [line for line in lines if line.startswith("approving:")]
    assert "write_file" in approving
    assert str(written) in approving  # it says where the file went
    assert "answer: Finished." in lines[-2]  # the thread ran to its end
    assert lines[-1] == "ended: answered"


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


async def test_an_edit_names_only_what_changes_and_one_that_cannot_run_is_asked_again(
    app_server: DevServer,
) -> None:
    client = get_client(url=app_server.url)
    thread_id, paused = await ask_to_write(client, app_server, "hi", "hi.txt")
    [call] = approval_of(paused)["calls"]
    target = app_server.workspace / "hi.txt"

    misspelt = {"resume": [{"type": "edit", "args": {"contents": "hello"}}]}
    state = await run_to_rest(client, app_server, thread_id, command=misspelt)

    again = approval_of(state)
    assert "contents" in again["error"]
    assert again["calls"] == [call]
    assert not target.exists()
    assert [m["type"] for m in state["values"]["messages"]] == ["human", "ai"]  # model not told

    # the shape Studio's approval panel sends, naming the one argument that changes
    changed = {"name": "write_file", "args": {"content": "hello"}}
    edit = {"resume": {"decisions": [{"type": "edit", "edited_action": changed}]}}
    state = await run_to_rest(client, app_server, thread_id, command=edit)

    assert target.read_text() == "hello"
    assert not state["interrupts"]
    messages = state["values"]["messages"]
    assert messages[1]["tool_calls"][0]["args"] == {"path": "hi.txt", "content": "hi"}  # proposed
    assert '"content": "hello"' in messages[2]["content"]  # the model is told what ran


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

    graph = importlib.import_module(f"reasoning_graphs.graphs.{graph_id}.graph").graph()
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
    context = {"model": "local", "max_model_calls": 3, "token_budget": 3000, "deny": ["shell"]}

    created = await client.runs.create(
        thread["thread_id"], graph_id, input=question, context=context
    )
    await client.runs.join(thread["thread_id"], created["run_id"])

    finished = await client.runs.get(thread["thread_id"], created["run_id"])
    assert finished["status"] in AT_REST, repo_server.output()
    state = await client.threads.get_state(thread["thread_id"])
    if state["next"]:  # stopped for a person: the approval request is well formed
        assert approval_of(state)["calls"]
        return
    outcome = state["values"]["outcome"]
    assert outcome["status"] in {"answered", "incomplete"}
    last = state["values"]["messages"][-1]
    assert last["type"] == "ai"
    # the model's own words, or an honest stop that says why (an empty reply stays empty)
    assert last["content"].strip() or (outcome["status"] == "incomplete" and outcome["note"])


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


TOOL_PATTERNS = [name for name, pattern in PATTERNS.items() if pattern.uses_tools]


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


MALFORMED_RUNS = {
    "messages not a list": ({"messages": 5}, None),
    "unknown input field": ({"question": "write hello to notes.txt"}, None),
    "input not an object": ("write hello to notes.txt", None),
    "unknown message role": ({"messages": [{"role": "alien", "content": "hi"}]}, None),
    "no message": ({"messages": []}, None),
    "unknown run option": (QUESTION, {"bogus": 1}),
    "ill-typed run option": (QUESTION, {"max_model_calls": "ten"}),
    "tool the graph lacks": (QUESTION, {"tools": ["no_such_tool"]}),
    "misspelt approval": (QUESTION, {"approve": ["write-file"]}),
    "answer schema of no object": (QUESTION, {"response_format": {"type": "string"}}),
}


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
    assistant = await client.assistants.create("react", context={"max_model_calls": 3})
    await refusal(client.assistants.update(assistant["assistant_id"], context={"bogus": 1}))
    await refusal(  # a stored assistant's graph is found by its id
        client.runs.wait(None, assistant["assistant_id"], input=QUESTION, context={"bogus": 1})
    )
    batch = [{"assistant_id": "react", "input": {"messages": 5}}]
    await refusal(client.runs.create_batch(batch))


async def test_a_run_may_ask_for_a_typed_answer_in_a_json_schema(app_server: DevServer) -> None:
    client = get_client(url=app_server.url)
    react = (await client.assistants.search(graph_id="react"))[0]["assistant_id"]
    schema = (await client.assistants.get_schemas(react))["context_schema"]
    assert "response_format" in schema["properties"]  # Studio shows it as a field
    said = {"type": "object", "properties": {"said": {"type": "string"}}, "required": ["said"]}
    thread_id = (await client.threads.create())["thread_id"]
    question = {"messages": [{"role": "user", "content": "Hello?"}]}

    state = await run_to_rest(
        client, app_server, thread_id, input=question, context={"response_format": said}
    )

    answer = state["values"]["messages"][-1]["content"]
    assert state["values"]["structured_response"] == {"said": answer}
    assert state["values"]["outcome"]["status"] == "answered"


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
