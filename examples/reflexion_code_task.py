"""Reflexion on a coding task, graded by real unit tests.

The task asks for a Python function. The evaluator takes the code out of the
answer, runs unit tests on it in a separate Python process with a timeout
(generated code never runs in this process), and scores passed/total with the
failures as feedback — the feedback ``reflect`` turns into a lesson for the
next attempt.

Usage: python examples/reflexion_code_task.py [MODEL_SPEC]   (default: ``local``;
e.g. ``openai:gpt-4o-mini`` with ``OPENAI_API_KEY`` set.)
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from reasoning_graphs.graphs.reflexion import build_graph
from reasoning_graphs.nodes.judge import Evaluation

TASK = """\
Write a Python function `is_palindrome(text: str) -> bool` that tells whether \
`text` reads the same forwards and backwards, ignoring case, spaces and \
punctuation. Reply with the code in one ```python block."""

TESTS = """\
import unittest

from solution import is_palindrome


class IsPalindrome(unittest.TestCase):
    def test_plain(self):
        self.assertTrue(is_palindrome("level"))

    def test_not_a_palindrome(self):
        self.assertFalse(is_palindrome("python"))

    def test_ignores_case(self):
        self.assertTrue(is_palindrome("Racecar"))

    def test_ignores_spaces_and_punctuation(self):
        self.assertTrue(is_palindrome("A man, a plan, a canal: Panama!"))

    def test_empty(self):
        self.assertTrue(is_palindrome(""))
"""

RUNNER = """\
import json, unittest
try:
    import solution
except BaseException as error:
    print(json.dumps({"error": f"{type(error).__name__}: {error}"}))
else:
    result = unittest.TestResult()
    unittest.defaultTestLoader.loadTestsFromName("test_solution").run(result)
    failed = [(test.id().rsplit(".", 1)[-1], trace.strip().splitlines()[-1])
              for test, trace in result.failures + result.errors]
    print(json.dumps({"total": result.testsRun, "failed": failed}))
"""

TIMEOUT_SECONDS = 10.0
CODE_BLOCK = re.compile(r"```(?:python|py)?\s*\n(?P<code>.*?)```", re.DOTALL | re.IGNORECASE)
ALL_PASSED = "All {total} tests passed."
SOME_FAILED = "{passed}/{total} tests passed. Failures:\n{failures}"
FAILURE_LINE = "- {test}: {error}"
DID_NOT_LOAD = "The code did not load, so no test ran: {error}"
TIMED_OUT = "The tests did not finish within {seconds:.0f} s (an endless loop?)."


def extract_code(answer: str) -> str:
    """The last fenced code block of the answer, or the whole answer when it has none."""
    blocks = CODE_BLOCK.findall(answer)
    return blocks[-1] if blocks else answer


def run_unit_tests(task: str, answer: str) -> Evaluation:
    """Grade an answer by the share of unit tests its code passes (the task is fixed here)."""
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        (root / "solution.py").write_text(extract_code(answer))
        (root / "test_solution.py").write_text(TESTS)
        try:
            done = subprocess.run(
                [sys.executable, "-E", "-s", "-c", RUNNER],
                cwd=root,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_SECONDS,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return Evaluation(score=0.0, feedback=TIMED_OUT.format(seconds=TIMEOUT_SECONDS))
    lines = done.stdout.strip().splitlines()
    report = json.loads(lines[-1]) if lines else {"error": done.stderr.strip()[-500:]}
    if "error" in report:
        return Evaluation(score=0.0, feedback=DID_NOT_LOAD.format(error=report["error"]))
    total, failed = report["total"], report["failed"]
    if not failed:
        return Evaluation(score=1.0, feedback=ALL_PASSED.format(total=total))
    failures = "\n".join(FAILURE_LINE.format(test=t, error=e) for t, e in failed)
    passed = total - len(failed)
    feedback = SOME_FAILED.format(passed=passed, total=total, failures=failures)
    return Evaluation(score=passed / total, feedback=feedback)


def main() -> None:
    model = sys.argv[1] if len(sys.argv) > 1 else "local"
    graph = build_graph(model, tools=[], evaluator=run_unit_tests, threshold=1.0)
    state = graph.invoke({"messages": [("user", TASK)]})
    for trial in state["trials"]:
        print(f"Trial {trial['trial']}: score {trial['score']:.2f} — {trial['feedback']}")
    print(state["messages"][-1].content)


if __name__ == "__main__":
    main()
