"""The command line and a call that may already have run: never approved unseen, with the
threads in SQLite or in PostgreSQL.

A thread of :mod:`possibly_ran_graph` is started with ``--approve-all`` in a
process of its own, which the approved ``transfer`` kills right after its side
effect, before its result is saved. Resuming the thread puts the call to a
person again marked ``possibly_ran``: ``--approve-all`` must leave it to them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reasoning_graphs.cli import exits
from reasoning_graphs.cli import main as cli
from reasoning_graphs.cli.prompting import NoAnswer, decide
from reasoning_graphs.cli.render import Printer
from reasoning_graphs.review import PendingCall, approval_request
from tests.helpers import HELPERS
from tests.helpers.cli_driver import run_cli
from tests.helpers.crash_harness import agent_env
from tests.helpers.possibly_ran_graph import CALL_ID, LOG_ENV
from tests.helpers.scripted_cli import run_process

GRAPH = f"{HELPERS / 'possibly_ran_graph.py'}:transfer"


@pytest.fixture(params=["sqlite", "postgres"])
def log(request: pytest.FixtureRequest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The transfer's log, for this process and its children, with the thread store: a
    SQLite file beside it, or a fresh PostgreSQL database (skipped without a server)."""
    store = (
        str(tmp_path / "threads.sqlite")
        if request.param == "sqlite"
        else request.getfixturevalue("postgres_url")
    )
    monkeypatch.setenv(cli.DB_ENV, store)
    monkeypatch.setenv(LOG_ENV, str(tmp_path / "transfers.log"))
    return tmp_path / "transfers.log"


def effects(log: Path) -> list[str]:
    """One line per time the transfer's side effect happened."""
    return log.read_text().splitlines() if log.exists() else []


@pytest.fixture
def cut_short(log: Path) -> str:
    """A thread whose approved transfer was killed after its side effect: its id."""
    done = run_process(
        [],
        "run",
        "Send 100.",
        "--graph",
        GRAPH,
        "--approve-all",
        env=agent_env(KILL="after_effect"),
    )
    assert done.returncode == -9, done.stderr
    assert len(effects(log)) == 1
    return done.stdout.splitlines()[0].split()[-1]


def thread_status(monkeypatch, capsys, thread_id: str) -> str:
    _, out, _ = run_cli(monkeypatch, capsys, "threads", "--json")
    entries = {entry["thread_id"]: entry for entry in map(json.loads, out.splitlines())}
    return entries[thread_id]["status"]


def test_approve_all_with_nobody_at_the_terminal_leaves_the_call_waiting(
    cut_short, log, monkeypatch, capsys
) -> None:
    code, out, err = run_cli(monkeypatch, capsys, "resume", cut_short, "--approve-all")

    assert code == exits.WAITING, err
    assert "Traceback" not in err
    assert len(effects(log)) == 1  # not run again
    assert thread_status(monkeypatch, capsys, cut_short) == "waiting for approval"
    notes = [line for line in out.splitlines() if CALL_ID in line and "--decisions" in line]
    assert len(notes) == 1, out  # one line naming the call and how to answer
    assert f"reasoning-graphs resume {cut_short}" in notes[0]

    # asked again while it waits: still nobody, still not run
    code, out, _ = run_cli(monkeypatch, capsys, "resume", cut_short, "--approve-all")
    assert code == exits.WAITING
    assert len(effects(log)) == 1
    assert notes[0] in out.splitlines()

    # the decisions that line offers answer the thread
    offered = json.loads(notes[0].split("--decisions '")[1].split("'")[0])
    code, out, err = run_cli(
        monkeypatch, capsys, "resume", cut_short, "--decisions", json.dumps(offered)
    )
    assert code == exits.ANSWERED, err
    assert len(effects(log)) == 1


def test_approve_all_at_the_terminal_asks_the_person_without_offering_an_edit(
    cut_short, log, monkeypatch, capsys
) -> None:
    code, _, err = run_cli(
        monkeypatch, capsys, "resume", cut_short, "--approve-all", stdin="e\nr\nit went through\n"
    )

    assert code == exits.ANSWERED, err
    assert len(effects(log)) == 1  # the person rejected it: it never ran again
    prompts = [line for line in err.split("Reason")[0].split(": ") if "[a]" in line]
    assert len(prompts) == 2  # "e" was no choice: asked again
    assert all("[e]" not in prompt for prompt in prompts)


def test_approve_all_runs_the_call_again_when_the_person_approves_it(
    cut_short, log, monkeypatch, capsys
) -> None:
    code, _, err = run_cli(monkeypatch, capsys, "resume", cut_short, "--approve-all", stdin="a\n")

    assert code == exits.ANSWERED, err
    assert len(effects(log)) == 2


def test_reject_all_still_rejects_a_call_that_may_have_run(
    cut_short, log, monkeypatch, capsys
) -> None:
    code, out, err = run_cli(monkeypatch, capsys, "resume", cut_short, "--reject-all")

    assert code == exits.ANSWERED, err
    assert len(effects(log)) == 1
    assert "Decision: reject" in out


def pending(call_id: str, *, possibly_ran: bool = False) -> PendingCall:
    allowed = ["approve", "reject", "respond"] if possibly_ran else ["approve", "edit", "reject"]
    call = PendingCall(
        id=call_id,
        name="transfer",
        args={"amount": 100},
        description=f"transfer {call_id}",
        allowed_decisions=allowed,
    )
    if possibly_ran:
        call["possibly_ran"] = True
    return call


class Terminal:
    """Typed lines for the prompt; records each prompt it was shown."""

    def __init__(self, *lines: str) -> None:
        self.lines = list(lines)
        self.prompts: list[str] = []

    def __call__(self, prompt: str) -> str:
        self.prompts.append(prompt)
        if not self.lines:
            raise EOFError
        return self.lines.pop(0)


def test_approve_all_approves_the_other_calls_and_asks_only_about_the_one_that_may_have_run():
    request = approval_request([pending("a-1"), pending("b-2", possibly_ran=True), pending("c-3")])
    terminal = Terminal("s", "it already went through")

    decisions = decide(request, mode="approve", printer=Printer(as_json=False), read=terminal)

    assert [decision["type"] for decision in decisions] == ["approve", "respond", "approve"]
    assert [prompt for prompt in terminal.prompts if "a-1" in prompt or "c-3" in prompt] == []
    with pytest.raises(NoAnswer):
        decide(request, mode="approve", printer=Printer(as_json=False), read=Terminal())


def test_the_prompt_offers_exactly_the_allowed_decisions() -> None:
    request = approval_request([pending("a-1"), pending("b-2", possibly_ran=True)])
    terminal = Terminal("s", "a", "e", "edit", "r", "")

    decisions = decide(request, mode="ask", printer=Printer(as_json=False), read=terminal)

    # a-1 allows no respond: asked again until an allowed choice; b-2 allows no edit
    assert [decision["type"] for decision in decisions] == ["approve", "reject"]
    first, *_, last = [prompt for prompt in terminal.prompts if "[" in prompt]
    assert "[e]dit" in first
    assert "re[s]pond" not in first
    assert "[e]dit" not in last
    assert "re[s]pond" in last
