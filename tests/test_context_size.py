"""The model's context window, found where the model says it, and compression on by default.

LangChain's model profile (``max_input_tokens``), the embedded model's ``n_ctx``,
and an OpenAI-compatible server that reports its context (llama.cpp's
``llama-server`` on ``/props``, vLLM's ``max_model_len`` on ``/v1/models``).
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from langchain_core.messages import BaseMessage, HumanMessage
from langchain_core.tools import tool
from langchain_openai import ChatOpenAI

from reasoning_graphs.context import Limits
from reasoning_graphs.effects import adrive, drive
from reasoning_graphs.graphs.react import build_graph
from reasoning_graphs.models.context_size import context_window_of, declared_context_window
from reasoning_graphs.models.local import LocalChatModel
from reasoning_graphs.nodes.model.tokens import estimate_tokens
from reasoning_graphs.nodes.model.window import SUMMARY_INSTRUCTIONS
from reasoning_graphs.testing import RecordedCall, ScriptedChatModel, tool_call
from tests.helpers.openai_server import free_port

WINDOW = 3000


@tool
def read_report(number: int) -> str:
    """Read one report by its number."""
    return f"Report {number}: quarterly figures, staff and offices. " * 8


def is_summary_request(messages: list[BaseMessage]) -> bool:
    return bool(messages) and messages[0].text == SUMMARY_INSTRUCTIONS


class Reader(ScriptedChatModel):
    """Reads 30 reports, then answers; summary requests get a short summary."""

    def _choose_reply(self, record: RecordedCall) -> Any:
        if is_summary_request(record.messages):
            return "Summary: reports read, nothing found yet."
        step = sum(not is_summary_request(c.messages) for c in self.calls)
        return tool_call("read_report", number=step) if step <= 30 else "Report 30."


def longest_prompt(model: ScriptedChatModel) -> int:
    return max(estimate_tokens(c.messages) for c in model.calls)


def run_reader(model: ScriptedChatModel, **options: Any) -> None:
    graph = build_graph(model, tools=[read_report], max_model_calls=None, **options)
    state = graph.invoke({"messages": [HumanMessage("Which report?")]}, {"recursion_limit": 300})
    assert state["messages"][-1].text == "Report 30."


def test_a_model_profile_turns_compression_on_without_any_option() -> None:
    model = Reader(profile={"max_input_tokens": WINDOW})

    run_reader(model)

    assert longest_prompt(model) <= 0.8 * WINDOW
    assert any(is_summary_request(c.messages) for c in model.calls)


def test_an_explicit_strategy_or_window_wins_over_the_profile() -> None:
    plain = Reader(profile={"max_input_tokens": WINDOW})
    run_reader(plain, context_strategy="none")
    assert longest_prompt(plain) > WINDOW
    assert not any(is_summary_request(c.messages) for c in plain.calls)

    roomy = Reader(profile={"max_input_tokens": 1_000_000})
    run_reader(roomy, context_window=WINDOW)
    assert longest_prompt(roomy) <= 0.8 * WINDOW


def test_a_model_that_declares_no_window_is_left_alone() -> None:
    model = Reader()

    run_reader(model)

    assert not any(is_summary_request(c.messages) for c in model.calls)
    assert Limits().context_strategy == "hybrid"


def test_the_embedded_models_window_is_its_n_ctx() -> None:
    assert declared_context_window(LocalChatModel(n_ctx=2048)) == 2048
    assert declared_context_window(ScriptedChatModel(profile={"max_input_tokens": 9})) == 9
    assert declared_context_window(ScriptedChatModel()) is None


class FakeServer:
    """An OpenAI-compatible server that answers ``routes`` (path → JSON) and 404 elsewhere."""

    def __init__(self, routes: dict[str, Any], delay: float = 0.0) -> None:
        self.routes, self.delay, self.asked = routes, delay, []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                server.asked.append(self.path)
                time.sleep(server.delay)
                body = server.routes.get(self.path)
                self.send_response(404 if body is None else 200)
                self.send_header("Content-Type", "application/json")
                self.end_headers()
                self.wfile.write(json.dumps(body or {"detail": "Not Found"}).encode())

            def log_message(self, *args: Any) -> None:
                pass

        self.port = free_port()
        self.http = ThreadingHTTPServer(("127.0.0.1", self.port), Handler)
        threading.Thread(target=self.http.serve_forever, args=(0.05,), daemon=True).start()

    def model(self, name: str = "smollm2") -> ChatOpenAI:
        return ChatOpenAI(model=name, base_url=f"http://127.0.0.1:{self.port}/v1", api_key="k")


@pytest.fixture
def serve() -> Iterator[Any]:
    started: list[FakeServer] = []

    def start(routes: dict[str, Any], delay: float = 0.0) -> FakeServer:
        started.append(FakeServer(routes, delay))
        return started[-1]

    yield start
    for server in started:
        server.http.shutdown()
        server.http.server_close()


LLAMA_SERVER = {
    "/props": {"default_generation_settings": {"n_ctx": 2048}, "total_slots": 1},
    "/v1/models": {"data": [{"id": "smollm2", "meta": {"n_ctx_train": 8192}}]},
}
VLLM = {"/v1/models": {"data": [{"id": "other"}, {"id": "smollm2", "max_model_len": 32768}]}}
LLAMA_CPP_PYTHON = {"/v1/models": {"data": [{"id": "smollm2", "owned_by": "me"}]}}


@pytest.mark.parametrize(
    ("routes", "window"),
    [(LLAMA_SERVER, 2048), (VLLM, 32768), (LLAMA_CPP_PYTHON, None)],
    ids=["llama-server", "vllm", "llama-cpp-python"],
)
def test_a_server_reports_its_context_once(serve, routes: dict[str, Any], window: Any) -> None:
    server = serve(routes)
    model = server.model()

    assert drive(context_window_of(model)) == window
    asked = len(server.asked)
    assert asked >= 1
    assert drive(context_window_of(server.model())) == window
    assert len(server.asked) == asked, "asked once per server and model"


def test_the_server_may_be_named_by_openai_base_url(serve, monkeypatch) -> None:
    server = serve(LLAMA_SERVER)
    monkeypatch.setenv("OPENAI_BASE_URL", f"http://127.0.0.1:{server.port}/v1")

    assert drive(context_window_of(ChatOpenAI(model="from-env", api_key="k"))) == 2048


def test_an_unreachable_server_means_an_unknown_window() -> None:
    model = ChatOpenAI(model="m", base_url=f"http://127.0.0.1:{free_port()}/v1", api_key="k")
    assert drive(context_window_of(model)) is None


async def test_asking_a_server_does_not_block_the_event_loop(serve) -> None:
    server = serve(LLAMA_SERVER, delay=0.3)
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.02)
            ticks += 1

    ticker = asyncio.ensure_future(tick())
    window = await adrive(context_window_of(server.model("async-model")))
    ticker.cancel()

    assert window == 2048
    assert ticks >= 10
