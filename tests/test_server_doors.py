"""Every door of the LangGraph server that starts or shapes a run checks it the same way.

A run's options reach the server as ``context`` or as ``config.configurable``
(langgraph-api copies the latter into the former), on run, batch, assistant and
cron routes and on the event-streaming commands; each way gets the same checks
and the same ``422``. A served run may choose only the models its deployment
allows, and the graph refuses such a run itself when it runs under the server;
Python callers keep their full choice.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain_core.language_models import BaseChatModel

from reasoning_graphs import server_checks
from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.nodes.model import setup
from reasoning_graphs.run_input import RunInputError
from reasoning_graphs.served_models import ALLOWED_MODELS_ENV, MODEL_NOT_ALLOWED, SERVER_RUN_MARK
from reasoning_graphs.testing import ScriptedChatModel
from tests.helpers.dev_server import (
    APP_CONFIG,
    QUESTION,
    DevServer,
    approval_of,
    dev_server,
    portable_config,
    refusal,
)

INMEM = "`langgraph dev` is not installed: pip install 'langgraph-cli[inmem]'"

LIST_ROUTES = """
import json
from langgraph_api.api import protected_routes, shadowable_meta_routes, unshadowable_meta_routes
from starlette.routing import Mount, WebSocketRoute

routes = []
for route in [*unshadowable_meta_routes, *shadowable_meta_routes, *protected_routes]:
    if isinstance(route, Mount):
        continue  # static files (the UI bundles)
    if isinstance(route, WebSocketRoute):
        routes.append(["WEBSOCKET", route.path])
    else:
        routes.extend([method, route.path] for method in route.methods or ())
print(json.dumps(routes))
"""
"""Lists the installed langgraph-api's routes as the in-memory server (``langgraph dev``)
mounts them, without starting it: its configuration is read when it is imported."""
SERVER_IMPORT_ENV = {
    "MIGRATIONS_PATH": "__inmem",
    "DATABASE_URI": ":memory:",
    "REDIS_URI": "fake",
    "LANGGRAPH_RUNTIME_EDITION": "inmem",
}
READS = {"GET", "HEAD"}

TAKES_RUN_OPTIONS = {
    ("POST", "/assistants"),
    ("PATCH", "/assistants/{assistant_id}"),
    ("POST", "/runs"),
    ("POST", "/runs/stream"),
    ("POST", "/runs/wait"),
    ("POST", "/runs/batch"),
    ("POST", "/threads/{thread_id}/runs"),
    ("POST", "/threads/{thread_id}/runs/stream"),
    ("POST", "/threads/{thread_id}/runs/wait"),
    ("POST", "/runs/crons"),
    ("POST", "/threads/{thread_id}/runs/crons"),
    ("PATCH", "/runs/crons/{cron_id}"),
    ("POST", "/threads/{thread_id}/commands"),  # event streaming: run.start, input.respond
    ("WEBSOCKET", "/threads/{thread_id}/stream/events"),  # the same commands, framed
}
"""Reviewed: the routes whose body starts a run, or stores what later runs start with."""
WRITES_STATE = {
    ("POST", "/threads/{thread_id}/state"),
    ("POST", "/threads"),  # its supersteps write the new (or an existing) thread's state
}
"""Reviewed: the routes whose body writes a thread's state."""
THROUGH_THE_RUN_ROUTES = {
    ("POST", "/mcp"),
    ("POST", "/a2a/{assistant_id}"),
    ("POST", "/a2a/{assistant_id}/"),
}
"""Reviewed: routes that start runs by calling the server's own run routes (its loopback
client), so their runs pass the door there."""
TAKES_NO_RUN_OPTIONS = {
    ("POST", "/assistants/search"),
    ("POST", "/assistants/count"),
    ("POST", "/assistants/{assistant_id}/versions"),
    ("POST", "/assistants/{assistant_id}/latest"),  # picks a version, each checked when made
    ("DELETE", "/assistants/{assistant_id}"),
    ("POST", "/runs/cancel"),
    ("POST", "/runs/crons/search"),
    ("POST", "/runs/crons/count"),
    ("DELETE", "/runs/crons/{cron_id}"),
    ("POST", "/threads/{thread_id}/runs/{run_id}/cancel"),
    ("DELETE", "/threads/{thread_id}/runs/{run_id}"),
    ("POST", "/threads/search"),
    ("POST", "/threads/count"),
    ("POST", "/threads/prune"),
    ("PATCH", "/threads/{thread_id}"),  # metadata and time to live
    ("DELETE", "/threads/{thread_id}"),
    ("POST", "/threads/{thread_id}/copy"),
    ("POST", "/threads/{thread_id}/history"),
    ("POST", "/threads/{thread_id}/state/checkpoint"),
    ("POST", "/threads/{thread_id}/stream/events"),  # subscribes to events
    ("PUT", "/store/items"),
    ("DELETE", "/store/items"),
    ("POST", "/store/items/search"),
    ("POST", "/store/namespaces"),
    ("POST", "/ui/{graph_id}"),  # renders a graph's UI components
    ("DELETE", "/mcp"),
    ("DELETE", "/a2a/{assistant_id}"),
    ("DELETE", "/a2a/{assistant_id}/"),
    ("POST", "/internal/truncate"),  # the in-memory server's test hooks
    ("POST", "/deploy"),
}
"""Reviewed: routes that change something, but no run's input or options."""


def served_routes() -> set[tuple[str, str]]:
    """The installed server's routes that are more than reads, as (method, path template)."""
    pytest.importorskip("langgraph_api", reason=INMEM)
    listed = subprocess.run(
        [sys.executable, "-c", LIST_ROUTES],
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, **SERVER_IMPORT_ENV},
        check=False,
    )
    assert listed.returncode == 0, listed.stderr
    return {(method, path) for method, path in json.loads(listed.stdout) if method not in READS}


def concrete(template: str) -> str:
    """A request path for a route template: each parameter an id."""
    return re.sub(r"\{[^}]+\}", lambda _: str(uuid.uuid4()), template)


def test_every_route_that_takes_run_options_is_checked_at_the_door() -> None:
    routes = served_routes()
    reviewed = TAKES_RUN_OPTIONS | WRITES_STATE | THROUGH_THE_RUN_ROUTES | TAKES_NO_RUN_OPTIONS

    assert not routes - reviewed, (
        f"classify these routes of langgraph-api in this test: {sorted(routes - reviewed)}"
    )
    assert not reviewed - routes, f"langgraph-api no longer serves {sorted(reviewed - routes)}"
    for method, template in TAKES_RUN_OPTIONS | WRITES_STATE:
        assert server_checks.door_of(method, concrete(template)), (method, template)
    for method, template in THROUGH_THE_RUN_ROUTES | TAKES_NO_RUN_OPTIONS:
        assert not server_checks.door_of(method, concrete(template)), (method, template)


# --- the model a served run may choose -------------------------------------------------


class RecordedModels:
    """Stands in for model resolution: records each spec a run resolves, answers with a
    scripted model. A run may resolve its spec more than once (at each use, see
    ``RunScope.model``), so :attr:`distinct` is what the tests compare."""

    def __init__(self) -> None:
        self.specs: list[Any] = []

    def __call__(self, spec: Any = None) -> BaseChatModel:
        self.specs.append(spec)
        return ScriptedChatModel(script=["42"])

    @property
    def distinct(self) -> list[Any]:
        return list(dict.fromkeys(self.specs))


@pytest.fixture
def resolved(monkeypatch: pytest.MonkeyPatch) -> RecordedModels:
    recorded = RecordedModels()
    monkeypatch.setattr(setup, "resolve_model", recorded)
    return recorded


@pytest.fixture
def deployment(monkeypatch: pytest.MonkeyPatch) -> None:
    """A deployment that runs ``openai:deployed`` and allows nothing else."""
    monkeypatch.setenv("REASONING_GRAPHS_MODEL", "openai:deployed")
    monkeypatch.delenv(ALLOWED_MODELS_ENV, raising=False)


SERVED = {"metadata": {SERVER_RUN_MARK: "0.0"}}
"""The mark the LangGraph server puts on every run it starts."""
ASK = {"messages": [("user", "What is 6*7?")]}


def test_a_python_caller_still_chooses_any_model(
    resolved: RecordedModels, deployment: None, tmp_path: Path
) -> None:
    graph = build_graph(ScriptedChatModel(script=["unused"]), tools=[])
    spec = f"local:{tmp_path / 'mine.gguf'}"

    state = graph.invoke(ASK, context={"model": spec})

    assert resolved.distinct == [spec]
    assert state["messages"][-1].content == "42"


def test_a_served_run_may_not_change_the_model_unless_the_deployment_allows_it(
    resolved: RecordedModels, deployment: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    graph = build_graph(ScriptedChatModel(script=["unused"]), tools=[])
    existing = tmp_path / "present.gguf"
    existing.write_bytes(b"GGUF")
    refused_specs = [f"local:{existing}", f"local:{tmp_path / 'absent.gguf'}", "anthropic:x"]

    reasons = set()
    for spec in refused_specs:
        with pytest.raises(RunInputError) as refused:
            graph.invoke(ASK, SERVED, context={"model": spec})
        reasons.add(str(refused.value))
    graph.invoke(ASK, SERVED, context={"model": "openai:deployed"})  # the deployment's own
    graph.invoke(ASK, SERVED, context={"model": ""})  # unset: the graph's model
    monkeypatch.setenv(ALLOWED_MODELS_ENV, "openai:small, anthropic:x")
    graph.invoke(ASK, SERVED, context={"model": "anthropic:x"})

    [reason] = reasons  # one refusal, whatever the spec names and whether its file exists
    assert "model" in reason
    assert str(tmp_path) not in reason
    assert resolved.distinct == ["openai:deployed", "anthropic:x"]


# --- through a real dev server ----------------------------------------------------------

ALLOWED = "openai:team-model"
DEPLOYED = "openai:deployed-model"
BAD_OPTIONS = {"max_step": 3}
YEARLY = "0 0 1 1 *"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevServer]:
    """The scripted app of ``tests/server_app``, deployed with a list of allowed models."""
    pytest.importorskip("langgraph_cli", reason=INMEM)
    pytest.importorskip("langgraph_api", reason=INMEM)
    env = {"REASONING_GRAPHS_MODEL": DEPLOYED, ALLOWED_MODELS_ENV: f"{ALLOWED}, openai:other"}
    with dev_server(APP_CONFIG, tmp_path_factory.mktemp("doors"), env) as running:
        yield running


def configured(options: dict[str, Any]) -> dict[str, Any]:
    return {"configurable": options}


@pytest.mark.server
async def test_options_sent_as_configurable_get_the_same_refusal_on_every_route(
    server: DevServer,
) -> None:
    from langgraph_sdk import get_client

    client = get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    assistant = await client.assistants.create("react", context={"max_model_calls": 3})
    assistant_id = assistant["assistant_id"]  # crons name a stored assistant
    cron = await client.crons.create(assistant_id, schedule=YEARLY, input=QUESTION)
    stored_cron = await client.http.get(f"/runs/crons/{cron['cron_id']}")
    bad = configured(BAD_OPTIONS)

    expected = await refusal(
        client.runs.create(thread_id, "react", input=QUESTION, context=BAD_OPTIONS)
    )
    refusals = [
        refusal(client.runs.create(thread_id, "react", input=QUESTION, config=bad)),
        refusal(client.runs.wait(thread_id, "react", input=QUESTION, config=bad)),
        refusal(client.runs.wait(None, "react", input=QUESTION, config=bad)),
        refusal(
            client.runs.create_batch([{"assistant_id": "react", "input": QUESTION, "config": bad}])
        ),
        refusal(client.assistants.create("react", config=bad)),
        refusal(client.assistants.update(assistant_id, config=bad)),
        refusal(client.crons.create(assistant_id, schedule=YEARLY, input=QUESTION, config=bad)),
        refusal(
            client.crons.create_for_thread(
                thread_id, assistant_id, schedule=YEARLY, input=QUESTION, config=bad
            )
        ),
        refusal(client.crons.update(cron["cron_id"], config=bad)),
        refusal(client.crons.update(cron["cron_id"], context=BAD_OPTIONS)),
        refusal(client.crons.update(cron["cron_id"], input={"messages": 5})),
    ]
    details = [await each for each in refusals]

    assert "max_step" in expected
    assert details[:-1] == [expected] * (len(details) - 1)
    assert await client.runs.list(thread_id) == []
    assert (await client.assistants.get(assistant_id))["context"] == {"max_model_calls": 3}
    assert await client.http.get(f"/runs/crons/{cron['cron_id']}") == stored_cron
    crons = await client.crons.search(assistant_id=assistant_id)
    assert [c["cron_id"] for c in crons] == [cron["cron_id"]]
    await client.crons.delete(cron["cron_id"])


@pytest.mark.server
async def test_the_servers_own_configurable_keys_are_not_run_options(server: DevServer) -> None:
    from langgraph_sdk import get_client

    client = get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    config = configured(
        {
            "thread_id": thread_id,
            "assistant_id": "react",
            "langgraph_request_id": "from-the-caller",
            "__caller_marker__": 1,
            "x-team": "blue",
            "max_model_calls": 5,
        }
    )

    created = await client.runs.create(thread_id, "react", input=QUESTION, config=config)
    await client.runs.join(thread_id, created["run_id"])

    assert (await client.runs.get(thread_id, created["run_id"]))["status"] == "success"
    paused = await client.threads.get_state(thread_id)
    assert approval_of(paused)["calls"][0]["name"] == "write_file"


@pytest.mark.server
async def test_event_streaming_commands_are_checked_over_http_and_websocket(
    server: DevServer,
) -> None:
    from langgraph_sdk import get_client
    from websockets.asyncio.client import connect

    client = get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    start = {
        "id": 1,
        "method": "run.start",
        "params": {"assistant_id": "react", "input": QUESTION, "config": configured(BAD_OPTIONS)},
    }

    detail = await refusal(client.http.post(f"/threads/{thread_id}/commands", json=start))
    socket_url = server.url.replace("http://", "ws://") + f"/threads/{thread_id}/stream/events"
    async with connect(socket_url) as socket:
        await socket.send(json.dumps(start))
        answer = json.loads(await socket.recv())

    assert "max_step" in detail
    assert (answer["type"], answer["id"], answer["message"]) == ("error", 1, detail)
    assert await client.runs.list(thread_id) == []


@pytest.mark.server
async def test_a_served_run_may_choose_only_the_models_the_deployment_allows(
    server: DevServer, tmp_path: Path
) -> None:
    from langgraph_sdk import get_client

    client = get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    existing = tmp_path / "present.gguf"
    existing.write_bytes(b"GGUF")
    refused_specs = [
        f"local:{existing}",
        f"local:{tmp_path / 'absent.gguf'}",
        "local",
        "anthropic:x",
    ]

    details = set()
    for spec in refused_specs:
        options = {"model": spec}
        details.add(
            await refusal(client.runs.create(thread_id, "react", input=QUESTION, context=options))
        )
        details.add(
            await refusal(
                client.runs.wait(thread_id, "react", input=QUESTION, config=configured(options))
            )
        )
        details.add(await refusal(client.assistants.create("react", context=options)))
    allowed = [
        await client.assistants.create("react", context={"model": spec})
        for spec in (ALLOWED, DEPLOYED)
    ]

    [detail] = details  # the same refusal, whatever the spec and whether its file exists
    assert str(tmp_path) not in detail
    assert [a["context"]["model"] for a in allowed] == [ALLOWED, DEPLOYED]
    assert await client.runs.list(thread_id) == []


@pytest.mark.server
async def test_runs_that_an_a2a_message_starts_pass_the_same_door(server: DevServer) -> None:
    from langgraph_sdk import get_client

    client = get_client(url=server.url)
    assistant_id = (await client.assistants.create("react"))["assistant_id"]
    expected = await refusal(client.runs.wait(None, "react", input=QUESTION, context=BAD_OPTIONS))
    text = {"kind": "text", "text": "write hello to notes.txt"}
    message = {"role": "user", "parts": [text], "messageId": str(uuid.uuid4())}
    send = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "message/send",
        "params": {"message": message, "context": BAD_OPTIONS},
    }

    answer = await client.http.post(f"/a2a/{assistant_id}", json=send)

    assert expected in answer["error"]["message"]


@pytest.mark.server
async def test_the_graph_itself_refuses_a_model_the_deployment_does_not_allow(
    tmp_path: Path,
) -> None:
    """A server without the door (no custom app) and no list of models: the run fails at
    its start, with the door's refusal, and writes nothing."""
    from langgraph_sdk import get_client

    config = portable_config(APP_CONFIG, tmp_path)
    doorless = json.loads(config.read_text())
    del doorless["http"]
    config.write_text(json.dumps(doorless))

    no_list = {"REASONING_GRAPHS_MODEL": DEPLOYED, ALLOWED_MODELS_ENV: ""}
    with dev_server(config, tmp_path / "server", no_list) as doorless_server:
        client = get_client(url=doorless_server.url)
        thread_id = (await client.threads.create())["thread_id"]
        spec = {"model": f"local:{tmp_path / 'absent.gguf'}"}
        failed = await client.runs.wait(
            thread_id, "react", input=QUESTION, context=spec, raise_error=False
        )
        state = await client.threads.get_state(thread_id)

    assert failed["__error__"]["error"] == RunInputError.__name__
    assert failed["__error__"]["message"] == MODEL_NOT_ALLOWED.format(
        name="model", allowed=[DEPLOYED]
    )
    assert state["values"] == {}


@pytest.mark.server
async def test_a_client_may_write_only_the_conversation_of_a_served_thread(
    server: DevServer,
) -> None:
    from langgraph_sdk import get_client

    client = get_client(url=server.url)
    thread_id = (await client.threads.create())["thread_id"]
    created = await client.runs.create(thread_id, "react", input=QUESTION)
    await client.runs.join(thread_id, created["run_id"])
    paused = await client.threads.get_state(thread_id)
    [call] = approval_of(paused)["calls"]
    forged = {"outcome": {"status": "answered"}}
    send_to_act = {"node": "act", "input": {"to_run": [{"id": call["id"], "name": call["name"]}]}}
    approve = [{"type": "approve"}]
    respond = {
        "id": 1,
        "method": "input.respond",
        "params": {"interrupt_id": "x", "update": forged},
    }
    protected_superstep = [{"updates": [{"values": forged, "as_node": "think"}]}]

    details = [
        await refusal(client.threads.update_state(thread_id, forged)),
        await refusal(client.threads.update_state(thread_id, {"to_run": []}, as_node="approve")),
        await refusal(
            client.runs.create(thread_id, "react", command={"resume": approve, "update": forged})
        ),
        await refusal(client.runs.create(thread_id, "react", command={"goto": "act"})),
        await refusal(client.runs.create(thread_id, "react", command={"goto": send_to_act})),
        await refusal(client.http.post(f"/threads/{thread_id}/commands", json=respond)),
        await refusal(
            client.threads.create(
                thread_id=thread_id, if_exists="do_nothing", supersteps=protected_superstep
            )
        ),
        await refusal(
            client.threads.create(metadata={"graph_id": "react"}, supersteps=protected_superstep)
        ),
    ]
    untouched = await client.threads.get_state(thread_id)
    note = {"messages": [{"role": "user", "content": "Use the shorter file name."}]}
    await client.threads.update_state(thread_id, note)
    written = await client.threads.get_state(thread_id)

    assert all("outcome" in d or "to_run" in d or "goto" in d for d in details), details
    assert untouched["checkpoint"] == paused["checkpoint"]
    assert untouched["values"] == paused["values"]
    assert [r["run_id"] for r in await client.runs.list(thread_id)] == [created["run_id"]]
    assert written["values"]["messages"][-1]["content"] == "Use the shorter file name."
    assert written["values"]["messages"][:-1] == paused["values"]["messages"]
