"""The approval protocol: what an interrupt asks and what a resume must answer.

When a model turn proposes dangerous calls, the graph pauses with one
interrupt whose value is an :class:`ApprovalRequest`. Resume with
``Command(resume=decisions)`` where ``decisions`` holds one decision per
listed call — a list in the listed order, or a mapping from call id:

- ``{"type": "approve"}`` — run the call as proposed;
- ``{"type": "edit", "args": {...}}`` — run it with these arguments merged over the
  proposed ones (same call id): name only what changes, the rest stays as proposed;
- ``{"type": "reject", "reason": "..."}`` — never run it; the model sees the reason;
- ``{"type": "respond", "content": "..."}`` — do not run it; the model sees this text
  as the observation.

A bare string (``"approve"``, ``"reject"``) is shorthand for the first two kinds.

The request also carries the calls in the shape of LangChain's human-in-the-loop
middleware (``action_requests`` and ``review_configs``), which LangGraph Studio
and Agent Chat UI draw as an approval panel, and a resume may answer in that
shape too: ``{"decisions": [...]}`` with ``{"type": "edit", "edited_action":
{"name": ..., "args": {...}}}`` for an edit and a ``message`` for a rejection's
reason or a response. An edit may change the arguments, and the tool too (``name`` here,
``edited_action.name`` there, as LangChain 1.5's approval allows): the person's call runs
in the model's place, the model's message keeps what it proposed, and the observation
begins with a notice of what ran instead.

The merge is shallow: a key of the edit replaces the proposed one, the others
stay (an edit into another tool gives that tool's whole arguments). No key is removed;
``null`` is a value, which fits only where the tool's schema allows null. The merged
arguments are checked before anything runs — against the tool's schema (naming no
argument it does not take) and the run's block rules — and are exactly what runs
(see :mod:`reasoning_graphs.nodes.steps.edits`).

A value that does not fit, an edit that cannot run included, is asked about
again with an ``error`` and the same calls; nothing of the turn runs meanwhile
and the model is told nothing. ``Command(resume=None)`` never reaches the graph:
LangGraph (1.2) fails on it before the run starts and writes nothing, so the
thread still waits for the same decisions. ``None`` addressed to the interrupt
by id is asked about again like any other unfit value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, TypeGuard

from typing_extensions import NotRequired, TypedDict

REVIEW_DECISIONS = ("approve", "edit", "reject", "respond")
APPROVAL_KIND: Final = "approval"

WRONG_COUNT = "Expected {expected} decision(s), one per pending call ({ids}), but got {got}."
NOT_DECISIONS = (
    "Decisions must be a list (one per pending call) or a mapping by call id, not {kind}."
)
UNKNOWN_DECISION = "Decision {index} has unknown type {kind!r}; allowed: {allowed}."
NOT_ALLOWED = "Decision {index} ({kind}) is not allowed for call {call_id}; allowed: {allowed}."
MISSING_FIELD = "Decision {index} ({kind}) needs a {field!r} field of type {expected}."
UNKNOWN_IDS = "Decisions name unknown call id(s) {unknown}; pending calls: {ids}."
RENAMED_TOOL = (
    "Decision {index} edits call {call_id} into calls of two tools ({renamed}): name one, in "
    "'name' or in 'edited_action'."
)
DEFAULT_REJECT_REASON = "none given"
EMPTY_ANSWER = "The resume value answers nothing (None); give one decision per pending call."
NO_ANSWER = {"type": "no answer"}
"""What an empty resume becomes on its way to the approval: never a decision, always asked again.

(Not ``None``: LangGraph gives an interrupt whose resume is ``None`` the task's
earlier bare resume value instead, which could be an earlier approval.)"""


class ApprovalError(ValueError):
    """A resume value that does not answer the pending approval request."""


class PendingCall(TypedDict):
    """One dangerous call waiting for a person.

    Attributes:
        allowed_decisions: The decision types the person may take on it.
        possibly_ran: The call started before the run stopped and its result was
            lost: it may already have taken effect (its description says so too).
        args_schema: The JSON schema of the tool's arguments, from which a form for an
            edit is made (absent for a tool the graph does not know).
    """

    id: str
    name: str
    args: dict[str, Any]
    description: str
    allowed_decisions: list[str]
    possibly_ran: NotRequired[bool]
    args_schema: NotRequired[dict[str, Any]]


class ActionRequest(TypedDict):
    """One pending call as LangChain's human-in-the-loop middleware names it."""

    name: str
    args: dict[str, Any]
    description: str


class ReviewConfig(TypedDict):
    """The decisions a person may take on one pending call, in the middleware's shape."""

    action_name: str
    allowed_decisions: list[str]


class ApprovalRequest(TypedDict):
    """The value of an approval interrupt.

    ``action_requests`` and ``review_configs`` list the same calls, in the same
    order, for front ends that draw LangChain's approval panel. ``error`` is set,
    in one line, when the previous answer did not fit (wrong count, unknown
    decision type, missing field, an edit whose merged arguments cannot run);
    the same calls are asked about again.
    """

    kind: Literal["approval"]
    calls: list[PendingCall]
    instructions: str
    action_requests: list[ActionRequest]
    review_configs: list[ReviewConfig]
    error: NotRequired[str]


class ReviewDecision(TypedDict):
    """A person's answer for one pending call.

    ``args`` of an edit: as the person gave them, until the approval merges them
    over the proposed arguments (for the same tool); then the whole arguments that run.
    ``name`` of an edit: another tool to run in the proposed one's place, whose arguments
    are the edit's own (nothing of the proposal's is merged in).
    """

    type: Literal["approve", "edit", "reject", "respond"]
    name: NotRequired[str]
    args: NotRequired[dict[str, Any]]
    reason: NotRequired[str]
    content: NotRequired[str]


def approval_request(calls: Sequence[PendingCall]) -> ApprovalRequest:
    return {
        "kind": APPROVAL_KIND,
        "calls": list(calls),
        "instructions": (
            "Resume with one decision per call, in this order or keyed by call id: "
            "approve, edit (with 'args': only those to change), reject (with a 'reason') or "
            "respond (with 'content')."
        ),
        "action_requests": [
            {"name": c["name"], "args": c["args"], "description": c["description"]} for c in calls
        ],
        "review_configs": [
            {"action_name": c["name"], "allowed_decisions": c["allowed_decisions"]} for c in calls
        ],
    }


def is_approval_request(value: Any) -> TypeGuard[ApprovalRequest]:
    """Whether an interrupt's value is our approval request, not a question of some other
    ``interrupt()`` (a user's tool or node may ask the person anything)."""
    return (
        isinstance(value, Mapping)
        and value.get("kind") == APPROVAL_KIND
        and isinstance(value.get("calls"), list)
    )


def parse_decisions(value: Any, calls: Sequence[PendingCall]) -> list[ReviewDecision]:
    """Check a resume value against the pending calls and return one decision per call.

    Raises:
        ApprovalError: Wrong count, unknown ids, unknown types or missing fields.
    """
    ids = [call["id"] for call in calls]
    if value is None or value == NO_ANSWER:
        raise ApprovalError(EMPTY_ANSWER)
    if isinstance(value, Mapping) and set(value) == {"decisions"}:  # the middleware's shape
        value = value["decisions"]
    if isinstance(value, Mapping) and "type" not in value:
        unknown = sorted(set(value) - set(ids))
        if unknown:
            raise ApprovalError(UNKNOWN_IDS.format(unknown=unknown, ids=ids))
        if len(value) != len(ids):
            raise ApprovalError(WRONG_COUNT.format(expected=len(ids), ids=ids, got=len(value)))
        value = [value[call_id] for call_id in ids]
    elif isinstance(value, (str, Mapping)):
        value = [value]
    if not isinstance(value, Sequence) or isinstance(value, str):
        raise ApprovalError(NOT_DECISIONS.format(kind=type(value).__name__))
    if len(value) != len(ids):
        raise ApprovalError(WRONG_COUNT.format(expected=len(ids), ids=ids, got=len(value)))
    return [
        _allowed(index, _decision(index, _plain(index, item, call)), call)
        for index, (item, call) in enumerate(zip(value, calls, strict=True), start=1)
    ]


def _allowed(index: int, decision: ReviewDecision, call: PendingCall) -> ReviewDecision:
    allowed = call["allowed_decisions"]
    if decision["type"] not in allowed:
        raise ApprovalError(
            NOT_ALLOWED.format(
                index=index, kind=decision["type"], call_id=call["id"], allowed=", ".join(allowed)
            )
        )
    return decision


def _plain(index: int, item: Any, call: PendingCall) -> Any:
    """A decision in the middleware's shape as this protocol's own; others as they are."""
    if isinstance(item, str):
        return {"type": item}
    if not isinstance(item, Mapping):
        return item
    plain = dict(item)
    edited = plain.pop("edited_action", None)
    if plain.get("type") == "edit":
        edited = edited if isinstance(edited, Mapping) else {}
        renamed = {plain.pop("name", call["name"]), edited.get("name", call["name"])}
        renamed.discard(call["name"])
        if len(renamed) > 1:
            raise ApprovalError(
                RENAMED_TOOL.format(index=index, call_id=call["id"], renamed=sorted(renamed))
            )
        if renamed:
            plain["name"] = renamed.pop()
        if "args" not in plain and "args" in edited:
            plain["args"] = edited["args"]
    message = plain.pop("message", None)
    if plain.get("type") == "reject" and "reason" not in plain:
        plain["reason"] = message
    if plain.get("type") == "respond" and "content" not in plain:
        plain["content"] = message
    return plain


def _decision(index: int, item: Any) -> ReviewDecision:
    kind = item.get("type") if isinstance(item, Mapping) else None
    if kind not in REVIEW_DECISIONS:
        raise ApprovalError(
            UNKNOWN_DECISION.format(index=index, kind=kind, allowed=", ".join(REVIEW_DECISIONS))
        )
    decision: ReviewDecision = {"type": kind}
    if kind == "edit":
        args = item.get("args")
        if not isinstance(args, Mapping):
            raise ApprovalError(
                MISSING_FIELD.format(index=index, kind=kind, field="args", expected="object")
            )
        decision["args"] = dict(args)
        if isinstance(item.get("name"), str):
            decision["name"] = item["name"]
    elif kind == "respond":
        content = item.get("content")
        if not isinstance(content, str):
            raise ApprovalError(
                MISSING_FIELD.format(index=index, kind=kind, field="content", expected="string")
            )
        decision["content"] = content
    elif kind == "reject":
        decision["reason"] = str(item.get("reason") or DEFAULT_REJECT_REASON)
    return decision
