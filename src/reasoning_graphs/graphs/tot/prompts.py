"""Prompts of Tree-of-Thoughts: propose or sample the next thought, rate or vote, answer.

Every call reads the problem and one path of the tree as numbered steps; the
evaluators read the candidate steps after it. A thought is one short
intermediate step (for a number puzzle, ``8 - 4 = 4 (left: 4 7 8)``), and a
thought that completes the solution says so, which ends the search.
"""

from reasoning_graphs.nodes.guards.honest import own_texts

TOT_SYSTEM = """\
You solve problems one short step at a time. A step states one intermediate result \
that brings the solution closer (for a number puzzle, one operation and the numbers left, \
such as "8 - 4 = 4 (left: 4 7 8)"). Mark a step as solving the problem only when it \
completes the whole solution."""

PATH_REQUEST = """\
Problem: {problem}

Steps so far:
{steps}"""

NO_STEPS = "(none)"
STEP_LINE = "{number}. {text}"
PATH_JOIN = " -> "
"""Between the steps of a path shown on one line (a voter's candidate, a note's evidence)."""

PROPOSE_REQUEST = """\
{path}

Propose {count} different possible next steps."""

SAMPLE_REQUEST = """\
{path}

Write the next step."""

VALUE_REQUEST = """\
{path}

Candidate next step: {candidate}

Can the steps so far and this candidate still reach a correct solution? Answer sure, \
likely or impossible, with a short reason."""

VOTE_REQUEST = """\
Problem: {problem}

Candidate lines of steps:
{choices}

Which candidate is the most promising? Give its number, with a short reason."""

ANSWER_REQUEST = "Give the final answer to the problem, as short as possible, from these steps."

# A reply that only repeats these is no answer (see reasoning_graphs.nodes.guards.honest).
own_texts(TOT_SYSTEM, PATH_REQUEST, PROPOSE_REQUEST, SAMPLE_REQUEST, VALUE_REQUEST, VOTE_REQUEST)
own_texts(ANSWER_REQUEST)
