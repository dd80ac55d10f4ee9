"""The command's exit codes: one per way a command can end, so that scripts can tell them apart.

| code | meaning |
|---:|---|
| 0 | the question was answered (or there was nothing to do) |
| 1 | the run failed (a model or tool error the run could not turn into an observation) |
| 2 | bad input: a bad flag, pattern, model spec, thread id or ``--decisions`` |
| 3 | the question stopped without an answer (a budget, a limit, a timeout) |
| 4 | the run waits for a person's decision: answer it with ``resume`` |
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
