"""ReAct with native tool calling: one gold call per turn, then the answer.

The same loop runs a Plan-and-Execute step, a Reflexion trial and a LATS
expansion, so :func:`loop_reply` serves those patterns too, with the answer
each of them wants at the end.
"""

from __future__ import annotations

from langchain_core.messages import AIMessage

from reasoning_graphs.bench.oracle.answers import final_answer
from reasoning_graphs.bench.oracle.progress import gold_progress
from reasoning_graphs.bench.oracle.prompt import Prompt, native_observations
from reasoning_graphs.bench.oracle.reflection import is_reflection_request, reflection_reply
from reasoning_graphs.bench.suite import Task
from reasoning_graphs.testing import tool_calls


def loop_reply(task: Task, prompt: Prompt, answer: str) -> AIMessage | str:
    """The next gold call the prompt's observations leave, else ``answer``.

    A call that asks for text (tools off, or none bound) gets ``answer`` at once, but
    for the loop's reflection request, which gets a look back.
    """
    if is_reflection_request(prompt):
        return reflection_reply(prompt)
    if not prompt.may_call_tools:
        return answer
    progress = gold_progress(task, native_observations(prompt.messages))
    call = progress.next_call()
    if call is None:
        return answer
    name, args = call
    return tool_calls((name, args))


def reply(task: Task, prompt: Prompt) -> AIMessage | str:
    """ReAct's turn: the next gold call, or the answer (a draft stays: nothing corrects it)."""
    return loop_reply(task, prompt, final_answer(task))
