"""Finding suites by name: the ones shipped with the package, a JSONL file, HotpotQA data."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from reasoning_graphs.bench.suite import Suite, SuiteError, load_suite

SHIPPED = Path(__file__).parent / "suites"
"""The suites written for the project, one ``<name>.jsonl`` each."""
ALL = "all"

UNKNOWN_SUITE = (
    "no suite {spec!r}: give a shipped suite ({names}), 'all', a .jsonl suite file "
    "or a HotpotQA distractor .json file"
)


def shipped_names() -> list[str]:
    """The shipped suites' names, in a fixed order."""
    return sorted(path.stem for path in SHIPPED.glob("*.jsonl"))


def resolve_suites(specs: list[str], *, limit: int | None = None) -> list[Suite]:
    """The suites ``specs`` name, in order; ``limit`` caps each suite's tasks.

    Raises:
        SuiteError: A spec names no suite, or its file cannot be read as one.
    """
    names = [name for spec in specs for name in (shipped_names() if spec == ALL else [spec])]
    suites = [_resolve(spec) for spec in dict.fromkeys(names)]
    if limit is None:
        return suites
    return [replace(suite, tasks=suite.tasks[:limit]) for suite in suites]


def _resolve(spec: str) -> Suite:
    if spec in shipped_names():
        return load_suite(SHIPPED / f"{spec}.jsonl")
    path = Path(spec).expanduser()
    if not path.is_file():
        raise SuiteError(UNKNOWN_SUITE.format(spec=spec, names=", ".join(shipped_names())))
    try:
        if path.suffix == ".json":
            from reasoning_graphs.bench.hotpotqa import load_hotpotqa

            return load_hotpotqa(path)
        return load_suite(path)
    except OSError as error:
        raise SuiteError(f"cannot read {path}: {error}") from error
