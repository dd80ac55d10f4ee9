"""The runnable examples in the package's docstrings run and give what they show."""

from __future__ import annotations

import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import reasoning_graphs


def _modules_with_examples() -> list[str]:
    names = []
    for info in pkgutil.walk_packages(reasoning_graphs.__path__, "reasoning_graphs."):
        spec = importlib.util.find_spec(info.name)
        if spec and spec.origin and ">>>" in Path(spec.origin).read_text(encoding="utf-8"):
            names.append(info.name)
    return names


@pytest.mark.parametrize("name", _modules_with_examples())
def test_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS, verbose=False)
    assert result.failed == 0, f"{result.failed} docstring example(s) of {name} failed"
