"""Prompts of Reflexion: the self-reflection and the next attempt's task.

The attempt itself runs on the ReAct prompt (see :mod:`reasoning_graphs.nodes.steps.prompts`);
what Reflexion adds is the lessons of the earlier trials, appended to the
user's request so the attempt's model reads them where it reads the task.
The judge's text is shared with other patterns, so it is in
:mod:`reasoning_graphs.nodes.steps.prompts`.
"""

from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.guards.untrusted import DATA_RULE

REFLECT_SYSTEM = (
    """\
You help an assistant learn from a failed attempt. Given the task, the tool calls \
the attempt made and what they returned, its answer and the feedback it got, \
explain briefly why the attempt fell short and what to do differently next time \
(a better tool or argument, a step it skipped, a result it misread or ignored). \
Be specific to this task: the advice is all the next attempt will see of this one. """
    + DATA_RULE
)

REFLECT_REQUEST = """\
Task: {task}

{work}

Attempt {trial} answered:
{answer}

Feedback (score {score:.2f}):
{feedback}{earlier}"""

ATTEMPT_WORK = "Attempt {trial} made these tool calls, in order:\n{steps}"
NO_TOOL_CALLS = "Attempt {trial} made no tool calls."
EARLIER_CALLS = "({count} earlier calls not shown.)"
CALL_LINE = "{number}. {call} ({how})\n{observation}"
CLIPPED = "… [cut: {total} characters in all]"

EARLIER_REFLECTIONS = "\n\nLessons from earlier attempts:\n{reflections}"

ATTEMPT_TASK = """\
{task}

Earlier attempts at this task fell short. Lessons learned from them:
{reflections}

Use these lessons in this attempt."""

REMEMBERED_TASK = (
    """\
{task}

Lessons you drew from earlier, similar tasks that fell short (they may not all apply here). """
    + DATA_RULE
    + """
{lessons}"""
)
REMEMBERED_SOURCE = "a lesson from an earlier task"

REFLECTION_LINE = "- Attempt {trial} (score {score:.2f}): {diagnosis} Next time: {advice}"

BEST_ATTEMPT_NOTE = (
    "[Best of {trials} attempts, score {score:.2f}; stopped: {reason}. "
    "Remaining issues: {feedback}]"
)

UNGRADED_NOTE = "[Not graded: {reason}.]"

# A reply that only repeats these is no answer (see reasoning_graphs.nodes.guards.honest).
own_texts(
    REFLECT_SYSTEM,
    REFLECT_REQUEST,
    ATTEMPT_WORK,
    NO_TOOL_CALLS,
    EARLIER_REFLECTIONS,
    ATTEMPT_TASK,
    REMEMBERED_TASK,
    BEST_ATTEMPT_NOTE,
    UNGRADED_NOTE,
)
