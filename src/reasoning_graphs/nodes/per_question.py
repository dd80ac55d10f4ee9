"""Records a pattern keeps across a thread's questions, each tagged with its question's turn.

Plan-and-Execute keeps its finished steps and Reflexion its trials and lessons
as plain lists in the state, so a checkpoint carries them across a pause or a
new process. A follow-up question must start with a clean slate without losing
the record of the earlier one: each record names its turn, and a pattern reads
only the current question's.

Example:
    >>> from langchain_core.messages import HumanMessage
    >>> messages = [HumanMessage("first"), HumanMessage("second")]
    >>> this_question([{"turn": 1, "step": "a"}, {"turn": 2, "step": "b"}], messages)
    [{'turn': 2, 'step': 'b'}]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

from langchain_core.messages import AnyMessage

from reasoning_graphs.nodes.turn import turn_number

Record = TypeVar("Record", bound=Mapping[str, Any])


def this_question(records: Sequence[Record] | None, messages: Sequence[AnyMessage]) -> list[Record]:
    """The records of the question ``messages`` are at (their ``turn``), in order."""
    turn = turn_number(messages)
    return [record for record in records or [] if record["turn"] == turn]
