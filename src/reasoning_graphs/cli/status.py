"""How a thread stands, read from its latest checkpoint, not from the process that last ran it.

A process killed mid-run (Ctrl-C that had to be forced, ``kill -9``, a crash)
never writes how it ended, so the index's last word for such a thread is
``running``. The checkpoint knows better: a pending interrupt waits for a
person (an approval, or an answer to a question some other ``interrupt()``
asked), a pending error is a failed run, and a checkpoint newer
than the one the last run ended on is a run that stopped part-way. Only a
process that is still alive keeps a thread ``running``.
"""

from __future__ import annotations

import os
import socket
from collections.abc import Callable, Sequence
from typing import Any

from reasoning_graphs.cli.threads import ThreadRecord
from reasoning_graphs.review import is_approval_request

WAITING = "waiting for approval"
WAITING_FOR_ANSWER = "waiting for an answer"
RUNNING = "running"
INTERRUPTED = "interrupted"
FAILED = "failed"

# The channels LangGraph writes a task's interrupt, error and resume value to.
INTERRUPT_WRITE = "__interrupt__"
ERROR_WRITE = "__error__"
RESUME_WRITE = "__resume__"


def this_process() -> str:
    """The owner mark of this process: ``host:pid``."""
    return f"{socket.gethostname()}:{os.getpid()}"


def is_alive(owner: str | None) -> bool:
    """Whether ``owner`` is a process on this machine that still runs.

    A process on another machine (threads shared through PostgreSQL) cannot be
    checked from here; its run counts as stopped once its checkpoint says so.
    """
    if not owner:
        return False
    host, _, pid = owner.rpartition(":")
    if host != socket.gethostname() or not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, under another user
        return True
    return True


def checkpoint_id(saved: Any) -> str | None:
    """The id of a checkpoint tuple (``None`` for a thread with no checkpoint yet)."""
    return None if saved is None else saved.config["configurable"].get("checkpoint_id")


def waiting_for(questions: Sequence[Any]) -> str:
    """The status of a thread paused on these interrupt values: approval while any is ours."""
    return WAITING if any(map(is_approval_request, questions)) else WAITING_FOR_ANSWER


def thread_status(
    record: ThreadRecord, saved: Any, step: Callable[[str], Any] = lambda task_id: None
) -> str:
    """The thread's status: the index's word where the latest checkpoint bears it out.

    Args:
        record: The thread's entry in the index.
        saved: Its latest checkpoint tuple (``checkpointer.get_tuple``), or ``None``.
        step: The latest checkpoint tuple of the step a task id runs as a subgraph
            (``None`` for a task that runs none): a plan step or a trial whose question
            was answered goes on in its own checkpoints while the thread's still show
            the question, until the step ends.
    """
    pending = (saved.pending_writes or []) if saved is not None else []
    writes = {write[1] for write in pending}
    asked = [
        write for write in pending if write[1] == INTERRUPT_WRITE and _still_asked(write, step)
    ]
    if asked and RESUME_WRITE not in writes:
        return waiting_for([item.value for write in asked for item in write[2]])
    if is_alive(record.owner):
        return RUNNING
    if ERROR_WRITE in writes:
        return FAILED
    if record.status == RUNNING:  # and no process runs it any more
        return INTERRUPTED
    if record.ended is not None and record.ended != checkpoint_id(saved):
        return INTERRUPTED  # a run since the recorded end stopped part-way
    return record.status


def _still_asked(write: Any, step: Callable[[str], Any]) -> bool:
    """Whether a task's interrupt write still asks: its step, if it runs one, asks too."""
    inner = step(write[0])
    return inner is None or any(w[1] == INTERRUPT_WRITE for w in inner.pending_writes or [])
