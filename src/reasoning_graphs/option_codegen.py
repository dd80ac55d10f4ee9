"""Writes :mod:`reasoning_graphs.option_classes` from the one table of options.

Type checkers need the run-option schema, the build options and the limits as
classes written in a file; this derives that file from
:data:`~reasoning_graphs.option_table.OPTIONS`, so a new option is added to the
table alone and the file is written again::

    python -m reasoning_graphs.option_codegen

A test fails while the file and the table disagree.
"""

from __future__ import annotations

import textwrap
from collections.abc import Iterable
from pathlib import Path

from reasoning_graphs.option_table import OPTIONS, Option

TARGET = Path(__file__).with_name("option_classes.py")

HEADER = '''"""The option classes, derived from :mod:`reasoning_graphs.option_table`.

Written by ``python -m reasoning_graphs.option_codegen``: change the table, not this file.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from typing_extensions import TypedDict

from reasoning_graphs.option_bounds import CheckedOptions
from reasoning_graphs.option_table import (
    ContextStrategy,
    Mode,
    StepFormat,
    limit_field,
    run_field,
)

if TYPE_CHECKING:
    from langchain.agents.middleware import AgentMiddleware
    from langchain_core.language_models import BaseChatModel

    from reasoning_graphs.nodes.model.stream_transformers import TransformerFactory
    from reasoning_graphs.response_format import AnswerFormat
    from reasoning_graphs.tools.policy import Rule
'''


def source() -> str:
    """The text of :mod:`reasoning_graphs.option_classes` for the table as it is."""
    run = [option for option in OPTIONS if option.bound is not None]
    parts = [
        HEADER,
        _class(
            "@dataclass(kw_only=True)\nclass AgentContext(CheckedOptions):",
            "Per-run options for every reasoning-graphs pattern (unset: the graph's value).\n\n"
            "    Each value a run gives is checked by its option's bound when the options are "
            "made,\n    so a dev-server run fails at its start; an option that declares no "
            "bound cannot be\n    given at all.\n    ",
            (f'{o.name}: {o.run_type} | None = run_field("{o.name}")' for o in run if not o.loop),
        ),
        _class(
            "@dataclass(kw_only=True)\nclass ReactLoopContext(AgentContext):",
            "Per-run options of the patterns whose turn is the ReAct loop (``react``,\n    "
            "``react_text``, ``plan_react``): the shared ones plus the loop's own.",
            (f'{o.name}: {o.run_type} | None = run_field("{o.name}")' for o in run if o.loop),
        ),
        _class(
            "@dataclass(frozen=True)\nclass LimitFields:",
            "A run's resolved limits and approval lists.",
            (f'{o.name}: {o.limit} = limit_field("{o.name}")' for o in OPTIONS if o.limit),
        ),
        _class(
            "class AgentOptions(TypedDict, total=False):",
            _build_docs(option for option in OPTIONS if option.build),
            (f"{o.name}: {o.build}" for o in OPTIONS if o.build),
        ),
    ]
    return "\n\n".join(parts)


def _class(head: str, doc: str, lines: Iterable[str]) -> str:
    body = "\n".join(f"    {line}" for line in lines)
    return f'{head}\n    """{doc}"""\n\n{body}\n'


def _build_docs(options: Iterable[Option]) -> str:
    """The build options' docstring: each option's meaning and default."""
    entries = []
    for option in options:
        text = textwrap.fill(
            f"{option.name}: {option.build_description}",
            width=92,
            initial_indent="        ",
            subsequent_indent="            ",
        )
        entries.append(text)
    return (
        "Build-time options shared by the patterns (each pattern's ``build_graph`` adds its "
        "own).\n\n    Attributes:\n" + "\n".join(entries) + "\n    "
    )


def main() -> None:
    TARGET.write_text(source())


if __name__ == "__main__":
    main()
