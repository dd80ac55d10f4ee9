"""Arithmetic a model can trust: exact, bounded, and unable to reach anything else.

The expression is parsed with :mod:`ast` and walked node by node; only numbers,
arithmetic operators and a short list of math functions are understood, so no
input can reach ``eval``, names, attributes or imports.

Every operation is bounded before it can run long. Each value, literal or
intermediate, is refused once it has more than :data:`MAX_RESULT_DIGITS`
digits, so ``+ - * / // %`` and the functions take milliseconds even on the
largest operands, and every result prints (Python refuses integers above 4300
digits). The operations whose work grows with an operand's *value* rather than
its size are checked first: the exponent of ``**`` (``9**9**9``) and the digits
of ``round`` (``round(1, -10**8)`` computes ``10**100000000`` in one C call that
no thread can interrupt). Shifts, factorials and the like are not offered.

Only the standard library is imported: the calculator evaluates in a worker
process (:mod:`reasoning_graphs.tools.isolated`), which should start quickly.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

from reasoning_graphs.python_syntax import parse

MAX_EXPRESSION_CHARS = 200
MAX_EXPONENT = 1000
MAX_RESULT_DIGITS = 4000
"""Python refuses to print integers above 4300 digits, so results stay below that."""
MAX_ROUND_DIGITS = MAX_RESULT_DIGITS
"""``round(x, -n)`` computes ``10**n``: as large as the largest allowed result."""

Number = int | float

FUNCTIONS: dict[str, Callable[..., Number]] = {
    "sqrt": math.sqrt,
    "log": math.log,
    "sin": math.sin,
    "cos": math.cos,
    "abs": abs,
    "round": round,
    "min": min,
    "max": max,
}
CONSTANTS: dict[str, float] = {"pi": math.pi, "e": math.e}

BINARY_OPERATORS: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
UNARY_OPERATORS: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}

EXAMPLE = "2*(3+4)"
"""The expression the calculator's texts show a model. Not a question anyone asks: a small
model copies the example it is shown, whatever it was asked."""
EMPTY_EXPRESSION = f"The expression is empty: pass arithmetic such as '{EXAMPLE}'."
EXPRESSION_TOO_LONG = (
    "The expression has {length} characters; the limit is {limit}. "
    "Split the calculation into smaller steps."
)
INVALID_SYNTAX = "{expression!r} is not a valid arithmetic expression ({detail})."
NOT_ALLOWED = (
    "{what} is not allowed: use only numbers, + - * / // % **, parentheses, "
    "the functions {functions} and the constants {constants}."
)
UNKNOWN_NAME = "Unknown name {name!r}: the only constants are {constants}."
UNKNOWN_FUNCTION = "Unknown function {name!r}: the only functions are {functions}."
KEYWORD_ARGUMENTS = "Function {name!r} takes positional arguments only."
NOT_A_NUMBER = "{value!r} is not a number: only integers and decimals are understood."
EXPONENT_TOO_LARGE = "The exponent is too large: its size may be at most {limit}."
RESULT_TOO_LARGE = (
    "The result would have more than {limit} digits; refuse to compute it. "
    "Use scientific notation with a float, e.g. 2.0**{exponent}, or a smaller calculation."
)
ROUND_DIGITS_TOO_LARGE = "round() can keep at most {limit} digits either side of the point."
INTEGER_TOO_LARGE = "The result has more than {limit} digits, too large to compute."
DIVISION_BY_ZERO = "Division by zero."
NOT_FINITE = "The result is not a finite real number ({value})."
NOT_REAL = "The result is a complex number; only real results are supported."
FLOAT_OVERFLOW = "The result is too large for a floating-point number."
FUNCTION_FAILED = "{name}() failed: {detail}."

_LOG10_2 = math.log10(2)


def evaluate(expression: str) -> str:
    """Compute an arithmetic expression and format the result.

    Args:
        expression: Arithmetic such as ``"23*17+4"``.

    Returns:
        The result as text: integers without a decimal point, floats with up to
        15 significant digits (so ``0.1+0.2`` reads ``0.3``).

    Raises:
        ValueError: The expression is too long, not arithmetic, uses anything
            outside the allowed operators, functions and constants, or its
            result would be too large or not a real number.

    Examples:
        >>> evaluate("23*17+4"), evaluate("0.1 + 0.2")
        ('395', '0.3')
    """
    text = expression.strip()
    if not text:
        raise ValueError(EMPTY_EXPRESSION)
    if len(text) > MAX_EXPRESSION_CHARS:
        raise ValueError(EXPRESSION_TOO_LONG.format(length=len(text), limit=MAX_EXPRESSION_CHARS))
    try:
        tree = parse(text, mode="eval")
    except SyntaxError as exc:
        raise ValueError(INVALID_SYNTAX.format(expression=text, detail=exc.msg)) from None
    value = _evaluate(tree.body)
    if isinstance(value, int):
        return str(value)
    return format(value, ".15g")


def _evaluate(node: ast.expr) -> Number:
    """Walk one node; every node type not handled here is refused."""
    if isinstance(node, ast.Constant):
        return _bounded(_number(node.value))
    if isinstance(node, ast.Name):
        if node.id not in CONSTANTS:
            raise ValueError(UNKNOWN_NAME.format(name=node.id, constants=_names(CONSTANTS)))
        return CONSTANTS[node.id]
    if isinstance(node, ast.UnaryOp) and type(node.op) in UNARY_OPERATORS:
        operand = _evaluate(node.operand)
        return _checked(lambda: UNARY_OPERATORS[type(node.op)](operand))
    if isinstance(node, ast.BinOp) and type(node.op) in BINARY_OPERATORS:
        left, right = _evaluate(node.left), _evaluate(node.right)
        if isinstance(node.op, ast.Pow):
            _check_power(left, right)
        return _checked(lambda: BINARY_OPERATORS[type(node.op)](left, right))
    if isinstance(node, ast.Call):
        return _call(node)
    raise ValueError(_refusal(_describe(node)))


def _number(value: object) -> Number:
    # bool is an int subclass, and True + True is not arithmetic anyone meant.
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value
    raise ValueError(NOT_A_NUMBER.format(value=value))


def _call(node: ast.Call) -> Number:
    if not isinstance(node.func, ast.Name):
        raise ValueError(_refusal("calling " + _describe(node.func)))
    name = node.func.id
    if name not in FUNCTIONS:
        raise ValueError(UNKNOWN_FUNCTION.format(name=name, functions=_names(FUNCTIONS)))
    if node.keywords:
        raise ValueError(KEYWORD_ARGUMENTS.format(name=name))
    if any(isinstance(arg, ast.Starred) for arg in node.args):
        raise ValueError(_refusal("unpacking with *"))
    args = [_evaluate(arg) for arg in node.args]
    if name == "round":
        _check_round(args)
    try:
        return _checked(lambda: FUNCTIONS[name](*args))
    except (TypeError, ArithmeticError) as exc:
        raise ValueError(FUNCTION_FAILED.format(name=name, detail=exc)) from None
    except ValueError as exc:
        # math.sqrt(-1) and friends say only "math domain error": name the call.
        if str(exc).startswith("math"):
            raise ValueError(FUNCTION_FAILED.format(name=name, detail=exc)) from None
        raise


def _check_power(base: Number, exponent: Number) -> None:
    """Refuse powers whose result is too large before Python starts computing them."""
    if abs(exponent) > MAX_EXPONENT:
        raise ValueError(EXPONENT_TOO_LARGE.format(limit=MAX_EXPONENT))
    if isinstance(base, int) and isinstance(exponent, int) and abs(base) > 1 and exponent > 0:
        digits = exponent * math.log10(abs(base))
        if digits > MAX_RESULT_DIGITS:
            raise ValueError(RESULT_TOO_LARGE.format(limit=MAX_RESULT_DIGITS, exponent=exponent))


def _check_round(args: list[Number]) -> None:
    """Refuse ``round(x, n)`` with a huge ``n`` before Python computes ``10**abs(n)``."""
    if len(args) == 2 and isinstance(args[1], int) and abs(args[1]) > MAX_ROUND_DIGITS:
        raise ValueError(ROUND_DIGITS_TOO_LARGE.format(limit=MAX_ROUND_DIGITS))


def _checked(compute: Callable[[], Any]) -> Number:
    """Run one operation on bounded operands and bound its result."""
    try:
        value = compute()
    except ZeroDivisionError:
        raise ValueError(DIVISION_BY_ZERO) from None
    except OverflowError:
        raise ValueError(FLOAT_OVERFLOW) from None
    return _bounded(value)


def _bounded(value: Any) -> Number:
    """Refuse a value the model could not use or that would make the next operation slow."""
    if isinstance(value, complex):
        raise ValueError(NOT_REAL)
    if isinstance(value, float) and not math.isfinite(value):
        raise ValueError(NOT_FINITE.format(value=value))
    if isinstance(value, int) and value.bit_length() * _LOG10_2 > MAX_RESULT_DIGITS:
        # Repeated multiplication can grow as fast as a power.
        raise ValueError(INTEGER_TOO_LARGE.format(limit=MAX_RESULT_DIGITS))
    return value


def _refusal(what: str) -> str:
    return NOT_ALLOWED.format(
        what=what[:1].upper() + what[1:], functions=_names(FUNCTIONS), constants=_names(CONSTANTS)
    )


def _describe(node: ast.AST) -> str:
    """A short human name for a refused syntax element, to follow "is not allowed"."""
    if isinstance(node, ast.Attribute):
        return f"the attribute .{node.attr}"
    if isinstance(node, ast.Lambda):
        return "a lambda"
    if isinstance(node, (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
        return "a comprehension"
    if isinstance(node, (ast.BinOp, ast.UnaryOp)):
        return f"the operator {type(node.op).__name__}"
    return f"{type(node).__name__} syntax"


def _names(table: dict[str, Any]) -> str:
    return ", ".join(table)
