"""How a run may change an option, declared where the option is defined.

Any client of the dev server can send run options, so a run may tighten the
graph's policy, never loosen it. Each run option names its :class:`Bound` in its
field (``own_option("...", bound=LowerOnly(least=1), default=3)``): the bound checks the
value a run gives and merges it with the graph's. An option that declares no
bound cannot be set by a run at all (:func:`bound_of` refuses it), so a new
option is never raised by a client by mistake.
"""

from __future__ import annotations

import re
import warnings
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import Field, dataclass, fields
from typing import Any

BOUND = "bound"
"""The key of a run option's field metadata that holds its :class:`Bound`."""

NO_BOUND = (
    "Run option {name!r} declares no bound (how a run may change it), so a run cannot set it."
)
BAD_COUNT = "Option {name!r} must be a whole number of at least {least}, not {value!r}."
BAD_SECONDS = "Option {name!r} must be a number of seconds above 0, not {value!r}."
BAD_FRACTION = "Option {name!r} must be a number above 0 and at most 1, not {value!r}."
BAD_SWITCH = "Option {name!r} must be true or false, not {value!r}."
BAD_CHOICE = "Option {name!r} must be one of {choices}, not {value!r}."
BAD_MODEL = "Option {name!r} must be a model spec string, not {value!r}."
BAD_NAMES = "Option {name!r} must be a list of tool names, not {value!r}."
BAD_NAME = (
    "Option {name!r} must be a name of 1 to {longest} letters, digits, '_', '@' or '-' "
    "starting with a letter or digit, not {value!r}."
)
TOOLS_NOT_IN_GRAPH = "Run option {name!r} names {names}, which this graph does not enable: {known}."
RENAMED = "Option {old!r} is now called {new!r}; the old name goes in a later release."
BOTH_NAMES = (
    "Options {old!r} and {new!r} are one option under its old and new name, given different "
    "values ({old_value!r}, {new_value!r}): give only {new!r}."
)


class Bound(ABC):
    """How a run may change one option: the values it may give, and how they meet the graph's.

    ``note`` tells a person what a run may do with the option (Studio shows it)."""

    note = ""

    @abstractmethod
    def check(self, name: str, value: Any) -> None:
        """Raise ``ValueError`` naming the option ``name`` when a run may not give ``value``."""

    def merged(self, name: str, built: Any, value: Any) -> Any:
        """The option for a run that gives ``value`` (already checked) where the graph has
        ``built``; unless the bound says otherwise, the run's value."""
        return value


@dataclass(frozen=True)
class LowerOnly(Bound):
    """A limit a run may lower, never raise or remove (the graph's ``None`` is no limit):
    whole numbers of at least ``least``, or with ``seconds`` any number of seconds above 0."""

    least: int = 0
    seconds: bool = False
    note = " May lower the graph's value, not raise it."

    def check(self, name: str, value: Any) -> None:
        if self.seconds and not (_is_number(value) and value > 0):
            raise ValueError(BAD_SECONDS.format(name=name, value=value))
        if not self.seconds and not (_is_whole(value) and value >= self.least):
            raise ValueError(BAD_COUNT.format(name=name, least=self.least, value=value))

    def merged(self, name: str, built: Any, value: Any) -> Any:
        return value if built is None else min(built, value)


@dataclass(frozen=True)
class OnOnly(Bound):
    """A switch a run may turn on, never off: a check the graph makes stays made."""

    note = " May turn it on, not off."

    def check(self, name: str, value: Any) -> None:
        if not isinstance(value, bool):
            raise ValueError(BAD_SWITCH.format(name=name, value=value))

    def merged(self, name: str, built: Any, value: Any) -> Any:
        return bool(built) or value


@dataclass(frozen=True)
class Fraction(Bound):
    """A share above 0 and at most 1 that a run sets freely (how good an answer must be, how
    full a prompt may grow): it says when work ends well, not how much of it there is."""

    def check(self, name: str, value: Any) -> None:
        if not (_is_number(value) and 0 < value <= 1):
            raise ValueError(BAD_FRACTION.format(name=name, value=value))


@dataclass(frozen=True)
class FreeCount(Bound):
    """A whole number a run sets freely: it shapes the prompt, not what the agent may do."""

    least: int = 1

    def check(self, name: str, value: Any) -> None:
        if not (_is_whole(value) and value >= self.least):
            raise ValueError(BAD_COUNT.format(name=name, least=self.least, value=value))


@dataclass(frozen=True)
class ModelSpec(Bound):
    """A model spec a run sets freely (a served run may name only the models its deployment
    allows: :mod:`reasoning_graphs.served_models`)."""

    def check(self, name: str, value: Any) -> None:
        if not isinstance(value, str):
            raise ValueError(BAD_MODEL.format(name=name, value=value))


@dataclass(frozen=True)
class OneOf(Bound):
    """One of a few named values, which a run picks freely."""

    choices: tuple[str, ...]

    def check(self, name: str, value: Any) -> None:
        if value not in self.choices:
            raise ValueError(BAD_CHOICE.format(name=name, choices=list(self.choices), value=value))


@dataclass(frozen=True)
class PlainName(Bound):
    """A name a run picks freely that becomes part of a key (a memory namespace): checked,
    never rewritten, so two different names never become one and none holds a separator
    or a path."""

    longest: int = 64

    def check(self, name: str, value: Any) -> None:
        if not (isinstance(value, str) and _PLAIN_NAME.fullmatch(value)):
            raise ValueError(BAD_NAME.format(name=name, longest=self.longest, value=value))
        if len(value) > self.longest:
            raise ValueError(BAD_NAME.format(name=name, longest=self.longest, value=value))


class ToolList(Bound):
    """A list of the graph's tool names."""

    def check(self, name: str, value: Any) -> None:
        if not isinstance(value, (list, tuple)) or not all(isinstance(n, str) for n in value):
            raise ValueError(BAD_NAMES.format(name=name, value=value))


@dataclass(frozen=True)
class AddsTools(ToolList):
    """Tools a run adds to the graph's list, never takes from it (approvals, denials)."""

    note = " Adds to the graph's list."

    def merged(self, name: str, built: Sequence[str], value: Sequence[str]) -> tuple[str, ...]:
        return tuple(dict.fromkeys((*built, *value)))


@dataclass(frozen=True)
class NarrowsTools(ToolList):
    """Tools a run picks among the graph's (the graph's ``None``: all it was built with)."""

    def merged(
        self, name: str, built: Sequence[str] | None, value: Sequence[str]
    ) -> tuple[str, ...]:
        outside = [tool for tool in value if built is not None and tool not in built]
        if outside:
            raise ValueError(
                TOOLS_NOT_IN_GRAPH.format(name=name, names=outside, known=list(built or ()))
            )
        return tuple(value)


@dataclass(frozen=True)
class AnswerShape(Bound):
    """A JSON schema for the typed answer, which a run sets freely: it asks for one more
    model call, which the budgets count. A graph built with a schema of its own keeps it
    (:mod:`~reasoning_graphs.nodes.steps.typed_answer`). A client's schema may hold no
    regular expression (see :func:`~reasoning_graphs.response_format.check_json_schema`)."""

    def check(self, name: str, value: Any) -> None:
        from reasoning_graphs.response_format import check_json_schema

        check_json_schema(value, regexes=False)


@dataclass(frozen=True)
class RenamedTo(Bound):
    """An option's former name, kept for one release: a value given under it moves to the
    option ``current`` (with a ``DeprecationWarning``) and obeys that option's bound, which
    :class:`~reasoning_graphs.context.AgentContext` checks under this name."""

    current: str

    def check(self, name: str, value: Any) -> None:
        """Nothing of its own: the value is the current option's, and checked by its bound."""


class CheckedOptions:
    """A dataclass of run options whose values are checked by their bounds when it is made."""

    def __post_init__(self) -> None:
        """A value under a former name moves to the current option, checked by that option's
        bound under the name the run used; then each value given is checked by its own bound
        (an option that declares none refuses any)."""
        for old, new in renamed_options(type(self)).items():
            value = getattr(self, old)
            if is_unset(value):
                continue
            bound_named(type(self), new).check(old, value)
            given = getattr(self, new)
            setattr(self, new, moved(old, new, value, None if is_unset(given) else given))
            setattr(self, old, None)
        for item in fields(self):  # type: ignore[arg-type]
            value = getattr(self, item.name)
            if not is_unset(value):
                bound_of(item).check(item.name, value)


def renamed_options(schema: type) -> dict[str, str]:
    """Each former option name of ``schema`` (a dataclass), and the name it now has."""
    return {
        item.name: item.metadata[BOUND].current
        for item in fields(schema)
        if isinstance(item.metadata.get(BOUND), RenamedTo)
    }


def moved(old: str, new: str, value: Any, given: Any) -> Any:
    """``value``, given under the former name ``old``, as the option ``new`` (which was
    given as ``given``: ``None`` when unset), with a ``DeprecationWarning``."""
    if given is not None and given != value:
        raise ValueError(BOTH_NAMES.format(old=old, new=new, old_value=value, new_value=given))
    warnings.warn(RENAMED.format(old=old, new=new), DeprecationWarning, stacklevel=3)
    return value


def is_unset(value: Any) -> bool:
    """``None``, ``""``, an empty list and an empty object all mean "the graph's value"."""
    return value is None or (isinstance(value, (str, list, tuple, dict)) and not value)


def bound_named(schema: type, name: str) -> Bound:
    """The bound that ``schema``'s option ``name`` declares."""
    return bound_of(next(item for item in fields(schema) if item.name == name))


def bound_of(option: Field[Any]) -> Bound:
    """The bound ``option`` declares; a ``ValueError`` naming it when it declares none."""
    bound = option.metadata.get(BOUND)
    if not isinstance(bound, Bound):
        raise ValueError(NO_BOUND.format(name=option.name))
    return bound


def options_bounded_by(
    schema: type, kind: type[Bound] | tuple[type[Bound], ...]
) -> tuple[str, ...]:
    """The run options of ``schema`` (a dataclass) whose bound is a ``kind`` (or one of them)."""
    return tuple(item.name for item in fields(schema) if isinstance(item.metadata.get(BOUND), kind))


_PLAIN_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_@-]*")


def _is_whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
