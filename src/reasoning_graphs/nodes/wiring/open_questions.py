"""What a thread really waits for: a question a step running as a subgraph still asks.

A step that runs as a subgraph (a plan step, a Reflexion trial) is one task of its
parent graph until it ends, and the parent's checkpoint does not move while it runs.
So once a person answers the step's question and the step goes on, the parent still
lists that question among its interrupts until the step ends; a run cut short in
the meantime (Ctrl-C while the model thinks, a crash, a stopped server run) leaves a
thread that seems to wait for an answer already given. Asked again, the person's
new answer would be thrown away (the step has moved past that question).

The step's own state knows: :func:`open_only` keeps a parent's question only when
the subgraph that raised it still asks it, so a thread's status, what ``resume``
asks and what a resume may answer all come from what is really pending.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from langgraph.types import Interrupt, StateSnapshot


def open_only(snapshot: StateSnapshot, nested: StateSnapshot) -> StateSnapshot:
    """``snapshot`` less the questions its steps no longer ask; ``nested`` is the same
    state read with its subgraphs (it may be ``snapshot`` itself)."""
    still = _asked(nested)
    tasks = tuple(
        task._replace(interrupts=tuple(i for i in task.interrupts if interrupt_id(i) in still))
        for task in snapshot.tasks
    )
    interrupts = tuple(i for i in snapshot.interrupts if interrupt_id(i) in still)
    return snapshot._replace(tasks=tasks, interrupts=interrupts)


def may_be_stale(snapshot: StateSnapshot) -> bool:
    """Whether a question of ``snapshot`` comes from a task that runs a subgraph."""
    return any(task.interrupts and task.state is not None for task in snapshot.tasks)


def _asked(snapshot: StateSnapshot) -> set[str]:
    """The ids of the questions still asked in ``snapshot``, its subgraphs followed down."""
    asked: set[str] = set()
    for task in snapshot.tasks:
        if isinstance(task.state, StateSnapshot):
            asked |= {interrupt_id(i) for i in task.interrupts} & _asked(task.state)
        else:
            asked |= {interrupt_id(i) for i in task.interrupts}
    return asked | _own(snapshot)


def _own(snapshot: StateSnapshot) -> set[str]:
    """Questions listed on the snapshot with no task of theirs (kept as they are)."""
    by_tasks = {interrupt_id(i) for task in snapshot.tasks for i in task.interrupts}
    return {interrupt_id(i) for i in snapshot.interrupts} - by_tasks


def interrupt_id(interrupt: Interrupt | Mapping[str, Any]) -> Any:
    """An interrupt's id; a server's saver may hand interrupts back as plain JSON."""
    return interrupt["id"] if isinstance(interrupt, Mapping) else interrupt.id
