"""Parsing tries once more on CPython 3.11's spurious recursion-depth error, and only on it."""

from __future__ import annotations

import ast
from typing import Any

import pytest

from reasoning_graphs import python_syntax
from reasoning_graphs.tools.arithmetic import evaluate

SPURIOUS = "AST constructor recursion depth mismatch (before=60, after=57)"


class Flaky:
    """``ast.parse`` that fails with ``error`` the first ``times`` calls."""

    def __init__(self, error: Exception, times: int = 1) -> None:
        self.error, self.times, self.calls = error, times, 0
        self.parse = ast.parse

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        if self.calls <= self.times:
            raise self.error
        return self.parse(*args, **kwargs)


def test_the_spurious_error_is_tried_once_more(monkeypatch: pytest.MonkeyPatch) -> None:
    flaky = Flaky(SystemError(SPURIOUS))
    monkeypatch.setattr(ast, "parse", flaky)

    assert evaluate("23*17+4") == "395"  # the calculator parses through the helper
    assert flaky.calls == 2


@pytest.mark.parametrize(
    ("error", "times"),
    [(SystemError(SPURIOUS), 2), (SystemError("something else"), 1)],
    ids=["twice", "another error"],
)
def test_other_failures_still_raise(
    monkeypatch: pytest.MonkeyPatch, error: Exception, times: int
) -> None:
    monkeypatch.setattr(ast, "parse", Flaky(error, times))

    with pytest.raises(SystemError):
        python_syntax.parse("1 + 1", mode="eval")


def test_a_real_syntax_error_raises() -> None:
    with pytest.raises(SyntaxError):
        python_syntax.parse("1 +", mode="eval")
