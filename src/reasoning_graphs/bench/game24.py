"""The Game of 24: read an answer's expression safely, check it, solve a puzzle, show its steps.

A puzzle is four numbers; a solution is an arithmetic expression that uses each
of them exactly once (as a multiset), with ``+ - * /`` and parentheses only, and
equals 24. The expression is parsed with :mod:`ast` and computed with
:class:`~fractions.Fraction` — never ``eval`` — so ``8/(3-8/3)`` counts and
``0.1``-style rounding never does; a division by zero is simply no solution.
(The game as Yao et al., 2023 use it to test Tree-of-Thoughts.)

Examples:
    >>> check("Answer: (8 - 4) * (7 - 1) = 24", [1, 4, 7, 8])
    (True, '(8 - 4) * (7 - 1) = 24')
    >>> check("8 * 3", [3, 8, 1, 1])
    (False, 'uses 3 8, not 1 1 3 8')
"""

from __future__ import annotations

import ast
import itertools
import operator
import re
from collections import Counter
from collections.abc import Callable, Sequence
from fractions import Fraction

from reasoning_graphs.python_syntax import parse

TARGET = 24
OPERATORS: dict[type[ast.operator], tuple[str, Callable[[Fraction, Fraction], Fraction]]] = {
    ast.Add: ("+", operator.add),
    ast.Sub: ("-", operator.sub),
    ast.Mult: ("*", operator.mul),
    ast.Div: ("/", operator.truediv),
}
ANSWER_LABEL = re.compile(r"^.*\banswer\s*[:：]", re.IGNORECASE | re.DOTALL)
LOOK_ALIKES = str.maketrans({"×": "*", "÷": "/", "−": "-", "–": "-", "x": "*", "X": "*"})
DECORATION = " \t\n*_`$."

NO_EXPRESSION = "no arithmetic expression of + - * / and parentheses"
DIVISION_BY_ZERO = "divides by zero"
WRONG_NUMBERS = "uses {used}, not {given}"
NOT_TARGET = "equals {value}, not 24"


class NotArithmetic(ValueError):
    """The text is not an expression of whole numbers, ``+ - * /`` and parentheses."""


def expression_in(answer: str) -> str:
    """The expression an answer gives: after an ``Answer:`` label, before an ``= 24``."""
    text = ANSWER_LABEL.sub("", answer).strip().translate(LOOK_ALIKES)
    sides = [side.strip(DECORATION) for side in text.split("=")]
    written = [side for side in sides if side and side != str(TARGET)]
    return written[0] if written else ""


def evaluate(expression: str) -> tuple[Fraction, list[int]]:
    """The value of ``expression`` and the numbers it uses, in order.

    Raises:
        NotArithmetic: It is anything else than whole numbers, ``+ - * /`` and parentheses.
        ZeroDivisionError: It divides by zero.
    """
    try:
        tree = parse(expression, mode="eval")
    except SyntaxError as error:
        raise NotArithmetic(NO_EXPRESSION) from error
    numbers: list[int] = []
    return _value(tree.body, numbers), numbers


def _value(node: ast.expr, numbers: list[int]) -> Fraction:
    if isinstance(node, ast.Constant) and type(node.value) is int:
        numbers.append(node.value)
        return Fraction(node.value)
    if isinstance(node, ast.BinOp) and type(node.op) in OPERATORS:
        left, right = _value(node.left, numbers), _value(node.right, numbers)
        return OPERATORS[type(node.op)][1](left, right)
    raise NotArithmetic(NO_EXPRESSION)


def check(answer: str, numbers: Sequence[int]) -> tuple[bool, str]:
    """Whether ``answer`` solves the puzzle ``numbers``, and what was found."""
    expression = expression_in(answer)
    try:
        value, used = evaluate(expression)
    except NotArithmetic as error:
        return False, str(error)
    except ZeroDivisionError:
        return False, DIVISION_BY_ZERO
    if Counter(used) != Counter(numbers):
        return False, WRONG_NUMBERS.format(used=_listed(used), given=_listed(numbers))
    if value != TARGET:
        return False, NOT_TARGET.format(value=str(value))
    return True, f"{expression} = {TARGET}"


def solve(numbers: Sequence[int]) -> str | None:
    """One expression that makes 24 from ``numbers``, or ``None`` when none does."""
    return _search([(Fraction(n), str(n)) for n in numbers])


def _search(items: list[tuple[Fraction, str]]) -> str | None:
    if len(items) == 1:
        return items[0][1] if items[0][0] == TARGET else None
    for i, j in itertools.permutations(range(len(items)), 2):
        (a, a_text), (b, b_text) = items[i], items[j]
        rest = [item for k, item in enumerate(items) if k not in (i, j)]
        for symbol, apply in OPERATORS.values():
            if symbol == "/" and b == 0:
                continue
            found = _search([*rest, (apply(a, b), f"({a_text} {symbol} {b_text})")])
            if found is not None:
                return found[1:-1] if found.startswith("(") and len(rest) == 0 else found
    return None


def steps(expression: str, numbers: Sequence[int]) -> list[str]:
    """The solution as steps of one operation each, with the numbers left after it:
    ``["8 - 4 = 4 (left: 1 4 7)", ...]`` (the thoughts Tree-of-Thoughts searches over)."""
    tree = parse(expression, mode="eval")
    left = Counter(Fraction(n) for n in numbers)
    written: list[str] = []

    def walk(node: ast.expr) -> Fraction:
        if isinstance(node, ast.BinOp):
            a, b = walk(node.left), walk(node.right)
            symbol, apply = OPERATORS[type(node.op)]
            result = apply(a, b)
            left.subtract([a, b])
            left[result] += 1
            remaining = " ".join(str(n) for n in sorted(left.elements()))
            written.append(f"{a} {symbol} {b} = {result} (left: {remaining})")
            return result
        if not (isinstance(node, ast.Constant) and type(node.value) is int):
            raise NotArithmetic(NO_EXPRESSION)
        return Fraction(node.value)

    walk(tree.body)
    return written


def _listed(numbers: Sequence[int]) -> str:
    return " ".join(str(n) for n in sorted(numbers))
