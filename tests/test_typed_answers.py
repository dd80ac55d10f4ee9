"""``response_format``: every pattern's final answer, written once more in a schema's shape.

One more model call types the settled answer; the reply is checked against the schema
(a Pydantic model, a TypedDict or a JSON schema), sent back once when it does not fit,
and kept as ``structured_response``. A reply that never fits leaves the text answer and
an honest incomplete outcome that says why.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.runnables import RunnableLambda
from langchain_core.tools import tool
from pydantic import BaseModel, Field
from typing_extensions import TypedDict

from reasoning_graphs.cli import exits, runs
from reasoning_graphs.cli import main as cli
from reasoning_graphs.context import Limits
from reasoning_graphs.effects import drive
from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.metadata import outcome_of
from reasoning_graphs.models.local import LocalChatModel, local_model_available
from reasoning_graphs.models.resolve import resolve_model
from reasoning_graphs.nodes.model.setup import RunScope, agent_setup
from reasoning_graphs.nodes.steps.typed_answer import typed_for_run
from reasoning_graphs.response_format import MAX_ANSWER_CHARS
from reasoning_graphs.run_input import RunInputError
from reasoning_graphs.state_writes import StateWriteError
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from tests.helpers.cli_driver import run_cli, thread_id_from
from tests.helpers.openai_server import MODEL_SPEC
from tests.test_cli_answers import CANDIDATE_REPLIES


class Product(BaseModel):
    """The product of two numbers."""

    value: int


class ProductDict(TypedDict):
    value: int


PRODUCT_SCHEMA: dict[str, Any] = {
    "title": "Product",
    "type": "object",
    "properties": {"value": {"type": "integer"}},
    "required": ["value"],
    "additionalProperties": False,
}
QUESTION = {"messages": [HumanMessage("What is 6*7?")]}
ANSWER = "The product is 42."
FACES = ["invoke", "ainvoke"]
LOCAL_OK, LOCAL_MISSING = local_model_available()


@pytest.fixture(params=FACES)
def face(request: pytest.FixtureRequest) -> str:
    return request.param


async def run(graph: Any, inputs: Any, face: str, **kwargs: Any) -> dict[str, Any]:
    """Run on the chosen face: the sync one on a worker thread, as a sync caller would."""
    if face == "invoke":
        return await asyncio.to_thread(graph.invoke, inputs, **kwargs)
    return await graph.ainvoke(inputs, **kwargs)


def react(*script: Any, **options: Any) -> tuple[Any, ScriptedChatModel]:
    """A ReAct graph that answers :data:`ANSWER` at once, then replies with ``script``."""
    model = ScriptedChatModel(script=[ANSWER, *script])
    return graph_builder("react")(model, [], **options), model


def typed_records(state: dict[str, Any]) -> list[dict[str, Any]]:
    return [e for e in state["trajectory"] if e.get("kind") == "typed_answer"]


@pytest.mark.parametrize("pattern", sorted(PATTERNS))
async def test_every_pattern_answers_in_the_schema(pattern: str, face: str) -> None:
    model = ScriptedChatModel(script=[*CANDIDATE_REPLIES[pattern], {"value": 42}])
    graph = graph_builder(pattern)(model=model, response_format=Product)

    state = await run(graph, QUESTION, face)

    assert state["structured_response"] == Product(value=42)
    assert "typed_error" not in state["outcome"]
    (record,) = typed_records(state)
    assert record["status"] == "typed"
    typed_prompt = model.prompts[-1]
    assert "6*7" in typed_prompt[-1].text  # the question and the answer are shown
    assert model.calls[-1].tools == ["Product"]  # the schema, offered as the one function


@pytest.mark.parametrize(
    ("schema", "expected"),
    [(Product, Product(value=42)), (ProductDict, {"value": 42}), (PRODUCT_SCHEMA, {"value": 42})],
    ids=["pydantic", "typeddict", "json_schema"],
)
async def test_each_form_of_schema_gives_its_own_kind_of_value(
    schema: Any, expected: Any, face: str
) -> None:
    graph, _ = react({"value": 42}, response_format=schema)

    state = await run(graph, QUESTION, face)

    assert state["structured_response"] == expected
    assert type(state["structured_response"]) is type(expected)
    assert state["messages"][-1].text == ANSWER  # the text answer is kept as it was


async def test_a_reply_that_does_not_fit_is_sent_back_once_with_what_is_wrong(face: str) -> None:
    graph, model = react({"value": "forty-two"}, {"value": 42}, response_format=Product)

    state = await run(graph, QUESTION, face)

    assert state["structured_response"] == Product(value=42)
    assert state["outcome"]["status"] == "answered"
    mend = model.prompts[-1][-1].text
    assert "value" in mend
    assert "forty-two" in mend  # what it wrote is shown back
    assert len(model.prompts) == 3


async def test_two_replies_that_do_not_fit_end_incomplete_and_keep_the_text(face: str) -> None:
    graph, model = react({"value": "forty-two"}, {"value": "still no"}, response_format=Product)

    state = await run(graph, QUESTION, face)

    assert state["structured_response"] is None
    outcome = state["outcome"]
    assert outcome["status"] == "incomplete"
    assert outcome["concluded"]
    assert "value" in outcome["typed_error"]
    assert outcome["typed_error"] in outcome["reason"]
    final = state["messages"][-1]
    assert final.text == ANSWER
    assert outcome_of(final) == outcome  # the answer's metadata says the same
    assert [r["status"] for r in typed_records(state)] == ["failed"]
    assert len(model.prompts) == 3  # no third try


HOSTILE = {
    "wrong type": ([{"value": [1, 2]}, {"value": {"x": 1}}], "value"),
    "a flood": ([{"value": 42, "pad": "x" * (MAX_ANSWER_CHARS + 1)}] * 2, "characters"),
    "no call at all": (["It is 42.", "Still 42."], "no call"),
    "a broken call": (
        [AIMessage("", invalid_tool_calls=[{"name": "Product", "args": "{value", "id": "c"}])] * 2,
        "no call",
    ),
}


@pytest.mark.parametrize("case", list(HOSTILE))
def test_a_hostile_reply_is_refused_and_the_answer_kept(case: str) -> None:
    replies, said = HOSTILE[case]
    graph, _ = react(*replies, response_format=Product)

    state = graph.invoke(QUESTION)

    assert state["structured_response"] is None
    assert state["outcome"]["status"] == "incomplete"
    assert said in state["outcome"]["typed_error"]
    assert state["messages"][-1].text == ANSWER


def test_a_json_schema_with_its_own_definitions_types_nested_values() -> None:
    schema = {
        "type": "object",
        "$defs": {"Factor": {"type": "integer", "minimum": 1}},
        "properties": {"factors": {"type": "array", "items": {"$ref": "#/$defs/Factor"}}},
        "required": ["factors"],
    }
    graph, _ = react({"factors": [6, 0]}, {"factors": [6, 7]}, response_format=schema)

    state = graph.invoke(QUESTION)

    assert state["structured_response"] == {"factors": [6, 7]}  # 0 was refused, then mended


def test_fields_the_schema_does_not_name_are_dropped_or_refused_as_it_says() -> None:
    extra = {"value": 42, "admin": True}
    graph, _ = react(extra, response_format=Product)
    assert graph.invoke(QUESTION)["structured_response"] == Product(value=42)

    graph, _ = react(extra, response_format=ProductDict)
    assert graph.invoke(QUESTION)["structured_response"] == {"value": 42}

    graph, _ = react(extra, extra, response_format=PRODUCT_SCHEMA)  # additionalProperties: false
    state = graph.invoke(QUESTION)
    assert state["structured_response"] is None
    assert "admin" in state["outcome"]["typed_error"]


def test_a_question_without_an_answer_is_not_typed() -> None:
    model = ScriptedChatModel(script=["I could not finish this task."])
    state = graph_builder("react")(model, [], response_format=Product).invoke(QUESTION)

    assert state["outcome"]["status"] == "incomplete"
    assert "typed_error" not in state["outcome"]
    assert state["structured_response"] is None
    assert len(model.prompts) == 1  # no call to type nothing


def test_a_spent_budget_leaves_the_answer_untyped_and_says_so() -> None:
    graph, model = react({"value": 42}, response_format=Product, max_model_calls=1)

    state = graph.invoke(QUESTION)

    assert len(model.prompts) == 1  # the budget is not exceeded
    assert state["structured_response"] is None
    assert "1 model calls" in state["outcome"]["typed_error"]
    assert state["messages"][-1].text == ANSWER


def test_a_reply_the_budget_leaves_no_call_to_mend_says_both() -> None:
    graph, model = react({"value": "x"}, {"value": 42}, response_format=Product, max_model_calls=2)

    state = graph.invoke(QUESTION)

    assert len(model.prompts) == 2
    error = state["outcome"]["typed_error"]
    assert "value" in error
    assert "2 model calls" in error


def test_an_incomplete_answer_the_model_wrote_is_typed_and_stays_incomplete() -> None:
    failing = tool_call("calculator", expression="6*")
    model = ScriptedChatModel(script=[failing, failing, "About 42.", {"value": 42}])
    graph = graph_builder("react")(model, response_format=Product, repeat_failure_limit=1)

    state = graph.invoke(QUESTION)

    assert state["outcome"]["status"] == "incomplete"
    assert state["structured_response"] == Product(value=42)


def test_a_tools_direct_answer_is_typed_too() -> None:
    @tool(return_direct=True)
    def multiply(a: int, b: int) -> str:
        """Multiply two numbers."""
        return str(a * b)

    model = ScriptedChatModel(script=[tool_call("multiply", a=6, b=7), {"value": 42}])
    graph = graph_builder("react")(model, [multiply], response_format=Product)

    state = graph.invoke(QUESTION)

    assert state["messages"][-1].text == "42"
    assert state["structured_response"] == Product(value=42)


def test_the_typed_answer_round_trips_a_sqlite_checkpoint(tmp_path: Path) -> None:
    path = str(tmp_path / "threads.sqlite")
    config = {"configurable": {"thread_id": "typed"}}
    graph, _ = react({"value": 42}, response_format=Product, checkpointer=path)
    graph.invoke(QUESTION, config)

    reopened = graph_builder("react")(ScriptedChatModel(), [], checkpointer=path)
    saved = reopened.get_state(config).values["structured_response"]

    assert saved == Product(value=42)
    assert isinstance(saved, Product)


async def test_a_run_may_ask_for_a_json_schema_and_the_next_question_forgets_it(
    face: str,
) -> None:
    model = ScriptedChatModel(script=[ANSWER, {"value": 42}, "Still 42."])
    graph = graph_builder("react")(model, [], checkpointer="memory")
    config = {"configurable": {"thread_id": "run-option"}}

    first = await run(
        graph, QUESTION, face, config=config, context={"response_format": PRODUCT_SCHEMA}
    )
    assert first["structured_response"] == {"value": 42}

    second = await run(graph, {"messages": [HumanMessage("And 7*6?")]}, face, config=config)
    assert second["structured_response"] is None  # never the earlier question's
    assert len(model.prompts) == 3


def test_a_graph_built_with_a_schema_keeps_it_whatever_a_run_asks() -> None:
    graph, model = react({"value": 42}, response_format=Product)
    other = {"type": "object", "properties": {"city": {"type": "string"}}}

    state = graph.invoke(QUESTION, context={"response_format": other})

    assert state["structured_response"] == Product(value=42)
    assert model.calls[-1].tools == ["Product"]


@pytest.mark.parametrize(
    "schema",
    [
        "a string",
        {"type": "array", "items": {"type": "integer"}},
        {"type": "object", "properties": 5},
        {"type": "object", "description": "x" * 30_000},
        {"type": "object", "properties": {"v": {"$ref": "https://example.com/v.json"}}},
        {"type": "object", "properties": {"v": {"$ref": "#/$defs/missing"}}},
        {"type": "object", "properties": {"v": {"type": "string", "pattern": "(a+)+$"}}},
    ],
    ids=[
        "not an object",
        "no object schema",
        "invalid",
        "too long",
        "remote ref",
        "missing ref",
        "regex",
    ],
)
def test_a_bad_run_schema_is_refused_before_the_run(schema: Any) -> None:
    graph, model = react()

    with pytest.raises(RunInputError, match="response_format"):
        graph.invoke(QUESTION, context={"response_format": schema})
    assert model.prompts == []


@pytest.mark.parametrize("schema", [int, "Product", {"type": "object", "properties": 5}])
def test_a_bad_build_schema_is_a_clear_error(schema: Any) -> None:
    with pytest.raises(ValueError, match="response_format"):
        graph_builder("react")(ScriptedChatModel(), [], response_format=schema)


def test_studio_shows_the_option_and_a_client_cannot_write_the_value() -> None:
    graph, _ = react(checkpointer="memory")
    properties = graph.get_context_jsonschema()["properties"]
    assert "response_format" in properties

    config = {"configurable": {"thread_id": "writes"}}
    graph.invoke(QUESTION, config)
    with pytest.raises(StateWriteError, match="structured_response"):
        graph.update_state(config, {"structured_response": {"value": 1}})


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "threads.sqlite"
    monkeypatch.setenv(cli.DB_ENV, str(path))
    return path


def use_model(monkeypatch: pytest.MonkeyPatch, *script: Any) -> ScriptedChatModel:
    model = ScriptedChatModel(script=list(script))
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)
    return model


def test_cli_prints_the_typed_answer_as_json(db, tmp_path, monkeypatch, capsys) -> None:
    schema = tmp_path / "product.json"
    schema.write_text(json.dumps(PRODUCT_SCHEMA))

    use_model(monkeypatch, ANSWER, {"value": 42})
    code, first, err = run_cli(monkeypatch, capsys, "run", "What is 6*7?", "--schema", str(schema))
    assert code == exits.ANSWERED, err
    lines = first.splitlines()
    typed = lines[lines.index(f"Answer: {ANSWER}") + 1]
    assert typed.startswith("Typed answer: ")
    assert json.loads(typed.removeprefix("Typed answer: ")) == {"value": 42}

    use_model(monkeypatch, ANSWER, {"value": 7})  # a follow-up on the thread keeps the schema
    code, out, _ = run_cli(monkeypatch, capsys, "run", "7?", "--thread", thread_id_from(first))
    assert code == exits.ANSWERED
    assert 'Typed answer: {"value": 7}' in out.splitlines()
    code, out, _ = run_cli(monkeypatch, capsys, "threads")
    assert code == exits.ANSWERED

    use_model(monkeypatch, ANSWER, {"value": 42})
    code, out, _ = run_cli(monkeypatch, capsys, "run", "6*7?", "--schema", str(schema), "--json")
    events = [json.loads(line) for line in out.splitlines()]
    (answer,) = [e for e in events if e["event"] == "answer"]
    assert answer["structured_response"] == {"value": 42}

    use_model(monkeypatch, ANSWER, {"value": "x"}, {"value": "y"})
    code, out, _ = run_cli(monkeypatch, capsys, "run", "6*7?", "--schema", str(schema))
    assert code == exits.INCOMPLETE  # the text answer is printed, with why it is not typed
    assert f"Answer: {ANSWER}" in out
    assert "Typed answer" not in out


@pytest.mark.parametrize(
    ("content", "said"),
    [
        (None, "No such file"),
        ("{not json", "Expecting property name"),
        ('{"type": "object", "properties": 5}', "not a valid JSON schema"),
        ('{"type": "string"}', "describe an object"),
    ],
    ids=["missing", "not json", "invalid schema", "no object"],
)
def test_cli_refuses_a_bad_schema_file_clearly(
    db, tmp_path, monkeypatch, capsys, content: str | None, said: str
) -> None:
    schema = tmp_path / "schema.json"
    if content is not None:
        schema.write_text(content)
    model = use_model(monkeypatch, ANSWER)

    code, _, err = run_cli(monkeypatch, capsys, "run", "6*7?", "--schema", str(schema))

    assert code == exits.USAGE
    assert said in err
    assert "Traceback" not in err
    assert model.prompts == []


SUM_SCHEMA: dict[str, Any] = {
    "title": "Total",
    "type": "object",
    "properties": {"total": {"type": "integer"}},
    "required": ["total"],
}
ANSWERED_STATE: dict[str, Any] = {
    "messages": [HumanMessage("What is 23*17+4?"), AIMessage("23*17+4 is 395.")],
    "trajectory": [],
    "outcome": {"status": "answered"},
}


def typed_on(model: Any) -> dict[str, Any]:
    """The typed answer of :data:`ANSWERED_STATE`'s answer, asked of ``model`` (one or two
    calls), as the step that ends a question writes it."""
    run = RunScope(agent_setup(model, [], response_format=SUM_SCHEMA), Limits())
    return drive(typed_for_run(run, ANSWERED_STATE, {}))  # type: ignore[arg-type]


def assert_read(update: dict[str, Any]) -> None:
    """Every typed reply was read as a call of the schema; a value the tiny model got wrong
    may fail the schema, but never as a reply that could not be read."""
    thoughts = [e for e in update["trajectory"] if e["kind"] == "thought"]
    assert thoughts
    for thought in thoughts:
        assert thought["typed"] == "Total"
        assert "unread" not in thought, thought
    (record,) = [e for e in update["trajectory"] if e["kind"] == "typed_answer"]
    if record["status"] == "typed":
        assert isinstance(update["structured_response"]["total"], int)
    else:
        assert "total" in record["reason"], record


@pytest.mark.local_model
@pytest.mark.skipif(not LOCAL_OK, reason=LOCAL_MISSING)
def test_the_embedded_model_writes_the_typed_answer_under_its_grammar() -> None:
    assert_read(typed_on(LocalChatModel()))


@pytest.mark.openai_server
def test_the_typed_answer_is_read_from_the_llama_cpp_server(openai_server: Any) -> None:
    assert_read(typed_on(resolve_model(MODEL_SPEC)))


class NativeScriptedModel(ScriptedChatModel):
    """A scripted model whose profile says its provider writes structured output itself:
    ``json_schema`` requests are answered from ``native`` (a value, or an exception the
    provider raises), the rest as any scripted model answers them."""

    native: list[Any] = Field(default_factory=list)
    methods: list[str] = Field(default_factory=list)

    def with_structured_output(  # type: ignore[override]
        self, schema: Any, *, include_raw: bool = False, method: str = "function_calling"
    ) -> Any:
        self.methods.append(method)
        if method != "json_schema":
            return super().with_structured_output(schema, include_raw=include_raw)

        def answer(_: Any) -> dict[str, Any]:
            item = self.native.pop(0)
            if isinstance(item, Exception):
                raise item
            raw = AIMessage(json.dumps(item))
            return {"raw": raw, "parsed": schema.model_validate(item), "parsing_error": None}

        return RunnableLambda(answer)


def native_model(*native: Any, script: tuple[Any, ...] = ()) -> NativeScriptedModel:
    return NativeScriptedModel(
        script=[ANSWER, *script], native=list(native), profile={"structured_output": True}
    )


def test_a_provider_with_its_own_structured_output_is_asked_in_it() -> None:
    model = native_model({"value": 42})

    state = graph_builder("react")(model, [], response_format=Product).invoke(QUESTION)

    assert state["structured_response"] == Product(value=42)
    assert model.methods == ["json_schema"]
    assert state["outcome"] == {"status": "answered"}


def test_a_refused_native_request_is_asked_again_as_a_tool_call() -> None:
    model = native_model(ValueError("response_format is not supported"), script=({"value": 42},))

    state = graph_builder("react")(model, [], response_format=Product).invoke(QUESTION)

    assert state["structured_response"] == Product(value=42)
    assert model.methods == ["json_schema", "function_calling"]


def test_openai_models_are_asked_natively_only_where_their_profile_says_so() -> None:
    from langchain_openai import ChatOpenAI

    from reasoning_graphs.nodes.model.bindings import Bindings

    bindings = Bindings()
    where = {"api_key": "unused", "base_url": "http://127.0.0.1:9/v1"}
    # the profile langchain-openai ships for gpt-4o says so; set here, older releases had none
    known = ChatOpenAI(model="gpt-4o", profile={"structured_output": True}, **where)
    served = ChatOpenAI(model="smollm2", **where)  # a local server's model: no profile

    native = repr(bindings.bound(known, schema=Product, native=True))
    tool = repr(bindings.bound(served, schema=Product, native=True))
    plain = repr(bindings.bound(known, schema=Product))

    assert "json_schema" in native
    assert "json_schema" not in tool
    assert "'tools'" in tool
    assert "json_schema" not in plain
