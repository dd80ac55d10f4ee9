"""``--graph``: a person's own LangGraph graph, run by the CLI like one of the patterns.

A graph is named as ``langgraph.json`` names one: ``module:attr`` (a module
importable from the current folder) or ``path/to/file.py:attr``, or by its name
in the ``graphs`` of the ``langgraph.json`` in the current folder. ``attr`` is a
compiled graph or a factory that takes no argument and returns one.

A thread keeps the reference it was started with, a file made absolute, so that
``resume`` from another folder loads the same graph. The graph runs on the CLI's
thread store whatever checkpointer it was compiled with (one meant for
``langgraph dev`` has none): the CLI reads its threads from there.
"""

from __future__ import annotations

import importlib
import importlib.util
import json
import os
import re
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.graph.state import CompiledStateGraph

from reasoning_graphs.cli.errors import UsageError
from reasoning_graphs.graphs import PATTERNS

CONFIG_FILE = "langgraph.json"
NO_CONFIG = (
    "--graph {name!r} is neither module:attr nor path.py:attr, "
    "and there is no {config} in {folder} to name it"
)
UNREADABLE_CONFIG = "cannot read {config}: {error}"
UNKNOWN_NAME = "{config} names no graph {name!r}; it names: {names}"
PATTERN_HINT = " (for our {name} pattern, use --pattern {name})"
BAD_REFERENCE = "--graph {reference!r}: give module:attr, path/to/file.py:attr or a name"
NO_FILE = "--graph {reference!r}: no file {path}"
CANNOT_LOAD = "cannot load --graph {reference!r}: {kind}: {error}"
NO_ATTRIBUTE = "--graph {reference!r}: {source} has no {attr!r}"
NOT_A_GRAPH = (
    "--graph {reference!r} is a {kind}, not a compiled StateGraph "
    "or a factory taking no argument that returns one"
)


def is_graph_reference(pattern: str) -> bool:
    """Whether a thread's pattern names a user's graph (``source:attr``) rather than one of ours."""
    return ":" in pattern


def graph_reference(value: str, folder: Path | None = None) -> str:
    """What a thread keeps of ``--graph VALUE``: ``source:attr``, a file path made absolute
    and a name from ``langgraph.json`` replaced by what it names."""
    folder = folder or Path.cwd()
    if ":" not in value:
        value = _named_in_config(value, folder)
    source, _, attr = value.rpartition(":")
    if not source or not attr.isidentifier():
        raise UsageError(BAD_REFERENCE.format(reference=value))
    if _is_file(source):
        source = str((folder / Path(source).expanduser()).resolve())
    return f"{source}:{attr}"


def load_graph(reference: str, checkpointer: BaseCheckpointSaver) -> CompiledStateGraph:
    """The graph ``reference`` names (see :func:`graph_reference`), saving to ``checkpointer``.

    Raises:
        UsageError: No such module, file or attribute; code that fails as it loads;
            or a value that is no graph.
    """
    source, _, attr = reference.rpartition(":")
    module = _import(reference, source)
    if not hasattr(module, attr):
        raise UsageError(NO_ATTRIBUTE.format(reference=reference, source=source, attr=attr))
    value = getattr(module, attr)
    if callable(value) and not isinstance(value, CompiledStateGraph):
        value = _guarded(reference, value)
    if not isinstance(value, CompiledStateGraph):
        raise UsageError(NOT_A_GRAPH.format(reference=reference, kind=type(value).__name__))
    return value.copy(update={"checkpointer": checkpointer})


def _named_in_config(name: str, folder: Path) -> str:
    """The ``source:attr`` that ``langgraph.json`` in ``folder`` names ``name`` (a file
    relative to that folder, as the dev server reads it)."""
    config = folder / CONFIG_FILE
    if not config.is_file():
        raise UsageError(NO_CONFIG.format(name=name, config=CONFIG_FILE, folder=folder))
    try:
        graphs = json.loads(config.read_text(encoding="utf-8")).get("graphs") or {}
    except (OSError, ValueError, AttributeError) as error:
        raise UsageError(UNREADABLE_CONFIG.format(config=config, error=error)) from error
    entry = graphs.get(name)
    if isinstance(entry, dict):  # {"path": ..., "description": ...}
        entry = entry.get("path")
    if not isinstance(entry, str):
        hint = PATTERN_HINT.format(name=name) if name in PATTERNS else ""
        names = ", ".join(graphs) or "none"
        raise UsageError(UNKNOWN_NAME.format(config=config, name=name, names=names) + hint)
    return entry


def _is_file(source: str) -> bool:
    return source.endswith(".py") or "/" in source or os.sep in source


def _import(reference: str, source: str) -> ModuleType:
    """The module ``source`` names, its code run with the current folder importable."""
    folder = os.getcwd()
    if folder not in sys.path:
        sys.path.insert(0, folder)
    if not _is_file(source):
        return _guarded(reference, importlib.import_module, source)
    path = Path(source)
    if not path.is_file():
        raise UsageError(NO_FILE.format(reference=reference, path=path))
    name = re.sub(r"\W", "_", str(path.with_suffix("")))
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise UsageError(NO_FILE.format(reference=reference, path=path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # as an import would: dataclasses and pickling look it up
    _guarded(reference, spec.loader.exec_module, module)
    return module


def _guarded(reference: str, load: Any, *args: Any) -> Any:
    """``load(*args)``: a user's code, whose failure is one line for the person."""
    try:
        return load(*args)
    except Exception as error:
        detail = " ".join(str(error).split())
        raise UsageError(
            CANNOT_LOAD.format(reference=reference, kind=type(error).__name__, error=detail)
        ) from error
