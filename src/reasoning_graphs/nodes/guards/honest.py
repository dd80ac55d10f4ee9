"""An answer that is no answer, and the note an incomplete answer carries.

A weak model asked for an answer sometimes gives back what we wrote to it: the
no-answer text (``I could not finish this task.``) or a rewording of it, an
instruction (``The plan needed no tools: answer from what you know.``), one of
the runtime's notes (``Not run: the reviewer rejected this call. Reason: …``),
the text format's template (``<your answer for the user>``), a bare label
(``Final Answer:``), or nothing at all. Taken at its word, such a reply would
end the question as *answered*. Every step that calls the model passes its
update through :func:`honest_update` (in
:func:`~reasoning_graphs.nodes.guards.stop.model_node`), which then marks the outcome
incomplete, with the reason and a note quoting the evidence; the model's
message stays as the model wrote it, and the question ends there (the outcome
is ``concluded``: no closing call follows).

The reply is compared as a reader sees it
(:func:`~reasoning_graphs.nodes.grounding.plain_text.plain`: no zero-width characters,
look-alike letters folded, no case). It is no answer
when it is empty or labels alone, when all it says is that the task could not
be done, or when, leaving out a leading label or courtesy (``Sure.``), it says
nothing but what it copies from our texts (:mod:`~reasoning_graphs.nodes.grounding.copied`:
runs of their words, templates with their fields filled in, a word or two
changed). A reply with words of its own — ``Based on the observations, 395.`` —
is an answer, even when it quotes us.
The guards' texts and the tools' notes are read here; the rooms above (the
model-call path, the shared steps), a pattern's prompts module and the text
format declare theirs with :func:`own_texts` as they are imported, since
nothing here may import them. The text
format's worked examples are not ours in this sense: their answers are real
answers to their questions.

Examples:
    >>> no_answer_reason("Final Answer: I could not fin\u200bish this task.")
    'the model gave no answer'
    >>> no_answer_reason("Not run: the reviewer rejected this call. Reason: unsafe")
    "the model's reply repeated our own instructions instead of answering"
    >>> no_answer_reason("Based on the observations, 395.") is None
    True
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from langchain_core.messages import AIMessage

from reasoning_graphs.effects import Body
from reasoning_graphs.metadata import answered
from reasoning_graphs.nodes.grounding.copied import CJK_LETTERS, WORD, TextIndex
from reasoning_graphs.nodes.grounding.plain_text import plain
from reasoning_graphs.nodes.guards import advice, budget, loops
from reasoning_graphs.nodes.guards.untrusted import DATA_RULE
from reasoning_graphs.question import successful_observations
from reasoning_graphs.state import Outcome
from reasoning_graphs.tools import execute, output, policy, registry

INCOMPLETE_NOTE = "[Stopped before a confident answer: {reason}.{evidence}]"
EVIDENCE_LINE = " Evidence gathered: {items}."
NO_ANSWER = "I could not finish this task."
"""The note an incomplete answer ends with, its evidence line, and the reply of a run that
has no answer at all."""
NO_REPLY = "the model gave no answer"
ECHOED = "the model's reply repeated our own instructions instead of answering"

EVIDENCE_CHARS = 200
"""How much of each tool result an incomplete note quotes."""
SENTENCE_MARKS = (".", "!", "?", "…", "。", "！", "？")
"""Marks that already end a result, so the note's own period is not added after them."""

LABEL = re.compile(
    rf"[\W_]*(?:[^\W\d_{CJK_LETTERS}]+(?:[ \t]+[^\W\d_{CJK_LETTERS}]+){{0,3}}"
    rf"|[{CJK_LETTERS}]{{1,6}})[\W_]*?:"
)
"""A short leading label (in plain text): ``Final Answer:``, ``**Answer:**``, ``最终答案：``."""
COURTESY = re.compile(
    r"[\W_]*(?:sure|ok(?:ay)?|alright|certainly|of course|understood|noted|got it"
    r"|here it is|here you go|好的|当然|明白了?|收到)(?!\w)[\W_]*"
)
"""A leading word of courtesy, which says nothing of its own."""
THANKS = re.compile(r"(?:thanks|thank you|谢谢)[\W_]*$")
"""Closing thanks, which say nothing of their own."""
LABEL_ONLY = re.compile(
    r"(?:[\W_]|\b(?:final|answer|response|reply|result|output|thought|action|input|observation"
    r"|the|my|here|is)\b|最终|答案是|答案|回答|结果|思考|行动|输入|观察)*"
)
"""Words a reply made of labels alone is made of (``Answer: Answer:``, ``最终答案：``)."""
ANSWER_LABEL = re.compile(r"\b(?:answer|response|reply|result|output)\b|答案|回答|结果")
BARE_LABEL = re.compile(r"[\W_]*(?:final answer|最终答案)[\W_]*")
"""The answer label without its colon."""

_SORRY = r"(?:(?:i m |i am )?sorry|unfortunately|apologies|regrettably)(?: but)?"
_UNABLE = (
    r"(?:(?:was|were|am|m|are|re|have been|ve been) )?(?:not able|unable) to"
    r"|(?:wasn t|weren t|aren t|haven t been|have not been) able to"
    r"|failed to|did not manage to|didn t manage to"
)
_CANNOT = rf"(?:could not|couldn t|cannot|can not|can t|{_UNABLE})"
_DO = r"(?:finish|complete|answer|solve|do|accomplish|(?:find|give) (?:an|the) answer to)"
_WHAT = r"(?:(?:this|the|that|your) (?:task|question|request|problem|query)|it|that|this)"
GAVE_UP = re.compile(
    rf"(?:{_SORRY} )?(?:(?:(?:i|we) )?{_CANNOT} {_DO}(?: {_WHAT})?"
    r"|(?:i|we) (?:do not|don t) know(?: the answer)?|(?:i )?(?:have )?no answer"
    r"|(?:the )?task (?:is )?not (?:finished|completed|done)"
    r"|(?:i )?(?:could not|couldn t|cannot|can t) find (?:an|the|any) answer)(?: sorry)?"
)
"""An English reply saying only that the task could not be done (words joined by spaces)."""
GAVE_UP_ZH = re.compile(
    r"(?:很抱歉|非常抱歉|抱歉|对不起|不好意思)?(?:我们|我)?"
    r"(?:(?:无法|没能|未能|不能|没法|没办法|没有办法)(?:完成|回答|解答|解决|做完|处理)"
    r"|(?:回答不了|完成不了|答不上来|做不到|做不了))"
    r"(?:这个|此|该|这项|这一|本|您的|你的|这道)?(?:任务|问题|请求|题)?"
    r"|我?不知道(?:答案)?|(?:此|该)?任务未完成|没有答案"
)
"""A Chinese reply saying only that the task could not be done (characters joined)."""

_texts: list[str] = [
    INCOMPLETE_NOTE,
    INCOMPLETE_NOTE.format(reason="{reason}", evidence=EVIDENCE_LINE),
    NO_ANSWER,
    DATA_RULE,
    # what the runtime writes in place of a tool's result, and its advice
    loops.STOPPED_CALL,
    advice.NOTE,
    advice.CHANGE_STRATEGY,
    advice.REUSED,
    advice.SAME_RESULT,
    registry.UNKNOWN_TOOL,
    registry.INVALID_ARGUMENTS,
    execute.TOOL_FAILED,
    execute.TOOL_TIMED_OUT,
    policy.DENIED,
    policy.MISSING_ARGUMENTS,
    output.NOT_APPLIED,
    # why a question stopped, as its note gives it
    loops.REPEATED_FAILURE,
    loops.STALE_ROUNDS,
    loops.REPEATED_ONLY,
    budget.MODEL_CALL_LIMIT,
    budget.EARLIER_STEP_LIMIT,
    budget.TOKEN_LIMIT,
    budget.TOOL_LIMIT,
    budget.TIME_LIMIT,
]
_index = TextIndex()


def own_texts(*texts: str) -> None:
    """Declare texts of ours that a model reads (instructions, templates with their
    fields, notes), so that a reply made of them is not taken for an answer."""
    _texts.extend(texts)


def _our_texts() -> TextIndex:
    """The index of our texts, with those declared since it was last read."""
    for text in _texts[_index.size :]:
        _index.add(text)
    return _index


def no_answer_reason(answer: str) -> str | None:
    """Why ``answer`` is no answer (empty, labels only, giving up, or our own words),
    or ``None`` for a real one."""
    text = plain(answer)
    found = list(WORD.finditer(text))
    if not found or _labels_only(text):
        return NO_REPLY
    start, end = _framed(text)
    said = [word.group() for word in found if start <= word.start() and word.end() <= end]
    if GAVE_UP.fullmatch(" ".join(said)) or GAVE_UP_ZH.fullmatch("".join(said)):
        return NO_REPLY
    return ECHOED if said and _our_texts().copies(text, start, end) else None


def _labels_only(text: str) -> bool:
    """Whether ``text`` (plain) is an answer's label alone, or labels, with no answer."""
    labelled = ":" in text and ANSWER_LABEL.search(text) is not None
    return bool(LABEL_ONLY.fullmatch(text)) and (labelled or bool(BARE_LABEL.fullmatch(text)))


def _framed(text: str) -> tuple[int, int]:
    """Where a reply's own say starts and ends: after leading labels and courtesy,
    before closing thanks."""
    start = 0
    while match := LABEL.match(text, start) or COURTESY.match(text, start):
        if match.end() == start:
            break
        start = match.end()
    thanks = THANKS.search(text, start)
    return start, thanks.start() if thanks else len(text)


def incomplete_note(reason: str, evidence: Sequence[tuple[str, str]]) -> str:
    """The note an incomplete answer ends with: why it stopped, and what the tools returned
    as (call, result) pairs, each result cut to :data:`EVIDENCE_CHARS`."""
    items = "; ".join(f"{done} returned {_clip(result)}" for done, result in evidence)
    found = _one_mark(EVIDENCE_LINE.format(items=items), items) if items else ""
    why = reason[:-1] if reason.endswith(".") else reason  # the template closes it
    return INCOMPLETE_NOTE.format(reason=why, evidence=found)


def _one_mark(sentence: str, filled: str) -> str:
    """``sentence`` without the period its template closes ``filled`` with when ``filled``
    ends with a mark of its own (``hi.txt.``, never ``hi.txt..``)."""
    if filled.endswith(SENTENCE_MARKS) and sentence.endswith(filled + "."):
        return sentence[:-1]
    return sentence


def _clip(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= EVIDENCE_CHARS else text[: EVIDENCE_CHARS - 1] + "…"


def honest_update(state: Mapping[str, Any], update: Mapping[str, Any]) -> Mapping[str, Any]:
    """``update`` as it is, unless it answers the question with no answer.

    Then its outcome is incomplete and ``concluded``, with the reason and a note
    that quotes the question's tool results; the answer's message keeps what the
    model wrote, even nothing, and only its metadata gains the outcome.
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
    note = incomplete_note(reason, successful_observations(state["messages"]))
    honest: Outcome = {
        "status": "incomplete",
        "reason": reason,
        "concluded": True,
        "no_answer": True,
        "note": note,
    }
    metadata = {**answer.response_metadata, **answered(honest)}
    messages[-1] = answer.model_copy(update={"response_metadata": metadata})
    return {**update, "messages": messages, "outcome": honest}


State = TypeVar("State", bound=Mapping[str, Any])


def answers_checked(
    make_body: Callable[[State], Body[Mapping[str, Any]]],
) -> Callable[[State], Body[Mapping[str, Any]]]:
    """``make_body`` whose updates pass :func:`honest_update`."""

    def body(state: State) -> Body[Mapping[str, Any]]:
        update = yield from make_body(state)
        return honest_update(state, update)

    return body
