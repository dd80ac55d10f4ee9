"""Is an answer right? One scorer per kind of task, chosen by ``Task.scorer``.

- ``exact``: normalised exact match, normalised as SQuAD and HotpotQA do (lower
  case, no punctuation, no articles *a*/*an*/*the*, single spaces), so published
  EM figures compare. Strict: a right answer inside a longer sentence is wrong.
- ``f1``: normalised token F1 (again as SQuAD/HotpotQA count it, yes/no/noanswer
  only matching themselves); correct when F1 reaches ``scorer_options["threshold"]``
  (default 0.8). The detail also gives the exact match, so a record carries both.
- ``numeric``: the last number in the answer (``1,234.5`` allowed) against the gold
  number, within a relative ``tolerance`` (default 1e-6).
- ``unit_tests``: the answer's Python code run with the task's ``tests`` in a fresh
  interpreter (see :mod:`reasoning_graphs.bench.unit_tests`); the value is the share
  of top-level asserts that pass.
- ``game24``: the answer's expression (after an ``Answer:`` label, before ``= 24``) must
  use exactly the numbers of ``scorer_options["numbers"]``, each once, with ``+ - * /``
  and parentheses, and equal 24 exactly (see :mod:`reasoning_graphs.bench.game24`).
- ``module:function``: ``function(task, answer)`` from an importable module. It may
  return a :class:`Score`, a bool, or a number in 0..1 that is correct when it
  reaches ``scorer_options["threshold"]`` (default 1.0: partial credit is not a
  success, as with unit tests).

Examples:
    >>> from reasoning_graphs.bench.suite import Task
    >>> score(Task(id="t", question="?", answer="395", scorer="numeric"), "The answer is 395.")
    Score(correct=True, value=1.0, detail='395 = 395')
"""

from __future__ import annotations

import importlib
import math
import re
import string
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from reasoning_graphs.bench import game24
from reasoning_graphs.bench.suite import SuiteError, Task
from reasoning_graphs.bench.unit_tests import TestRun, run_tests
from reasoning_graphs.nodes.steps.judge import Evaluation

DEFAULT_F1_THRESHOLD = 0.8
DEFAULT_TOLERANCE = 1e-6
DEFAULT_TIMEOUT_SECONDS = 10.0
DEFAULT_FUNCTION_THRESHOLD = 1.0

UNKNOWN_SCORER = (
    "task {id!r} names scorer {name!r}; use exact, f1, numeric, unit_tests, game24 or "
    "module:function"
)
NO_TESTS = "task {id!r} is scored by unit tests but has no 'tests'"
NO_GOLD_NUMBER = "task {id!r} is scored numerically but its answer {answer!r} holds no number"
NO_PUZZLE = "task {id!r} is scored by game24 but has no scorer_options numbers (a list of ints)"
BAD_FUNCTION = "scorer {name!r} of task {id!r} cannot be loaded: {error}"
BAD_RESULT = "scorer {name!r} returned {kind}; return a Score, a bool or a number in 0..1"

NUMBER = re.compile(r"(?<![\w.])-?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?")
"""A number as people write it: ``-12``, ``1,234``, ``3.5``, ``1e-3`` (not ``v2`` or ``1.2.3``)."""
ARTICLES = re.compile(r"\b(a|an|the)\b")
PUNCTUATION = str.maketrans("", "", string.punctuation)
CLOSED_ANSWERS = ("yes", "no", "noanswer")
"""Answers that share no credit with anything but themselves (HotpotQA's F1)."""


@dataclass(frozen=True)
class Score:
    """How an answer did.

    Attributes:
        correct: Whether the task counts as solved.
        value: Credit from 0 to 1 (F1, share of tests passed …).
        detail: What was compared, or the first thing that is wrong.
    """

    correct: bool
    value: float
    detail: str


def score(task: Task, answer: str) -> Score:
    """Score ``answer`` with the task's scorer.

    Raises:
        SuiteError: The scorer is unknown or cannot score this task.
    """
    check_scorer(task)
    builtin = SCORERS.get(task.scorer)
    if builtin is not None:
        return builtin(task, answer)
    return _by_function(task, answer)


def check_scorer(task: Task) -> None:
    """Raise :class:`SuiteError` when the task's scorer cannot score it (no import)."""
    if task.scorer not in SCORERS:
        module, _, function = task.scorer.partition(":")
        if not (module and function.isidentifier()):
            raise SuiteError(UNKNOWN_SCORER.format(id=task.id, name=task.scorer))
    if task.scorer == "unit_tests" and not task.tests:
        raise SuiteError(NO_TESTS.format(id=task.id))
    if task.scorer == "numeric" and last_number(task.answer) is None:
        raise SuiteError(NO_GOLD_NUMBER.format(id=task.id, answer=task.answer))
    if task.scorer == "game24":
        _puzzle(task)


def unit_test_evaluator(task: Task) -> Callable[[str, str], Evaluation]:
    """A Reflexion grader that runs the task's tests on each attempt.

    The score is the share of asserts that pass; the feedback lists every failure,
    which is what a reflection needs to find the bug.

    Raises:
        SuiteError: The task has no tests.
    """
    if not task.tests:
        raise SuiteError(NO_TESTS.format(id=task.id))

    def evaluate(question: str, answer: str) -> Evaluation:
        run = _run(task, answer)
        return Evaluation(score=run.fraction, feedback=run.feedback())

    return evaluate


def normalise(text: str) -> str:
    """The SQuAD/HotpotQA normal form: lower case, no punctuation or articles, single spaces."""
    return " ".join(ARTICLES.sub(" ", text.lower().translate(PUNCTUATION)).split())


def token_f1(answer: str, gold: str) -> float:
    """Token F1 of two answers after :func:`normalise`."""
    predicted, expected = normalise(answer), normalise(gold)
    if predicted != expected and (predicted in CLOSED_ANSWERS or expected in CLOSED_ANSWERS):
        return 0.0
    common = Counter(predicted.split()) & Counter(expected.split())
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(predicted.split())
    recall = overlap / len(expected.split())
    return 2 * precision * recall / (precision + recall)


def last_number(text: str) -> float | None:
    """The last number written in ``text``, or ``None``."""
    found = NUMBER.findall(text)
    return float(found[-1].replace(",", "")) if found else None


def _exact(task: Task, answer: str) -> Score:
    same = normalise(answer) == normalise(task.answer)
    relation = "=" if same else "≠"
    return Score(same, float(same), f"{normalise(answer)!r} {relation} {normalise(task.answer)!r}")


def _f1(task: Task, answer: str) -> Score:
    threshold = float(task.scorer_options.get("threshold", DEFAULT_F1_THRESHOLD))
    f1 = token_f1(answer, task.answer)
    exact = int(normalise(answer) == normalise(task.answer))
    return Score(f1 >= threshold, f1, f"F1 {f1:.2f} (threshold {threshold:g}), EM {exact}")


def _numeric(task: Task, answer: str) -> Score:
    gold, found = last_number(task.answer), last_number(answer)
    if gold is None:
        raise SuiteError(NO_GOLD_NUMBER.format(id=task.id, answer=task.answer))
    if found is None:
        return Score(False, 0.0, "the answer holds no number")
    tolerance = float(task.scorer_options.get("tolerance", DEFAULT_TOLERANCE))
    close = math.isclose(found, gold, rel_tol=tolerance, abs_tol=1e-12)
    relation = "=" if close else "≠"
    return Score(close, float(close), f"{found:g} {relation} {gold:g}")


def _unit_tests(task: Task, answer: str) -> Score:
    run = _run(task, answer)
    return Score(run.all_passed, run.fraction, run.first_failure() or run.summary())


def _run(task: Task, answer: str) -> TestRun:
    timeout = float(task.scorer_options.get("timeout", DEFAULT_TIMEOUT_SECONDS))
    try:
        return run_tests(answer, task.tests or "", timeout=timeout)
    except SyntaxError as error:
        raise SuiteError(f"the tests of task {task.id!r} are not Python: {error}") from None


def _game24(task: Task, answer: str) -> Score:
    solved, detail = game24.check(answer, _puzzle(task))
    return Score(solved, float(solved), detail)


def _puzzle(task: Task) -> list[int]:
    numbers = task.scorer_options.get("numbers")
    if not isinstance(numbers, list) or not all(type(n) is int for n in numbers):
        raise SuiteError(NO_PUZZLE.format(id=task.id))
    return numbers


def _by_function(task: Task, answer: str) -> Score:
    module_name, _, name = task.scorer.partition(":")
    try:
        function = getattr(importlib.import_module(module_name), name)
    except (ImportError, AttributeError) as error:
        raise SuiteError(BAD_FUNCTION.format(name=task.scorer, id=task.id, error=error)) from None
    result = function(task, answer)
    if isinstance(result, Score):
        return result
    if isinstance(result, bool):
        return Score(result, float(result), f"{task.scorer} said {result}")
    if isinstance(result, (int, float)):
        value = min(1.0, max(0.0, float(result)))
        threshold = float(task.scorer_options.get("threshold", DEFAULT_FUNCTION_THRESHOLD))
        return Score(value >= threshold, value, f"{task.scorer} gave {value:.2f}")
    raise SuiteError(BAD_RESULT.format(name=task.scorer, kind=type(result).__name__))


SCORERS: dict[str, Callable[[Task, str], Score]] = {
    "exact": _exact,
    "f1": _f1,
    "numeric": _numeric,
    "unit_tests": _unit_tests,
    "game24": _game24,
}
