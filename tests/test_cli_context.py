"""The command line's context flags and what --help says of the modes."""

from __future__ import annotations

import inspect
import json
from pathlib import Path

import pytest

from reasoning_graphs.cli import exits, runs
from reasoning_graphs.cli import main as cli
from reasoning_graphs.testing import ScriptedChatModel
from tests.helpers.cli_driver import run_cli, thread_id_from


@pytest.fixture
def db(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "threads.sqlite"
    monkeypatch.setenv(cli.DB_ENV, str(path))
    monkeypatch.chdir(tmp_path)
    return path


def test_context_flags_reach_the_graph_and_stay_with_the_thread(db, monkeypatch, capsys) -> None:
    built: list[dict] = []
    real_graph = runs._graph

    def recording(*args, **kwargs):
        limits = inspect.signature(real_graph).bind(*args, **kwargs).arguments.get("limits")
        built.append(dict(limits or {}))
        return real_graph(*args, **kwargs)

    model = ScriptedChatModel(script=["Fine."], cycle=True)
    monkeypatch.setattr(runs, "resolve_model", lambda spec: model)
    monkeypatch.setattr(runs, "_graph", recording)
    flags = ("--context", "window", "--context-window", "5000")

    code, out, _ = run_cli(monkeypatch, capsys, "run", "Hi?", *flags)
    assert code == exits.ANSWERED
    thread_id = thread_id_from(out)
    assert built[-1]["context_strategy"] == "window"
    assert built[-1]["context_window"] == 5000

    code, _, _ = run_cli(monkeypatch, capsys, "run", "Again?", "--thread", thread_id)
    assert code == exits.ANSWERED
    assert (built[-1]["context_strategy"], built[-1]["context_window"]) == ("window", 5000)
    _, listing, _ = run_cli(monkeypatch, capsys, "threads", "--json")
    record = next(r for r in map(json.loads, listing.splitlines()) if r["thread_id"] == thread_id)
    assert record["limits"]["context_window"] == 5000


@pytest.mark.parametrize(
    "flags",
    [("--context", "squeeze"), ("--context-window", "0"), ("--context-window", "many")],
)
def test_bad_context_flags_are_one_line_usage_errors(db, capsys, flags) -> None:
    code = cli.main(["run", "q", *flags])
    err = capsys.readouterr().err

    assert code == exits.USAGE
    assert len(err.strip().splitlines()) == 1
    assert "Traceback" not in err


def test_help_lists_the_context_flags(capsys) -> None:
    with pytest.raises(SystemExit):
        cli.main(["run", "--help"])
    text = capsys.readouterr().out

    for flag in ("--context STRATEGY", "--context-window N", "--mode {chat,agent}"):
        assert flag in text
