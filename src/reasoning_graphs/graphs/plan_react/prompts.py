"""Prompts of Plan-in-context ReAct: the planner, the plan as the loop's prompt shows it,
the request to rewrite it, and the answers of ``update_plan``.

The loop itself runs on the ReAct prompt (see :mod:`reasoning_graphs.nodes.steps.prompts`);
each round's system prompt adds the plan with its done marks.
"""

from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.guards.untrusted import DATA_RULE

UPDATE_PLAN = "update_plan"

PLANNER_INSTRUCTIONS = """\
Before anyone acts, write a short plan for the user's last request: numbered items, \
in order, each one concrete step that the tools below can carry out. A simple request \
needs one or two items. Do not add an item for writing the final answer.

Tools:
{tools}"""

TEXT_FORMAT = """\
Write the plan as numbered lines and nothing else:
1. <first item>
2. <second item>"""

PLAN_SECTION = """\
Your plan (numbered; [x] marks an item done):
{items}

Work through the plan with the tools. When an item is done, call update_plan with \
its number in "done", together with your next tool call. If an observation shows the \
plan cannot work, call update_plan with "needs_replan": true and the reason; the plan is \
then rewritten. When you know the answer, reply with it."""

ITEM_DONE = "[x] {number}. {item}"
ITEM_OPEN = "[ ] {number}. {item}"

NO_MORE_REPLANS = (
    "\n\nThe plan may not be rewritten again (the limit of {limit} rewrites is reached): "
    "go on with it, or answer with what you know."
)

EMPTY_PLAN = "The plan has no items."
FALLBACK_NOTE = "\n[{reason}; the plan is the request itself]"
KEPT_NOTE = "\n[{reason}; the plan is kept as it was]"

REPLAN_REQUEST = (
    """\
The plan must be rewritten. Reason given: {reason}

The plan so far ([x] marks an item done):
{plan}

What the tools returned so far:
{observations}

Write the new plan for what is still to do, as numbered items; leave out what is done. """
    + DATA_RULE
)
NO_OBSERVATIONS = "(nothing yet)"

MARKED = "Noted. Plan: {done} of {total} items done{open}."
STILL_OPEN = "; still open: {numbers}"
NOT_IN_PLAN = " Not in the plan (items 1-{total}): {numbers}."
REWRITE_ASKED = "Noted: the plan is to be rewritten ({reason})."
NO_PLAN_YET = "There is no plan to update yet."

# A reply that only repeats these is no answer (see reasoning_graphs.nodes.guards.honest).
own_texts(PLANNER_INSTRUCTIONS, TEXT_FORMAT, PLAN_SECTION, NO_MORE_REPLANS, REPLAN_REQUEST)
