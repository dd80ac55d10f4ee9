"""A person's edit of a proposed call: the changes merged over the proposal, then checked.

An edit names only the arguments to change (``{"content": "hello"}`` for a
``write_file`` call proposed with a path and a content): the merge is shallow,
a key of the edit replaces the proposed one and every other proposed argument
stays. A key cannot be removed; ``null`` is a value like any other, so it clears
an argument only where the tool's schema allows null.

The merged arguments are what runs, so they are checked as the call itself
would be, before anything runs: the tool's schema, no argument the schema does
not name (a tool would silently drop it, and what runs would differ from what
was approved), and the run's block rules (an edit cannot get past a policy the
proposal had to pass). An edit that fails is an answer that does not fit: the
person is asked again with the reason; the model is told nothing.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from reasoning_graphs.review import ApprovalError, PendingCall, ReviewDecision
from reasoning_graphs.tools.policy import ToolPolicy
from reasoning_graphs.tools.registry import ToolRegistry
from reasoning_graphs.tools.spec import ToolSpec

UNKNOWN_ARGUMENTS = (
    "Decision {index} edits call {call_id} with argument(s) {unknown} that {name!r} does not "
    "take; it takes: {known}."
)
UNFIT_ARGUMENTS = "Decision {index} edits call {call_id} off the schema of {name!r}: {problems}."
BLOCKED_EDIT = "Decision {index} edits call {call_id} into a call the policy refuses: {reason}"
NO_TOOL = "Decision {index} edits call {call_id} of {name!r}, a tool this run does not have."


def edited_args(call: PendingCall, changes: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments a call runs with once ``changes`` are merged over its proposed ones."""
    return {**call["args"], **changes}


def merged_edits(
    decisions: Sequence[ReviewDecision],
    calls: Sequence[PendingCall],
    registry: ToolRegistry,
    policy: ToolPolicy,
) -> list[ReviewDecision]:
    """``decisions`` with each edit's arguments merged over its call's proposed ones.

    Raises:
        ApprovalError: A merged edit that cannot run, with the reason in one line.
    """
    return [
        _merged(index, decision, call, registry, policy) if decision["type"] == "edit" else decision
        for index, (decision, call) in enumerate(zip(decisions, calls, strict=True), start=1)
    ]


def _merged(
    index: int,
    decision: ReviewDecision,
    call: PendingCall,
    registry: ToolRegistry,
    policy: ToolPolicy,
) -> ReviewDecision:
    changes = decision.get("args") or {}
    name = decision.get("name", call["name"])
    where = {"index": index, "call_id": call["id"], "name": name}
    spec = registry.get(name)
    if spec is None:
        raise ApprovalError(NO_TOOL.format(**where))
    unknown = _unknown(spec, changes)
    if unknown:
        known = ", ".join(sorted(spec.argument_schema().get("properties", {})))
        raise ApprovalError(UNKNOWN_ARGUMENTS.format(unknown=unknown, known=known, **where))
    # another tool's arguments are the edit's own: the proposal's are not its
    args = edited_args(call, changes) if name == call["name"] else dict(changes)
    problems = spec.argument_problems(args)
    if problems:
        raise ApprovalError(_one_line(UNFIT_ARGUMENTS.format(problems=problems, **where)))
    blocked = policy.block_reason(name, args)
    if blocked:
        raise ApprovalError(_one_line(BLOCKED_EDIT.format(reason=blocked, **where)))
    return {**decision, "args": args}


def _unknown(spec: ToolSpec, changes: Mapping[str, Any]) -> list[str]:
    """The names in ``changes`` that the tool's schema does not name; none when the schema
    takes any further argument (``additionalProperties``) or names no argument at all."""
    schema = spec.argument_schema()
    properties = schema.get("properties")
    if not isinstance(properties, Mapping) or schema.get("additionalProperties"):
        return []
    return sorted(set(changes) - set(properties))


def _one_line(text: str) -> str:
    return " ".join(text.split())
