"""Run LangChain's agent-middleware tests against a pattern and report per file.

``python -m tests.langchain_suite.run react`` (or ``create_agent`` for LangChain's own
builder) runs LangChain's own tests of the installed release in a pytest of their own,
from the unpacked sdist (:mod:`.sdist`), with :mod:`.lc_adapter` in place of
``create_agent``, and prints, per file, how many of the tests that build an agent pass.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from tests.langchain_suite.lc_adapter import PATTERN_ENV, REPORT_ENV
from tests.langchain_suite.sdist import SUITES, langchain_tests

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]


@dataclass(frozen=True)
class Outcome:
    """One test of LangChain's: its id, whether it built an agent, how it ended."""

    nodeid: str
    built: bool
    outcome: str
    error: str

    @property
    def file(self) -> str:
        return self.nodeid.split("::")[0].removeprefix("tests/unit_tests/agents/")


def run_suite(pattern: str, *selection: str, timeout: float = 900) -> list[Outcome]:
    """Each outcome of LangChain's middleware tests run against ``pattern``."""
    root = langchain_tests()
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch) / "report.json"
        env = dict(os.environ)
        env[PATTERN_ENV], env[REPORT_ENV] = pattern, str(report)
        env["PYTHONPATH"] = os.pathsep.join([str(HERE), str(REPO / "src"), str(root)])
        command = [sys.executable, "-m", "pytest", "-p", "lc_adapter", "-p", "no:cacheprovider"]
        command += ["-q", "-o", "addopts=", "--tb=line", "-W", "ignore", "--timeout=120"]
        command += list(selection or SUITES)
        subprocess.run(
            command, cwd=root, env=env, capture_output=True, text=True, timeout=timeout, check=False
        )
        data = json.loads(report.read_text())
    return [Outcome(nodeid, e["built"], e["outcome"], e["error"]) for nodeid, e in data.items()]


def per_file(outcomes: list[Outcome]) -> dict[str, tuple[int, int]]:
    """Per file, of the tests that build an agent: how many pass, how many there are."""
    passed: Counter[str] = Counter()
    built: Counter[str] = Counter()
    for outcome in outcomes:
        if outcome.built:
            built[outcome.file] += 1
            passed[outcome.file] += outcome.outcome == "passed"
    return {file: (passed[file], built[file]) for file in sorted(built)}


def main(argv: list[str]) -> None:
    pattern, *selection = argv or ["react"]
    outcomes = run_suite(pattern, *selection)
    table = per_file(outcomes)
    for file, (passed, built) in table.items():
        print(f"{passed:4d} / {built:<4d} {file}")
    total = [sum(column) for column in zip(*table.values(), strict=True)] or [0, 0]
    print(f"{total[0]:4d} / {total[1]:<4d} in all, against {pattern}")
    if "-v" in os.environ.get("LC_SUITE_VERBOSE", "-v"):
        for outcome in outcomes:
            if outcome.built and outcome.outcome != "passed":
                print(f"FAIL {outcome.nodeid}: {outcome.error.splitlines()[0][:200]}")


if __name__ == "__main__":
    main(sys.argv[1:])
