"""How a run looks at the terminal: Thought / Action / Observation lines, or JSON lines.

The answer streams: its tokens are printed as the model writes them, on the
``Answer:`` line that the finished answer then completes.

Quiet output keeps what a person waits for: progress lines (``Calling
calculator…``, a retry's ``retrying in 2 s``), approvals, notes and the final
answer. A trace file receives every event, shown or not, as one JSON object per line.

A node or tool reports progress through LangGraph's stream writer, e.g.
``get_stream_writer()({"event": "retry", "text": "retrying in 2 s"})``: the
run streams it as a ``custom`` chunk and the printer shows it as a progress line.
A report that counts how far the run has come (it has a ``done`` field, as
:func:`~reasoning_graphs.nodes.reporting.report_progress` writes) goes to the
status line instead, and to ``--json`` output and the trace as an event.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, TextIO

from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolMessage

from reasoning_graphs.cli.status_line import StatusLine
from reasoning_graphs.metadata import decision_of, format_error_of, mark_of, outcome_of
from reasoning_graphs.nodes.turn import describe_call
from reasoning_graphs.state import Claim, GroundingReport

ANSWER_NODES: Mapping[str, frozenset[str]] = {
    "react": frozenset({"think", "finish"}),
    "rewoo": frozenset({"solve", "finish"}),
    "llm_compiler": frozenset({"finish"}),
    "plan_execute": frozenset({"finish"}),
    "lats": frozenset({"finish"}),
}
"""The top-level nodes of each pattern whose model text is the answer as it is written.

Other model calls stream text that is not the answer: plans, joins, judgements and
reflections are structured output; ``react_text`` writes its Thought/Action format;
``cot`` reasons before it answers (and samples several chains at once); Reflexion's
attempts are judged before one becomes the answer; plan steps are results.
"""
QUIET_EVENTS = frozenset(
    {"action", "approval", "decision", "question", "reply", "answer", "grounding", "note"}
)
"""What quiet output shows: progress, what a person must answer, the answer and its report."""
PROGRESS = "progress"
"""The event of a progress report that names no event of its own."""
NO_GROUNDING = "No grounding report for this answer."
EMPTY_ANSWER = "(the model's reply was empty)"
GROUNDING_SUMMARY = "{supported} of {total} claims backed by an observation"


@dataclass
class _StreamedAnswer:
    """An answer line being printed token by token."""

    node: str
    message_id: str | None
    text: str = ""


class Printer:
    """Prints graph updates as they stream in, and the answer's tokens as they arrive."""

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
        ``status`` line is wiped before each print and waits while an answer streams.
        """
        self.as_json = as_json
        self.out = out or sys.stdout
        self.answer_nodes = frozenset(answer_nodes)
        self.quiet = quiet
        self.trace = trace
        self.trace_fields = dict(trace_fields or {})
        self._streaming: _StreamedAnswer | None = None
        self._held: str | None = None
        """A step result not printed yet: when the answer that follows is the same text
        (Reflexion's last trial), only the answer is printed."""
        self.status = status
        if status is not None:
            status.paused = lambda: self._streaming is not None

    def emit(self, event: str, text: str, **fields: Any) -> None:
        """Trace the event, and print it unless quiet output leaves it out."""
        self._emit(event, text, fields, progress=False)

    def _emit(self, event: str, text: str, fields: Mapping[str, Any], *, progress: bool) -> None:
        self._record(event, text, fields)
        if self.quiet and not progress and event not in QUIET_EVENTS:
            return
        if event == "answer" and text == self._held:
            self._held = None  # the answer repeats the result: it is shown once, as the answer
        self.release()
        if event == "result" and not self.as_json:
            self._held = text  # shown once the next line shows it is not also the answer
            return
        self._print(event, text, fields, progress=progress)

    def release(self) -> None:
        """Print a step result still held back (see :meth:`_emit`)."""
        held, self._held = self._held, None
        if held is not None:
            self._print("result", held, {}, progress=False)

    def _print(self, event: str, text: str, fields: Mapping[str, Any], *, progress: bool) -> None:
        self._wipe_status()
        self._end_line()
        if self.as_json:
            print(json.dumps({"event": event, "text": text, **fields}, default=str), file=self.out)
        elif progress:
            print(text, file=self.out)
        elif self.quiet and event == "action":
            print(f"Calling {fields.get('tool') or text}…", file=self.out)
        else:
            label = event.replace("_", " ").capitalize()
            if event == "answer" and not text:
                text = EMPTY_ANSWER  # never a bare label where an answer belongs
            print(f"{label}: {text}" if text else label, file=self.out)
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
        """Print a piece of the answer from LangGraph's ``messages`` stream; ignore anything else.

        Only text chunks of an answer node at the top level count; a chunk that
        starts a tool call shows that the text before it was a thought, so the
        line ends and the ``think`` update prints the thought and its calls.
        """
        node = metadata.get("langgraph_node", "")
        if inner or node not in self.answer_nodes or not isinstance(chunk, AIMessageChunk):
            return
        if chunk.tool_call_chunks:
            self._end_line()
            return
        text = chunk.text
        if not text:
            return
        if self.as_json or self.quiet:  # quiet output prints the answer once it is whole
            self.emit("token", text, node=node, message_id=chunk.id)
            return
        self._record("token", text, {"node": node, "message_id": chunk.id})
        streaming = self._streaming
        if streaming is None or (streaming.node, streaming.message_id) != (node, chunk.id):
            if not text.strip():
                return  # the line starts with the first visible character
            self.release()
            self._wipe_status()
            self._end_line()
            streaming = self._streaming = _StreamedAnswer(node, chunk.id)
            text = text.lstrip()
            print("Answer: ", end="", file=self.out)
        streaming.text += text
        print(text, end="", file=self.out, flush=True)

    def _wipe_status(self) -> None:
        if self.status is not None:
            self.status.wipe()

    def _end_line(self) -> None:
        """End an answer line still being streamed, so that the next output starts a line."""
        if self._streaming is not None:
            self._streaming = None
            print(file=self.out, flush=True)

    def _finish_answer(self, node: str, text: str) -> bool:
        """Complete the streamed answer line with the rest of ``text``, if it began it.

        The node may add to what the model wrote (an incomplete answer's note);
        if it changed the text instead, the line ends and the answer is printed whole.
        """
        streaming = self._streaming
        if streaming is None or streaming.node != node:
            return False
        shown = streaming.text
        if not text.startswith(shown):
            shown = shown.rstrip()  # a space the model wrote last and the node stripped
            if not text.startswith(shown):
                return False
        print(text[len(shown) :], end="", file=self.out)
        self._end_line()
        return True

    def update(self, node: str, update: dict[str, Any] | None, *, inner: bool = False) -> None:
        """Print what one node contributed; ``inner`` for a subgraph's node (a plan step)."""
        update = update or {}
        steps = update.get("plan")
        if isinstance(steps, list) and steps and all(isinstance(s, str) for s in steps):
            self.emit("plan", " → ".join(steps), steps=steps)
        for message in update.get("messages", []):
            self.message(node, message, inner=inner)

    def message(self, node: str, message: BaseMessage, *, inner: bool = False) -> None:
        if isinstance(message, ToolMessage):
            decision = decision_of(message)
            self.emit(
                "observation",
                str(message.content),
                tool=message.name,
                call_id=message.tool_call_id,
                status=message.status,
                decision=decision,
            )
        elif isinstance(message, AIMessage):
            if mark_of(message).get("kind") == "plan":
                self.emit("plan", _unlabelled(message.text.strip(), "Plan:"))
                return
            if node == "approve":
                return  # an edited proposal, already shown when the decision was made
            text = message.text.strip()
            correction = format_error_of(message)
            if correction:
                self.emit("format_error", str(correction))
            elif message.tool_calls or message.invalid_tool_calls:
                if text:
                    self.emit("thought", text)
                for call in message.tool_calls:
                    self.emit(
                        "action",
                        describe_call(call["name"], call["args"]),
                        tool=call["name"],
                        args=call["args"],
                        call_id=call["id"],
                    )
                for bad in message.invalid_tool_calls:
                    self.emit("action", f"{bad.get('name')}(<malformed arguments>)")
            else:
                outcome = outcome_of(message) or {"status": "answered"}
                if inner:
                    self.emit("result", text, outcome=outcome)
                    return
                if self._finish_answer(node, text):
                    self._record("answer", text, {"outcome": outcome})
                else:
                    self.emit("answer", text, outcome=outcome)
                note = outcome.get("note")
                if note and note != text:  # why it is incomplete, shown beside the answer
                    self.notice(note)

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
        self._end_line()
        print(f"Grounding: {summary}", file=self.out)
        for claim in claims:
            print(f"  {_claim_line(claim)}", file=self.out)
        self.out.flush()


def _claim_line(claim: Claim) -> str:
    """``✓ 395 (number): calculator [call_1] "…395…"``, or where an unbacked claim was found."""
    head = f"{claim['text']} ({claim['kind']})"
    support = claim["support"]
    if claim["supported"] and support:
        return f"✓ {head}: {support['tool']} [{support['call_id']}] {support['excerpt']!r}"
    return f"✗ {head}: only in the model's {claim['found_in']}"


def _unlabelled(text: str, label: str) -> str:
    """``text`` without a leading ``label`` that the printer adds itself (ReWOO's plans
    begin with ``Plan:``)."""
    return text[len(label) :].lstrip() if text.startswith(label) else text
