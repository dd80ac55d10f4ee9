"""Reflexion on a coding task, graded by real unit tests.

The task asks for a Python function. The bench's unit-test grader takes the code
out of the answer and runs each ``assert`` in a separate Python process with a
timeout (generated code never runs in this process); the share that pass is the
score and the failures are the feedback that ``reflect`` turns into a lesson for
the next attempt. ``reasoning-graphs bench --suite code`` runs more tasks like it
under every pattern that suits them.

Usage: python examples/reflexion_code_task.py [MODEL_SPEC]   (default: ``local``;
e.g. ``openai:gpt-4o-mini`` with ``OPENAI_API_KEY`` set.)
"""

from __future__ import annotations

import sys

from reasoning_graphs.bench.scorers import unit_test_evaluator
from reasoning_graphs.bench.suite import Task
from reasoning_graphs.graphs.reflexion import build_graph

TASK = Task(
    id="is_palindrome",
    question=(
        "Write a Python function `is_palindrome(text: str) -> bool` that tells whether "
        "`text` reads the same forwards and backwards, ignoring case, spaces and "
        "punctuation. Reply with the code in one ```python block."
    ),
    answer=(
        "```python\ndef is_palindrome(text: str) -> bool:\n"
        "    letters = [c.lower() for c in text if c.isalnum()]\n"
        "    return letters == letters[::-1]\n```"
    ),
    scorer="unit_tests",
    tests="\n".join(
        [
            "assert is_palindrome('level')",
            "assert not is_palindrome('python')",
            "assert is_palindrome('Racecar')",
            "assert is_palindrome('A man, a plan, a canal: Panama!')",
            "assert is_palindrome('')",
        ]
    ),
)


def main() -> None:
    model = sys.argv[1] if len(sys.argv) > 1 else "local"
    graph = build_graph(model, tools=[], evaluator=unit_test_evaluator(TASK), threshold=1.0)
    state = graph.invoke({"messages": [("user", TASK.question)]})
    for trial in state["trials"]:
        print(f"Trial {trial['trial']}: score {trial['score']:.2f} — {trial['feedback']}")
    print(state["messages"][-1].content)


if __name__ == "__main__":
    main()
