"""A pattern's own options, declared once, in its run-option class.

An option a pattern has of its own (Tree-of-Thoughts' ``breadth``, Reflexion's
``max_trials``) is one field of the pattern's run-option class (its ``context.py``),
made with :func:`own_option`: what it means, how a run may change it (its
:mod:`bound <reasoning_graphs.option_bounds>`) and the graph's value when the build
names none. Everything else is derived from that field: the Studio description (the
meaning and what the bound allows), the ``build_graph`` keyword's default, its line in
the docstring and its check (:mod:`~reasoning_graphs.nodes.wiring.pattern_builder`),
and the command line's flag (:mod:`reasoning_graphs.cli.option_flags`).

A pattern's options that only a build may set (a callable, a rule list) are declared
by the ``build_graph`` keyword alone, with their docstring line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from reasoning_graphs.option_bounds import BOUND, Bound

BUILT = "built"
"""The key of an own option's field metadata that holds the graph's value by default."""
ABOUT = "about"
"""The key of an own option's field metadata that holds its meaning alone."""


def own_option(about: str, *, bound: Bound, default: Any) -> Any:
    """A field of a pattern's run-option class for an option of the pattern's own.

    Args:
        about: What the option means, said once (Studio adds what the bound lets a run do).
        bound: How a run may change it; a build's value passes the same check.
        default: The graph's value when the build names none.
    """
    metadata = {"description": about + bound.note, ABOUT: about, BOUND: bound, BUILT: default}
    return field(default=None, metadata=metadata)


@dataclass(frozen=True)
class OwnOption:
    """One option of a pattern's own, as its field declares it.

    Attributes:
        name: The option's name, the same as a run option and a build keyword.
        about: What it means.
        bound: How a run may change it; a build's value passes its check too.
        default: The graph's value when the build names none.
    """

    name: str
    about: str
    bound: Bound
    default: Any

    @property
    def doc(self) -> str:
        """Its docstring line for ``build_graph``: the meaning and the default."""
        return f"{self.name}: {self.about} Default {self.default!r}."


def own_options(schema: type) -> tuple[OwnOption, ...]:
    """The options of ``schema`` (a pattern's run-option class) that are the pattern's own,
    in the order it declares them."""
    return tuple(
        OwnOption(
            name=item.name,
            about=item.metadata[ABOUT],
            bound=item.metadata[BOUND],
            default=item.metadata[BUILT],
        )
        for item in fields(schema)
        if BUILT in item.metadata
    )


def built_values(declared: Sequence[OwnOption], given: Mapping[str, Any]) -> dict[str, Any]:
    """The graph's value of each ``declared`` option: the ``given`` one, checked by its
    bound (a ``ValueError`` naming it), or the declared default."""
    values = {}
    for option in declared:
        value = given.get(option.name, option.default)
        option.bound.check(option.name, value)
        values[option.name] = value
    return values
