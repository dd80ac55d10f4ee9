"""The command's exit codes: one per way a command can end, so that scripts can tell them apart.

| code | meaning |
|---:|---|
| 0 | the question was answered (or there was nothing left to resume) |
| 1 | the run failed (a model or tool error the run could not turn into an observation) |
| 2 | bad input: flags, pattern, model spec, thread id, ``--graph``, ``--decisions``, ``--answer`` |
| 3 | the question stopped without an answer (a budget, a limit, a timeout) |
| 4 | waiting for a decision or an answer: give it with ``resume`` |
| 5 | the thread is busy: another process is running it (``--wait`` waits for it) |
| 130 | stopped by Ctrl-C: ``resume`` continues the thread |
"""

ANSWERED = 0
FAILED = 1
USAGE = 2
INCOMPLETE = 3
WAITING = 4
BUSY = 5
INTERRUPTED = 130
