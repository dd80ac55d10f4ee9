"""Keeping a prompt within the model's context window.

Only the prompt is fitted, never the state: the full transcript stays in the
checkpoint, and every model call starts from it again. The strategies
(``run.limits.context_strategy``):

- ``window``: the system messages, the question (the latest human message) and
  the last ``keep_messages`` messages;
- ``summary``: the same, with the messages left out summarised by one model call
  (the goal, tool results and progress);
- ``protective``: the system prompt, the question and the last 3 steps verbatim;
  the middle is summarised, each message clipped first, once it holds more than
  6 messages;
- ``hybrid`` (the default): nothing while the estimated prompt is within
  ``context_threshold`` of ``context_window`` (the run's, else the one the model
  declares); past it ``protective``, then ``window``, then fewer steps and
  clipped results, until it fits. With no window known it sends the prompt as it is.

A summary is made once and reused: it covers a stated range of the messages a
prompt leaves out (:class:`~reasoning_graphs.state.ContextSummary`), travels on
the thought event of the call it served, and so lives in the state. A later
prompt whose left-out messages begin with that range shows the summary in their
place; the messages left out after it are shown as they are until they hold
:data:`SUMMARY_EVERY` steps, and then one summary call folds them into it. So a
long run makes at most one summary call per :data:`SUMMARY_EVERY` rounds, and a
resumed one makes none for what it already summarised.

:func:`emergency_fit` is what a provider's "request too large" error gets: the
last 2 steps verbatim and the rest summarised. Whatever the strategy, a step is
never split (a tool call stays with its results), and the question, system
messages and calls a person decided (an observation whose decision is not
``auto``) are always kept.

Examples:
    >>> from langchain_core.messages import AIMessage, HumanMessage, SystemMessage, ToolMessage
    >>> call = AIMessage("", tool_calls=[{"name": "f", "args": {}, "id": "c1"}])
    >>> result = ToolMessage("1", tool_call_id="c1")
    >>> prompt = [SystemMessage("sys"), HumanMessage("q"), call, result,
    ...           AIMessage("thinking"), AIMessage("more")]
    >>> [m.text for m in sliding_window(prompt, keep=2)]
    ['sys', 'q', 'thinking', 'more']
    >>> [type(m).__name__ for m in sliding_window(prompt, keep=4)]
    ['SystemMessage', 'HumanMessage', 'AIMessage', 'ToolMessage', 'AIMessage', 'AIMessage']
"""

from __future__ import annotations

import hashlib
import itertools
import operator
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import cast

from langchain_core.messages import (
    AIMessage,
    AnyMessage,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
)

from reasoning_graphs.context import Limits
from reasoning_graphs.effects import Body
from reasoning_graphs.errors import status_code_of
from reasoning_graphs.history import Fold, folded
from reasoning_graphs.metadata import decision_of
from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.model.tokens import estimate_tokens
from reasoning_graphs.question import request_index
from reasoning_graphs.state import ContextSummary, ThoughtEvent, TrajectoryEvent

PROTECTED_STEPS = 3
"""Steps the protective strategy keeps verbatim."""
EMERGENCY_STEPS = 2
"""Steps an emergency summary keeps verbatim."""
SUMMARY_MIN_MESSAGES = 6
"""The protective strategy summarises the middle only when it holds more messages than this."""
PROTECTIVE_CLIP_CHARS = 300
"""Length each middle message is clipped to before the protective summary."""
SUMMARY_CLIP_CHARS = 2000
"""Length each message is clipped to before the plain summary."""
SHORTEST_CLIP_CHARS = 80
"""The least of a message the last resort of ``hybrid`` keeps."""
SUMMARY_EVERY = 4
"""Steps left out after the summary in force before a summary call folds them into it:
a run makes at most one summary call per this many rounds."""

SUMMARY_INSTRUCTIONS = (
    "You compress an agent's working notes. Summarise the transcript below in a few "
    "short lines: the goal, every tool result that matters (names, numbers, dates, "
    "file names exactly), and what is done and what is left. When a summary so far "
    "comes first, fold the new steps into it. Write only the summary."
)
SUMMARY_SO_FAR = "Summary so far:\n{summary}\n\nNew steps:\n{transcript}"
SUMMARY_HEADING = "Summary of earlier steps (the full record is kept):"
SUMMARY_MARK = "context_summary"
"""Set in a summary message's ``response_metadata``: every strategy keeps it."""
CLIPPED = " …[clipped]"

OVERFLOW_NAMES = frozenset({"ContextOverflowError", "ContextWindowExceededError"})
OVERFLOW_PHRASES = (
    "context_length_exceeded",
    "maximum context length",
    "context window",
    "context size",
    "exceed_context_size",
    "prompt is too long",
    "input is too long",
    "too many tokens",
    "request too large",
    "payload too large",
)
"""How providers word a refusal of a prompt too large (OpenAI, llama.cpp, proxies)."""

Summarise = Callable[[list[BaseMessage]], Body[tuple[str, ThoughtEvent]]]
"""One model call on a summary prompt: the summary text and the call's thought event.

Where a strategy takes ``Summarise | None``, ``None`` means no model call may be
spent (the question's budget is): what would be summarised is left out instead."""


@dataclass
class Fitted:
    """A fitted prompt, the thought events of the summaries made for it, and the summary
    made, if one was, for later prompts to reuse."""

    prompt: list[BaseMessage]
    events: list[ThoughtEvent] = field(default_factory=list)
    summary: ContextSummary | None = None


def fit_prompt(
    prompt: Sequence[BaseMessage],
    limits: Limits,
    summarise: Summarise | None,
    question: str | None = None,
    conversation: Sequence[BaseMessage] | None = None,
    earlier: ContextSummary | None = None,
) -> Body[Fitted]:
    """``prompt`` fitted by the run's strategy (unchanged for ``none``).

    ``question``: the text of the question being worked on, which every strategy
    keeps (``None``: the prompt's latest human message). ``conversation``: the
    state's messages, which ``window`` reads from running folds when the prompt
    ends with them. ``earlier``: the summary in force (:func:`summary_in_force`).
    """
    messages = list(prompt)
    strategy = limits.context_strategy
    if strategy == "window":
        return Fitted(sliding_window(messages, limits.keep_messages, question, conversation))
    budget = prompt_limit(limits)
    if strategy == "summary":
        keep = limits.keep_messages
        return (yield from summarised(messages, keep, summarise, budget, question, earlier))
    if strategy == "protective":
        return (yield from protected(messages, summarise, budget, question, earlier))
    if strategy == "hybrid":
        return (yield from hybrid(messages, limits, summarise, question, earlier))
    return Fitted(messages)


def _latest_summary(latest: ContextSummary | None, event: TrajectoryEvent) -> ContextSummary | None:
    if event["kind"] == "thought" and "context_summary" in event:
        return event["context_summary"]
    return latest


SUMMARIES = Fold("context summaries", lambda: None, _latest_summary)


def summary_in_force(trajectory: Sequence[TrajectoryEvent] | None) -> ContextSummary | None:
    """The latest summary a model call of the thread made to fit its prompt (read from a
    running fold of the trajectory)."""
    return folded(trajectory, SUMMARIES)


def is_context_overflow(error: BaseException) -> bool:
    """Whether a provider refused the request as too large for the model's context.

    Recognised: HTTP 413; LangChain's ``ContextOverflowError`` (langchain-openai
    raises it for OpenAI's ``context_length_exceeded``); and the message texts of
    OpenAI-compatible servers, llama.cpp's server (``exceed_context_size_error``)
    and llama-cpp-python ("Requested tokens (…) exceed context window").
    """
    if any(cls.__name__ in OVERFLOW_NAMES for cls in type(error).__mro__):
        return True
    if status_code_of(error) == 413:
        return True
    text = f"{error} {getattr(error, 'code', '') or ''} {getattr(error, 'body', '') or ''}".lower()
    return any(phrase in text for phrase in OVERFLOW_PHRASES)


def prompt_limit(limits: Limits) -> int | None:
    """The estimated tokens a prompt may reach before ``hybrid`` compresses it."""
    if limits.context_window is None:
        return None
    return int(limits.context_window * limits.context_threshold)


def steps(messages: Sequence[BaseMessage]) -> list[list[int]]:
    """Indexes of ``messages`` grouped in steps: a message with the tool results after it.

    Cutting only between steps keeps every tool call with its results, which
    providers require.
    """
    grouped: list[list[int]] = []
    for index, message in enumerate(messages):
        if isinstance(message, ToolMessage) and grouped:
            grouped[-1].append(index)
        else:
            grouped.append([index])
    return grouped


def sliding_window(
    messages: Sequence[BaseMessage],
    keep: int,
    question: str | None = None,
    conversation: Sequence[BaseMessage] | None = None,
) -> list[BaseMessage]:
    """The system messages, the question, decided calls and the last ``keep`` messages.

    ``conversation``: the state's messages, when ``messages`` ends with them; their
    layout is then read from a running fold (:class:`Layout`) instead of scanned.
    """
    layout = _layout_of(messages, conversation)
    if layout is None:
        recent = _recent_steps(messages, keep)
        return [messages[i] for i in sorted(_always_kept(messages, question) | recent)]
    head, kept = layout
    latest_first = itertools.chain(
        ([head + i for i in step] for step in reversed(kept.steps)),
        reversed(steps(messages[:head])),
    )
    chosen: set[int] = set()
    for step in latest_first:
        if chosen and len(chosen) + len(step) > keep:
            break
        chosen.update(step)
    always = _always_kept(messages[:head], None) - {_question_index(messages[:head], None)}
    always |= {head + i for i in kept.system}
    always |= {head + i for number in kept.decided for i in kept.steps[number]}
    asked = _question_index(messages, question, head=head, conversation=conversation)
    if asked is not None:
        always.add(asked)
    return [messages[i] for i in sorted(always | chosen)]


class Layout:
    """A conversation's steps (see :func:`steps`), its system messages and the steps that
    hold a call a person decided, kept as the conversation grows."""

    def __init__(self) -> None:
        self.count = 0
        self.steps: list[list[int]] = []
        self.system: list[int] = []
        self.decided: list[int] = []
        """Numbers of the steps (in :attr:`steps`) with a decided call."""


def _laid_out(layout: Layout, message: BaseMessage) -> Layout:
    index, layout.count = layout.count, layout.count + 1
    if isinstance(message, ToolMessage) and layout.steps:
        layout.steps[-1].append(index)
        step = len(layout.steps) - 1
        if _is_decided(message) and (not layout.decided or layout.decided[-1] != step):
            layout.decided.append(step)
        return layout
    layout.steps.append([index])
    if isinstance(message, SystemMessage):
        layout.system.append(index)
    return layout


LAYOUT = Fold("layout", Layout, _laid_out)


def _layout_of(
    messages: Sequence[BaseMessage], conversation: Sequence[BaseMessage] | None
) -> tuple[int, Layout] | None:
    """Where ``conversation`` starts in ``messages`` and its layout, when ``messages`` ends
    with it and its first message opens a step (so its steps are the prompt's own)."""
    if not conversation or isinstance(conversation[0], ToolMessage):
        return None
    head = len(messages) - len(conversation)
    if head < 0 or not all(map(operator.is_, messages[head:], conversation)):
        return None
    return head, folded(conversation, LAYOUT)


def summarised(
    messages: Sequence[BaseMessage],
    keep: int,
    summarise: Summarise | None,
    budget: int | None = None,
    question: str | None = None,
    earlier: ContextSummary | None = None,
) -> Body[Fitted]:
    """The window of :func:`sliding_window`, with what it leaves out summarised.

    ``budget``: the estimated tokens the summary request may reach (``None``: any).
    ``earlier``: the summary in force, reused for what it covers.
    """
    kept = _always_kept(messages, question) | _recent_steps(messages, keep)
    clip = SUMMARY_CLIP_CHARS
    return (yield from _summarise_rest(messages, kept, clip, summarise, budget, question, earlier))


def protected(
    messages: Sequence[BaseMessage],
    summarise: Summarise | None,
    budget: int | None = None,
    question: str | None = None,
    earlier: ContextSummary | None = None,
) -> Body[Fitted]:
    """System prompt, question and the last 3 steps verbatim; a middle of more than
    6 messages summarised, each clipped first (``budget`` and ``earlier`` as in
    :func:`summarised`)."""
    kept = _always_kept(messages, question) | _last_steps(messages, PROTECTED_STEPS, question)
    if len(messages) - len(kept) <= SUMMARY_MIN_MESSAGES:
        return Fitted(list(messages))
    clip = PROTECTIVE_CLIP_CHARS
    return (yield from _summarise_rest(messages, kept, clip, summarise, budget, question, earlier))


def emergency_fit(
    messages: Sequence[BaseMessage],
    summarise: Summarise | None,
    budget: int | None = None,
    question: str | None = None,
    earlier: ContextSummary | None = None,
) -> Body[Fitted]:
    """After a provider refused the prompt as too large: the last 2 steps verbatim, the
    rest summarised at once (whatever :data:`SUMMARY_EVERY` says), and long messages
    clipped when there was nothing to summarise."""
    kept = _always_kept(messages, question) | _last_steps(messages, EMERGENCY_STEPS, question)
    if len(kept) < len(messages):
        clip = PROTECTIVE_CLIP_CHARS
        return (
            yield from _summarise_rest(
                messages, kept, clip, summarise, budget, question, earlier, fold_every=1
            )
        )
    return Fitted(_clip_unprotected(messages, SUMMARY_CLIP_CHARS, question))


def hybrid(
    messages: Sequence[BaseMessage],
    limits: Limits,
    summarise: Summarise | None,
    question: str | None = None,
    earlier: ContextSummary | None = None,
) -> Body[Fitted]:
    """Each strategy in turn, from the gentlest, while the prompt is past the threshold.

    Without a known ``context_window`` there is no threshold: the prompt is sent
    as it is (a provider's refusal still gets :func:`emergency_fit`).
    """
    limit = prompt_limit(limits)
    if limit is None or estimate_tokens(messages) <= limit:
        return Fitted(list(messages))
    fitted = yield from protected(messages, summarise, limit, question, earlier)
    if estimate_tokens(fitted.prompt) > limit:
        fitted.prompt = sliding_window(fitted.prompt, limits.keep_messages, question)
    if estimate_tokens(fitted.prompt) > limit:
        fitted.prompt = _shrunk(fitted.prompt, limit, question)
    return fitted


def _shrunk(messages: list[BaseMessage], limit: int, question: str | None) -> list[BaseMessage]:
    """The last resort: fewer recent steps, then shorter messages, until the prompt fits."""
    always = _always_kept(messages, question)
    for count in range(len(steps(messages)) - 1, 0, -1):
        fewer = [messages[i] for i in sorted(always | _last_steps(messages, count, question))]
        if estimate_tokens(fewer) <= limit:
            return fewer
    messages = [messages[i] for i in sorted(always | _last_steps(messages, 1, question))]
    clip = SUMMARY_CLIP_CHARS
    clipped = _clip_unprotected(messages, clip, question)
    while estimate_tokens(clipped) > limit and clip > SHORTEST_CLIP_CHARS:
        clip //= 2
        clipped = _clip_unprotected(messages, clip, question)
    return clipped


def _always_kept(messages: Sequence[BaseMessage], question: str | None) -> set[int]:
    """System messages, the question, a summary already made, and every step that holds a
    call a person decided."""
    asked = _question_index(messages, question)
    kept = {
        i
        for i, m in enumerate(messages)
        if isinstance(m, SystemMessage) or i == asked or m.response_metadata.get(SUMMARY_MARK)
    }
    for step in steps(messages):
        if any(_is_decided(messages[i]) for i in step):
            kept.update(step)
    return kept


def _question_index(
    messages: Sequence[BaseMessage],
    question: str | None,
    *,
    head: int = 0,
    conversation: Sequence[BaseMessage] | None = None,
) -> int | None:
    """Where the question is in the prompt: the latest human message with its text, else
    the latest human message (a prompt may add instructions, or observations, as human
    messages after it). ``conversation`` starts at ``head``: its latest human message,
    from the running fold, is tried first."""
    if conversation is not None:
        latest = request_index(cast("Sequence[AnyMessage]", conversation))
        if latest is not None and (question is None or conversation[latest].text == question):
            return head + latest
    if question is not None:
        for index in range(len(messages) - 1, -1, -1):
            message = messages[index]
            if isinstance(message, HumanMessage) and message.text == question:
                return index
    return request_index(cast("Sequence[AnyMessage]", messages))


def _is_decided(message: BaseMessage) -> bool:
    return isinstance(message, ToolMessage) and decision_of(message) != "auto"


def _recent_steps(messages: Sequence[BaseMessage], keep: int) -> set[int]:
    """The whole steps that fit in the last ``keep`` messages (at least the last step)."""
    chosen: set[int] = set()
    for step in reversed(steps(messages)):
        if chosen and len(chosen) + len(step) > keep:
            break
        chosen.update(step)
    return chosen


def _last_steps(messages: Sequence[BaseMessage], count: int, question: str | None) -> set[int]:
    """The last ``count`` steps after the question (the question itself is kept anyway)."""
    asked = _question_index(messages, question)
    after = [s for s in steps(messages) if asked is None or s[0] > asked]
    return {i for step in after[-count:] for i in step}


def _summarise_rest(
    messages: Sequence[BaseMessage],
    kept: set[int],
    clip: int,
    summarise: Summarise | None,
    budget: int | None,
    question: str | None,
    earlier: ContextSummary | None,
    *,
    fold_every: int = SUMMARY_EVERY,
) -> Body[Fitted]:
    """``messages`` with those not ``kept`` left out and summarised in one message, placed
    where they began (after the question when some of them follow it).

    Where the left-out messages begin with those ``earlier`` covers, its text stands
    for them; the ones after are folded into it by one summary call once they hold
    ``fold_every`` steps, and shown as they are until then. Without ``summarise`` (no
    call may be spent) those are left out instead.
    """
    dropped = [i for i in range(len(messages)) if i not in kept]
    if not dropped:
        return Fitted(list(messages))
    covered = _covered(messages, dropped, earlier)
    text = earlier["text"] if earlier is not None and covered else None
    new = dropped[covered:]
    if not new or summarise is None:
        return Fitted(_with_summary(messages, kept, text, dropped, question))
    if covered and _step_count(messages, new) < fold_every:
        return Fitted(_with_summary(messages, kept | set(new), text, dropped, question))
    request = _summary_prompt([messages[i] for i in new], clip, budget, text)
    text, event = yield from summarise(request)
    summary = ContextSummary(
        text=text,
        covers=len(dropped),
        first=fingerprint(messages[dropped[0]]),
        last=fingerprint(messages[dropped[-1]]),
    )
    return Fitted(_with_summary(messages, kept, text, dropped, question), [event], summary)


def _covered(
    messages: Sequence[BaseMessage], dropped: list[int], earlier: ContextSummary | None
) -> int:
    """How many of the ``dropped`` messages, from the first, ``earlier`` covers (0: none)."""
    if earlier is None or not 0 < earlier["covers"] <= len(dropped):
        return 0
    first, last = messages[dropped[0]], messages[dropped[earlier["covers"] - 1]]
    if fingerprint(first) != earlier["first"] or fingerprint(last) != earlier["last"]:
        return 0
    return earlier["covers"]


def _step_count(messages: Sequence[BaseMessage], indexes: list[int]) -> int:
    """How many steps begin among ``indexes`` (a step begins with any message but a result)."""
    return sum(not isinstance(messages[i], ToolMessage) for i in indexes)


def _with_summary(
    messages: Sequence[BaseMessage],
    shown: set[int],
    text: str | None,
    dropped: list[int],
    question: str | None,
) -> list[BaseMessage]:
    """The ``shown`` messages, with a summary of ``text`` where the ``dropped`` began."""
    if text is None:
        return [m for i, m in enumerate(messages) if i in shown]
    summary = AIMessage(f"{SUMMARY_HEADING}\n{text}", response_metadata={SUMMARY_MARK: True})
    asked = _question_index(messages, question)
    place = dropped[0]
    if asked is not None and dropped[-1] > asked:
        place = max(place, asked + 1)
    fitted = [m for i, m in enumerate(messages) if i in shown and i < place]
    fitted.append(summary)
    fitted.extend(m for i, m in enumerate(messages) if i in shown and i >= place)
    return fitted


def fingerprint(message: BaseMessage) -> str:
    """A short digest of what a message says and which calls it makes or answers, by which
    a later prompt finds the messages a summary covers."""
    calls = message.tool_calls if isinstance(message, AIMessage) else []
    answers = message.tool_call_id if isinstance(message, ToolMessage) else ""
    ids = ",".join(call["id"] or "" for call in calls)
    said = f"{message.type}\0{message.text}\0{ids}\0{answers}"
    return hashlib.blake2b(said.encode(), digest_size=8).hexdigest()


def _summary_prompt(
    messages: Sequence[BaseMessage], clip: int, budget: int | None, so_far: str | None = None
) -> list[BaseMessage]:
    """The request for a summary of ``messages``, each clipped to ``clip`` characters, folded
    into the summary ``so_far`` when there is one.

    Past ``budget`` the messages are clipped shorter, then the oldest left out, so the
    summary call itself stays within the window.
    """
    entries = [f"{_role(m)}: {_described(m)}" for m in messages]
    while True:
        transcript = "\n".join(_clipped(entry, clip) for entry in entries)
        if so_far is not None:
            transcript = SUMMARY_SO_FAR.format(summary=so_far, transcript=transcript)
        request = [SystemMessage(SUMMARY_INSTRUCTIONS), HumanMessage(transcript)]
        if budget is None or estimate_tokens(request) <= budget or len(entries) == 1:
            return request
        if clip > SHORTEST_CLIP_CHARS:
            clip = max(SHORTEST_CLIP_CHARS, clip // 2)
        else:
            entries = entries[max(1, len(entries) // 4) :]


def _role(message: BaseMessage) -> str:
    if isinstance(message, ToolMessage):
        return f"result of {message.name or message.tool_call_id}"
    return {"human": "user", "ai": "assistant"}.get(message.type, message.type)


def _described(message: BaseMessage) -> str:
    """The message's text, with the calls it makes."""
    calls = message.tool_calls if isinstance(message, AIMessage) else []
    named = "; ".join(f"calls {c['name']}({c['args']})" for c in calls)
    return " ".join(part for part in (message.text, named) if part)


def _clipped(text: str, limit: int) -> str:
    return text if len(text) <= limit else text[:limit] + CLIPPED


def _clip_unprotected(
    messages: Sequence[BaseMessage], clip: int, question: str | None
) -> list[BaseMessage]:
    """Every message that is not always kept, its text cut to ``clip`` characters."""
    kept = _always_kept(messages, question)
    return [
        m if i in kept or len(m.text) <= clip else _with_text(m, _clipped(m.text, clip))
        for i, m in enumerate(messages)
    ]


def _with_text(message: BaseMessage, text: str) -> BaseMessage:
    return message.model_copy(update={"content": text})


own_texts(SUMMARY_HEADING, SUMMARY_INSTRUCTIONS)
