"""Chain-of-Thought: the task's worked reasoning, then ``Answer: <gold>``.

Every sample writes the same chain, so self-consistency agrees k out of k. A
task's draft stands: no evaluation or observation reaches the chain to correct it.
"""

from __future__ import annotations

from reasoning_graphs.bench.oracle.answers import final_answer
from reasoning_graphs.bench.oracle.prompt import Prompt
from reasoning_graphs.bench.suite import Task

NO_REASONING = "I work it out step by step."
ANSWER_LINE = "Answer: {answer}"


def reply(task: Task, prompt: Prompt) -> str:
    """The reasoning and the answer line (the closing call gets the same)."""
    reasoning = (task.reasoning or NO_REASONING).strip()
    return f"{reasoning}\n{ANSWER_LINE.format(answer=final_answer(task))}"
