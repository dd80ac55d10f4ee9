"""Gold-trajectory replay: do our guards let every correct run through?

Each task of ``tests/helpers/gold_tasks.py`` is replayed through our ``react`` graph and
LangChain's ``create_agent`` with the same scripted model and a fresh copy of
its world (see ``tests/helpers/gold_runs.py``). Prints how many tasks each agent solved
(gold answers, expected world, every gold turn asked), how many passed the
audit (tool messages identical to ``create_agent``'s; for ``create_agent``: to
a second run of its own, which checks the suite is deterministic), and each
task ``react`` lost, with the reason.

Run: ``python benchmarks/gold_replay.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tests.helpers.gold_runs import audit_difference, replay, unsolved_reason
from tests.helpers.gold_tasks import TASKS


def main() -> None:
    agents = ("react", "create_agent")
    solved = dict.fromkeys(agents, 0)
    audited = dict.fromkeys(agents, 0)
    lost: dict[str, list[str]] = {agent: [] for agent in agents}
    for task in TASKS:
        runs = {agent: replay(task, agent) for agent in agents}
        references = {"react": runs["create_agent"], "create_agent": replay(task, "create_agent")}
        for agent, run in runs.items():
            reason = unsolved_reason(task, run)
            difference = audit_difference(run, references[agent])
            solved[agent] += reason is None
            audited[agent] += difference is None
            lost[agent] += [f"{task.name}: {why}" for why in (reason, difference) if why]
    total = len(TASKS)
    print(f"{'':14}{'react':>8}{'create_agent':>14}")
    print(f"{'tasks':14}{total:>8}{total:>14}")
    for label, counts in (("solved", solved), ("audit passed", audited)):
        print(f"{label:14}{counts['react']:>8}{counts['create_agent']:>14}")
    for agent in agents:
        tasks = len({line.split(":")[0] for line in lost[agent]})
        print(f"\nTasks lost by {agent}: {tasks}")
        for line in lost[agent]:
            print(f"- {line}")


if __name__ == "__main__":
    main()
