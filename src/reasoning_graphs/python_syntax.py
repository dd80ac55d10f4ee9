"""Python's syntax trees, made and compiled with one more try on CPython's spurious error.

CPython 3.11 (3.11.7 here) tracks the depth of a syntax tree it turns into objects, or
back, and misses a step of that count on an error path (python/cpython#106905): a
finalizer that fails while the tree is being built leaves a later call failing with
``SystemError: AST constructor recursion depth mismatch``, though its source is fine.
It showed here once, in a Tree-of-Thoughts run scoring its samples. Parsing is pure, so
each use tries once more on that error (a real syntax error still raises).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any, Literal, TypeVar

T = TypeVar("T")
SPURIOUS = "recursion depth mismatch"


def parse(source: str, mode: Literal["exec", "eval"] = "exec") -> Any:
    """``ast.parse(source, mode=mode)``."""
    return _tried_twice(lambda: ast.parse(source, mode=mode))


def literal(text: str) -> Any:
    """``ast.literal_eval(text)``."""
    return _tried_twice(lambda: ast.literal_eval(text))


def compiled(
    tree: ast.Module | ast.Expression, filename: str, mode: Literal["exec", "eval"]
) -> Any:
    """``compile(tree, filename, mode)`` of a syntax tree."""
    return _tried_twice(lambda: compile(tree, filename, mode))


def _tried_twice(make: Callable[[], T]) -> T:
    try:
        return make()
    except SystemError as exc:
        if SPURIOUS not in str(exc):
            raise
        return make()
