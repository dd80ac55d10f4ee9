"""Our guards never harm a correct run.

Every gold task (:mod:`gold_tasks`) is replayed through ``react`` and through
LangChain's ``create_agent`` (:mod:`gold_runs`). ``react`` must solve each one —
the gold answer, the world left as it should be, every gold turn asked of the
model — and show the model the very tool messages ``create_agent`` shows it.
Its model-call budget is set far above the longest gold question
(:data:`~gold_runs.GOLD_MAX_STEPS`): what is tested is the guards (repeats,
empty streaks, stale rounds, reuse, final answers), not the budgets. The tools
are plain LangChain tools and none is dangerous, so no approval is involved.
"""

from __future__ import annotations

import functools

import pytest

from tests.helpers.gold_runs import GOLD_MAX_STEPS, Run, audit_difference, replay, unsolved_reason
from tests.helpers.gold_tasks import TASKS, GoldTask

BY_NAME = {task.name: task for task in TASKS}


@functools.cache
def run_of(name: str, agent: str) -> Run:
    """An agent's run of a task, replayed once for the tests that read it."""
    return replay(BY_NAME[name], agent)


@pytest.fixture(params=[task.name for task in TASKS])
def gold(request: pytest.FixtureRequest) -> GoldTask:
    return BY_NAME[request.param]


def test_the_suite_is_large_and_its_budget_generous() -> None:
    assert len(TASKS) >= 25
    assert len(BY_NAME) == len(TASKS)
    longest = max(len(question.script) for task in TASKS for question in task.questions)
    assert longest * 2 <= GOLD_MAX_STEPS


def test_create_agent_solves_the_gold_task(gold: GoldTask) -> None:
    # a check of the suite itself: the gold trajectory is right for a plain agent
    assert unsolved_reason(gold, run_of(gold.name, "create_agent")) is None


def test_create_agent_replays_the_gold_task_alike_every_time(gold: GoldTask) -> None:
    # the audit's reference is deterministic: a second run shows the same tool messages
    assert audit_difference(replay(gold, "create_agent"), run_of(gold.name, "create_agent")) is None


def test_react_solves_the_gold_task(gold: GoldTask) -> None:
    assert unsolved_reason(gold, run_of(gold.name, "react")) is None


def test_react_shows_the_model_the_tool_messages_create_agent_shows(gold: GoldTask) -> None:
    assert audit_difference(run_of(gold.name, "react"), run_of(gold.name, "create_agent")) is None
