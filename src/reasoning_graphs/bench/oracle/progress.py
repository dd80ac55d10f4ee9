"""How far the gold trajectory has got, read from the calls a prompt shows.

The calls are matched to the gold steps in order, by tool: the next call to the
tool of the next gold step is that step, whatever its arguments (a person may
have edited them), and its observation is the step's output that later steps
refer to as ``#N``. Calls to other tools are off the gold path and skipped. A
failed or rejected step ends the path: the oracle does not retry, it concludes
with the gold answer, so it can never go round in circles.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from reasoning_graphs.bench.oracle.prompt import Observation
from reasoning_graphs.bench.suite import GoldStep, Task


@dataclass(frozen=True)
class Progress:
    """The gold steps done so far.

    Attributes:
        steps: The task's gold trajectory.
        outputs: Each done step's output, by its 1-based number.
        stopped: A step failed or was rejected, so the rest of the path cannot follow.
        off_path: Calls that matched no gold step.
    """

    steps: tuple[GoldStep, ...]
    outputs: dict[int, str] = field(default_factory=dict)
    stopped: bool = False
    off_path: int = 0

    @property
    def done(self) -> int:
        return len(self.outputs)

    @property
    def finished(self) -> bool:
        """Nothing is left to call: every step is done, or the path stopped."""
        return self.stopped or self.done >= len(self.steps)

    @property
    def fraction(self) -> float:
        """The share of the gold steps done (1.0 for a task with none)."""
        return self.done / len(self.steps) if self.steps else 1.0

    def next_call(self) -> tuple[str, dict[str, Any]] | None:
        """The next gold call with its references filled in, or ``None`` when finished."""
        if self.finished:
            return None
        step = self.steps[self.done]
        return step.tool, step.resolved(self.outputs)


def gold_progress(task: Task, observed: Sequence[Observation]) -> Progress:
    """Match ``observed`` calls, in order, to the gold steps of ``task``."""
    steps = task.trajectory
    outputs: dict[int, str] = {}
    off_path = 0
    for observation in observed:
        number = len(outputs) + 1
        if number > len(steps) or observation.tool != steps[number - 1].tool:
            off_path += 1
            continue
        outputs[number] = observation.output
        if observation.failed:
            return Progress(steps, outputs, stopped=True, off_path=off_path)
    return Progress(steps, outputs, off_path=off_path)
