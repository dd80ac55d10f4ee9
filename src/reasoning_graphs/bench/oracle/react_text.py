"""ReAct in the text format: ``Thought`` / ``Action`` / ``Action Input``, then ``Final Answer``.

The transcript shows each observation as a human turn that starts with the
Observation label and holds a data block named after the tool; the oracle
reads its progress from those and writes exactly what the format's parser
reads at its strictest level, in the labels of the run's language. A human
turn after the question that is not an observation is the closing request of
``finish``: it gets the answer.
"""

from __future__ import annotations

import json

from langchain_core.messages import HumanMessage, SystemMessage

from reasoning_graphs.bench.oracle.answers import final_answer
from reasoning_graphs.bench.oracle.progress import gold_progress
from reasoning_graphs.bench.oracle.prompt import Observation, Prompt, block_observation, data_blocks
from reasoning_graphs.bench.oracle.reflection import is_reflection_request, reflection_reply
from reasoning_graphs.bench.suite import Task
from reasoning_graphs.text_format import ENGLISH, LABELS, Labels

CALL_THOUGHT = "The next thing I need comes from {tool}."
ANSWER_THOUGHT = "The observations give me the answer."


def labels_of(prompt: Prompt) -> Labels:
    """The label set the system prompt teaches (another language's before English, whose
    labels the parser reads in every language)."""
    system = next((m.text for m in prompt.messages if isinstance(m, SystemMessage)), "")
    for labels in sorted(LABELS.values(), key=lambda labels: labels == ENGLISH):
        if f"{labels.action_input}:" in system:
            return labels
    return ENGLISH


def _is_observation(text: str) -> bool:
    return any(text.startswith(f"{labels.observation}:") for labels in LABELS.values())


def text_observations(prompt: Prompt) -> list[Observation]:
    """The observations of the transcript, in order (format corrections carry no data)."""
    return [
        block_observation(source, body)
        for text in prompt.human_texts()
        if _is_observation(text)
        for source, body in data_blocks(text)
    ]


def _closing(prompt: Prompt) -> bool:
    """The prompt ends with a request after the question that is not an observation."""
    humans = prompt.human_texts()
    last = prompt.messages[-1] if prompt.messages else None
    return isinstance(last, HumanMessage) and len(humans) > 1 and not _is_observation(last.text)


def reply(task: Task, prompt: Prompt) -> str:
    """The next gold call as an Action, or the answer as the Final Answer (a reflection
    request gets a look back)."""
    if is_reflection_request(prompt):
        return reflection_reply(prompt)
    labels = labels_of(prompt)
    call = None if _closing(prompt) else gold_progress(task, text_observations(prompt)).next_call()
    if call is None:
        return f"{labels.thought}: {ANSWER_THOUGHT}\n{labels.final_answer}: {final_answer(task)}"
    tool, args = call
    return (
        f"{labels.thought}: {CALL_THOUGHT.format(tool=tool)}\n"
        f"{labels.action}: {tool}\n"
        f"{labels.action_input}: {json.dumps(args, ensure_ascii=False)}"
    )
