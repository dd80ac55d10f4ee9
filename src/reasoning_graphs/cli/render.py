"""How a run looks at the terminal: Thought / Action / Observation lines, or JSON lines.

A question gets one ``Answer:`` line, printed once the run has finished: the
run's final answer (:meth:`Printer.answer`). A run may write other replies
before it — a reply cut at the length limit and continued, a joiner asking for
another round, a closing call after a stop — so a reply is held until the next
line shows it was not the answer, and then printed as a step: ``Draft:``, or
the name of the step that wrote it (``Join:``).
The answer's tokens are ``token`` events in ``--json`` output and the trace;
the status line counts them while the model writes.

A proposed tool call is shown once its fate is known, as what happened to it:
``Action:`` and ``Observation:`` only for a call that ran; ``Reused:`` for a
pure tool's call answered from an identical earlier call; ``Rejected:``,
``Rejected before:`` (answered from a person's earlier rejection, not asked
again), ``Responded:`` (a person wrote the observation) and ``Not run:`` (a
limit, a block rule, arguments that cannot run) for the others. A call waiting
for a person shows as the approval prompt.

Lines show the model's text as a person reads it (:mod:`~reasoning_graphs.cli.display`):
HTML entities decoded, quotes of thousands of characters cut. Arguments a
tool receives and results it returns are shown as they are; ``--json`` and
the trace keep every text whole.

Quiet output keeps what a person waits for: progress lines (``Ran calculator.``
once a call ran, a retry's ``retrying in 2 s``), approvals, notes and the final
answer. A trace file receives every event, shown or not, as one JSON object per line.

A node or tool reports progress through LangGraph's stream writer, e.g.
``get_stream_writer()({"event": "retry", "text": "retrying in 2 s"})``: the
run streams it as a ``custom`` chunk and the printer shows it as a progress line.
A report that counts how far the run has come (it has a ``done`` field, as
:func:`~reasoning_graphs.nodes.steps.progress.send_progress` writes) goes to the
status line instead, and to ``--json`` output and the trace as an event.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, TextIO, TypeGuard

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage

from reasoning_graphs.cli.display import decoded, shortened
from reasoning_graphs.cli.status_line import StatusLine
from reasoning_graphs.graphs import PATTERNS
from reasoning_graphs.memory import lesson_text
from reasoning_graphs.metadata import (
    EDITED_CALL,
    decision_of,
    format_error_of,
    mark_of,
    outcome_of,
    rejected_before,
    reused_from,
)
from reasoning_graphs.nodes.steps.prompts import CANNOT_RUN_NOTE
from reasoning_graphs.nodes.steps.reflect import REFLECTION
from reasoning_graphs.nodes.steps.typed_step import typed_step_of
from reasoning_graphs.question import describe_call
from reasoning_graphs.state import (
    EXECUTED,
    CheckedClaim,
    Claim,
    GroundingReport,
    Outcome,
    Verification,
)
from reasoning_graphs.tools.output import content_text

PLAN_NODES = frozenset({"plan", "replan"})
"""The nodes whose ``plan`` update is a plan the model wrote (a step's update only moves
the plan on)."""
QUIET_EVENTS = frozenset(
    {
        "action",
        "approval",
        "decision",
        "question",
        "reply",
        "answer",
        "typed_answer",
        "grounding",
        "verification",
        "note",
    }
)
"""What quiet output shows: progress, what a person must answer, the answer and its report."""
PROGRESS = "progress"
"""The event of a progress report that names no event of its own."""
NOT_RUN_EVENTS: dict[str, str] = {
    "rejected": "rejected",
    "responded": "responded",
    "skipped": "not_run",
    "blocked": "not_run",
    "invalid": "not_run",
}
"""The event of a call settled without running, by its decision (``reused`` has its own)."""
REUSED_LINE = (
    "{call} → {result} (not run again: {tool} is pure; the identical earlier call's result)"
)
NOT_RUN_LINE = "{call} → {text}"
VERBATIM_EVENTS = frozenset(
    {
        "action",
        "approval",
        "observation",
        "question",
        "reply",
        "typed_answer",
        "reused",
        "rejected",
        "rejected_before",
        "responded",
        "not_run",
    }
)
"""Lines of what a tool receives or returns, or of what a person is asked or typed: shown
as they are, entities and all."""
WHOLE_EVENTS = frozenset(
    {"answer", "draft", "thought", "reflection", "result", "approval", "question", "typed_answer"}
)
"""Lines that are the model's own text, or what a person decides on: never cut."""
UNLABELLED_EVENTS = frozenset({"plan_problem", "level"})
"""Lines whose text says what they are (``[This plan cannot run: …]``)."""
SEARCH_LEVEL = "tot_level"
"""The trajectory event of one level of a breadth-first search over thoughts."""
LEVEL_LINE = "Level {level} ({calls} model calls): kept {kept}"
NOTHING_KEPT = "nothing"
BACKTRACKED = ", going back to a thought held in reserve"
NO_GROUNDING = "No grounding report for this answer."
EMPTY_ANSWER = "(the model's reply was empty)"
NO_ANSWER = "(none: the model's reply gave back our own words; it is kept in the thread)"
GROUNDING_SUMMARY = "{supported} of {total} claims backed by an observation"
VERIFIED_SUMMARY = "{backed} of {total} claims backed by a quoted observation"


def answer_nodes(pattern: str) -> frozenset[str]:
    """The top-level nodes of ``pattern`` whose model text may be the answer as it is
    written (its record's ``answer_nodes``; none for a graph of the user's): their tokens
    are ``token`` events.

    Other model calls stream text that is not the answer: plans, joins, judgements and
    reflections are structured output; ``react_text`` writes its Thought/Action format;
    ``cot`` reasons before it answers (and samples several chains at once); Reflexion's
    attempts are judged before one becomes the answer; plan steps are results.
    """
    record = PATTERNS.get(pattern)
    return record.answer_nodes if record is not None else frozenset()


@dataclass
class _Held:
    """A line not printed yet, in case the answer that follows says the same.

    A model's reply (``traced`` false) joins the trace when it is printed: a reply that
    turns out to be the answer is traced once, as the answer. A step's result is traced
    when it arrives, since the answer that repeats it is another step's.
    """

    event: str
    text: str
    fields: Mapping[str, Any] = field(default_factory=dict)
    traced: bool = False


class Printer:
    """Prints graph updates as they stream in, and the run's answer once it has finished."""

    def __init__(
        self,
        *,
        as_json: bool,
        out: TextIO | None = None,
        answer_nodes: Collection[str] = (),
        quiet: bool = False,
        trace: TextIO | None = None,
        trace_fields: Mapping[str, Any] | None = None,
        status: StatusLine | None = None,
    ) -> None:
        """Print to ``out`` (default stdout); ``trace`` gets every event as a JSON line.

        ``trace_fields`` (such as the thread id) are added to each trace line. A
        ``status`` line is wiped before each print.
        """
        self.as_json = as_json
        self.out = out or sys.stdout
        self.answer_nodes = frozenset(answer_nodes)
        self.quiet = quiet
        self.trace = trace
        self.trace_fields = dict(trace_fields or {})
        self._held: _Held | None = None
        self.status = status
        self._proposed: dict[str, Mapping[str, Any]] = {}  # call id → the call, until settled

    def emit(self, event: str, text: str, **fields: Any) -> None:
        """Trace the event, and print it unless quiet output leaves it out."""
        self._emit(event, text, fields, progress=False)

    def _emit(self, event: str, text: str, fields: Mapping[str, Any], *, progress: bool) -> None:
        self._record(event, text, fields)
        if self.quiet and not progress and event not in QUIET_EVENTS:
            return
        self.release()
        if event == "result" and not self.as_json:
            # shown once the next line shows it is not also the answer (Reflexion's last trial)
            self._held = _Held(event, text, fields, traced=True)
            return
        self._print(event, text, fields, progress=progress)

    def _hold(self, event: str, text: str, **fields: Any) -> None:
        """Keep a model's reply back until the next line: it may be the run's answer.

        A held line that says the same (the step result a Reflexion answer repeats) is
        replaced, so that the text is shown once.
        """
        if self._held is None or self._held.text != text:
            self.release()
        self._held = _Held(event, text, fields)

    def release(self) -> None:
        """Print a line still held back (see :meth:`_hold`): it was not the answer."""
        held, self._held = self._held, None
        if held is None:
            return
        if held.traced:
            self._print(held.event, held.text, held.fields, progress=False)
        else:
            self._emit(held.event, held.text, held.fields, progress=False)

    def answer(self, final: AIMessage | None, outcome: Outcome, typed: Any = None) -> None:
        """Print the run's final answer, once, with the note on why it is incomplete.

        ``final`` is the question's last model message (``None``: the run wrote none)
        and ``outcome`` the run's, completed by what the message says of it (its note);
        a reply or result held back that says the same is not printed again. ``typed``,
        the answer in the run's response format as JSON data, is the answer event's
        ``structured_response`` field in ``--json`` output and a line of JSON otherwise.
        """
        text = final.text.strip() if final is not None else ""
        if self._held is not None and self._held.text == text:
            self._held = None
        written: Mapping[str, Any] = (outcome_of(final) if final is not None else None) or {}
        shown = {**written, **outcome}
        extra: dict[str, Any] = {} if typed is None else {"structured_response": typed}
        if shown.get("no_answer") and text:  # never our own words presented as the answer
            text, extra["reply"] = NO_ANSWER, text
        self.emit("answer", text, outcome=shown, **extra)
        if typed is not None and not self.as_json:
            self.emit("typed_answer", json.dumps(typed, ensure_ascii=False))
        note = shown.get("note")
        if note and note != text:  # why it is incomplete, shown beside the answer
            self.notice(note)

    def _print(self, event: str, text: str, fields: Mapping[str, Any], *, progress: bool) -> None:
        self._wipe_status()
        if self.as_json:
            print(json.dumps({"event": event, "text": text, **fields}, default=str), file=self.out)
        elif progress:
            print(_indented(text), file=self.out)
        elif self.quiet and event == "action":
            print(f"Ran {fields.get('tool') or text}.", file=self.out)
        else:
            if event == "answer" and not text:
                text = EMPTY_ANSWER  # never a bare label where an answer belongs
            print(_line(event, text), file=self.out)
        self.out.flush()

    def _record(self, event: str, text: str, fields: Mapping[str, Any]) -> None:
        """One JSON line in the trace file, with the time it was rendered."""
        if self.trace is None:
            return
        line = {"time": time.time(), **self.trace_fields, "event": event, "text": text, **fields}
        print(json.dumps(line, default=str, ensure_ascii=False), file=self.trace, flush=True)

    def progress(self, report: Any) -> None:
        """Show a progress report a node or tool wrote to LangGraph's ``custom`` stream.

        A mapping names its ``event`` and ``text`` (other keys become fields);
        anything else is shown as text. Quiet output shows every progress report,
        except that one that counts (``done``, maybe ``total``) is the run's progress:
        the status line shows it, ``--json`` output and the trace record it.
        """
        if not isinstance(report, Mapping):
            self._emit(PROGRESS, str(report), {}, progress=True)
            return
        fields = {key: value for key, value in report.items() if key not in ("event", "text")}
        event = str(report.get("event") or PROGRESS)
        text = str(report.get("text", ""))
        if "done" not in report:
            self._emit(event, text, fields, progress=True)
            return
        if not text:
            total = report.get("total")
            text = f"{report['done']} of {total}" if total is not None else str(report["done"])
        if self.status is not None:
            self.status.progress(text)
        if self.as_json:
            self._emit(event, text, fields, progress=True)
        else:
            self._record(event, text, fields)

    def token(
        self, chunk: BaseMessage, metadata: Mapping[str, Any], *, inner: bool = False
    ) -> None:
        """Report a piece of a reply that may be the answer, from LangGraph's ``messages``
        stream: a ``token`` event in ``--json`` output and the trace; ignore anything else.

        Only text chunks of an answer node at the top level count, not a tool call's.
        """
        node = metadata.get("langgraph_node", "")
        if inner or node not in self.answer_nodes or not isinstance(chunk, AIMessageChunk):
            return
        if chunk.tool_call_chunks or not chunk.text:
            return
        fields = {"node": node, "message_id": chunk.id}
        if self.as_json:
            self.emit("token", chunk.text, **fields)
        else:
            self._record("token", chunk.text, fields)

    def _wipe_status(self) -> None:
        if self.status is not None:
            self.status.wipe()

    def update(self, node: str, update: dict[str, Any] | None, *, inner: bool = False) -> None:
        """Print what one node contributed; ``inner`` for a subgraph's node (a plan step)."""
        update = update or {}
        steps, problem = update.get("plan"), update.get("plan_problem")
        if node in PLAN_NODES and _is_written_plan(steps):
            self.emit("plan", " → ".join(steps), steps=steps)
        for lesson in update.get("remembered") or []:  # Reflexion's lessons of earlier threads
            self.emit("recalled", lesson_text(lesson) or "", lesson=lesson)
        for event in update.get("trajectory") or []:
            if event.get(REFLECTION):  # the loop's look back, kept apart from the messages
                self.emit("reflection", str(event.get("text", "")).strip())
            elif event.get("kind") == SEARCH_LEVEL:
                kept = _kept_thoughts(event, update.get("search") or {})
                self.emit(
                    "level",
                    _level_line(event, kept),
                    level=event.get("level"),
                    calls=event.get("calls"),
                    kept=kept,
                    backtracked=bool(event.get("backtracked")),
                )
        for message in update.get("messages", []):
            if mark_of(message).get("kind") == "plan" and problem and not steps:
                # no step could be read: there is no plan to show, only why
                self.emit("plan_problem", CANNOT_RUN_NOTE.format(problem=problem).strip())
            else:
                self.message(node, message, inner=inner)

    def expect(self, calls: Iterable[Mapping[str, Any]]) -> None:
        """Know proposed calls (``id``, ``name``, ``args``) whose proposal this printer did not
        see stream: a thread resumed in another process settles them here."""
        self._proposed.update((call["id"], call) for call in calls if call.get("id"))

    def message(self, node: str, message: BaseMessage, *, inner: bool = False) -> None:
        if isinstance(message, ToolMessage):
            self._settled(message)
        elif isinstance(message, AIMessage):
            if mark_of(message).get("kind") == "plan":
                self.emit("plan", _unlabelled(message.text.strip(), "Plan:"))
                return
            if node == "approve":  # the proposal with a person's edits: the calls that run
                self.expect(message.tool_calls)
                return
            text = message.text.strip()
            correction = format_error_of(message)
            if correction:
                self.emit("format_error", str(correction))
            elif message.tool_calls or message.invalid_tool_calls:
                signs = _step_signs(message)
                if text:
                    self.emit("thought", _with_signs(text, signs), **signs)
                self.expect(message.tool_calls)  # shown once settled: run or not
                self.expect(
                    {"id": bad["id"], "name": bad.get("name") or "unknown", "args": None}
                    for bad in message.invalid_tool_calls
                )
            elif inner:
                self.emit("result", text, outcome=outcome_of(message) or {"status": "answered"})
            else:  # the answer, or a reply before it: the run's end says which (answer())
                self._hold(mark_of(message).get("kind") or "draft", text, node=node)

    def _settled(self, message: ToolMessage) -> None:
        """Show a call as what happened to it: ``Action`` and ``Observation`` only if it ran."""
        decision = decision_of(message)
        proposed = self._proposed.pop(message.tool_call_id, None) or {}
        call = message.response_metadata.get(EDITED_CALL) or proposed  # what a person's edit ran
        tool = call.get("name") or message.name or "unknown"
        args = call.get("args")
        shown = _shown_call(tool, args) if call else f"{tool}(…)"  # proposed out of sight
        text = content_text(message.content)
        fields = {"tool": tool, "call_id": message.tool_call_id, "decision": decision}
        if decision in EXECUTED:
            self.emit("action", shown, tool=tool, args=args, call_id=message.tool_call_id)
            self.emit("observation", text, status=message.status, **fields)
        elif decision == "reused":
            line = REUSED_LINE.format(call=shown, result=text, tool=tool)
            earlier = reused_from(message)
            self.emit("reused", line, args=args, result=text, reused_from=earlier, **fields)
        else:
            event = NOT_RUN_EVENTS.get(decision, "not_run")
            if event == "rejected" and rejected_before(message):
                event = "rejected_before"
            line = NOT_RUN_LINE.format(call=shown, text=text)
            self.emit(event, line, args=args, observation=text, **fields)

    def notice(self, text: str, **fields: Any) -> None:
        self.emit("note", text, **fields)

    def grounding(self, report: GroundingReport | None) -> None:
        """Show which claims of the answer a tool observation backs, and which one."""
        if not report:
            self.notice(NO_GROUNDING)
            return
        claims = report["claims"]
        summary = GROUNDING_SUMMARY.format(supported=report["supported"], total=len(claims))
        if self.as_json:
            self.emit("grounding", summary, report=report)
            return
        self._record("grounding", summary, {"report": report})
        self.release()
        self._wipe_status()
        print(f"Grounding: {summary}", file=self.out)
        for claim in claims:
            print(f"  {_claim_line(claim)}", file=self.out)
        self.out.flush()

    def verification(self, verification: Verification) -> None:
        """Show the model's check of the answer: each claim backed by a quote or inferred,
        or why the check was skipped or failed."""
        claims = verification["claims"]
        if verification["status"] == "checked":
            backed = sum(claim["status"] == "backed" for claim in claims)
            summary = VERIFIED_SUMMARY.format(backed=backed, total=len(claims))
            line = f"Verified: {summary}"
        else:
            summary = f"{verification['status']}: {verification.get('reason', '')}"
            line = f"Verification {summary}"
        if self.as_json:
            self.emit("verification", summary, verification=verification)
            return
        self._record("verification", summary, {"verification": verification})
        self.release()
        self._wipe_status()
        print(line, file=self.out)
        for claim in claims:
            print(f"  {_checked_claim_line(claim)}", file=self.out)
        self.out.flush()


def _shown_call(tool: str, args: Mapping[str, Any] | None) -> str:
    """A call as people read it; one whose arguments could not be read says so."""
    return describe_call(tool, args) if args is not None else f"{tool}(<malformed arguments>)"


def _line(event: str, text: str) -> str:
    """A plain line: the event's label, then the text as a person reads it."""
    if event not in VERBATIM_EVENTS:
        text = decoded(text)
    if event not in WHOLE_EVENTS:
        text = shortened(text)
    text = _indented(text)
    if event in UNLABELLED_EVENTS:
        return text
    label = event.replace("_", " ").capitalize()
    return f"{label}: {text}" if text else label


def _indented(text: str) -> str:
    """Text whose every line after the first is indented: a line a model or a tool wrote
    never reads as a line of ours (``Action:`` of a call that did not run, ``Answer:``)."""
    if "\n" not in text and "\r" not in text:
        return text
    first, *rest = text.splitlines()
    return "\n".join([first, *(f"  {line}" if line else "" for line in rest)])


def _kept_thoughts(event: Mapping[str, Any], search: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The thoughts a search level kept, best first, with how they were judged."""
    thoughts = search.get("thoughts") or []
    ids = [i for i in event.get("kept") or [] if isinstance(i, int) and 0 <= i < len(thoughts)]
    return [
        {"text": thoughts[i].get("text", ""), "verdict": thoughts[i].get("verdict", "")}
        for i in ids
    ]


def _level_line(event: Mapping[str, Any], kept: list[dict[str, Any]]) -> str:
    """``Level 2 (4 model calls): kept "8 - 4 = 4 (left: 4 7 8)" (sure)``."""
    shown = "; ".join(
        f'"{t["text"]}"' + (f" ({t['verdict']})" if t["verdict"] else "") for t in kept
    )
    line = LEVEL_LINE.format(
        level=event.get("level"), calls=event.get("calls"), kept=shown or NOTHING_KEPT
    )
    return line + (BACKTRACKED if event.get("backtracked") else "")


def _is_written_plan(steps: Any) -> TypeGuard[list[str]]:
    """Whether an update's ``plan`` is a list of step texts (Plan-and-Execute's form)."""
    return isinstance(steps, list) and bool(steps) and all(isinstance(s, str) for s in steps)


def _claim_line(claim: Claim) -> str:
    """``✓ 395 (number): calculator [call_1] "…395…"``, or where an unbacked claim was found."""
    head = f"{decoded(claim['text'])} ({claim['kind']})"  # the answer's words, as shown
    support = claim["support"]
    if claim["supported"] and support:
        return f"✓ {head}: {support['tool']} [{support['call_id']}] {support['excerpt']!r}"
    return f"✗ {head}: only in the model's {claim['found_in']}"


def _checked_claim_line(claim: CheckedClaim) -> str:
    """``✓ Paris is the capital: search [call_1] "Paris is the capital of France"``, or
    ``✗ founded in 250 BC: inferred`` with why a quote was not accepted."""
    text = shortened(decoded(claim["text"]))
    if claim["status"] == "backed":
        return f"✓ {text}: {claim['tool']} [{claim['call_id']}] {shortened(claim['quote'])!r}"
    note = claim.get("note")
    return f"✗ {text}: inferred" + (f" ({shortened(note)})" if note else "")


def _step_signs(message: AIMessage) -> dict[str, Any]:
    """What a typed step said of itself: its confidence, and whether it needs more info."""
    step = typed_step_of(message) or {}
    return {key: step[key] for key in ("confidence", "needs_more_info") if key in step}


def _with_signs(thought: str, signs: Mapping[str, Any]) -> str:
    """A typed step's thought as shown: ``… (confidence 0.3, needs more info)``."""
    shown = [f"confidence {signs['confidence']:g}"] if "confidence" in signs else []
    if signs.get("needs_more_info"):
        shown.append("needs more info")
    return f"{thought} ({', '.join(shown)})" if shown else thought


def _unlabelled(text: str, label: str) -> str:
    """``text`` without a leading ``label`` that the printer adds itself (ReWOO's plans
    begin with ``Plan:``)."""
    return text[len(label) :].lstrip() if text.startswith(label) else text
