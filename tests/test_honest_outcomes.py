"""An answer that is no answer never ends a question as answered.

A weak model asked for an answer sometimes gives back our own words — the
no-answer text, an instruction of the prompt, the text format's template — or
nothing. In every pattern such a reply ends the question incomplete, while a
real answer, even one that quotes one of our sentences among its own words,
stays answered; through the command, the run exits with the incomplete code and
``threads`` says so.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import HumanMessage

from reasoning_graphs.cli import exits
from reasoning_graphs.graphs import PATTERNS, graph_builder, reflexion
from reasoning_graphs.graphs.cot.prompts import COT_SYSTEM
from reasoning_graphs.graphs.llm_compiler.prompts import NO_RESULTS
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.graphs.plan_react.plan import PlanItems
from reasoning_graphs.graphs.rewoo.prompts import NO_EVIDENCE
from reasoning_graphs.graphs.tot.prompts import ANSWER_REQUEST
from reasoning_graphs.graphs.tot.replies import FinalAnswer, NextStep, Proposals, Valuation
from reasoning_graphs.nodes.guards.honest import NO_ANSWER, no_answer_reason
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.nodes.steps.prompts import REACT_SYSTEM
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.text_format import ENGLISH, format_reminder
from tests.helpers.scripted_cli import listed_threads, run_process
from tests.helpers.tool_log import ToolLog, sleeping_tool

LOOKUP = {"item": "x"}
TASK = {"id": 1, "tool": "lookup", "args": LOOKUP, "deps": []}
PASSED = Judgement(feedback="Fine.", score=1.0)

TEMPLATE_REPLY = "\n".join(
    line
    for line in format_reminder(ENGLISH).splitlines()
    if line.startswith((f"{ENGLISH.thought}:", f"{ENGLISH.final_answer}:"))
)
"""A text-format reply that is the format's template, placeholders and all."""

GENUINE = (
    f"{NO_ANSWER.rstrip('.')} with the first lookup, so I looked again: "
    "the item x is in the list, with 42 entries."
)
"""A real answer that quotes our no-answer text among its own words."""


def echoing(final: str) -> dict[str, tuple[list[Any], dict[str, Any]]]:
    """Each pattern's script, its last reply (the answer) being ``final``."""
    return {
        "react": ([tool_call("lookup", **LOOKUP), final], {}),
        "react_text": (
            ['Thought: look\nAction: lookup\nAction Input: {"item": "x"}', final],
            {},
        ),
        "rewoo": ([{"steps": []}, final], {}),
        "llm_compiler": (
            [{"tasks": [TASK]}, {"answer": final, "replan": False, "reason": ""}],
            {},
        ),
        "plan_execute": (
            [
                Plan(steps=["Look up x."]),
                tool_call("lookup", **LOOKUP),
                "lookup done with x",
                Replan(response=final),
            ],
            {},
        ),
        "reflexion": ([final, PASSED], {"max_trials": 1}),
        "lats": ([final, PASSED], {"candidates": 1}),
        "cot": ([f"Thinking it over.\nAnswer: {final}"], {}),
        "tot": (
            [
                Proposals(steps=[NextStep(step="x is listed.", solves=True)]),
                Valuation(reason="It settles it.", verdict="sure"),
                FinalAnswer(answer=final),
            ],
            {},
        ),
        "plan_react": (
            [PlanItems(items=["Look x up."]), tool_call("lookup", **LOOKUP), final],
            {},
        ),
    }


ECHOES = {
    "react": NO_ANSWER,
    "react_text": TEMPLATE_REPLY,
    "rewoo": NO_EVIDENCE,
    "llm_compiler": NO_RESULTS,
    "plan_execute": f'"{NO_ANSWER}"',
    "reflexion": NO_ANSWER,
    "lats": f"Final Answer: {NO_EVIDENCE}",
    "cot": COT_SYSTEM.splitlines()[-1].partition(":")[2],
    "tot": ANSWER_REQUEST,
    "plan_react": NO_ANSWER,
}
"""What each pattern's model gives back instead of an answer: our texts, as imported."""


def finished(pattern: str, final: str, log: ToolLog) -> dict[str, Any]:
    script, options = echoing(final)[pattern]
    tools = [sleeping_tool(log, "lookup", safe=True)]
    model = ScriptedChatModel(script=script)
    return graph_builder(pattern)(model, tools, **options).invoke(
        {"messages": [HumanMessage("Is x in the list?")]}
    )


def test_every_pattern_is_covered() -> None:
    assert set(ECHOES) == set(echoing("")) == set(PATTERNS)


@pytest.mark.parametrize("pattern", list(ECHOES))
def test_an_answer_that_gives_back_our_own_text_ends_incomplete(pattern: str, log: ToolLog) -> None:
    state = finished(pattern, ECHOES[pattern], log)

    assert state["outcome"]["status"] == "incomplete"
    assert state["outcome"]["reason"]


@pytest.mark.parametrize("pattern", list(ECHOES))
def test_an_empty_answer_ends_incomplete(pattern: str, log: ToolLog) -> None:
    if pattern == "react_text":  # a bare label is a format error there; quotes are not
        final = f'{ENGLISH.thought}: done\n{ENGLISH.final_answer}: ""'
    elif pattern == "cot":
        final = "  "
    else:
        final = ""

    assert finished(pattern, final, log)["outcome"]["status"] == "incomplete"


@pytest.mark.parametrize("pattern", list(ECHOES))
def test_a_real_answer_quoting_our_text_is_answered(pattern: str, log: ToolLog) -> None:
    final = f"{ENGLISH.final_answer}: {GENUINE}" if pattern == "react_text" else GENUINE

    state = finished(pattern, final, log)

    assert state["outcome"]["status"] == "answered"
    assert "42" in state["messages"][-1].text


@pytest.mark.parametrize("answer", ["42", "Paris", "None.", "Yes, x is in the list."])
def test_short_real_answers_are_answers(answer: str) -> None:
    assert no_answer_reason(answer) is None


def test_a_reply_that_copies_an_instruction_with_a_few_words_added_is_no_answer() -> None:
    copied = f"Sure. {REACT_SYSTEM.splitlines()[2]}"

    assert no_answer_reason(copied) is not None


def test_an_incomplete_answer_says_so_and_ends_the_question_without_another_call(
    log: ToolLog,
) -> None:
    # one call for the tool, one for the reply: a closing call would exhaust the script
    state = finished("react", NO_EVIDENCE, log)

    assert state["outcome"]["status"] == "incomplete"
    answer = state["messages"][-1]
    assert answer.response_metadata["outcome"]["status"] == "incomplete"
    assert "lookup done with x" in state["outcome"]["note"]  # the evidence gathered is quoted


@pytest.mark.parametrize("pattern", list(ECHOES))
def test_a_reply_that_is_no_answer_stays_as_written_and_its_note_rides_on_the_outcome(
    pattern: str, log: ToolLog
) -> None:
    state = finished(pattern, ECHOES[pattern], log)

    answer = state["messages"][-1]
    note = state["outcome"]["note"]
    assert note
    assert note not in answer.text
    assert answer.response_metadata["outcome"]["note"] == note


@pytest.mark.parametrize(
    "reply", [NO_ANSWER, "", "Final Answer: Answer:", "I c\u043euld not finish."]
)
def test_the_final_message_keeps_the_models_content_exactly(reply: str, log: ToolLog) -> None:
    state = finished("react", reply, log)

    assert state["outcome"]["status"] == "incomplete"
    assert state["messages"][-1].content == reply


def test_a_reflexion_attempt_that_stopped_short_stays_incomplete_when_it_passes(
    log: ToolLog,
) -> None:
    # the attempt spends its one step on a tool call, then concludes; the grader passes it
    script = [tool_call("lookup", **LOOKUP), "x is in the list."]
    graph = reflexion.build_graph(
        ScriptedChatModel(script=script),
        [sleeping_tool(log, "lookup", safe=True)],
        evaluator=lambda task, answer: {"score": 1.0, "feedback": "Fine."},
        max_trials=1,
        max_model_calls=1,
    )

    state = graph.invoke({"messages": [HumanMessage("Is x in the list?")]})

    assert state["trials"][-1]["score"] == 1.0
    assert state["outcome"]["status"] == "incomplete"


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "REASONING_GRAPHS_DB": str(tmp_path / "threads.sqlite")}


@pytest.mark.parametrize(
    ("reply", "code", "status"),
    [(NO_ANSWER, exits.INCOMPLETE, "incomplete"), ("It is 395.", exits.ANSWERED, "answered")],
    ids=["echo", "answer"],
)
def test_the_command_exits_and_lists_the_thread_by_what_the_answer_was(
    env: dict[str, str], reply: str, code: int, status: str
) -> None:
    calc = {"tool": "calculator", "args": {"expression": "23*17+4"}}

    done = run_process([calc, reply], "run", "What is 23*17+4?", env=env)

    assert done.returncode == code, done.stderr
    thread_id = done.stdout.splitlines()[0].split()[-1]
    assert listed_threads(env)[thread_id]["status"] == status
