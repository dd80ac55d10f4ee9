"""How a run ends, said the same way in every ending: the thread, and what to do next.

Whatever ends a run — an answer, an incomplete answer, Ctrl-C, a decision or an
answer nobody could give, an error — its last line is one note that names the
thread and the command that goes on from there: a follow-up question on a thread
that finished, ``resume`` on one that did not. The command is written as a shell
needs it, with the ``--db`` the run was given (any password in it blanked out).
"""

from __future__ import annotations

import shlex

from reasoning_graphs.cli.status import FAILED, INTERRUPTED, WAITING, WAITING_FOR_ANSWER

CLOSING = "Thread: {thread_id} ({then})"
FOLLOW_UP = "ask a follow-up with --thread {thread_id}"
RESUME = "continue with: {command}"
ANSWER = "answer with: {command} --answer TEXT, or at its prompt"
NOTHING_READ = (
    "no answer could be read from stdin (end of input); thread {thread_id} waits for {what}: "
    "continue with `{command}`{how}"
)
DECISION_FLAGS = " (or add --approve-all, --reject-all or --decisions JSON)"
RESUMABLE = frozenset({WAITING, INTERRUPTED, FAILED})
"""The endings that leave a thread to ``resume``; any other has finished its question."""


def resume_command(thread_id: str, db: str | None) -> str:
    """``reasoning-graphs resume THREAD_ID``, with ``--db`` when the run was given one."""
    from reasoning_graphs.checkpointers import redacted

    words = ["reasoning-graphs", "resume", thread_id]
    if db:
        words += ["--db", redacted(db)]
    return shlex.join(words)


def closing_note(thread_id: str, status: str, db: str | None) -> str:
    """The note a run ends with when the thread's status is ``status``."""
    command = resume_command(thread_id, db)
    if status == WAITING_FOR_ANSWER:
        then = ANSWER.format(command=command)
    elif status in RESUMABLE:
        then = RESUME.format(command=command)
    else:
        then = FOLLOW_UP.format(thread_id=thread_id)
    return CLOSING.format(thread_id=thread_id, then=then)


def nothing_read(thread_id: str, status: str, db: str | None) -> str:
    """The line that says why a run waiting for a person ends: stdin gave no answer."""
    command = resume_command(thread_id, db)
    if status == WAITING_FOR_ANSWER:
        return NOTHING_READ.format(
            thread_id=thread_id, what="an answer", command=f"{command} --answer TEXT", how=""
        )
    return NOTHING_READ.format(
        thread_id=thread_id, what="a decision", command=command, how=DECISION_FLAGS
    )
