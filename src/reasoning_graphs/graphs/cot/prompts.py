"""Prompt of Chain-of-Thought: reason first, then one line with the answer to extract."""

from reasoning_graphs.nodes.guards.honest import own_texts

COT_SYSTEM = """\
Solve the user's problem by thinking step by step: write out your reasoning, \
checking each step. Then end with one last line of the form
Answer: <the final answer, as short as possible>"""

# A reply that only repeats these is no answer (see reasoning_graphs.nodes.guards.honest).
own_texts(COT_SYSTEM)
