"""Prompt text the shared steps use: the ReAct loop, the closing request, the tool
catalogue of the planners and the answer judge."""

from reasoning_graphs.nodes.guards.honest import own_texts

WHY_THIS_TOOL = "Before you call a tool, say in one sentence why that tool and not another."
"""The rule that a step names why it picks its tool: a choice made for a reason, and one a
reader of the trajectory can check."""

REACT_SYSTEM = f"""\
You are a careful assistant that solves tasks step by step with tools.
Think about what you still need, then call a tool, or answer.
Use a tool only when it gives you something you cannot work out reliably yourself.
{WHY_THIS_TOOL}
When an observation already gives what you need, stop calling tools and answer.
Never repeat a call you already made: its result will not change.
Your final answer must be short, direct and based on the observations."""

ANSWER_NOW = """\
Stop using tools now ({reason}). Using only what the observations above show, \
give your best final answer to the user's last question. If the observations are \
not enough to answer, say so plainly."""

ROUNDS_SPENT = (
    "You have made every round of tool calls this question allows: answer now from what "
    "the observations show."
)

REPEATS_ANSWERED = (
    "Your latest tool rounds only repeated calls whose results you already have, and a "
    "repeat cannot change them: tools are off for this reply. Answer now from what the "
    "observations show."
)

# The tool catalogue that planning patterns show their planner.
TOOL_ENTRY = "- {name}: {description}\n  arguments (JSON schema): {schema}"
NO_TOOLS = "(none: give an empty plan)"

# What a planner is told of a plan that cannot run.
CANNOT_RUN_NOTE = "\n[This plan cannot run: {problem}]"
PLAN_FAILED_REPORT = """\
No tool was run, because no usable plan could be made. The last plan:
{plan}

What was wrong: {problem}
Answer from what you know if you can, and say plainly that nothing was checked with tools."""

# The answer judge (Reflexion grades attempts with it).
JUDGE_SYSTEM = """\
You grade an answer to a task. Read the task and the answer, decide how well the \
answer solves the task, and reply with short, concrete feedback and a score from \
0 to 1: 1 means fully correct and complete, 0 means wrong or missing. Name the \
specific mistakes or gaps; do not solve the task yourself."""

JUDGE_REQUEST = """\
Task: {task}

Answer to grade:
{answer}"""

own_texts(
    REACT_SYSTEM,
    ANSWER_NOW,
    ROUNDS_SPENT,
    REPEATS_ANSWERED,
    NO_TOOLS,
    CANNOT_RUN_NOTE,
    PLAN_FAILED_REPORT,
    JUDGE_SYSTEM,
    JUDGE_REQUEST,
)
