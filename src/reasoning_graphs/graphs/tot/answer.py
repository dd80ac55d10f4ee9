"""``answer`` and ``finish``: the answer from the search's best path, or an honest stop.

``answer`` runs when the search is done: the model reads the problem and the
best path (the solution, or the best state at the depth) and gives a typed
final answer. A reply that cannot be read as one, or is empty, ends the
question incomplete, with the best path as the note's evidence. ``finish`` runs when the search
stopped — a budget spent, a call stopped, nothing left to grow — and is the
shared :func:`~reasoning_graphs.nodes.steps.finish.make_finish` along the best
path so far, whose steps the note shows as the run's evidence.
"""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.messages import AIMessage, BaseMessage

from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.tot.prompts import ANSWER_REQUEST, PATH_JOIN
from reasoning_graphs.graphs.tot.replies import FinalAnswer
from reasoning_graphs.graphs.tot.search import Thought, best_state, path
from reasoning_graphs.graphs.tot.state import TotState
from reasoning_graphs.graphs.tot.typed_call import ask_typed
from reasoning_graphs.graphs.tot.view import path_prompt, render_path
from reasoning_graphs.metadata import answered
from reasoning_graphs.nodes.guards.honest import incomplete_note
from reasoning_graphs.nodes.model.call import ModelReply, ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.steps.finish import make_finish
from reasoning_graphs.question import latest_request
from reasoning_graphs.state import AgentUpdate, Outcome

NO_ANSWER = "the answer step's reply could not be read as an answer"
BEST_PATH = "the search's best path"


def best_path(state: TotState) -> list[Thought]:
    """The thoughts the answer rests on (none before the search scored any)."""
    search = state.get("search")
    best = best_state(search) if search is not None else None
    return path(search, best["id"]) if search is not None and best is not None else []


def _path_request(run: RunScope, state: TotState, request: str) -> list[BaseMessage]:
    shown = render_path(latest_request(state["messages"]), best_path(state))
    return path_prompt(run.setup.system_prompt, f"{shown}\n\n{request}")


def make_answer(setup: AgentSetup) -> Callable[[TotState], Body[AgentUpdate]]:
    """Build the ``answer`` node."""

    def answer(state: TotState) -> Body[AgentUpdate]:
        run = setup.for_run()
        prompt = _path_request(run, state, ANSWER_REQUEST)
        parsed, event = yield from ask_typed(run, prompt, FinalAnswer, state)
        text = parsed.answer.strip() if parsed else ""
        steps = [t["text"] for t in best_path(state)]
        outcome: Outcome = {"status": "answered"}
        if not text:
            note = incomplete_note(NO_ANSWER, _evidence(state))
            outcome = {"status": "incomplete", "reason": NO_ANSWER, "note": note}
        final = AIMessage(
            text or PATH_JOIN.join(steps),
            response_metadata=answered(outcome, tot={"path": steps}),
        )
        return {"messages": [final], "trajectory": [event], "outcome": outcome}

    return answer


def _ask_on_best_path(run: RunScope, state: TotState, instruction: str) -> Body[ModelReply]:
    """The model, after the problem and the best path so far, asked to conclude."""
    request = ModelRequest(prompt=_path_request(run, state, instruction))
    return (yield from call_model(run, request, state))


def _evidence(state: TotState) -> list[tuple[str, str]]:
    """The best path so far, as the note of an incomplete answer shows it."""
    steps = [t["text"] for t in best_path(state)]
    return [(BEST_PATH, PATH_JOIN.join(steps))] if steps else []


def make_tot_finish(setup: AgentSetup) -> Callable[[TotState], Body[AgentUpdate]]:
    """Build the ``finish`` node: the shared honest stop, along the best path so far."""
    return make_finish(setup, _ask_on_best_path, _evidence)
