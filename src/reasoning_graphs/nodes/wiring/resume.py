"""Every resume reaches exactly the interrupts it answers, addressed by id.

Two LangGraph behaviours make a plain ``Command(resume=value)`` unsafe here:

- ``Command(resume=None)``, which any client of the dev server can send, fails
  inside LangGraph's run loop (an ``UnboundLocalError``, LangGraph 1.2).
- A bare value is kept as the "null resume" of the task that was paused, and a
  subgraph run inside a node (a plan step, a Reflexion trial) stays that one task
  until it ends. So every later ``interrupt()`` of the step that finds no value
  addressed to it receives the earlier bare value — an approval given for one
  call would approve the step's next dangerous call, unseen.

So a run of our graphs (:class:`~reasoning_graphs.nodes.wiring.checked_graph.CheckedGraph`)
addresses each resume to the pending interrupts by id
before LangGraph sees it: a bare value goes to each pending interrupt, ``None``
becomes :data:`~reasoning_graphs.review.NO_ANSWER` (asked again, with an
``error``), and nothing is left behind for a later interrupt to pick up.

A decision answers only the question it was given for. A resume is addressed
when its run starts (:func:`addressed`), before it waits for its thread, and
checked again once the run holds the thread (:func:`still_pending`). A run that
an engine starts again after its worker died (same run id as the thread's last
checkpoint) delivered its resume already: it runs on with no answer. Any other
resume delivered twice (a double click, a client's retry, two at once) finds its
question answered, and

- on a thread with no question pending and steps left (the run that answered it
  was cut short) it runs on with no answer, so a call that may already have run
  is put to a person again, and waits for a decision given to that question;
- otherwise it is refused with :class:`~reasoning_graphs.review.ApprovalError`,
  as is a resume when nothing is pending at all.

A bare value sent while another question is pending answers that one: a client
that names the question it answers sends ``{interrupt_id: value}``, as the page
does (the command line reads the question and answers it under its lock on the
thread, so nothing comes between).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, TypeGuard

from langgraph.types import Command, StateSnapshot

from reasoning_graphs.nodes.wiring.open_questions import interrupt_id
from reasoning_graphs.review import NO_ANSWER, ApprovalError

NOTHING_PENDING = "This thread waits for no decision, so there is nothing to resume."
ANSWERED_BEFORE = (
    "This decision was given for a question that has been answered since; "
    "read the thread's pending question and decide on that one."
)
INTERRUPT_ID = re.compile(r"[0-9a-f]{32}")


def is_resume(value: Any) -> bool:
    """A command that only resumes (an update or a goto is LangGraph's to handle). Engines
    build it their own way: Aegra's has ``goto=None`` where LangGraph's default is ``()``."""
    return (
        isinstance(value, Command)
        and not value.goto
        and value.update is None
        and value.graph is None
    )


def addressed(command: Command, snapshot: StateSnapshot) -> Command:
    """The resume as a mapping from each interrupt id it answers to a value that is not None
    (empty when nothing was pending as the run started)."""
    resume = command.resume
    if _by_interrupt_id(resume):
        return Command(resume={key: _answer(value) for key, value in resume.items()})
    return Command(
        resume={interrupt_id(pending): _answer(resume) for pending in snapshot.interrupts}
    )


def still_pending(command: Command, snapshot: StateSnapshot, run_id: Any) -> Command | None:
    """The addressed resume, checked on the thread's state once the run holds it: the
    command to run, or ``None`` to run on with no answer (see the module docstring).

    ``run_id`` is the engine's id of this run, if it gives one: a thread whose last
    checkpoint (its own, or a step's running as a subgraph) this run wrote has been
    resumed by it already, before its worker died. ``snapshot`` is read with its
    subgraphs.

    Raises:
        ApprovalError: The questions it answers are not pending, and no step is left.
    """
    if run_id is not None and run_id in _writers(snapshot):
        return None
    pending = {interrupt_id(interrupt) for interrupt in snapshot.interrupts}
    answered = set(command.resume) if isinstance(command.resume, Mapping) else set()
    if answered and answered <= pending:
        return command
    if not pending and snapshot.next:
        return None
    raise ApprovalError(ANSWERED_BEFORE if answered and pending else NOTHING_PENDING)


def _by_interrupt_id(resume: Any) -> TypeGuard[Mapping[str, Any]]:
    """LangGraph's own test: a non-empty mapping whose keys are all interrupt ids."""
    return (
        isinstance(resume, Mapping)
        and bool(resume)
        and all(isinstance(key, str) and INTERRUPT_ID.fullmatch(key) for key in resume)
    )


def _answer(value: Any) -> Any:
    return NO_ANSWER if value is None else value


def _writers(snapshot: StateSnapshot) -> set[Any]:
    """The run ids that wrote the thread's last checkpoint and its running subgraphs' last."""
    writers = {(snapshot.metadata or {}).get("run_id")}
    for task in snapshot.tasks:
        if isinstance(task.state, StateSnapshot):
            writers |= _writers(task.state)
    return writers
