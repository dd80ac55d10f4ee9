"""What to do with a typed ReAct step that is unsure of itself: small rules a graph is built with.

A typed step (:mod:`~reasoning_graphs.nodes.steps.typed_step`) says how sure the model
is (``confidence``, 0 to 1) and whether only the user can give what is missing
(``needs_more_info``). A rule names a sign and what follows it:

- ``"ask"`` ends the turn with a clarifying question to the user: the model's own
  question, or one made from its thought;
- ``"retry"`` asks the model again, with a note on why its step was not used (at most
  ``retries`` times; then the latest step goes ahead as it is);
- ``"stop"`` stops the question honestly, with the reason, as a spent budget does.

The first rule whose sign shows decides; a step that shows none goes ahead. Rules are
objects, so they are build options only: no client of a served graph can send one.

Examples:
    >>> rules = [LowConfidence(below=0.5, then="ask"), NeedsMoreInfo(then="stop")]
    >>> rules[0].applies(confidence=0.3, needs_more_info=False)
    True
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal, get_args

RuleAction = Literal["ask", "retry", "stop"]

BAD_ACTION = "A step rule's 'then' must be one of {choices}, not {value!r}."
BAD_BELOW = "LowConfidence(below=...) must be a number from 0 to 1, not {value!r}."
BAD_RETRIES = "A step rule's 'retries' must be a whole number of at least 1, not {value!r}."
LOW_CONFIDENCE = "the model's confidence in its step was {confidence:.2f}, below {below:g}"
MORE_INFO = "the model said it needs more information to go on"


@dataclass(frozen=True)
class LowConfidence:
    """A step whose ``confidence`` is below ``below``."""

    below: float = 0.5
    then: RuleAction = "ask"
    retries: int = 1

    def __post_init__(self) -> None:
        _check(self.then, self.retries)
        if isinstance(self.below, bool) or not isinstance(self.below, (int, float)):
            raise ValueError(BAD_BELOW.format(value=self.below))
        if not 0 <= self.below <= 1:
            raise ValueError(BAD_BELOW.format(value=self.below))

    def applies(self, *, confidence: float, needs_more_info: bool) -> bool:
        return confidence < self.below

    def reason(self, *, confidence: float, needs_more_info: bool) -> str:
        return LOW_CONFIDENCE.format(confidence=confidence, below=self.below)


@dataclass(frozen=True)
class NeedsMoreInfo:
    """A step that says ``needs_more_info``."""

    then: RuleAction = "ask"
    retries: int = 1

    def __post_init__(self) -> None:
        _check(self.then, self.retries)

    def applies(self, *, confidence: float, needs_more_info: bool) -> bool:
        return needs_more_info

    def reason(self, *, confidence: float, needs_more_info: bool) -> str:
        return MORE_INFO


StepRule = LowConfidence | NeedsMoreInfo


@dataclass(frozen=True)
class RuleHit:
    """A rule whose sign a step shows: what follows, why, and how many retries it allows."""

    then: RuleAction
    reason: str
    retries: int


def rule_hit(
    rules: Sequence[StepRule], *, confidence: float, needs_more_info: bool
) -> RuleHit | None:
    """The first of ``rules`` whose sign the step shows, or ``None``: the step goes ahead."""
    for rule in rules:
        if rule.applies(confidence=confidence, needs_more_info=needs_more_info):
            reason = rule.reason(confidence=confidence, needs_more_info=needs_more_info)
            return RuleHit(rule.then, reason, rule.retries)
    return None


def _check(then: str, retries: int) -> None:
    if then not in get_args(RuleAction):
        raise ValueError(BAD_ACTION.format(choices=list(get_args(RuleAction)), value=then))
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 1:
        raise ValueError(BAD_RETRIES.format(value=retries))
