"""``act`` of Reflexion: one attempt at the request, as a ReAct run in a subgraph.

The attempt sees the conversation with the latest request rewritten to carry
the lessons of the earlier trials, so it knows what went wrong before without
seeing the failed attempts' tool traffic; the first attempt of a question gets
the lessons ``recall`` found for it in the store instead. Running it, resuming it (with the
same lessons, because they are state) and carrying the question's rejections
and spending across are :func:`~reasoning_graphs.nodes.wiring.subgraph.subgraph_node`'s
work; what is Reflexion's own is here.
"""

from __future__ import annotations

from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage
from langchain_core.runnables import RunnableLambda
from langgraph.pregel import Pregel

from reasoning_graphs.graphs.reflexion.lessons import with_remembered
from reasoning_graphs.graphs.reflexion.memory import describe_lessons, lessons_so_far, trials_so_far
from reasoning_graphs.graphs.reflexion.prompts import ATTEMPT_TASK
from reasoning_graphs.graphs.reflexion.state import Attempt, AttemptUpdate, ReflexionState
from reasoning_graphs.metadata import answered
from reasoning_graphs.nodes.wiring.subgraph import SubgraphRun, subgraph_node
from reasoning_graphs.question import request_index, this_question


def make_attempt(attempt_graph: Pregel) -> RunnableLambda[ReflexionState, dict[str, Any]]:
    """Build the ``act`` node: each trial runs through ``attempt_graph``."""
    return subgraph_node("act", attempt_graph, attempt_conversation, record_attempt)


def attempt_conversation(state: ReflexionState) -> list[AnyMessage]:
    """The attempt's conversation: the user's, with the lessons so far added to the request
    (for the first attempt, those recalled from earlier questions)."""
    messages = list(state["messages"])
    lessons = lessons_so_far(state)
    remembered = this_question(state.get("remembered"), messages)
    if not lessons and not remembered:
        return messages
    index = request_index(messages)
    earlier, task = (messages, "") if index is None else (messages[:index], messages[index].text)
    if lessons:
        request = ATTEMPT_TASK.format(task=task, reflections=describe_lessons(lessons))
    else:
        request = with_remembered(task, remembered)
    return [*earlier, HumanMessage(request)]


def record_attempt(state: ReflexionState, run: SubgraphRun) -> AttemptUpdate:
    """Keep the attempt's answer for grading; its trajectory joins the run's, tagged by trial.
    A trial a middleware ended ends the question with its answer, ungraded."""
    attempt = Attempt(answer=run.answer, outcome=run.outcome)
    events = run.events(trial=len(trials_so_far(state)) + 1)
    if run.outcome.get("ended"):
        final = AIMessage(run.answer, response_metadata=answered(run.outcome))
        return {
            "attempt": attempt,
            "trajectory": events,
            "outcome": run.outcome,
            "messages": [final],
        }
    return {"attempt": attempt, "trajectory": events, "outcome": None}
