"""Reflexion: recall → act (a ReAct attempt) → evaluate → passed or out of trials? done :
reflect → act.

``act`` makes one attempt at the request with the ReAct graph as a subgraph —
its own tools, budgets and approvals. ``evaluate`` grades the answer from 0 to
1, with the model as judge or with a function of the caller's (unit tests on
generated code, say). Below the threshold, ``reflect`` writes a lesson — why
the attempt fell short and what to do instead — and the next attempt gets
every lesson so far; with a store, lessons also outlive the thread, and
``recall`` gives a later similar question's first attempt the relevant ones
(:mod:`.lessons`). Trials are bounded: when none passes, the best attempt is
the answer, marked incomplete with its score. (Shinn et al., 2023, "Reflexion:
Language Agents with Verbal Reinforcement Learning".)
"""

from __future__ import annotations

from typing import Literal

from langgraph.graph import END, START
from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.effects import effect_node
from reasoning_graphs.graphs.reflexion.attempt import make_attempt
from reasoning_graphs.graphs.reflexion.context import ReflexionContext
from reasoning_graphs.graphs.reflexion.evaluate import Evaluator, make_evaluate
from reasoning_graphs.graphs.reflexion.lessons import make_recall
from reasoning_graphs.graphs.reflexion.reflect import make_reflect
from reasoning_graphs.graphs.reflexion.state import ReflexionState
from reasoning_graphs.nodes.guards.stop import call_stopped, model_node
from reasoning_graphs.nodes.wiring.pattern_builder import SharedArgs, pattern_builder, served
from reasoning_graphs.nodes.wiring.react_loop import build_step_graph
from reasoning_graphs.nodes.wiring.tool_loop import add_report, agent_graph_builder


def after_evaluate(state: ReflexionState) -> Literal["reflect", "evaluate", "__end__"]:
    """Answered, or out of trials with the best attempt given: done. Else reflect and retry.

    A judge call that was stopped (a timeout, or a budget ran out while it streamed)
    goes back to ``evaluate``, which now finds the budget spent and gives the attempt
    ungraded. A stopped reflection goes on to the next trial, whose first step finds
    the budget spent and concludes.
    """
    if call_stopped(state):
        return "evaluate"
    return "__end__" if state.get("outcome") else "reflect"


def after_attempt(state: ReflexionState) -> Literal["evaluate", "__end__"]:
    """Grade the attempt, unless a middleware ended the question in it."""
    return "__end__" if state.get("outcome") else "evaluate"


@pattern_builder(model_turns=True, context=ReflexionContext)
def build_graph(
    shared: SharedArgs,
    *,
    evaluator: Evaluator | None = None,
    threshold: float,
    max_trials: int,
    recall_lessons: int,
) -> CompiledStateGraph:
    """Build the Reflexion graph.

    The model must support tool calling for the attempts and ``with_structured_output``
    for the reflections (and for judging, without an ``evaluator``); the tools and the
    system prompt are the attempts'. The attempt subgraphs save into the checkpointer
    too, and ``max_model_calls`` and ``token_budget`` cover the whole question — every
    attempt, grade and reflection.

    Args:
        evaluator: Grades (task, answer) → ``{"score": 0..1, "feedback": ...}``,
            sync or async; ``None`` asks the model to judge.

    Raises:
        ValueError: ``threshold`` is not above 0 and at most 1, ``max_trials`` is below 1
            or ``recall_lessons`` below 0.

    Examples:
        >>> from reasoning_graphs.nodes.steps.judge import Judgement
        >>> from reasoning_graphs.testing import ScriptedChatModel
        >>> model = ScriptedChatModel(script=["42", Judgement(feedback="Correct.", score=1.0)])
        >>> graph = build_graph(model)
        >>> graph.invoke({"messages": [("user", "What is 6*7?")]})["messages"][-1].content
        '42'
    """
    attempt_graph = build_step_graph(
        shared.model, shared.tools, retry=shared.retry, **shared.options
    )
    setup = shared.setup()
    evaluate = make_evaluate(setup, evaluator, threshold=threshold, max_trials=max_trials)

    builder = agent_graph_builder(ReflexionState, setup=setup, context_schema=ReflexionContext)
    builder.add_node(
        "recall", effect_node("recall", make_recall(setup, recall_lessons=recall_lessons))
    )
    builder.add_node("act", make_attempt(attempt_graph))
    builder.add_node("evaluate", model_node("evaluate", evaluate))
    builder.add_node("reflect", model_node("reflect", make_reflect(setup)))
    builder.add_edge(START, "recall")
    builder.add_edge("recall", "act")
    report = add_report(builder, setup)
    builder.add_conditional_edges("act", after_attempt, {"evaluate": "evaluate", END: report})
    builder.add_conditional_edges(
        "evaluate",
        after_evaluate,
        {"reflect": "reflect", "evaluate": "evaluate", END: report},
    )
    builder.add_edge("reflect", "act")
    return shared.compile(builder, "reflexion", setup)


graph = served(build_graph)
