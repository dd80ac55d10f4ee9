"""Measure how often a hard kill makes a pattern repeat a call that had finished.

Usage: python crash_windows.py PATTERN RUNS [SRC]

Each run starts ``crash_window_agent.py`` (three stateful calls of
``$SLEEP`` seconds each), kills its process group with SIGKILL at a random
moment after the first call started, writes ``kill`` to the tool log and
resumes the thread in a fresh process. It prints one JSON line: the runs, the
kills that landed mid-run, the calls repeated although they had finished
before the kill, and how many of those breached ReAct's guarantee — a later
call had already started, so the finished one should have been saved. The
rest fell in the milliseconds between a call finishing and its save, which
every pattern has (at least once). SRC runs another copy of the package.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

AGENT = Path(__file__).with_name("crash_window_agent.py")
REPO = Path(__file__).resolve().parents[2]


def repeated_after_finishing(lines: list[str]) -> list[tuple[str, bool]]:
    """Calls started again after a kill although they had finished before it.

    Each comes with whether a later call had started before the kill (the
    finished call should have been saved by then).
    """
    finished: dict[str, int] = {}
    before_kill: dict[str, bool] = {}
    started_at: list[int] = []
    repeated = []
    for number, line in enumerate(lines):
        if line == "kill":
            for item, at in finished.items():
                before_kill.setdefault(item, any(start > at for start in started_at))
        elif line.startswith("start "):
            item = line[6:]
            if item in before_kill:
                repeated.append((item, before_kill.pop(item)))
            started_at.append(number)
        elif line.startswith("finish "):
            finished[line[7:]] = number
    return repeated


def one_run(pattern: str, src: str, folder: Path, rng: random.Random) -> dict[str, int]:
    db, log = folder / "runs.sqlite", folder / "tools.log"
    env = dict(os.environ, THREAD_ID="measure", PYTHONPATH=os.pathsep.join([src, str(REPO)]))
    command = [sys.executable, str(AGENT), str(db), str(log), pattern]
    process = subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    while not (log.exists() and log.read_text().startswith("start")):
        time.sleep(0.002)
    time.sleep(rng.uniform(0.0, 3.5 * float(os.environ.get("SLEEP", "0.05"))))
    os.killpg(process.pid, signal.SIGKILL)
    landed = process.wait() == -signal.SIGKILL
    with log.open("a") as out:
        out.write("kill\n")
    subprocess.run([*command, "resume"], env=env, capture_output=True, timeout=120, check=True)
    repeated = repeated_after_finishing(log.read_text().splitlines())
    return {
        "killed": int(landed),
        "repeated": len(repeated),
        "breached": sum(breach for _, breach in repeated),
    }


def main() -> None:
    pattern, runs = sys.argv[1], int(sys.argv[2])
    src = sys.argv[3] if len(sys.argv) > 3 else str(REPO / "src")
    rng = random.Random(7)
    totals = {"pattern": pattern, "runs": runs, "killed": 0, "repeated": 0, "breached": 0}
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as folder:
            for key, value in one_run(pattern, src, Path(folder), rng).items():
                totals[key] += value
    print(json.dumps(totals))


if __name__ == "__main__":
    main()
