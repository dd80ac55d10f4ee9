"""The command as a user's shell runs it, each call a process of its own.

Start-up that loads only what the command needs, global options after the
command, a process killed between a step and its checkpoint, Ctrl-C during an
embedded-model generation, and a thread's status read from its checkpoint.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from reasoning_graphs.cli import exits
from reasoning_graphs.models.local import local_model_available
from tests.helpers import HELPERS
from tests.helpers.cli_driver import thread_id_from
from tests.helpers.scripted_cli import ctrl_c, run_command, run_process
from tests.helpers.scripted_cli import listed_threads as threads

LOCAL_CLI = HELPERS / "local_cli.py"
AVAILABLE, MISSING = local_model_available()

HEAVY = ("langgraph.graph", "langgraph.pregel", "reasoning_graphs.nodes", "llama_cpp", "langchain")
LOADED = f"""
import json, sys
from reasoning_graphs.cli.main import main
try:
    code = main(sys.argv[1:])
except SystemExit as leaving:
    code = leaving.code
heavy = [name for name in {HEAVY!r} if name in sys.modules]
print(json.dumps({{"code": code, "heavy": heavy}}), file=sys.stderr)
"""


def loaded(*argv: str, env: dict[str, str]) -> dict:
    done = run_command([sys.executable, "-c", LOADED, *argv], env)
    return json.loads(done.stderr.strip().splitlines()[-1])


def scripted(script: list, *argv: str, env: dict[str, str], **extra: str):
    return run_process(script, *argv, env={**env, **extra})


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    return {**os.environ, "REASONING_GRAPHS_DB": str(tmp_path / "threads.sqlite")}


@pytest.mark.parametrize(
    ("argv", "code"),
    [
        (["--help"], 0),
        (["run"], exits.USAGE),
        (["run", "q", "--max-model-calls", "ten"], exits.USAGE),
        (["threads"], 0),
    ],
    ids=["help", "missing-question", "ill-typed-flag", "threads"],
)
def test_help_bad_input_and_threads_load_no_graph_machinery(argv, code, env) -> None:
    sqlite3.connect(env["REASONING_GRAPHS_DB"]).close()  # a store to list: `threads` makes none
    result = loaded(*argv, env=env)

    assert result["code"] == code
    assert result["heavy"] == []


def test_global_options_may_follow_the_command(tmp_path: Path, env) -> None:
    db = tmp_path / "elsewhere.sqlite"
    sqlite3.connect(db).close()  # a store to list: `threads` makes none

    after = scripted([], "threads", "--db", str(db), "--log-level", "debug", env=env)
    before = scripted([], "--db", str(db), "threads", env=env)

    assert after.returncode == before.returncode == 0, after.stderr
    assert db.exists()
    assert not Path(env["REASONING_GRAPHS_DB"]).exists()


CALC = {"tool": "calculator", "args": {"expression": "23*17+4"}}


def test_a_process_killed_after_a_step_and_before_its_checkpoint_resumes(env) -> None:
    # put 1: the input; put 2: after __start__; put 3: after think, whose writes are saved
    killed = scripted([CALC, "It is 395."], "run", "What is 23*17+4?", env=env, KILL_AT_PUT="3")
    assert killed.returncode == -signal.SIGKILL
    thread_id = thread_id_from(killed.stdout)
    assert threads(env)[thread_id]["status"] == "interrupted"

    # the resumed process never re-asks think: its call runs, then the model answers
    resumed = scripted(["It is 395."], "resume", thread_id, env=env)

    assert resumed.returncode == exits.ANSWERED, resumed.stderr
    lines = resumed.stdout.splitlines()
    assert "Observation: 395" in lines
    assert "Answer: It is 395." in lines
    assert threads(env)[thread_id]["status"] == "answered"


def test_a_thread_whose_process_died_is_interrupted_then_answered(env) -> None:
    killed = scripted([CALC, "It is 395."], "run", "What is 23*17+4?", env=env, KILL_AT_PUT="4")
    thread_id = thread_id_from(killed.stdout)
    listing = scripted([], "threads", env=env).stdout

    assert killed.returncode == -signal.SIGKILL
    assert "interrupted" in listing.split(thread_id, 1)[1].splitlines()[0]
    assert scripted(["It is 395."], "resume", thread_id, env=env).returncode == exits.ANSWERED
    assert scripted([], "resume", thread_id, env=env).returncode == exits.ANSWERED  # nothing left
    assert threads(env)[thread_id]["status"] == "answered"


@pytest.mark.local_model
@pytest.mark.skipif(not AVAILABLE, reason=f"embedded model not installed: {MISSING}")
def test_ctrl_c_during_an_embedded_generation_stops_at_once_and_the_thread_resumes(
    env, tmp_path: Path
) -> None:
    process = subprocess.Popen(
        [
            sys.executable,
            str(LOCAL_CLI),
            "run",
            "Write a very long story about a dragon.",
            "--pattern",
            "react_text",  # free text: the reply runs on for seconds
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        env={**env, "REASONING_GRAPHS_WORKSPACE": str(tmp_path)},
        cwd=tmp_path,
    )
    assert process.stderr is not None
    for line in process.stderr:
        if line.strip() == "generating":
            break
    time.sleep(1.0)  # well inside a reply of up to 2,048 tokens
    assert process.poll() is None, "the reply ended before the test could interrupt it"

    out, err = ctrl_c(process)

    thread_id = thread_id_from(out)
    assert f"reasoning-graphs resume {thread_id}" in out + err
    assert threads(env)[thread_id]["status"] == "interrupted"

    resumed = scripted(["Final Answer: It was a long story."], "resume", thread_id, env=env)

    assert resumed.returncode == exits.ANSWERED, resumed.stderr
    assert threads(env)[thread_id]["status"] == "answered"


def test_a_provider_model_without_its_key_is_one_line_and_exit_code_2(env) -> None:
    clean = {k: v for k, v in env.items() if k not in ("OPENAI_API_KEY", "OPENAI_BASE_URL")}

    command = [sys.executable, "-m", "reasoning_graphs", "run", "hi"]
    done = run_command([*command, "--model", "openai:gpt-4o-mini"], clean)

    assert done.returncode == exits.USAGE
    assert len(done.stderr.strip().splitlines()) == 1, done.stderr
    assert "Traceback" not in done.stderr
