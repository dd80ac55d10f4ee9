"""What the command prints of a run: one answer per question, and model text as a person reads it.

Every pattern's run may make several replies that could pass for an answer
(a thought before a call, a reply cut at the length limit and continued, a
joiner asking for another round, a closing call, a search's candidates); only
the run's final answer is printed as the answer, once, at the end. HTML
entities in the model's text are decoded on screen, a quote thousands of
characters long is cut to a readable length, and a plan that could not be read
is not shown as a plan. The runs go in-process, and as a process of its own
with its output on a pseudo-terminal, as a person's shell has it, or in a file.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import AIMessage, BaseMessage

from reasoning_graphs.cli import exits, runs
from reasoning_graphs.cli import main as cli
from reasoning_graphs.cli.display import decoded, shortened
from reasoning_graphs.cli.status_line import WIPE
from reasoning_graphs.cli.store import Store
from reasoning_graphs.graphs import PATTERNS, graph_builder
from reasoning_graphs.graphs.llm_compiler.dag import TaskPlan, TaskSchema
from reasoning_graphs.graphs.llm_compiler.join import JoinDecision
from reasoning_graphs.graphs.plan_execute.plan import Plan, Replan
from reasoning_graphs.graphs.plan_react.plan import PlanItems
from reasoning_graphs.graphs.tot.replies import FinalAnswer, NextStep, Proposals, Valuation
from reasoning_graphs.nodes.grounding.report import final_answer
from reasoning_graphs.nodes.steps.judge import Judgement
from reasoning_graphs.testing import ScriptedChatModel, tool_call, tool_calls
from tests.helpers.cli_driver import Terminal, run_cli, thread_id_from
from tests.helpers.scripted_cli import command_line

LENGTH_CUT = {"finish_reason": "length"}
ENCODED = "The user&#39;s product is 42 &amp; checked."
DECODED = "The user's product is 42 & checked."
QUOTE_LIMIT = 200
LONG_NAME = "abacus_" * 310  # 2,170 characters, one made-up tool name
STEP_STOPS_SHORT = [
    {"steps": ["Compute 2+2.", "Double it."]},
    {"tool": "calculator", "args": {"expression": "2+"}},
    {"tool": "calculator", "args": {"expression": "2+"}},  # the failed call again: the step stops
    "Probably 4.",
    {"response": "4, then 8."},
]


def cut(text: str) -> AIMessage:
    """A reply the provider stopped at its length limit: the run asks for the rest."""
    return AIMessage(text, response_metadata=LENGTH_CUT)


def calculate(expression: str) -> AIMessage:
    return tool_call("calculator", expression=expression)


def graded(messages: list[BaseMessage]) -> Judgement:
    """A judge that rewards the branch answering 42."""
    return Judgement(feedback="checked", score=1.0 if "42" in messages[-1].text else 0.1)


CANDIDATE_REPLIES: dict[str, list[Any]] = {
    # a thought before the call, then an answer cut at the length limit and continued
    "react": [
        tool_calls(("calculator", {"expression": "6*7"}), content="Let me multiply."),
        cut("The product is 4"),
        "2.",
    ],
    # prose that is no step, then an action, then the answer
    "react_text": [
        "Hmm, let me think about which tool I should use for this.",
        'Thought: multiply\nAction: calculator\nAction Input: {"expression": "6*7"}',
        "Thought: done\nFinal Answer: 42",
    ],
    # two steps' results, a revision, then a closing call cut and continued
    "plan_execute": [
        Plan(steps=["Multiply 6 by 7."]),
        calculate("6*7"),
        "6*7 = 42",
        Replan(steps=["Check the product."]),
        "It checks out: 42.",
        Replan(),
        cut("The product is 4"),
        "2.",
    ],
    # the solver's answer cut and continued
    "rewoo": [
        {
            "steps": [
                {
                    "var": "E1",
                    "tool": "calculator",
                    "args": {"expression": "6*7"},
                    "reason": "multiply",
                }
            ]
        },
        cut("The product is 4"),
        "2.",
    ],
    # the joiner asks for another round, then answers
    "llm_compiler": [
        TaskPlan(tasks=[TaskSchema(id=1, tool="calculator", args={"expression": "6*7"})]),
        JoinDecision(replan=True, reason="check it the other way round"),
        TaskPlan(tasks=[TaskSchema(id=1, tool="calculator", args={"expression": "7*6"})]),
        JoinDecision(answer="The product is 42."),
    ],
    # a failed trial, its reflection, then the passing trial
    "reflexion": [
        "41",
        Judgement(feedback="Wrong product.", score=0.1),
        "Multiply again, carefully.",
        "The product is 42.",
        Judgement(feedback="Right.", score=1.0),
    ],
    # three candidate answers, one search
    "lats": ["It is 41.", "It is 42.", "It is 43.", graded, graded, graded],
    # reasoning cut at the length limit and continued
    "cot": [cut("6 times 7 is 4"), "2.\nAnswer: 42"],
    # one proposed step that solves it, judged sure, then the answer
    "tot": [
        Proposals(steps=[NextStep(step="6 * 7 = 42", solves=True)]),
        Valuation(reason="It is the product.", verdict="sure"),
        FinalAnswer(answer="42"),
    ],
    # the plan, a call that marks its item done, then the answer cut and continued
    "plan_react": [
        PlanItems(items=["Multiply 6 by 7 with the calculator."]),
        tool_calls(("calculator", {"expression": "6*7"}), ("update_plan", {"done": [1]})),
        cut("The product is 4"),
        "2.",
    ],
}


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "threads.sqlite"
    monkeypatch.setenv(cli.DB_ENV, str(path))
    return path


def use_model(monkeypatch: pytest.MonkeyPatch, *script: Any) -> ScriptedChatModel:
    model = ScriptedChatModel(script=list(script))
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)
    return model


def saved_messages(db: Path, thread_id: str, pattern: str = "react") -> list[BaseMessage]:
    """The thread's messages as the pattern's graph reads them from the store."""
    with Store(db) as store:
        graph = graph_builder(pattern)(model=ScriptedChatModel(), checkpointer=store.checkpointer)
        config = {"configurable": {"thread_id": thread_id}}
        return graph.get_state(config).values["messages"]


def answer_lines(out: str) -> list[str]:
    return [line for line in out.splitlines() if line.startswith("Answer:")]


def test_every_pattern_is_covered() -> None:
    assert set(CANDIDATE_REPLIES) == set(PATTERNS)


@pytest.mark.parametrize("pattern", sorted(CANDIDATE_REPLIES))
def test_one_answer_line_the_runs_final_answer_printed_at_the_end(
    db, monkeypatch, capsys, pattern
) -> None:
    use_model(monkeypatch, *CANDIDATE_REPLIES[pattern])

    code, out, err = run_cli(monkeypatch, capsys, "run", "What is 6*7?", "--pattern", pattern)

    assert code in (exits.ANSWERED, exits.INCOMPLETE), err
    final = final_answer(saved_messages(db, thread_id_from(out), pattern))
    assert final is not None
    assert answer_lines(out) == [f"Answer: {final.text.strip()}"]
    lines = out.splitlines()
    after = lines[lines.index(answer_lines(out)[0]) + 1 :]
    assert all(line.startswith("Note:") for line in after), out  # nothing of the run follows


@pytest.mark.parametrize("pattern", ["react", "llm_compiler"])
def test_json_and_quiet_output_also_give_one_answer(db, monkeypatch, capsys, pattern) -> None:
    use_model(monkeypatch, *CANDIDATE_REPLIES[pattern])
    _, out, _ = run_cli(monkeypatch, capsys, "run", "6*7?", "--pattern", pattern, "--json")
    events = [json.loads(line) for line in out.splitlines()]
    answers = [event for event in events if event["event"] == "answer"]
    final = final_answer(saved_messages(db, events[0]["thread_id"], pattern))
    assert [event["text"] for event in answers] == [final.text.strip()]

    use_model(monkeypatch, *CANDIDATE_REPLIES[pattern])
    _, out, _ = run_cli(monkeypatch, capsys, "run", "6*7?", "--pattern", pattern, "--quiet")
    assert answer_lines(out) == [f"Answer: {final.text.strip()}"]


def test_a_thought_before_a_call_is_a_thought_only(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch, *CANDIDATE_REPLIES["react"])

    _, out, _ = run_cli(monkeypatch, capsys, "run", "What is 6*7?")

    assert [line for line in out.splitlines() if "Let me multiply." in line] == [
        "Thought: Let me multiply."
    ]


def test_html_entities_are_decoded_on_screen_and_kept_in_the_state(
    db, tmp_path, monkeypatch, capsys
) -> None:
    trace = tmp_path / "trace.jsonl"
    thought = tool_calls(("calculator", {"expression": "6*7"}), content="It&#39;s a product.")
    use_model(monkeypatch, thought, ENCODED)

    _, out, _ = run_cli(monkeypatch, capsys, "run", "6*7?", "--trace", str(trace))

    lines = out.splitlines()
    assert "Thought: It's a product." in lines
    assert answer_lines(out) == [f"Answer: {DECODED}"]
    assert "&#39;" not in out
    assert final_answer(saved_messages(db, thread_id_from(out))).text == ENCODED
    traced = [json.loads(line) for line in trace.read_text().splitlines()]
    assert [e["text"] for e in traced if e["event"] == "answer"] == [ENCODED]


def test_arguments_a_tool_receives_are_shown_as_they_are(db, monkeypatch, capsys) -> None:
    use_model(monkeypatch, calculate("6&amp;7"), "It failed.")

    _, out, _ = run_cli(monkeypatch, capsys, "run", "6*7?")

    assert "Action: calculator(expression='6&amp;7')" in out.splitlines()


def test_a_plan_read_with_a_problem_is_shown_with_it(db, monkeypatch, capsys) -> None:
    plan = {"steps": [{"var": "E1", "tool": "abacus", "args": {}, "reason": "count"}]}
    use_model(monkeypatch, plan, plan, "No plan could run.")

    _, out, _ = run_cli(monkeypatch, capsys, "run", "6*7?", "--pattern", "rewoo")

    lines = out.splitlines()
    plans = [line for line in lines if line.startswith("Plan:")]
    assert plans == ["Plan: count #E1 = abacus[{}]"] * 2
    problem = lines[lines.index(plans[0]) + 1].lstrip()  # indented under its plan
    assert problem.startswith("[This plan cannot run: #E1 uses 'abacus'")


def test_a_step_that_stopped_short_leaves_the_question_incomplete(db, monkeypatch, capsys):
    use_model(monkeypatch, *STEP_STOPS_SHORT)

    code, out, _ = run_cli(monkeypatch, capsys, "run", "(2+2)*2?", "--pattern", "plan_execute")

    assert code == exits.INCOMPLETE
    assert answer_lines(out) == ["Answer: 4, then 8."]
    thread_id = thread_id_from(out)
    _, listing, _ = run_cli(monkeypatch, capsys, "threads", "--json")
    (entry,) = [json.loads(line) for line in listing.splitlines()]
    assert (entry["thread_id"], entry["status"]) == (thread_id, "incomplete")


def run_on_terminal(command: list[str], env: dict[str, str]) -> tuple[int, str]:
    """``command`` with stdin, stdout and stderr on one pseudo-terminal: its exit code, and
    what a person sees (each line as the terminal shows it, the status line wiped)."""
    code, output = Terminal(command, env=env).finish(timeout=120)
    lines = output.replace("\r\n", "\n").split("\n")
    return code, "\n".join(line.split(WIPE)[-1] for line in lines)


def run_to_file(command: list[str], env: dict[str, str], tmp_path: Path) -> tuple[int, str]:
    """``command`` with its output going to a file: its exit code and the file's text."""
    shown = tmp_path / "shown.txt"
    with shown.open("w") as out:
        done = subprocess.run(
            command, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=env
        )
    return done.returncode, shown.read_text()


@pytest.fixture(params=["terminal", "file"])
def shell(request: pytest.FixtureRequest, tmp_path: Path):
    """Run ``reasoning-graphs ARGV…`` on a scripted model as a process of its own, its output
    on a pseudo-terminal or in a file: its exit code and what it showed."""
    env = {**os.environ, "REASONING_GRAPHS_DB": str(tmp_path / "threads.sqlite")}

    def run(script: list[Any], *argv: str) -> tuple[int, str]:
        command = command_line(script, *argv)
        if request.param == "terminal":
            return run_on_terminal(command, env)
        return run_to_file(command, env, tmp_path)

    return run


def test_rounds_of_a_compiler_run_give_one_answer_decoded(shell) -> None:
    task = {"id": 1, "tool": "calculator", "args": {"expression": "6*7"}}
    script = [
        {"tasks": [task]},
        {"replan": True, "reason": "the user&#39;s check"},
        {"tasks": [task]},
        {"answer": ENCODED},
    ]

    code, shown = shell(script, "run", "6*7?", "--pattern", "llm_compiler")

    assert code == exits.ANSWERED, shown
    assert answer_lines(shown) == [f"Answer: {DECODED}"]
    assert "the user's check" in shown
    assert "&#39;" not in shown


def test_an_unreadable_plan_is_not_shown_as_a_plan(shell) -> None:
    script = [{"not_steps": 1}, {"not_steps": 1}, "No plan could be made."]

    _, shown = shell(script, "run", "6*7?", "--pattern", "rewoo")

    lines = shown.splitlines()
    assert not [line for line in lines if line.startswith("Plan:")], shown
    problems = [line for line in lines if line.startswith("[This plan cannot run:")]
    assert len(problems) == 2, shown
    assert answer_lines(shown) == ["Answer: No plan could be made."]


def test_a_stopped_step_exits_as_incomplete(shell) -> None:
    code, shown = shell(STEP_STOPS_SHORT, "run", "(2+2)*2?", "--pattern", "plan_execute")

    assert code == exits.INCOMPLETE, shown
    assert answer_lines(shown) == ["Answer: 4, then 8."]
    plans = [line for line in shown.splitlines() if line.startswith("Plan:")]
    assert plans == ["Plan: Compute 2+2. → Double it."]  # a step moving the plan on is no plan


def test_a_long_quote_is_cut_on_screen_and_whole_in_the_trace(shell, tmp_path: Path) -> None:
    trace = tmp_path / "trace.jsonl"
    plan = {"steps": [{"var": "E1", "tool": LONG_NAME, "args": {}, "reason": "count"}]}

    _, shown = shell(
        [plan, plan, "No plan could run."],
        "run",
        "6*7?",
        "--pattern",
        "rewoo",
        "--trace",
        str(trace),
    )

    left_out = len(LONG_NAME) - QUOTE_LIMIT
    assert LONG_NAME not in shown
    assert f"{LONG_NAME[:QUOTE_LIMIT]}…" in shown
    assert re.search(rf"\b{left_out:,} more characters\b", shown), shown
    assert max(len(line) for line in shown.splitlines()) < 2 * QUOTE_LIMIT + 200
    assert LONG_NAME in trace.read_text()


def test_prose_and_text_that_only_looks_like_an_entity_stay_as_written() -> None:
    prose = "The model's reply, " + "and the user's next step " * 20 + "— it's all one sentence."
    link = "https://example.com/?a=1&para=2 R&D"

    assert shortened(prose) == prose  # apostrophes inside words open no quote
    assert decoded(link) == link  # an entity ends with a semicolon
    assert decoded("&lt;b&gt; &#x27;x&#x27;") == "<b> 'x'"
