"""The embedded llama.cpp model: grammar-constrained tool calls, answers and structured output."""

from __future__ import annotations

from pathlib import Path

import pytest
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.tools import tool
from pydantic import BaseModel

from reasoning_graphs.models.local import (
    LocalChatModel,
    LocalModelUnavailable,
    _parse_action,
    _to_llama_messages,
    ensure_runnable,
    local_model_available,
)

MODEL_OK, MODEL_MISSING_REASON = local_model_available()
needs_model = pytest.mark.skipif(not MODEL_OK, reason=MODEL_MISSING_REASON)
QUESTION = "What is 23*17+4?"


@tool
def calculator(expression: str) -> str:
    """Evaluate an arithmetic expression such as 2*(3+4)."""
    return expression  # never run: the tests only check which call the model chooses


class City(BaseModel):
    """A city and the country it is in."""

    name: str
    country: str


@pytest.fixture(scope="module")
def model() -> LocalChatModel:
    return LocalChatModel()


@needs_model
@pytest.mark.local_model
def test_calls_the_calculator_with_the_expression(model: LocalChatModel) -> None:
    reply = model.bind_tools([calculator]).invoke(QUESTION)

    assert len(reply.tool_calls) == 1
    call = reply.tool_calls[0]
    assert call["name"] == "calculator"
    assert call["id"].startswith("call_")
    assert all(number in call["args"]["expression"] for number in ("23", "17", "4"))


@needs_model
@pytest.mark.local_model
def test_tool_choice_none_answers_in_content(model: LocalChatModel) -> None:
    reply = model.bind_tools([calculator], tool_choice="none").invoke(QUESTION)

    assert reply.tool_calls == []
    assert isinstance(reply.content, str)
    assert reply.content.strip()


@needs_model
@pytest.mark.local_model
async def test_async_answer_after_an_observation(model: LocalChatModel) -> None:
    call = {"name": "calculator", "args": {"expression": "23*17+4"}, "id": "call_1"}
    history = [
        HumanMessage(QUESTION),
        AIMessage(content="", tool_calls=[call]),
        ToolMessage("395", tool_call_id="call_1"),
    ]

    reply = await model.bind_tools([calculator], tool_choice="none").ainvoke(history)

    assert reply.content


@needs_model
@pytest.mark.local_model
def test_structured_output_from_a_pydantic_model(model: LocalChatModel) -> None:
    structured = model.with_structured_output(City, include_raw=True)

    result = structured.invoke("Paris is the capital of France. Extract the city.")

    assert isinstance(result["parsed"], City)
    usage = result["raw"].usage_metadata
    assert usage["input_tokens"] > 0
    assert usage["output_tokens"] > 0
    assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"]
    assert result["raw"].response_metadata["model_name"].endswith(".gguf")


@needs_model
@pytest.mark.local_model
def test_structured_output_from_a_json_schema(model: LocalChatModel) -> None:
    schema = {
        "title": "city",
        "description": "A city and the country it is in.",
        "type": "object",
        "properties": {"name": {"type": "string"}, "country": {"type": "string"}},
        "required": ["name", "country"],
    }

    result = model.with_structured_output(schema).invoke("Paris is the capital of France.")

    assert set(result) == {"name", "country"}
    assert all(isinstance(value, str) for value in result.values())


def test_missing_gguf_path_is_reported_clearly(tmp_path: Path) -> None:
    pytest.importorskip("llama_cpp", reason="llama-cpp-python is not installed")
    missing = tmp_path / "absent.gguf"

    with pytest.raises(LocalModelUnavailable, match="GGUF model file not found"):
        ensure_runnable(str(missing))
    with pytest.raises(LocalModelUnavailable, match="GGUF model file not found"):
        LocalChatModel(model_path=str(missing)).invoke("hi")


def test_unknown_tool_choice_is_rejected() -> None:
    with pytest.raises(ValueError, match="names no bound tool"):
        LocalChatModel().bind_tools([calculator], tool_choice="search")


def test_tool_history_becomes_plain_chat_turns() -> None:
    call = {"name": "calculator", "args": {"expression": "1+1"}, "id": "call_1"}
    history = [
        SystemMessage("Be brief."),
        HumanMessage("1+1?"),
        AIMessage(content="", tool_calls=[call]),
        ToolMessage("2", tool_call_id="call_1"),
    ]

    assert _to_llama_messages(history) == [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "1+1?"},
        {"role": "assistant", "content": '{"action": "calculator", "args": {"expression": "1+1"}}'},
        {"role": "user", "content": "Observation from calculator: 2"},
    ]


def test_cut_off_output_is_returned_as_text() -> None:
    cut = '{"action": "final_answer", "answer": "It is'

    reply = _parse_action(cut, [])

    assert reply.content == cut
    assert reply.tool_calls == []
