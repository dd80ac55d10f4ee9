"""What the tests share: harnesses, drivers and the agents they start as processes.

A helper started as a process of its own is run by its path (:data:`HELPERS`),
with the repository root on ``PYTHONPATH`` when it imports other helpers
(:func:`tests.helpers.crash_harness.agent_env`).
"""

from pathlib import Path

HELPERS = Path(__file__).resolve().parent
