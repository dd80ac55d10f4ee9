"""The command line's flags for the shared options, derived from the option table.

A flag's name, meaning, value type and check come from the option's entry in
:data:`~reasoning_graphs.option_table.OPTIONS` and its bound, so the command line
says what the option says and refuses what a run would refuse.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable, Mapping
from typing import Any

from reasoning_graphs.cli.errors import UsageError
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


def _help(option: Option, note: str) -> str:
    about = option.about.replace("%", "%%")  # argparse formats help with %
    return about[0].lower() + about[1:].rstrip(".") + note


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
