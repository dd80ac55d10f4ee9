"""``reason`` of Chain-of-Thought: think step by step, then read the answer off the end.

With one sample this is Wei et al.'s chain of thought; with several it is
Wang et al.'s self-consistency: the samples are independent, so they run
concurrently, and the majority answer wins, with the agreement (``"3/5"``)
reported in the state and on the answer message. Self-consistency only helps
when the samples differ: give it a model that samples (temperature above 0).

The samples are a batch (:mod:`~reasoning_graphs.nodes.model.batch`): no more start
than the model-call budget has left, and they share the tokens left. The vote is
over the samples that finished; fewer than asked is recorded in the trajectory.
"""

from __future__ import annotations

from collections.abc import Callable

from langchain_core.messages import AIMessage

from reasoning_graphs.effects import Body
from reasoning_graphs.graphs.cot.answer import Sample, extract_answer, majority
from reasoning_graphs.graphs.cot.state import CotState, ReasonUpdate
from reasoning_graphs.metadata import answered
from reasoning_graphs.nodes.guards.honest import incomplete_note
from reasoning_graphs.nodes.model.batch import plan_batch
from reasoning_graphs.nodes.model.call import ModelRequest, call_model
from reasoning_graphs.nodes.model.setup import AgentSetup, RunScope
from reasoning_graphs.nodes.model.tokens import estimate_tokens
from reasoning_graphs.state import Outcome, ThoughtEvent

NO_FINAL_ANSWER = "the model's reasoning gave no final answer"
AGREEMENT = "{count}/{total}"


def make_reason(setup: AgentSetup, *, samples: int) -> Callable[[CotState], Body[ReasonUpdate]]:
    """Build the ``reason`` node: ``samples`` concurrent chains of thought and their vote."""

    def reason(state: CotState) -> Body[ReasonUpdate]:
        run = setup.for_run()
        prompt = [*run.setup.system, *state["messages"]]
        asked = run.option("samples", samples)
        batch = plan_batch(state, run.limits, asked, prompt_tokens=estimate_tokens(prompt))
        request = ModelRequest(prompt=prompt, shared_tokens=batch.shared_tokens)
        gathered = yield from batch.gather(
            [_sample(run, request, state) for _ in range(batch.size)], lambda result: [result[1]]
        )
        results = gathered.finished
        chains = [chain for chain, _ in results]
        events = [{**event, "sample": n} for n, (_, event) in enumerate(results, start=1)]
        vote = majority(chains)
        agreement = AGREEMENT.format(count=vote["count"], total=vote["total"])
        outcome: Outcome = {"status": "answered"}
        if not vote["answer"]:
            note = incomplete_note(NO_FINAL_ANSWER, [])
            outcome = {"status": "incomplete", "reason": NO_FINAL_ANSWER, "note": note}
        chosen = next((c for c in chains if c["answer"] == vote["answer"]), chains[0])
        final = AIMessage(
            vote["answer"] or chosen["reasoning"],  # no answer: the model's own reasoning
            response_metadata=answered(
                outcome,
                answer=vote["answer"],
                agreement=agreement,
                votes=vote["votes"],
                reasoning=chosen["reasoning"],
            ),
        )
        return {
            "messages": [final],
            "samples": chains,
            "answer": vote["answer"],
            "agreement": agreement,
            "trajectory": [*events, *gathered.records],
            "outcome": outcome,
        }

    return reason


def _sample(
    run: RunScope, request: ModelRequest, state: CotState
) -> Body[tuple[Sample, ThoughtEvent]]:
    """One chain of thought over the conversation, and its trajectory event."""
    reply = yield from call_model(run, request, state)
    text = reply.message.text
    return Sample(reasoning=text, answer=extract_answer(text)), reply.event
