"""Token streaming from the embedded model: the answer's text as it is generated.

The extractor and the chunk bookkeeping run without the model; the timing and
equality checks run on the real embedded model and skip when it is missing.
"""

from __future__ import annotations

import asyncio
import json
import time

import pytest
from hypothesis import given
from hypothesis import strategies as st
from langchain_core.messages import AIMessage, AIMessageChunk
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.tools import tool
from pydantic import BaseModel

from reasoning_graphs.models.local import (
    AnswerReader,
    LocalChatModel,
    _last_chunk,
    _TextReader,
    local_model_available,
)

MODEL_OK, MODEL_MISSING_REASON = local_model_available()
needs_model = pytest.mark.skipif(not MODEL_OK, reason=MODEL_MISSING_REASON)
LONG_ANSWER = "Describe Paris in two sentences."


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression such as 2*(3+4)."""
    return expression  # never run: the tests only look at the reply


def read_in_pieces(reply: str, sizes: list[int]) -> list[str]:
    """Feed ``reply`` to a fresh reader in pieces of the given sizes; the deltas it hands out."""
    reader, deltas, start = AnswerReader(), [], 0
    for size in sizes:
        deltas.append(reader.feed(reply[start : start + size]))
        start += size
    deltas.append(reader.feed(reply[start:]))
    return deltas


def answer_of(reply: str) -> str:
    parsed = json.loads(reply, strict=False)
    return parsed["answer"] if parsed.get("action") == "final_answer" else ""


@pytest.mark.parametrize(
    "answer",
    [
        "It is 395.",
        'two\nlines, a "quote", a \\ backslash and a / slash',
        "tab\tand unicode: été, 東京, 😀",
        "\ud83d lone high surrogate, then text",
    ],
)
def test_every_split_of_an_answer_decodes_to_the_answer(answer: str) -> None:
    reply = json.dumps({"action": "final_answer", "answer": answer})  # \uXXXX for non-ASCII

    for cut in range(len(reply) + 1):
        deltas = read_in_pieces(reply, [cut])
        assert "".join(deltas) == answer, (cut, deltas)


def test_a_split_escape_waits_until_it_is_complete() -> None:
    reader = AnswerReader()

    assert reader.feed('{"action": "final_answer", "answer": "a\\') == "a"
    assert reader.feed("u00") == ""
    assert reader.feed("e9\\ud83d") == "é"  # the high surrogate waits for its partner
    assert reader.feed("\\ude00!") == "😀!"
    assert reader.feed('\\"') == '"'
    assert reader.feed('"}') == ""


def test_a_tool_call_streams_its_arguments_and_no_content() -> None:
    reply = '{"action": "calculator", "args": {"expression": "2*3", "answer": "6"}}'
    reader, content, arguments = AnswerReader(), [], []
    for char in reply:
        content.append(reader.feed(char))
        arguments.append(reader.arguments())

    assert "".join(content) == ""
    assert "".join(arguments) == '{"expression": "2*3", "answer": "6"}'
    assert len([piece for piece in arguments if piece]) > 10  # as the reply grows


def test_arguments_wait_until_the_action_names_a_tool() -> None:
    reader = AnswerReader()
    reader.feed('{"args": {"expression": "2*3"}, ')

    assert reader.arguments() == ""
    reader.feed('"action": "calculator"}')
    assert reader.arguments() == '{"expression": "2*3"}'
    assert AnswerReader().arguments() == ""


def test_an_answer_before_its_action_is_handed_out_once_the_action_is_known() -> None:
    reader = AnswerReader()

    assert reader.feed('{"answer": "42", ') == ""
    assert reader.feed('"action": "final_answer"}') == "42"


def test_raw_control_characters_and_spacing_pass_as_json_loads_reads_them() -> None:
    reply = '{ "action" : "final_answer" ,\n  "answer" : "raw\ttab" }'

    assert "".join(read_in_pieces(reply, [3] * 20)) == answer_of(reply) == "raw\ttab"


@given(
    answer=st.text(max_size=40),
    action=st.sampled_from(["final_answer", "calculator"]),
    sizes=st.lists(st.integers(min_value=1, max_value=7), max_size=40),
    ascii_only=st.booleans(),
)
def test_streamed_text_is_always_a_prefix_of_what_json_loads_reads(
    answer: str, action: str, sizes: list[int], ascii_only: bool
) -> None:
    body = {"action": action, "answer": answer} if action == "final_answer" else {}
    if action != "final_answer":
        body = {"action": action, "args": {"expression": answer}}
    reply = json.dumps(body, ensure_ascii=ascii_only)
    expected = answer_of(reply)

    deltas = read_in_pieces(reply, sizes)

    shown = ""
    for delta in deltas:
        shown += delta
        assert expected.startswith(shown)
    assert shown == expected


@given(
    expression=st.text(max_size=40),
    sizes=st.lists(st.integers(min_value=1, max_value=7), max_size=40),
    ascii_only=st.booleans(),
)
def test_streamed_arguments_read_as_the_calls_arguments(
    expression: str, sizes: list[int], ascii_only: bool
) -> None:
    args = {"expression": expression, "nested": {"list": [1, "}"]}}
    reply = json.dumps({"action": "calculator", "args": args}, ensure_ascii=ascii_only)
    reader, arguments, start = AnswerReader(), "", 0
    for size in [*sizes, len(reply)]:
        reader.feed(reply[start : start + size])
        arguments += reader.arguments()
        start += size

    assert json.loads(arguments) == args


def test_plain_text_holds_back_what_may_start_a_stop_sequence() -> None:
    reader = _TextReader(["Observation:"])

    assert reader.feed("Thought: add.\nObs") == "Thought: add.\n"
    assert reader.feed("ervation: 4") == ""
    assert reader.feed(" more") == ""

    reader = _TextReader(["Observation:"])
    assert reader.feed("An Obs") == "An "
    assert reader.feed("cure word") == "Obscure word"


@pytest.mark.parametrize(
    "message",
    [
        AIMessage(content="It is 395."),
        AIMessage(
            content="",
            tool_calls=[{"name": "calculator", "args": {"expression": "2*3"}, "id": "call_1"}],
        ),
    ],
)
def test_the_last_chunk_completes_the_message(message: AIMessage) -> None:
    message.usage_metadata = {"input_tokens": 5, "output_tokens": 3, "total_tokens": 8}
    message.response_metadata = {"model_name": "m.gguf", "finish_reason": "stop"}
    streamed = message.text[:5]
    chunks = [AIMessageChunk(content=streamed)] if streamed else []

    total = sum(chunks, AIMessageChunk(content="")) + _last_chunk(message, streamed).message

    assert total.content == message.content
    assert total.tool_calls == message.tool_calls
    assert total.usage_metadata == message.usage_metadata
    assert total.response_metadata == message.response_metadata


def test_the_last_chunk_completes_a_streamed_call_and_its_usage() -> None:
    call = {"name": "calculator", "args": {"expression": "2*3"}, "id": "call_1"}
    message = AIMessage(content="", tool_calls=[call])
    message.usage_metadata = {"input_tokens": 5, "output_tokens": 9, "total_tokens": 14}
    pieces = [("calculator", '{"expression":', "call_1", 6), (None, ' "2*3"}', None, 2)]
    chunks = [
        AIMessageChunk(
            content="",
            tool_call_chunks=[tool_call_chunk(name=name, args=args, id=call_id, index=0)],
            usage_metadata={"input_tokens": 0, "output_tokens": tokens, "total_tokens": tokens},
        )
        for name, args, call_id, tokens in pieces
    ]

    last = _last_chunk(message, "", call_streamed=True, tokens=8).message
    total = sum(chunks, AIMessageChunk(content="")) + last

    assert total.tool_calls == message.tool_calls
    assert total.usage_metadata == message.usage_metadata


@pytest.fixture(scope="module")
def model() -> LocalChatModel:
    return LocalChatModel()


def timed_stream(runnable, prompt) -> tuple[list[tuple[float, AIMessageChunk]], float]:
    started = time.perf_counter()
    chunks = [(time.perf_counter() - started, chunk) for chunk in runnable.stream(prompt)]
    return chunks, time.perf_counter() - started


@needs_model
@pytest.mark.local_model
def test_the_first_answer_token_arrives_long_before_the_reply_ends(model) -> None:
    answering = model.bind_tools([calculator], tool_choice="none")
    model._load()  # time the reply, not loading the file

    chunks, total = timed_stream(answering, LONG_ANSWER)

    content_times = [at for at, chunk in chunks if chunk.content]
    assert len(content_times) > 5
    first, last = content_times[0], chunks[-1][0]
    assert last - first > 0.1
    assert first < 0.6 * total, (first, total)  # about 10 of 70 tokens come before the answer


@needs_model
@pytest.mark.local_model
@pytest.mark.parametrize(
    ("tools", "tool_choice", "prompt"),
    [
        ([calculator], "none", LONG_ANSWER),
        ([calculator], None, "What is 23*17+4?"),
        ([], None, LONG_ANSWER),
    ],
    ids=["answer", "tool-call", "plain-text"],
)
def test_the_streamed_reply_adds_up_to_the_reply(model, tools, tool_choice, prompt) -> None:
    runnable = model.bind_tools(tools, tool_choice=tool_choice) if tools else model

    whole = runnable.invoke(prompt)
    chunks = list(runnable.stream(prompt))
    streamed = sum(chunks[1:], chunks[0])

    assert streamed.content == whole.content
    assert [(c["name"], c["args"]) for c in streamed.tool_calls] == [
        (c["name"], c["args"]) for c in whole.tool_calls
    ]
    assert streamed.usage_metadata == whole.usage_metadata
    assert streamed.response_metadata["finish_reason"] == whole.response_metadata["finish_reason"]
    if tool_choice == "none" or not tools:
        assert sum(bool(chunk.content) for chunk in chunks) > 1


@needs_model
@pytest.mark.local_model
def test_a_typed_reply_streams_token_by_token_with_its_token_count(model) -> None:
    class Plan(BaseModel):
        """The steps to take."""

        steps: list[str]

    typed = model.bind_tools([Plan], tool_choice="Plan")

    chunks = list(typed.stream("Plan how to find the population of the capital of France."))

    arguments = [c for c in chunks if c.tool_call_chunks and c.tool_call_chunks[0]["args"]]
    assert len(arguments) > 5  # the arguments come as they are generated, not at the end
    assert all(chunk.usage_metadata["output_tokens"] >= 1 for chunk in arguments)
    streamed = sum(chunks[1:], chunks[0])
    assert streamed.tool_calls[0]["name"] == "Plan"
    assert (
        streamed.usage_metadata
        == typed.invoke("Plan how to find the population of the capital of France.").usage_metadata
    )


@needs_model
@pytest.mark.local_model
async def test_async_streaming_leaves_the_event_loop_free(model) -> None:
    answering = model.bind_tools([calculator], tool_choice="none")
    ticks = 0

    async def tick() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.005)
            ticks += 1

    ticker = asyncio.create_task(tick())
    try:
        chunks = [chunk async for chunk in answering.astream(LONG_ANSWER)]
    finally:
        ticker.cancel()

    assert sum(bool(chunk.content) for chunk in chunks) > 1
    assert ticks > 10  # the loop kept running while the model generated
    streamed = sum(chunks[1:], chunks[0])
    assert streamed.content == (await answering.ainvoke(LONG_ANSWER)).content
