"""``verify=True``: one more model call lists the answer's claims, each backed by a quote of an
observation (checked by the runtime) or inferred; the answer itself never changes."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from reasoning_graphs.cli import main as cli
from reasoning_graphs.cli import runs
from reasoning_graphs.graphs import graph_builder
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from tests.helpers.cli_driver import run_cli

RESULT = "Paris is the capital of France. Population: 2,102,650 (2023)."
ANSWER = "Paris, the capital of France, has 2,102,650 people and was founded in 250 BC."


@tool
def lookup(city: str) -> str:
    """Look a city up."""
    return RESULT


def claim(text: str, status: str = "backed", quote: str = "") -> dict[str, str]:
    return {"claim": text, "status": status, "quote": quote}


CHECK = {
    "claims": [
        claim("Paris is the capital of France", quote="Paris is the capital of France."),
        claim("2,102,650 people", quote="Population: 2,102,650"),
        claim("founded in 250 BC", "inferred"),
    ]
}
LOOKUP = tool_call("lookup", id="c1", city="Paris")
QUESTION = {"messages": [HumanMessage("Tell me about Paris.")]}


def run_react(*script: Any, context: dict[str, Any] | None = None, **options: Any):
    model = ScriptedChatModel(script=list(script))
    graph = graph_builder("react")(model, [lookup], **options)
    return graph.invoke(QUESTION, context=context), model


def verification(state: dict[str, Any]) -> dict[str, Any]:
    return state["outcome"]["verification"]


def statuses(state: dict[str, Any]) -> dict[str, str]:
    return {c["text"]: c["status"] for c in verification(state)["claims"]}


def test_unsupported_claim_is_inferred_and_the_others_backed_by_real_quotes() -> None:
    state, model = run_react(LOOKUP, ANSWER, CHECK, verify=True)

    assert state["messages"][-1].text == ANSWER  # the check never touches the answer
    assert state["outcome"]["status"] == "answered"
    assert verification(state)["status"] == "checked"
    assert statuses(state) == {
        "Paris is the capital of France": "backed",
        "2,102,650 people": "backed",
        "founded in 250 BC": "inferred",
    }
    for item in verification(state)["claims"]:
        if item["status"] == "backed":
            assert item["quote"] in RESULT
            assert (item["call_id"], item["tool"]) == ("c1", "lookup")
    assert state["grounding"]["claims"]  # the free report is still written
    record = next(e for e in state["trajectory"] if e["kind"] == "verify")
    assert (record["backed"], record["inferred"]) == (2, 1)
    assert len(model.prompts) == 3  # the answer's two calls, and the check's one


def test_an_invented_quote_is_not_accepted_as_backing() -> None:
    invented = {"claims": [claim("founded in 250 BC", quote="Paris was founded in 250 BC.")]}
    state, _ = run_react(LOOKUP, ANSWER, invented, verify=True)

    (only,) = verification(state)["claims"]
    assert only["status"] == "inferred"
    assert only["call_id"] is None
    assert "Paris was founded in 250 BC" in only["note"]  # it says which quote was refused


def test_off_by_default_no_extra_model_call() -> None:
    state, model = run_react(LOOKUP, ANSWER)

    assert "verification" not in state["outcome"]
    assert len(model.prompts) == 2
    assert not any(e["kind"] == "verify" for e in state["trajectory"])


def test_a_run_may_turn_it_on_but_not_off() -> None:
    state, _ = run_react(LOOKUP, ANSWER, CHECK, verify=True, context={"verify": False})
    assert verification(state)["status"] == "checked"

    state, _ = run_react(LOOKUP, ANSWER, CHECK, context={"verify": True})
    assert verification(state)["status"] == "checked"

    with pytest.raises(ValueError, match="verify"):
        run_react(LOOKUP, ANSWER, context={"verify": "no"})


def test_a_spent_budget_skips_the_check_and_says_so() -> None:
    state, model = run_react(LOOKUP, ANSWER, CHECK, verify=True, max_model_calls=2)

    assert state["messages"][-1].text == ANSWER
    assert state["outcome"]["status"] == "answered"
    assert verification(state)["status"] == "skipped"
    assert "2 model calls" in verification(state)["reason"]
    assert len(model.prompts) == 2  # the budget was not exceeded


def test_a_check_whose_prompt_would_overrun_the_token_budget_is_not_sent() -> None:
    budget = 450  # the answer's two calls fit; the check's longer prompt does not
    state, model = run_react(LOOKUP, ANSWER, CHECK, verify=True, token_budget=budget)

    assert state["outcome"]["status"] == "answered"
    assert verification(state)["status"] == "skipped"
    assert "tokens left" in verification(state)["reason"]
    assert len(model.prompts) == 2


@pytest.mark.parametrize(
    "reply",
    ["Everything checks out.", {"claims": "all of them"}, AIMessage("", invalid_tool_calls=[])],
)
def test_a_malformed_reply_leaves_the_answer_and_records_the_failure(reply: Any) -> None:
    state, _ = run_react(LOOKUP, ANSWER, reply, verify=True)

    assert state["messages"][-1].text == ANSWER
    assert state["outcome"]["status"] == "answered"
    assert verification(state)["status"] == "failed"
    assert verification(state)["reason"]
    assert verification(state)["claims"] == []


def test_a_failing_check_call_leaves_the_answer() -> None:
    state, _ = run_react(LOOKUP, ANSWER, ValueError("bad request"), verify=True)

    assert state["messages"][-1].text == ANSWER
    assert verification(state)["status"] == "failed"
    assert "bad request" in verification(state)["reason"]


def test_a_check_past_the_model_timeout_is_left_and_the_answer_stands() -> None:
    def slow_check(prompt: list[Any]) -> dict[str, Any]:
        time.sleep(1.0)
        return CHECK

    state, _ = run_react(LOOKUP, ANSWER, slow_check, verify=True, model_timeout=0.3)

    assert state["messages"][-1].text == ANSWER
    assert state["outcome"]["status"] == "answered"
    assert verification(state)["status"] == "failed"
    assert "stopped" in verification(state)["reason"]


@pytest.mark.asyncio
async def test_the_async_face_checks_the_answer_too() -> None:
    model = ScriptedChatModel(script=[LOOKUP, ANSWER, CHECK])
    graph = graph_builder("react")(model, [lookup], verify=True)

    state = await graph.ainvoke(QUESTION)

    assert statuses(state)["founded in 250 BC"] == "inferred"
    assert statuses(state)["2,102,650 people"] == "backed"


POPULATION = {"claims": [claim("2,102,650 people", quote="2,102,650")]}
STEP = {"var": "E1", "tool": "lookup", "reason": "look up", "args": {"city": "Paris"}}
SAID = "Paris has 2,102,650 people."
SCRIPTS: dict[str, list[Any]] = {
    "react": [LOOKUP, SAID, POPULATION],
    "react_text": [
        'Thought: look it up.\nAction: lookup\nAction Input: {"city": "Paris"}',
        f"Thought: done.\nFinal Answer: {SAID}",
        POPULATION,
    ],
    "rewoo": [{"steps": [STEP]}, SAID, POPULATION],
    "plan_execute": [{"steps": ["Look Paris up."]}, LOOKUP, SAID, {"response": SAID}, POPULATION],
    "reflexion": [LOOKUP, SAID, POPULATION],
}
OPTIONS: dict[str, dict[str, Any]] = {
    "reflexion": {
        "max_trials": 1,
        "evaluator": lambda task, answer: {"score": 1.0, "feedback": "ok"},
    },
}


@pytest.mark.parametrize("pattern", list(SCRIPTS))
def test_patterns_with_tools_check_their_answer(pattern: str) -> None:
    model = ScriptedChatModel(script=SCRIPTS[pattern])
    options = OPTIONS.get(pattern, {})
    state = graph_builder(pattern)(model, [lookup], verify=True, **options).invoke(QUESTION)

    assert state["messages"][-1].text == SAID
    assert verification(state)["status"] == "checked"
    assert statuses(state) == {"2,102,650 people": "backed"}


def test_chain_of_thought_has_no_observation_and_skips_the_call() -> None:
    model = ScriptedChatModel(script=["Paris is large.\nAnswer: 2,102,650"])
    state = graph_builder("cot")(model, verify=True).invoke(QUESTION)

    assert verification(state)["status"] == "skipped"
    assert "no tool observation" in verification(state)["reason"]
    assert len(model.prompts) == 1


def test_a_tools_direct_answer_is_not_checked_against_itself() -> None:
    @tool(return_direct=True)
    def capital(country: str) -> str:
        """The capital of a country."""
        return "Paris"

    model = ScriptedChatModel(script=[tool_call("capital", country="France")])
    graph = graph_builder("react")(model, [capital], verify=True)
    state = graph.invoke({"messages": [HumanMessage("Capital of France?")]})

    assert state["messages"][-1].text == "Paris"
    assert verification(state)["status"] == "skipped"


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "threads.sqlite"
    monkeypatch.setenv(cli.DB_ENV, str(path))
    return path


def test_cli_verify_prints_the_claims_after_the_answer(db, monkeypatch, capsys) -> None:
    model = ScriptedChatModel(script=[LOOKUP, ANSWER, CHECK])
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)
    monkeypatch.setattr(runs, "default_tools", lambda workspace, docs: [lookup])

    code, out, err = run_cli(monkeypatch, capsys, "run", "Tell me about Paris.", "--verify")

    assert code == 0, err
    lines = out.splitlines()
    answer = lines.index(f"Answer: {ANSWER}")
    assert lines[answer + 1] == "Verified: 2 of 3 claims backed by a quoted observation"
    assert lines[answer + 2].startswith("  ✓ Paris is the capital of France: lookup [c1]")
    assert lines[answer + 4] == "  ✗ founded in 250 BC: inferred"

    model = ScriptedChatModel(script=[LOOKUP, ANSWER, "no list"])
    code, out, _ = run_cli(monkeypatch, capsys, "run", "Paris?", "--verify")
    assert code == 0  # a check that failed leaves the answer answered
    assert f"Answer: {ANSWER}" in out
    assert "Verification failed: the check's reply could not be read" in out

    model = ScriptedChatModel(script=[LOOKUP, ANSWER, CHECK])
    code, out, _ = run_cli(monkeypatch, capsys, "run", "Paris?", "--verify", "--json")
    events = [json.loads(line) for line in out.splitlines()]
    (shown,) = [e for e in events if e["event"] == "verification"]
    assert shown["verification"]["status"] == "checked"
