"""An answer that is no answer, and the note an incomplete answer carries.

A weak model asked for an answer sometimes gives back what we wrote to it: the
no-answer text (``I could not finish this task.``), an instruction (``The plan
needed no tools: answer from what you know.``), the text format's template
(``<your answer for the user>``), or nothing at all. Taken at its word, such a
reply would end the question as *answered*. Every step that calls the model
passes its update through :func:`honest_update` (in
:func:`~reasoning_graphs.nodes.stop.model_node`), which turns such an answer
into an incomplete one that says why and quotes the evidence; the question ends
there (the outcome is ``concluded``: no closing call follows).

A reply is no answer when, leaving out a leading label (``Final Answer:``),
quotes, markup, case and spacing, it is empty, it is our no-answer text, or at
least :data:`COPIED_SHARE` of its words are runs of :data:`RUN_WORDS` words
copied from one of our texts. An answer that quotes one of our sentences among
words of its own is still an answer. The shared steps' texts are read here; a
pattern's prompts module and the text format declare theirs with
:func:`own_texts`, since nothing in ``nodes`` imports a pattern. The text
format's worked examples are not ours in this sense: their answers are real
answers to their questions.

Example:
    >>> no_answer_reason("Final Answer: I could not finish this task.")
    'the model gave no answer'
    >>> no_answer_reason("Use a tool only when it gives you something you cannot work out")
    "the model's reply repeated our own instructions instead of answering"
    >>> no_answer_reason("I could not finish this task yesterday, but the total is 395.") is None
    True
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from langchain_core.messages import AIMessage

from reasoning_graphs.effects import Body
from reasoning_graphs.metadata import answered
from reasoning_graphs.nodes import prompts
from reasoning_graphs.nodes.turn import successful_observations
from reasoning_graphs.nodes.untrusted import DATA_RULE
from reasoning_graphs.state import Outcome

NO_REPLY = "the model gave no answer"
ECHOED = "the model's reply repeated our own instructions instead of answering"

RUN_WORDS = 4
"""Words in a row that count as copied when one of our texts has them in that order."""
COPIED_SHARE = 0.8
"""The share of a reply's words copied from our texts that makes the reply ours."""
EVIDENCE_CHARS = 200
"""How much of each tool result an incomplete note quotes."""

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
WORD = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
"""A word as compared here: a run of letters and digits, or one CJK character."""
FIELD = re.compile(r"\{[A-Za-z_][\w.]*(?:![rsa])?(?::[^{}]*)?\}")
"""A field of a template (``{reason}``): what fills it is not our text."""
LABEL = re.compile(rf"^\W*(?:[^\W\d_]+(?:[ \t]+[^\W\d_]+){{0,2}}|[{_CJK}]{{1,6}})\W*?[:：]")
"""A short leading label: ``Final Answer:``, ``**Answer:**``, ``最终答案：``."""

_texts: list[str] = [
    prompts.REACT_SYSTEM,
    prompts.ANSWER_NOW,
    prompts.INCOMPLETE_NOTE,
    prompts.NO_ANSWER,
    prompts.NO_TOOLS,
    prompts.CANNOT_RUN_NOTE,
    prompts.PLAN_FAILED_REPORT,
    prompts.JUDGE_SYSTEM,
    prompts.JUDGE_REQUEST,
    DATA_RULE,
]
_runs: set[tuple[str, ...]] = set()
_indexed = 0  # how many of _texts are in _runs


def own_texts(*texts: str) -> None:
    """Declare texts of ours that a model reads (instructions, templates with their
    fields, notes), so that a reply made of them is not taken for an answer."""
    _texts.extend(texts)


def words(text: str) -> list[str]:
    """``text`` as the words compared here: no case, punctuation, quotes or markup."""
    return WORD.findall(text.casefold())


def no_answer_reason(answer: str) -> str | None:
    """Why ``answer`` is no answer (empty, or our own words), or ``None`` for a real one."""
    said = words(LABEL.sub("", answer.strip(), count=1))
    if not said or said == words(prompts.NO_ANSWER):
        return NO_REPLY
    if len(said) < RUN_WORDS:
        return None  # too short to tell a copy from a coincidence
    runs = _copied_runs()
    copied = [False] * len(said)
    for start in range(len(said) - RUN_WORDS + 1):
        if tuple(said[start : start + RUN_WORDS]) in runs:
            copied[start : start + RUN_WORDS] = [True] * RUN_WORDS
    return ECHOED if sum(copied) >= COPIED_SHARE * len(said) else None


def _copied_runs() -> set[tuple[str, ...]]:
    """Every run of :data:`RUN_WORDS` words in our texts; a template's fields break runs."""
    global _indexed
    for text in _texts[_indexed:]:
        for part in FIELD.split(text):
            found = words(part)
            _runs.update(tuple(found[i : i + RUN_WORDS]) for i in range(len(found) - RUN_WORDS + 1))
    _indexed = len(_texts)
    return _runs


def incomplete_note(reason: str, evidence: Sequence[tuple[str, str]]) -> str:
    """The note an incomplete answer ends with: why it stopped, and what the tools returned
    as (call, result) pairs, each result cut to :data:`EVIDENCE_CHARS`."""
    items = "; ".join(f"{done} returned {_clip(result)}" for done, result in evidence)
    found = prompts.EVIDENCE_LINE.format(items=items) if items else ""
    return prompts.INCOMPLETE_NOTE.format(reason=reason, evidence=found)


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EVIDENCE_CHARS else text[: EVIDENCE_CHARS - 1] + "…"


def honest_update(state: Mapping[str, Any], update: dict[str, Any]) -> dict[str, Any]:
    """``update`` as it is, unless it answers the question with no answer.

    Then its answer keeps what the model wrote (or says there was nothing),
    gains the incomplete note with the reason and the question's tool results,
    and its outcome is incomplete and ``concluded``.
    """
    outcome: Outcome | None = update.get("outcome")
    messages = list(update.get("messages") or [])
    if not outcome or outcome["status"] != "answered" or not messages:
        return update
    answer = messages[-1]
    if not isinstance(answer, AIMessage) or answer.tool_calls:
        return update
    reason = no_answer_reason(answer.text)
    if reason is None:
        return update
    honest: Outcome = {"status": "incomplete", "reason": reason, "concluded": True}
    note = incomplete_note(reason, successful_observations(state["messages"]))
    messages[-1] = answer.model_copy(
        update={
            "content": f"{answer.text.strip() or prompts.NO_ANSWER}\n\n{note}",
            "response_metadata": {**answer.response_metadata, **answered(honest)},
        }
    )
    return {**update, "messages": messages, "outcome": honest}


State = TypeVar("State")


def answers_checked(
    make_body: Callable[[State], Body[dict[str, Any]]],
) -> Callable[[State], Body[dict[str, Any]]]:
    """``make_body`` whose updates pass :func:`honest_update`."""

    def body(state: State) -> Body[dict[str, Any]]:
        update = yield from make_body(state)
        return honest_update(state, update)  # type: ignore[arg-type]

    return body
