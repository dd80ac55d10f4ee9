"""Per-tool approval settings, in the ``interrupt_on`` shape of LangChain's
``HumanInTheLoopMiddleware``: which decisions a person may take on a tool's calls, what
they read about a call, and (``when``) which of its calls need them at all.

``approve=`` takes such a mapping, and a ``HumanInTheLoopMiddleware`` given as
middleware becomes one: there is one approval system, ours, with its seal and its
at-most-once journal. A setting can only add asking: a dangerous tool is asked about
whatever ``when`` says (its decisions and description still apply), and ``False``
leaves a tool as its spec has it.

Examples:
    >>> settings = askings({"ls": False, "rm": {"allowed_decisions": ["approve", "reject"]}})
    >>> list(settings), settings["rm"].decisions
    (['rm'], ('approve', 'reject'))
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Any

from langchain.agents.middleware import HumanInTheLoopMiddleware, ToolCallRequest
from langchain_core.messages import ToolCall

from reasoning_graphs.review import REVIEW_DECISIONS

When = Callable[[ToolCallRequest], bool]
"""Whether one call of the tool needs a person (``True``) or runs as an unmarked tool's."""
Description = str | Callable[[ToolCall, Any, Any], str]
"""What the person reads about a call: a text, or one made of the call, state and runtime."""

KEYS = frozenset({"allowed_decisions", "description", "when", "args_schema"})
UNKNOWN_KEYS = (
    "The approval setting for {name!r} has unknown key(s) {keys}; it takes "
    "allowed_decisions, description and when."
)
NO_DECISIONS = (
    "The approval setting for {name!r} needs a non-empty allowed_decisions list "
    "drawn from {allowed}; got {given!r}."
)
NOT_A_SETTING = "The approval setting for {name!r} must be True, False or a mapping, not {kind}."
EDIT_NOTICE = (
    "Note: a person changed this call before it ran, so it did not run as your message proposes it."
)
"""What the model reads first in the observation of a call a person edited."""
TWICE = "The tool {name!r} is given approval settings twice (approve= and middleware)."


@dataclass(frozen=True)
class Asking:
    """How calls of one tool are put to a person.

    Attributes:
        decisions: The decisions a person may take on a call.
        description: What they read instead of the call as we describe it.
        when: Which calls need them; ``None``: every call.
        edit_notice: What the observation of a call they edited begins with (then what ran
            in its place); ``None``: nothing (a ``HumanInTheLoopMiddleware``'s own setting).
        per_call: Each call is asked about with an interrupt of its own (a
            ``HumanInTheLoopMiddleware`` with ``interrupt_mode="per_call"``), not with the
            turn's other calls.
    """

    decisions: tuple[str, ...] = REVIEW_DECISIONS
    description: Description | None = None
    when: When | None = None
    edit_notice: str | None = EDIT_NOTICE
    per_call: bool = False


def asking_of(name: str, setting: Any) -> Asking | None:
    """One tool's setting (``True``, ``False`` or an ``InterruptOnConfig``) as an
    :class:`Asking`; ``None`` for ``False``. A setting we cannot read is an error here:
    an approval gate silently dropped by a typo would let calls run unasked."""
    if isinstance(setting, bool):
        return Asking() if setting else None
    if not isinstance(setting, Mapping):
        raise ValueError(NOT_A_SETTING.format(name=name, kind=type(setting).__name__))
    unknown = sorted(set(setting) - KEYS)
    if unknown:
        raise ValueError(UNKNOWN_KEYS.format(name=name, keys=unknown))
    given = setting.get("allowed_decisions")
    if (
        not isinstance(given, (list, tuple))
        or not given
        or any(kind not in REVIEW_DECISIONS for kind in given)
    ):
        allowed = ", ".join(REVIEW_DECISIONS)
        raise ValueError(NO_DECISIONS.format(name=name, allowed=allowed, given=given))
    decisions = tuple(kind for kind in REVIEW_DECISIONS if kind in given)
    return Asking(decisions, setting.get("description"), setting.get("when"))


def askings(interrupt_on: Mapping[str, Any]) -> dict[str, Asking]:
    """A whole ``interrupt_on`` mapping read by :func:`asking_of`, its ``False`` entries left
    out."""
    found = {name: asking_of(name, setting) for name, setting in interrupt_on.items()}
    return {name: asking for name, asking in found.items() if asking is not None}


def merged_askings(
    approve: Mapping[str, Any], middleware: tuple[Any, ...]
) -> tuple[dict[str, Asking], tuple[Any, ...]]:
    """The settings of ``approve=`` and of every ``HumanInTheLoopMiddleware`` in
    ``middleware`` together, and the middleware without those (their hooks are ours now).

    Raises:
        ValueError: A tool given settings twice, or a setting that cannot be read.
    """
    found = askings(approve)
    rest = []
    for m in middleware:
        if not isinstance(m, HumanInTheLoopMiddleware):
            rest.append(m)
            continue
        for name, asking in askings(m.interrupt_on).items():
            if name in found:
                raise ValueError(TWICE.format(name=name))
            per_call = getattr(m, "interrupt_mode", "batched") == "per_call"
            found[name] = replace(asking, edit_notice=m.edit_notice, per_call=per_call)
    return found, tuple(rest)
