"""Scripted graphs for the page's tests in a real browser (tests/test_web_page.py).

Each graph plays one question's script again for every question (``cycle=True``):

- ``writer``: asks to write ``note.txt`` (a dangerous call), then answers "Written.";
- ``pair``: asks to write ``a.txt`` and ``b.txt`` in one turn, then answers;
- ``hostile``: reads a note whose text is markup, and answers with a ``javascript:`` link;
- ``plan_execute``: a plan of two calculator steps, then the answer;
- ``llm_compiler``: two calculator tasks at once, a join that asks for another round,
  one more task, then the answer;
- ``payer``: asks to pay 5 to Ann (a dangerous call whose amount is a whole number);
- ``asker``: calls a tool that asks the person a question of its own, then answers;
- ``slow_payer``: asks to pay 5 to Ann with a tool that records the payment in the
  workspace's ``payments.log`` and then waits until a ``release`` file appears there
  (which it takes away) or 30 s pass, so a test can act between the payment and its
  result;
- ``slow_planner``, ``slow_in_context``, ``slow_trial``: Plan-and-Execute, plan-in-context
  ReAct and Reflexion, whose step (or trial) asks to pay 5 to Ann, then calls a lookup
  that waits until a ``news`` file appears in the workspace (or 30 s pass), then gives
  up, so a test can stop the step after its question was answered.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from langchain_core.tools import tool
from langgraph.types import interrupt

from reasoning_graphs.graphs import llm_compiler, plan_execute, plan_react, react, reflexion
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.graphs.plan_react.plan import PlanItems
from reasoning_graphs.testing import ScriptedChatModel, tool_call, tool_calls
from reasoning_graphs.tools.builtins import WORKSPACE_ENV, calculator, write_file
from reasoning_graphs.tools.spec import tool_spec

if not os.environ.get(WORKSPACE_ENV):
    raise RuntimeError(f"Set {WORKSPACE_ENV} to the folder the test app may write to.")

WRITE = write_file(os.environ[WORKSPACE_ENV])
HOSTILE_NOTE = '<img src=x onerror="window.__pwned = 1"><b>bold?</b>'
HOSTILE_ANSWER = "See [the note](javascript:window.__pwned=2) <script>window.__pwned=3</script>"


@tool
def read_note() -> str:
    """Read the note someone left."""
    return HOSTILE_NOTE


def pay(amount: int, to: str) -> str:
    """Pay an amount to someone."""
    return f"paid {amount} to {to}"


@tool
def favourite_colour() -> str:
    """Ask the person for their favourite colour."""
    return f"The person said: {interrupt('Which colour do you like best?')}"


def released() -> None:
    """Wait until the workspace has a ``release`` file (taken away) or 30 s pass."""
    folder = Path(os.environ[WORKSPACE_ENV])
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            (folder / "release").unlink()  # one release lets one wait end
            return
        except FileNotFoundError:
            time.sleep(0.05)


def slow_pay(amount: int, to: str) -> str:
    """Pay an amount to someone (slowly)."""
    folder = Path(os.environ[WORKSPACE_ENV])
    with (folder / "payments.log").open("a") as log:
        log.write(f"paid {amount} to {to}\n")
    released()
    return f"paid {amount} to {to}"


def wait_for_news() -> str:
    """Wait for news (a lookup that takes its time)."""
    news, deadline = Path(os.environ[WORKSPACE_ENV]) / "news", time.monotonic() + 30
    while not news.exists() and time.monotonic() < deadline:  # every waiting call sees it
        time.sleep(0.05)
    return "no news"


def calculation(task_id: int, expression: str) -> dict[str, object]:
    """One task of an LLM Compiler plan: a calculator call with no dependencies."""
    return {"id": task_id, "tool": "calculator", "args": {"expression": expression}, "deps": []}


def scripted(*script: object) -> ScriptedChatModel:
    return ScriptedChatModel(script=list(script), cycle=True)


writer = react.build_graph(
    scripted(tool_call("write_file", path="note.txt", content="hello"), "Written."), tools=[WRITE]
)
pair = react.build_graph(
    scripted(
        tool_calls(
            ("write_file", {"path": "a.txt", "content": "first"}),
            ("write_file", {"path": "b.txt", "content": "second"}),
        ),
        "Both are handled.",
    ),
    tools=[WRITE],
)
hostile = react.build_graph(scripted(tool_call("read_note"), HOSTILE_ANSWER), tools=[read_note])
planned = plan_execute.build_graph(
    scripted(
        Plan(steps=["Compute 6*7.", "Add 1 to it."]),
        tool_call("calculator", expression="6*7"),
        "6*7 = 42",
        Replan(steps=["Add 1 to it."]),
        tool_call("calculator", expression="42+1"),
        "42+1 = 43",
        Replan(response="43"),
    ),
    tools=[calculator()],
)
compiled = llm_compiler.build_graph(
    scripted(
        {"tasks": [calculation(1, "6*7"), calculation(2, "2+2")]},
        {"answer": "", "replan": True, "reason": "one more sum is needed"},
        {"tasks": [calculation(1, "42+4")]},
        {"answer": "46", "replan": False, "reason": ""},
    ),
    tools=[calculator()],
)
payer = react.build_graph(
    scripted(tool_call("pay", amount=5, to="Ann"), "Paid."),
    tools=[tool_spec(pay, dangerous=True)],
)
asker = react.build_graph(
    scripted(tool_call("favourite_colour"), "Noted."), tools=[favourite_colour]
)
slow_payer = react.build_graph(
    scripted(tool_call("slow_pay", amount=5, to="Ann"), "Paid."),
    tools=[tool_spec(slow_pay, dangerous=True)],
)
STEP_TOOLS = [tool_spec(pay, dangerous=True), tool_spec(wait_for_news, concurrency_safe=True)]
STEP = (tool_call("pay", amount=5, to="Ann"), tool_call("wait_for_news"), "I give up.")
"""A step that asks to pay, waits for news once the person has answered, and gives up."""
slow_planner = plan_execute.build_graph(
    scripted(Plan(steps=["Pay Ann 5."]), *STEP, Replan(response="Not paid.")), tools=STEP_TOOLS
)
slow_in_context = plan_react.build_graph(
    scripted(PlanItems(items=["Pay Ann 5."]), *STEP), tools=STEP_TOOLS
)
slow_trial = reflexion.build_graph(
    scripted(*STEP), tools=STEP_TOOLS, evaluator=lambda task, answer: {"score": 1.0, "feedback": ""}
)
