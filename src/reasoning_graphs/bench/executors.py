"""Where the cells of a bench run: threads of this process, or Ray tasks.

Both executors take the same cells and settings and yield the same records as
cells finish, so a table does not depend on where it was measured (only the
wall times do). Ray is the engine for more than one machine: ``ray.init()``
starts a local instance, and the same code given an address runs on a cluster.
On a cluster every worker needs this package installed, and the checkpointer
should be one they all reach (``postgresql://…``); a SQLite path is per machine.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from typing import Any

from reasoning_graphs.bench.record import CellRecord
from reasoning_graphs.bench.runner import BenchSettings, Cell, run_cell

EXECUTORS = ("local", "ray")
NO_RAY = "the ray executor needs Ray: pip install 'reasoning-graphs[bench]'"


def run_local(
    cells: Sequence[Cell], settings: BenchSettings, concurrency: int = 1
) -> Iterator[CellRecord]:
    """Run the cells on ``concurrency`` threads of this process; records as cells finish.

    At most ``concurrency`` cells are in flight, so a stopped iteration leaves few behind.
    """
    pending = iter(cells)
    with ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="bench") as pool:
        running: set[Future[CellRecord]] = {
            pool.submit(run_cell, cell, settings) for cell in itertools.islice(pending, concurrency)
        }
        while running:
            done, running = wait(running, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()
                cell = next(pending, None)
                if cell is not None:
                    running.add(pool.submit(run_cell, cell, settings))


def run_ray(
    cells: Sequence[Cell],
    settings: BenchSettings,
    concurrency: int | None = None,
    address: str | None = None,
) -> Iterator[CellRecord]:
    """Run each cell as a Ray task; records as tasks finish.

    Args:
        address: A cluster's address (``ray://head:10001``, ``auto``); ``None`` starts
            a local Ray instance for the run and stops it afterwards.
        concurrency: Most tasks in flight at once (``None``: as many as Ray schedules).

    Raises:
        ModuleNotFoundError: Ray is not installed.
    """
    try:
        import ray
    except ModuleNotFoundError:
        raise ModuleNotFoundError(NO_RAY) from None
    started_here = not ray.is_initialized()
    if started_here:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    try:
        remote_cell = ray.remote(run_cell)
        limit = concurrency or len(cells) or 1
        pending = iter(cells)
        running: list[Any] = [
            remote_cell.remote(cell, settings) for cell in itertools.islice(pending, limit)
        ]
        while running:
            done, running = ray.wait(running, num_returns=1)
            for ref in done:
                yield ray.get(ref)
                cell = next(pending, None)
                if cell is not None:
                    running.append(remote_cell.remote(cell, settings))
    finally:
        if started_here:
            ray.shutdown()
