"""Prompts of the LLM Compiler: plan a graph of tool calls, run it, then join.

The model plans every call of a round at once, as tasks that name the tasks
they need; independent tasks run at the same time. The joiner then answers
from the results, or asks for another round saying what is missing. Results
reach both as labelled data blocks, and their instructions say never to obey one.
"""

from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.guards.untrusted import DATA_RULE

LLM_COMPILER_SYSTEM = """\
You are a careful assistant that answers questions with the help of tools. You plan the tool \
calls you need as a set of tasks that run in parallel wherever they do not depend on one \
another; when they have run, you answer from their results."""

PLANNER_INSTRUCTIONS = (
    """\
Plan the tool calls needed to answer the user's last message. You will not see any result \
until the whole plan has run, so plan all the way to the answer.

Each task has:
- id: 1 for the first task, 2 for the next, and so on;
- tool: one of the tools below;
- args: the tool's arguments as an object. Where an argument needs the result of another \
task, write "$" and its id in the text, for example "$1": it is replaced by task 1's result \
before the call runs;
- deps: the ids of the tasks whose results it needs.

Tasks that do not need one another run at the same time, so split the work into independent \
tasks where you can. Never make the same call twice; if no tool is needed, give no tasks. Do \
not answer the question yet. """
    + DATA_RULE
    + """

Tools:
{tools}"""
)

TEXT_FORMAT = """\
Write the plan as numbered lines, one task per line, then join() on the last line, and \
nothing else:
1. <tool>(<argument>="<value>")
2. <tool>(<argument>="... $1 ...")
3. join()"""

INVALID_PLAN_REQUEST = """\
This plan cannot run:
{plan}

What is wrong: {problem}
Write a corrected plan: use only the tools listed, give each task its own id and name only \
tasks the plan defines, without circles."""

REPLAN_REQUEST = """\
The tasks planned so far have run:

{results}

They were not enough: {reason}
Plan only the tasks still needed. Results above cannot be referenced with "$"; copy the \
values you need into the arguments. Task ids start again at 1."""

JOINER_INSTRUCTIONS = (
    """\
The planned tool calls have run; the tasks and their results follow the conversation. \
Decide: answer the user's last message from these results, or, only when something the \
answer needs is missing and more tool calls could get it, ask for another round and say \
what is missing. When a task failed or did not run, do not guess its result. Keep the answer \
short and direct. """
    + DATA_RULE
)

JOIN_TEXT_FORMAT = """\
Reply with the answer alone, or with one line "Replan: <what is missing>" to ask for \
another round."""

RESULTS_REPORT = "The tasks and their results:\n\n{results}"
NO_RESULTS = "No tool was needed: answer from what you know."

JOIN_REPLAN_NOTE = "Another round is needed: {reason}"

# A reply that only repeats these is no answer (see reasoning_graphs.nodes.guards.honest).
own_texts(
    LLM_COMPILER_SYSTEM,
    PLANNER_INSTRUCTIONS,
    TEXT_FORMAT,
    INVALID_PLAN_REQUEST,
    REPLAN_REQUEST,
    JOINER_INSTRUCTIONS,
    JOIN_TEXT_FORMAT,
    RESULTS_REPORT,
    NO_RESULTS,
    JOIN_REPLAN_NOTE,
)
