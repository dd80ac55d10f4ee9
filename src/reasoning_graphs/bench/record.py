"""What one bench cell did and cost: the record every report is computed from."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

Failure = Literal["wrong answer", "wrong effect", "budget stop", "format drift", "error"]
FAILURES: tuple[Failure, ...] = (
    "wrong answer",
    "wrong effect",
    "budget stop",
    "format drift",
    "error",
)
"""Why a cell failed: a wrong final answer; the right answer but the wrong files on disk;
an honest stop before an answer (a budget, a plan or trial limit); output the pattern
could not read, which led to either; an exception."""


@dataclass
class CellRecord:
    """What one cell did and cost (a line of ``trajectories.jsonl``).

    ``tokens_estimated`` is set when the provider reported no usage for some call:
    the tokens are then the pattern's own estimates from its trajectory.
    """

    suite: str
    task: str
    pattern: str
    repeat: int
    model: str
    thread_id: str
    correct: bool = False
    score: float = 0.0
    detail: str = ""
    answer: str = ""
    status: str = ""
    reason: str = ""
    failure: Failure | None = None
    model_calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    tokens_estimated: bool = False
    tool_calls: int = 0
    approvals: int = 0
    format_errors: int = 0
    wall_s: float = 0.0
    error: str | None = None
    trajectory: list[dict[str, Any]] = field(default_factory=list)

    @property
    def key(self) -> tuple[str, str, str, int]:
        """The cell it records, as :attr:`~reasoning_graphs.bench.runner.Cell.key` names it."""
        return (self.suite, self.task, self.pattern, self.repeat)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CellRecord:
        return cls(**data)
