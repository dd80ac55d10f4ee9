"""Prompts of LATS: the acting model's instructions and the judge that values trajectories.

The acting model sees the question and one branch of the search as its own
earlier turns, and proposes the next action; several samples of that call are
the branch's children. The judge reads the same branch as text and scores how
likely it leads to (or is) a correct answer — the value the search backs up.
What the tools returned reaches the judge only as data blocks, which its
instructions say never to obey.
"""

from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.guards.untrusted import DATA_RULE

LATS_SYSTEM = """\
You are a careful assistant that solves tasks step by step with tools.
Decide the single next step: call one tool, or give the final answer.
Use a tool only when it gives you something you cannot work out reliably yourself.
When an observation already gives what you need, answer.
Never repeat a call you already made: its result will not change.
Your final answer must be short, direct and based on the observations."""

LATS_JUDGE_SYSTEM = f"""\
You judge one attempt at a task: the steps taken so far, with what each tool \
returned, and possibly a final answer. Reply with a short reason and a score from \
0 to 1. For a final answer, the score is how correct and complete it is: 1 fully \
correct, 0 wrong. For unfinished steps, the score is how likely they lead to a \
correct answer: high when they gather exactly what the task needs, low when they \
fail, repeat themselves or go off the task. Do not solve the task yourself.

{DATA_RULE}"""

LATS_JUDGE_REQUEST = """\
Task: {task}

Steps so far:
{steps}

{ending}"""

STEP_LINE = "{number}. {thought}{call}\nObservation: {observation}"
NO_STEPS = "(none)"
FINAL_ANSWER = "Final answer: {answer}"
NOT_FINISHED = "(No final answer yet.)"

BELOW_THRESHOLD_NOTE = (
    "[Best answer found scored {score:.2f}, below the threshold {threshold:.2f}; "
    "the search stopped: {reason}.]"
)

# A reply that only repeats these is no answer (see reasoning_graphs.nodes.guards.honest).
own_texts(LATS_SYSTEM, LATS_JUDGE_SYSTEM, LATS_JUDGE_REQUEST, NOT_FINISHED, BELOW_THRESHOLD_NOTE)
