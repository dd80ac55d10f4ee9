"""The Ray executor on a real local Ray instance: the same table as threads, any saver.

One Ray instance serves the module (starting one takes seconds); the executor
leaves an instance it did not start running, as it would a cluster's.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
import ray

from reasoning_graphs.bench.catalog import resolve_suites
from reasoning_graphs.bench.executors import run_local, run_ray
from reasoning_graphs.bench.metrics import figures
from reasoning_graphs.bench.record import CellRecord
from reasoning_graphs.bench.runner import BenchSettings, Cell
from reasoning_graphs.checkpointers import open_checkpointer

FAST = BenchSettings(call_delay=0.0, token_delay=0.0)
PATTERNS = ("react", "rewoo", "reflexion")


@pytest.fixture(scope="module")
def local_ray() -> Iterator[None]:
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def cells() -> list[Cell]:
    suites = resolve_suites(["arithmetic", "chain"], limit=1)
    return [
        Cell(suite=suite, task=task, pattern=pattern)
        for suite in suites
        for task in suite.tasks
        for pattern in PATTERNS
    ]


def untimed(records: list[CellRecord]) -> list[tuple[object, ...]]:
    """The table without its wall times, which are the one thing allowed to differ."""
    ordered = sorted(records, key=lambda r: (r.suite, r.pattern, r.task))
    return [
        (
            f.suite,
            f.pattern,
            f.cells,
            f.successes,
            f.model_calls,
            f.prompt_tokens,
            f.completion_tokens,
            f.tool_calls,
            dict(f.failures),
        )
        for f in figures(ordered)
    ]


def test_ray_gives_the_same_table_as_threads(local_ray: None, tmp_path: Path) -> None:
    work = cells()
    settings = replace(FAST, checkpointer=str(tmp_path / "bench.sqlite"))
    on_threads = list(run_local(work, settings, concurrency=2))
    on_ray = list(run_ray(work, settings, concurrency=2))
    assert len(on_ray) == len(work)
    assert all(record.correct for record in on_ray)
    assert untimed(on_ray) == untimed(on_threads)
    assert ray.is_initialized()  # not stopped: the executor did not start it


def test_ray_cells_save_their_checkpoints_to_a_shared_postgres(
    local_ray: None, postgres_url: str
) -> None:
    work = cells()[:3]
    records = list(run_ray(work, replace(FAST, checkpointer=postgres_url)))
    assert all(record.correct for record in records)
    saver = open_checkpointer(postgres_url)
    stored = {c.config["configurable"]["thread_id"] for c in saver.list(None)}
    assert {record.thread_id for record in records} <= stored
