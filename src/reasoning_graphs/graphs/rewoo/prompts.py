"""Prompts of ReWOO: plan every tool call first, then answer from the evidence.

The model is asked twice per question: once for the whole plan (it never
sees a tool result while planning), once for the answer (it sees the plan and
every result). A plan that cannot run is sent back once with what was wrong.
"""

from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.guards.untrusted import DATA_RULE

REWOO_SYSTEM = """\
You are a careful assistant that answers questions with the help of tools. You work in two \
stages: first you plan every tool call you need, all at once and before any of them runs; \
then, when they have run, you answer from their results."""

PLANNER_INSTRUCTIONS = """\
Stage 1: plan. Write every tool call needed to answer the user's last message. You will \
not see any result until the whole plan has run, so plan all the way to the answer.

Each step has:
- reason: one short sentence on why the step is needed;
- var: the evidence variable that will hold its result: E1 for the first step, E2 for the \
second, and so on;
- tool: one of the tools below;
- args: the tool's arguments as an object. Where an argument needs the result of an earlier \
step, write that step's variable in the text, for example "#E1": it is replaced by the \
result before the call runs. Refer only to earlier steps.

Steps that do not refer to one another run at the same time. Use as few steps as the task \
needs, never the same call twice; if no tool is needed, give an empty plan. Do not answer \
the question yet.

Tools:
{tools}"""

TEXT_FORMAT = """\
Write the plan as lines of this form, one line per step, and nothing else:
Plan: <reason> #E1 = <tool>[<arguments as a JSON object>]
A later step uses an earlier result by naming its variable inside the arguments:
Plan: <reason> #E2 = <tool>[{"<argument>": "... #E1 ..."}]"""

REPLAN_REQUEST = """\
This plan cannot run:
{plan}

What is wrong: {problem}
Write a corrected plan: use only the tools listed, give each step its own variable (E1, E2, \
…) and refer only to earlier steps."""

SOLVER_INSTRUCTIONS = (
    """\
Stage 2: answer. The plan has been carried out; its steps and their results follow the \
conversation. Answer the user's last message from these results. When a step failed or \
did not run, do not guess its result: answer with what you have and say what is missing. \
Keep the answer short and direct. """
    + DATA_RULE
)

EVIDENCE_REPORT = "The plan and its evidence:\n\n{steps}"
EVIDENCE_STEP = "#{var}, needed because: {reason}\n{evidence}"
EVIDENCE_BODY = "{call}\nResult: {result}"
NO_EVIDENCE = "The plan needed no tools: answer from what you know."

# A reply that only repeats these is no answer (see reasoning_graphs.nodes.guards.honest).
own_texts(
    REWOO_SYSTEM,
    PLANNER_INSTRUCTIONS,
    TEXT_FORMAT,
    REPLAN_REQUEST,
    SOLVER_INSTRUCTIONS,
    EVIDENCE_REPORT,
    NO_EVIDENCE,
)
