"""Reflexion on a scripted model: unit-test grading, the model judge, the trial bound, resume."""

from __future__ import annotations

import importlib.util
import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.sqlite import SqliteSaver

from reasoning_graphs.bench.scorers import unit_test_evaluator
from reasoning_graphs.graphs.reflexion import build_graph
from reasoning_graphs.graphs.reflexion.reflect import Reflection
from reasoning_graphs.models.local import LocalChatModel, local_model_available
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.review import APPROVAL_KIND
from reasoning_graphs.testing import ScriptedChatModel, tool_call
from reasoning_graphs.tools.spec import tool_spec

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src"
MODEL_OK, MODEL_MISSING_REASON = local_model_available()


def load_example() -> ModuleType:
    path = ROOT / "examples" / "reflexion_code_task.py"
    spec = importlib.util.spec_from_file_location("reflexion_code_task", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


example = load_example()


def ask(question: str) -> dict[str, Any]:
    return {"messages": [HumanMessage(question)]}


def text_of(prompt: list) -> str:
    return "\n".join(str(message.content) for message in prompt)


BUGGY = """Here it is:
```python
def is_palindrome(text: str) -> bool:
    return text == text[::-1]
```"""

FIXED = """Fixed:
```python
def is_palindrome(text: str) -> bool:
    letters = [c.lower() for c in text if c.isalnum()]
    return letters == letters[::-1]
```"""

LESSON = Reflection(
    diagnosis="The comparison kept case and punctuation.",
    advice="Keep only alphanumeric characters, lower-cased, before comparing.",
)


def test_unit_tests_grade_a_buggy_attempt_and_the_reflection_fixes_it() -> None:
    script = [BUGGY, LESSON, FIXED]
    model = ScriptedChatModel(script=script)
    graph = build_graph(model, tools=[], evaluator=unit_test_evaluator(example.TASK), threshold=1.0)

    state = graph.invoke(ask(example.TASK.question))

    first, second = state["trials"]
    assert first["score"] == pytest.approx(3 / 5)
    assert "is_palindrome('Racecar')" in first["feedback"]
    assert "is_palindrome('A man, a plan, a canal: Panama!')" in first["feedback"]
    assert second["score"] == 1.0
    final = state["messages"][-1]
    assert final.content == FIXED
    assert final.response_metadata == {"score": 1.0, "trial": 2, "trials": 2}
    assert state["outcome"] == {"status": "answered"}
    # the reflection saw the failing tests; the second attempt saw the reflection
    assert "is_palindrome('Racecar')" in text_of(model.prompts[1])
    assert "The comparison kept case and punctuation." in text_of(model.prompts[2])
    assert "Keep only alphanumeric characters" in text_of(model.prompts[2])
    assert len(model.calls) == len(script)  # stopped at the threshold
    # the attempts' traffic stays out of the user's conversation
    assert [type(m) for m in state["messages"]] == [HumanMessage, AIMessage]


async def test_the_model_judge_stops_at_the_threshold() -> None:
    script = [
        "Paris is in Germany.",
        Judgement(feedback="Wrong country.", score=0.2),
        LESSON,
        "Paris is in France.",
        Judgement(feedback="Correct.", score=0.85),
    ]
    model = ScriptedChatModel(script=script)
    graph = build_graph(model, tools=[])

    state = await graph.ainvoke(ask("Which country is Paris in?"))

    assert state["messages"][-1].content == "Paris is in France."
    assert [t["score"] for t in state["trials"]] == [0.2, 0.85]
    assert state["outcome"] == {"status": "answered"}
    assert "Paris is in Germany." in text_of(model.prompts[1])  # the judge read the answer
    assert "Wrong country." in text_of(model.prompts[2])  # the reflection read the feedback
    assert len(model.calls) == len(script)
    evaluations = [e for e in state["trajectory"] if e["kind"] == "evaluation"]
    assert [(e["trial"], e["score"]) for e in evaluations] == [(1, 0.2), (2, 0.85)]


def test_the_trial_bound_returns_the_best_attempt_with_its_score() -> None:
    scores = {"A": 0.3, "B": 0.6, "C": 0.4}
    script = ["A", LESSON, "B", LESSON, "C"]
    model = ScriptedChatModel(script=script)

    def grade(task: str, answer: str) -> dict[str, Any]:
        return {"score": scores[answer], "feedback": f"{answer} is not right."}

    graph = build_graph(model, tools=[], evaluator=grade)

    state = graph.invoke(ask("Pick the right letter."))

    reason = "no attempt reached the score threshold 0.80 in 3 trials; best score 0.60"
    assert state["outcome"] == {"status": "incomplete", "reason": reason}
    final = state["messages"][-1]
    assert final.content == "B"
    note = final.response_metadata["outcome"]["note"]
    assert "0.60" in note  # its score
    assert "B is not right." in note  # what is left to fix
    assert final.response_metadata["score"] == 0.6
    assert final.response_metadata["trial"] == 2
    assert len(state["reflections"]) == 2  # no reflection after the last trial
    # reflections accumulate: the third attempt sees both
    assert text_of(model.prompts[4]).count("Next time:") == 2
    assert len(model.calls) == len(script)


def lookup(item: str) -> str:
    """Look an item up."""
    return f"{item} is in Texas. " + "x" * 2000 if item == "paris" else f"{item}: nothing found"


def test_the_reflection_sees_the_attempts_calls_and_observations() -> None:
    script = [
        tool_call("lookup", item="paris"),
        "Paris is in Texas.",
        LESSON,
        tool_call("lookup", item="paris france"),
        "Paris is in France.",
        LESSON,
        "Paris is in France.",
    ]
    model = ScriptedChatModel(script=script)
    scores = {"Paris is in Texas.": 0.2}
    graph = build_graph(
        model,
        tools=[tool_spec(lookup, concurrency_safe=True)],
        evaluator=lambda task, answer: {"score": scores.get(answer, 0.5), "feedback": "Not it."},
        max_trials=3,
    )

    graph.invoke(ask("Which country is Paris in?"))

    first_reflection, second_reflection = text_of(model.prompts[2]), text_of(model.prompts[5])
    # the call, and its observation as a data block naming the call
    assert "lookup(item='paris')" in first_reflection
    block = first_reflection.split("<<<data from lookup(item='paris')>>>\n")[1]
    assert block.startswith("paris is in Texas. xxx")
    assert len(block.split("<<<end of data>>>")[0]) < 1000  # the long observation is clipped
    # each reflection reads its own trial's work
    assert "lookup(item='paris france')" in second_reflection
    assert "paris france: nothing found" in second_reflection
    assert "lookup(item='paris')" not in second_reflection


def test_a_reflection_on_an_attempt_without_tools_shows_no_data() -> None:
    model = ScriptedChatModel(script=["A", LESSON, "B"])
    graph = build_graph(
        model,
        tools=[],
        evaluator=lambda task, answer: {"score": 0.1, "feedback": "no"},
        max_trials=2,
    )

    graph.invoke(ask("Pick."))

    request = str(model.prompts[1][-1].content)
    assert "Task: Pick." in request
    assert "<<<data from" not in request


def test_bad_options_are_refused() -> None:
    with pytest.raises(ValueError, match="threshold"):
        build_graph(ScriptedChatModel(), threshold=1.5)
    with pytest.raises(ValueError, match="max_trials"):
        build_graph(ScriptedChatModel(), max_trials=0)


# --- reflections survive a pause inside attempt 2, resumed in a new process ---------------

AGENT = """
import json, sqlite3, sys
from langgraph.checkpoint.sqlite import SqliteSaver
from langgraph.types import Command
from reasoning_graphs.graphs.reflexion import build_graph
from reasoning_graphs.testing import ScriptedChatModel
from reasoning_graphs.tools.spec import tool_spec

def deploy(item: str) -> str:
    '''Deploy an item.'''
    return f"deployed {item}"

def grade(task, answer):
    return {"score": 1.0 if "done" in answer else 0.2, "feedback": "Nothing was deployed."}

model = ScriptedChatModel(script=["prod deployed, done"])
saver = SqliteSaver(sqlite3.connect(sys.argv[1], check_same_thread=False))
graph = build_graph(model, tools=[tool_spec(deploy, dangerous=True)], checkpointer=saver,
                    evaluator=grade)
state = graph.invoke(Command(resume=["approve"]), {"configurable": {"thread_id": "t"}})
print(json.dumps({"prompt": [str(m.content) for m in model.prompts[0]],
                  "final": state["messages"][-1].content, "outcome": state["outcome"],
                  "observation": str(model.prompts[0][-1].content)}))
"""


def deploy(item: str) -> str:
    """Deploy an item."""
    return f"deployed {item}"


def grade(task: str, answer: str) -> dict[str, Any]:
    return {"score": 1.0 if "done" in answer else 0.2, "feedback": "Nothing was deployed."}


def test_reflections_survive_a_resume_in_a_new_process(tmp_path: Path) -> None:
    db = tmp_path / "runs.sqlite"
    lesson = Reflection(diagnosis="Nothing was deployed.", advice="Call deploy on prod.")
    model = ScriptedChatModel(
        script=["I would deploy it.", lesson, tool_call("deploy", item="prod")]
    )
    saver = SqliteSaver(sqlite3.connect(db, check_same_thread=False))
    graph = build_graph(
        model, tools=[tool_spec(deploy, dangerous=True)], checkpointer=saver, evaluator=grade
    )

    paused = graph.invoke(ask("Deploy prod."), {"configurable": {"thread_id": "t"}})

    (interrupt,) = paused["__interrupt__"]
    assert interrupt.value["kind"] == APPROVAL_KIND
    assert [c["name"] for c in interrupt.value["calls"]] == ["deploy"]

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SRC), env.get("PYTHONPATH")]))
    done = subprocess.run(
        [sys.executable, "-c", AGENT, str(db)],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout.strip().splitlines()[-1])
    resumed_prompt = "\n".join(result["prompt"])
    assert "Deploy prod." in resumed_prompt
    assert "Nothing was deployed. Next time: Call deploy on prod." in resumed_prompt
    assert result["observation"] == "deployed prod"
    assert result["final"] == "prod deployed, done"
    assert result["outcome"] == {"status": "answered"}


# --- the embedded model ----------------------------------------------------------------------


@pytest.mark.local_model
@pytest.mark.skipif(not MODEL_OK, reason=MODEL_MISSING_REASON)
def test_judge_and_reflection_replies_parse_on_the_embedded_model() -> None:
    model = LocalChatModel()
    for schema in (Judgement, Reflection):
        result = model.with_structured_output(schema, include_raw=True).invoke(
            "Task: What is 2+2? Answer given: 5. Grade it, or say what went wrong."
        )
        assert isinstance(result["parsed"], schema), result["raw"]
