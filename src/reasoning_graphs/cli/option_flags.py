"""The command line's flags for the options, derived from where each is declared.

A shared option's flag comes from its entry in :data:`~reasoning_graphs.option_table.
OPTIONS`, a pattern's own option's from its run-option class
(:mod:`reasoning_graphs.pattern_options`): name, meaning, value type and check, so the
command line says what the option says and refuses what a run would refuse.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from functools import cache
from typing import Any

from reasoning_graphs.cli.errors import UsageError
from reasoning_graphs.graphs import PATTERNS
from reasoning_graphs.option_bounds import (
    AddsTools,
    Bound,
    Fraction,
    LowerOnly,
    ModelSpec,
    OneOf,
    OnOnly,
)
from reasoning_graphs.option_table import OPTION, OPTIONS, Option
from reasoning_graphs.pattern_options import OwnOption, own_options

FLAGGED = tuple(option.name for option in OPTIONS if option.flag is not None)
"""The options the command line gives, in the table's order."""


def flag_name(name: str) -> str:
    """The flag that gives option ``name``."""
    flag = OPTION[name].flag
    assert flag is not None, name
    return flag.name or "--" + name.replace("_", "-")


def add_option_flags(
    parser: argparse.ArgumentParser, names: Iterable[str], notes: Mapping[str, str] | None = None
) -> None:
    """Add the flags of options ``names`` to ``parser``; ``notes`` add to a flag's help
    what this command does with it (each flag's own note otherwise)."""
    for name in names:
        option = OPTION[name]
        assert option.flag is not None, name
        note = (notes or {}).get(name, option.flag.note)
        parser.add_argument(
            flag_name(name),
            dest=name,
            help=_help(option, note),
            **_value_kind(option.bound, option.flag.metavar),
        )


def given_options(args: argparse.Namespace, names: Iterable[str]) -> dict[str, Any]:
    """The options among ``names`` that ``args`` gives, each checked by its bound as a run's
    value is (a value the bound refuses is a usage error naming the flag)."""
    given = {name: getattr(args, name) for name in names if getattr(args, name) is not None}
    for name, value in given.items():
        bound = OPTION[name].bound
        try:
            if bound is not None:
                bound.check(name, value)
        except ValueError as error:
            raise UsageError(f"{flag_name(name)}: {error}") from error
    return given


@cache
def pattern_options() -> dict[str, dict[str, OwnOption]]:
    """Each pattern's own option, by name, and the patterns that have it with the option as
    each declares it (two patterns may mean the same name a little differently)."""
    found: dict[str, dict[str, OwnOption]] = {}
    for name, pattern in PATTERNS.items():
        for option in own_options(pattern.load_context()):
            found.setdefault(option.name, {})[name] = option
    return found


def add_pattern_flags(parser: argparse.ArgumentParser) -> None:
    """Add a flag for each pattern's own option; its help says which patterns take it."""
    group = parser.add_argument_group(
        "options of one pattern", "kept with the thread; a pattern without the option refuses it"
    )
    for name, declared in pattern_options().items():
        first = next(iter(declared.values()))
        group.add_argument(
            "--" + name.replace("_", "-"),
            dest=name,
            help="; ".join(
                f"{pattern}: {_lower(option.about)}" for pattern, option in declared.items()
            )
            + _default_notes(declared),
            **_value_kind(first.bound, "N" if isinstance(first.default, int) else None),
        )


def given_pattern_options(args: argparse.Namespace) -> dict[str, Any]:
    """The patterns' own options that ``args`` gives, each checked by its bound (a value it
    refuses is a usage error naming the flag)."""
    given = {}
    for name, declared in pattern_options().items():
        value = getattr(args, name, None)
        if value is None:
            continue
        try:
            next(iter(declared.values())).bound.check(name, value)
        except ValueError as error:
            raise UsageError(f"--{name.replace('_', '-')}: {error}") from error
        given[name] = value
    return given


def _default_notes(declared: Mapping[str, OwnOption]) -> str:
    defaults = {option.default for option in declared.values()}
    if len(defaults) == 1:
        return f" (default {next(iter(defaults))!r})".replace("%", "%%")
    notes = ", ".join(f"{pattern} {option.default!r}" for pattern, option in declared.items())
    return f" (default: {notes})".replace("%", "%%")


def _help(option: Option, note: str) -> str:
    return _lower(option.about).rstrip(".") + note


def _lower(about: str) -> str:
    about = about.replace("%", "%%")  # argparse formats help with %
    return about[0].lower() + about[1:].rstrip(".")


def _value_kind(bound: Bound | None, metavar: str | None) -> dict[str, Any]:
    """argparse's reading of a value the bound accepts."""
    if isinstance(bound, OnOnly):
        return {"action": "store_true", "default": None}
    if isinstance(bound, ModelSpec):
        return {"metavar": metavar}
    if isinstance(bound, OneOf):
        return {"choices": list(bound.choices), "metavar": metavar}
    if isinstance(bound, AddsTools):
        return {"action": "append", "metavar": metavar}
    if isinstance(bound, Fraction) or (isinstance(bound, LowerOnly) and bound.seconds):
        return {"type": float, "metavar": metavar}
    return {"type": int, "metavar": metavar}
