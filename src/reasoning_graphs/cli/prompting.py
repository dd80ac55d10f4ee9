"""Asking the person at the terminal: decisions on dangerous calls, answers to other questions.

An interrupt whose value is our approval request asks for one decision per
pending call; the prompt offers only the decisions the call allows.
``--approve-all`` never approves a call marked ``possibly_ran`` (it started
before a crash and its result was lost): that one is asked about, or waits for
a person. Any other interrupt (a user's tool or node calling
``interrupt(value)``) is a question: its value is shown (a string as it is,
anything else as JSON) and the answer is the line the person types, as text:
``42`` stays the string a person typed, never a number the tool did not expect.
(``resume --decisions`` gives a value as JSON, for a question that wants one.)

An edit asks only for the arguments to change, as a JSON object; the others
stay as proposed. The graph checks the merged arguments; when they cannot run,
the request comes back with the reason, which is shown in one line before the
calls are asked about again.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Literal

from reasoning_graphs.cli.render import Printer
from reasoning_graphs.nodes.steps.edits import edited_args
from reasoning_graphs.question import describe_call
from reasoning_graphs.review import (
    REVIEW_DECISIONS,
    ApprovalRequest,
    PendingCall,
    ReviewDecision,
    is_approval_request,
)

Mode = Literal["ask", "approve", "reject"]
CHOICES = {"a": "approve", "e": "edit", "r": "reject", "s": "respond"}
LABELS = {"approve": "[a]pprove", "edit": "[e]dit", "reject": "[r]eject", "respond": "re[s]pond"}
PROMPT = "Decision for {call} — {choices}: "
AUTO_REJECT_REASON = "Rejected from the command line (--reject-all)."
UNFIT_ANSWER = "The previous answer did not fit: {error}"
EDIT_PROMPT = "Arguments to change, as a JSON object; the others stay (proposed: {args}): "
NOT_AN_OBJECT = "That is not a JSON object; arguments to change: "
ANSWER_PROMPT = "Your answer: "


class NoAnswer(Exception):
    """The terminal has no one to answer (end of input)."""


def answer(
    value: Any,
    *,
    mode: Mode,
    printer: Printer,
    read: Callable[[str], str] = input,
) -> Any:
    """What resumes one interrupt: decisions for an approval request, else the person's answer.

    ``mode`` settles approvals only: a question always needs a person.

    Raises:
        NoAnswer: Input ended before the interrupt was answered.
    """
    if is_approval_request(value):
        return decide(value, mode=mode, printer=printer, read=read)
    printer.emit("question", question_text(value), value=value)
    reply = _read(read, ANSWER_PROMPT)
    printer.emit("reply", reply)
    return reply


def question_text(value: Any) -> str:
    """An interrupt's question as a person reads it: a string as it is, anything else as JSON."""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, default=str)


def decide(
    request: ApprovalRequest,
    *,
    mode: Mode,
    printer: Printer,
    read: Callable[[str], str] = input,
) -> list[ReviewDecision]:
    """One decision per pending call: the flag's where it may take it (:func:`automatic`),
    else the person's.

    Raises:
        NoAnswer: Input ended before every call had a decision.
    """
    if request.get("error"):
        printer.notice(UNFIT_ANSWER.format(error=" ".join(str(request["error"]).split())))
    decisions: list[ReviewDecision] = []
    for call in request["calls"]:
        printer.emit("approval", call["description"], tool=call["name"], call_id=call["id"])
        decision = automatic(call, mode) or _ask(call, read)
        decisions.append(decision)
        fields: dict[str, Any] = {"decision": decision["type"], "call_id": call["id"]}
        line: str = decision["type"]
        if decision["type"] == "edit":  # read back as the call that will run
            fields["args"] = edited_args(call, decision["args"])
            line = f"edit → {describe_call(call['name'], fields['args'])}"
        printer.emit("decision", line, **fields)
    return decisions


def automatic(call: PendingCall, mode: Mode) -> ReviewDecision | None:
    """The decision ``--approve-all`` or ``--reject-all`` takes on ``call``, or ``None``
    when a person must take it: a call that may already have run is never approved
    unseen, and no flag takes a decision the call does not allow."""
    allowed = _allowed_decisions(call)
    if mode == "approve" and "approve" in allowed and not call.get("possibly_ran"):
        return {"type": "approve"}
    if mode == "reject" and "reject" in allowed:
        return {"type": "reject", "reason": AUTO_REJECT_REASON}
    return None


def _allowed_decisions(call: PendingCall) -> list[str]:
    """The decisions a person may take on ``call`` (all of them where the request says none)."""
    return list(call.get("allowed_decisions") or REVIEW_DECISIONS)


def _ask(call: PendingCall, read: Callable[[str], str]) -> ReviewDecision:
    """The person's decision, offered and taken only among those the call allows."""
    allowed = _allowed_decisions(call)
    choices = ", ".join(LABELS[kind] for kind in REVIEW_DECISIONS if kind in allowed)
    prompt = PROMPT.format(call=call["description"], choices=choices)
    while True:
        choice = _read(read, prompt).strip().lower()
        kind = CHOICES.get(choice[:1])
        if kind not in allowed:
            continue
        if kind == "approve":
            return {"type": "approve"}
        if kind == "reject":
            reason = _read(read, "Reason (optional): ", optional=True)
            return {"type": "reject", "reason": reason.strip()}
        if kind == "respond":
            return {"type": "respond", "content": _read(read, "Observation for the model: ")}
        if kind == "edit":
            return {"type": "edit", "args": _read_arguments(call, read)}


def _read_arguments(call: PendingCall, read: Callable[[str], str]) -> dict[str, Any]:
    """The arguments the person changes; the graph merges them over the proposed ones."""
    prompt = EDIT_PROMPT.format(args=json.dumps(call["args"], ensure_ascii=False))
    while True:
        try:
            value = json.loads(_read(read, prompt))
        except json.JSONDecodeError:
            value = None
        if isinstance(value, dict):
            return value
        prompt = NOT_AN_OBJECT


def _read(read: Callable[[str], str], prompt: str, *, optional: bool = False) -> str:
    """The person's line. At the end of input, an ``optional`` one (a follow-up they may
    leave empty) is empty and the decision it follows stands; any other is no answer."""
    try:
        return read(prompt)
    except EOFError:
        if optional:
            return ""
        raise NoAnswer from None
