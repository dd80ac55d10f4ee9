"""Run a code answer against assert-style tests, in a separate interpreter with a time limit.

The answer's code (the last ```python block, else the last fenced block, else
the whole text) runs first; then each top-level statement of the tests runs on
its own, so one failing assert does not hide the others and the score can be
the share that pass. Everything runs in a fresh ``python -I`` (no user site, no
``PYTHON*`` variables) whose working directory is a new temporary folder, in its
own process group that is killed at the time limit: an endless loop costs the
limit, not the run, and nothing is written where the bench was started.

This file is also the child's program: it talks to the parent through files in
the temporary folder, never pipes, so a process the code leaves behind cannot
keep the parent waiting for end-of-file. It imports only the standard library.
"""

from __future__ import annotations

import ast
import contextlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reasoning_graphs.python_syntax import compiled, parse

CHILD = Path(__file__)
KILL_WAIT_SECONDS = 5.0
STDERR_TAIL_CHARS = 500
MAX_VALUE_CHARS = 200

FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)
PYTHON_FENCES = ("python", "py", "python3")

TIMED_OUT = "timed out after {seconds:g} s"
STOPPED = "the tests stopped early (exit code {code}){stderr}"
NOT_RUN = "{source}: not run"
FAILED = "{source}: {error}"
ALL_PASSED = "all {count} tests pass"


@dataclass(frozen=True)
class AssertOutcome:
    """One top-level assert of the tests and how it went."""

    source: str
    passed: bool
    error: str = ""


@dataclass(frozen=True)
class TestRun:
    """Every assert of one run, and what stopped the run early, if anything.

    Attributes:
        asserts: The top-level asserts the tests hold.
        outcomes: Those that ran, in order.
        sources: The source of every assert, so the ones never run can be named.
        problem: The code failed to run, a non-assert statement failed, the time
            limit struck or the interpreter died ("" when none of that happened).
    """

    asserts: int
    outcomes: tuple[AssertOutcome, ...]
    sources: tuple[str, ...] = ()
    problem: str = ""

    __test__ = False  # not a pytest test class, despite the name

    @property
    def passed(self) -> int:
        return sum(outcome.passed for outcome in self.outcomes)

    @property
    def fraction(self) -> float:
        """The share of asserts that passed (0 for tests without asserts)."""
        return self.passed / self.asserts if self.asserts else 0.0

    @property
    def all_passed(self) -> bool:
        return self.asserts > 0 and self.passed == self.asserts and not self.problem

    def failures(self) -> list[str]:
        """What went wrong, first things first: the problem, failed asserts, those not run."""
        found = [self.problem] if self.problem else []
        found += [
            FAILED.format(source=o.source, error=o.error) for o in self.outcomes if not o.passed
        ]
        found += [NOT_RUN.format(source=source) for source in self.sources[len(self.outcomes) :]]
        return found

    def first_failure(self) -> str:
        failures = self.failures()
        return failures[0] if failures else ""

    def summary(self) -> str:
        return f"{self.passed} of {self.asserts} tests pass"

    def feedback(self) -> str:
        """Every failure, one a line, after the tally; or that all pass."""
        if self.all_passed:
            return ALL_PASSED.format(count=self.asserts)
        return "\n".join([f"{self.summary()}:", *self.failures()])


def extract_code(answer: str) -> str:
    """The code of an answer: the last ```python block, else the last fenced block, else all."""
    fences = FENCE.findall(answer)
    python = [body for language, body in fences if language.lower() in PYTHON_FENCES]
    if python:
        return python[-1]
    if fences:
        return fences[-1][1]
    return answer


def run_tests(answer: str, tests: str, *, timeout: float) -> TestRun:
    """Run the answer's code, then ``tests``, in a child interpreter.

    Raises:
        SyntaxError: ``tests`` is not Python (the code's own errors are a failed run).
    """
    sources = tuple(
        ast.get_source_segment(tests, statement) or "assert"
        for statement in parse(tests).body
        if isinstance(statement, ast.Assert)
    )
    with tempfile.TemporaryDirectory(prefix="bench-tests-", ignore_cleanup_errors=True) as name:
        folder = Path(name)
        work = folder / "work"
        work.mkdir()
        payload, results, log = folder / "payload.json", folder / "results.jsonl", folder / "stderr"
        payload.write_text(json.dumps({"code": extract_code(answer), "tests": tests}), "utf-8")
        problem = _run_child([str(payload), str(results)], work, log, timeout)
        lines = results.read_text("utf-8").splitlines() if results.exists() else []
    records = [json.loads(line) for line in lines if line.strip()]
    outcomes = tuple(
        AssertOutcome(source=r["source"], passed=r["passed"], error=r.get("error", ""))
        for r in records
        if "source" in r
    )
    reported = [r["problem"] for r in records if "problem" in r]
    return TestRun(
        asserts=len(sources),
        outcomes=outcomes,
        sources=sources,
        problem=reported[0] if reported else problem,
    )


def _run_child(arguments: list[str], work: Path, log: Path, timeout: float) -> str:
    """Run the child to the end or the time limit; what went wrong, or ""."""
    with log.open("wb") as stderr:
        child = subprocess.Popen(  # the child's own group, so the kill takes what it started
            [sys.executable, "-I", str(CHILD), *arguments],
            cwd=work,
            stdin=subprocess.DEVNULL,
            stdout=stderr,
            stderr=stderr,
            start_new_session=True,
        )
        try:
            code = child.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(child.pid, signal.SIGKILL)
            child.wait(KILL_WAIT_SECONDS)
            return TIMED_OUT.format(seconds=timeout)
    if code == 0:
        return ""
    tail = log.read_text("utf-8", errors="replace").strip()[-STDERR_TAIL_CHARS:]
    return STOPPED.format(code=code, stderr=f": {tail}" if tail else "")


# The child: everything below runs in the separate interpreter.


def _child(payload_path: str, results_path: str) -> None:
    payload = json.loads(Path(payload_path).read_text("utf-8"))
    code, tests = payload["code"], payload["tests"]
    with open(results_path, "a", encoding="utf-8") as results:

        def report(record: dict[str, Any]) -> None:
            results.write(json.dumps(record) + "\n")
            results.flush()  # what ran is on disk when the time limit kills the child

        namespace: dict[str, Any] = {"__name__": "solution"}
        try:
            exec(compile(code, "<answer>", "exec"), namespace)
        except BaseException as error:  # SystemExit too: the code must not end the run
            report({"problem": f"the code does not run: {_describe(error)}"})
            return
        for statement in parse(tests).body:
            source = ast.get_source_segment(tests, statement) or "assert"
            try:
                exec(compiled(ast.Module([statement], []), "<tests>", "exec"), namespace)
            except BaseException as error:
                if not isinstance(statement, ast.Assert):
                    report({"problem": f"{source}: {_describe(error)}"})
                    return
                report(
                    {"source": source, "passed": False, "error": _why(statement, error, namespace)}
                )
            else:
                if isinstance(statement, ast.Assert):
                    report({"source": source, "passed": True})


def _why(statement: ast.Assert, error: BaseException, namespace: dict[str, Any]) -> str:
    """Why an assert failed; for a bare failed comparison, what its left side was."""
    if (
        isinstance(error, AssertionError)
        and not error.args
        and isinstance(statement.test, ast.Compare)
    ):
        try:
            value = eval(
                compiled(ast.Expression(statement.test.left), "<tests>", "eval"), namespace
            )
        except BaseException as again:
            return _describe(again)
        return f"got {repr(value)[:MAX_VALUE_CHARS]}"
    return _describe(error)


def _describe(error: BaseException) -> str:
    if isinstance(error, SyntaxError):
        return f"SyntaxError: {error.msg} (line {error.lineno})"
    message = str(error)
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


if __name__ == "__main__":
    _child(*sys.argv[1:3])
