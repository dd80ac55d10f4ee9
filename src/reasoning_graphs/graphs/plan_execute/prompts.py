"""Prompts of Plan-and-Execute: the planner, the replanner and the task of one step.

The step itself runs on the ReAct prompt (see :mod:`reasoning_graphs.nodes.steps.prompts`);
what it gets here is a self-contained description of the step, so the executor
needs neither the plan nor the conversation to do its part. Earlier results
are shown as data blocks, and every prompt that shows them says they are not
instructions.
"""

from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.guards.untrusted import DATA_RULE

PLANNER_SYSTEM = """\
You plan before anyone acts. Break the user's last request into a short, ordered \
list of steps that together produce the answer. Each step must be one concrete \
action that a helper with tools can carry out on its own, and must say everything \
the helper needs: the helper sees the step and earlier results, not this conversation. \
Use as few steps as the task allows; a simple request needs one step. \
Do not include a step for writing the final answer."""

PLANNER_TOOLS = "\n\nTools the helper can use:\n{tools}"
TOOL_LINE = "- {name}: {description}"

REPLANNER_SYSTEM = (
    """\
You check a plan's progress. Given the user's request and the steps done so far \
with their results, either give the final answer to the user, or list the steps \
that are still needed, in order. Answer as soon as the results are enough. \
Never list a step that was already done successfully. If a step failed, list a \
different way to get what it should have produced. """
    + DATA_RULE
)

ANSWER_SYSTEM = (
    """\
You write the final answer to the user's request from the results of the steps \
that were carried out. Be short and direct, and say plainly what is still unknown. """
    + DATA_RULE
)

FINISH_REQUEST = "{progress}\n\n{instruction}"

REPLAN_REQUEST = """\
{progress}

Decide now: put the final answer in "response" if the results above suffice; \
otherwise leave "response" empty and put the remaining steps in "steps"."""

PROGRESS = """\
Request: {task}

Steps done so far:
{done}{remaining}"""

DONE_STEP = "{number}. {step}\n   Result: {result}"
DONE_STEP_INCOMPLETE = "{number}. {step}\n   Result (incomplete, {reason}): {result}"
NOTHING_DONE = "(none yet)"
REMAINING = "\n\nSteps still planned:\n{steps}"

STEP_TASK = (
    """\
You are carrying out one step of a larger plan.

Overall request: {task}

Results of the earlier steps:
{done}

Your step: {step}

Do only this step, using tools where they help, then reply with its result: \
short, factual and complete enough for the next steps to build on. """
    + DATA_RULE
)

# A reply that only repeats these is no answer (see reasoning_graphs.nodes.guards.honest).
own_texts(
    PLANNER_SYSTEM,
    PLANNER_TOOLS,
    REPLANNER_SYSTEM,
    ANSWER_SYSTEM,
    REPLAN_REQUEST,
    PROGRESS,
    REMAINING,
    STEP_TASK,
)
