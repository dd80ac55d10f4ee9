"""The ReAct loop's reflection request (``reflect_every``, ``reflect_on_failure``).

The request shows the latest calls with their results as data blocks; the oracle
looks back as a careful model would: a failed call is named with what to change,
else the step got what it asked for. It never answers the question there.
"""

from __future__ import annotations

from langchain_core.messages import SystemMessage

from reasoning_graphs.bench.oracle.prompt import Prompt, block_observation, data_blocks
from reasoning_graphs.nodes.steps.reflect import REFLECT_SYSTEM

SETTLED = "The observations gave what the thought asked for; nothing needs to change."
FAILED = "The call to {tool} failed; correct its arguments or reach the result another way."


def is_reflection_request(prompt: Prompt) -> bool:
    """Whether the call is the loop's reflection (its system prompt is the reflection's)."""
    first = prompt.messages[0] if prompt.messages else None
    return isinstance(first, SystemMessage) and first.text == REFLECT_SYSTEM


def reflection_reply(prompt: Prompt) -> str:
    """A look back at the latest round: the first failed call, else that it settled things."""
    shown = [block_observation(source, body) for source, body in data_blocks(prompt.last_human())]
    failed = next((o for o in shown if o.failed), None)
    return SETTLED if failed is None else FAILED.format(tool=failed.tool)
