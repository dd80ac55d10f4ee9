"""The options are declared once: the classes, the build options and the flags follow the table."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import fields

import pytest

from reasoning_graphs import option_codegen
from reasoning_graphs.cli.main import build_parser
from reasoning_graphs.context import AgentContext, Limits, ReactLoopContext
from reasoning_graphs.nodes.model.setup import AgentOptions
from reasoning_graphs.option_table import OPTION, OPTIONS


def test_the_written_classes_are_what_the_table_gives() -> None:
    written = option_codegen.TARGET.read_text()
    assert written == option_codegen.source(), (
        "option_classes.py is stale: run python -m reasoning_graphs.option_codegen"
    )


def test_every_class_has_exactly_the_table_options_of_its_kind() -> None:
    shared_run = [o.name for o in OPTIONS if o.bound is not None and not o.loop]
    loop_run = [o.name for o in OPTIONS if o.bound is not None and o.loop]
    assert [f.name for f in fields(AgentContext)] == shared_run
    assert [f.name for f in fields(ReactLoopContext)] == shared_run + loop_run
    # besides the table's, the call limits read from middleware, which no option sets
    assert [f.name for f in fields(Limits)] == [o.name for o in OPTIONS if o.limit] + [
        "call_limits"
    ]
    assert set(AgentOptions.__optional_keys__) == {o.name for o in OPTIONS if o.build}


def test_a_run_option_carries_its_meaning_and_bound() -> None:
    item = next(f for f in fields(AgentContext) if f.name == "max_model_calls")
    assert item.metadata["description"].startswith(OPTION["max_model_calls"].about)
    assert item.metadata["bound"] == OPTION["max_model_calls"].bound
    assert Limits().max_model_calls == OPTION["max_model_calls"].default


def test_a_new_option_in_the_table_reaches_every_class(monkeypatch: pytest.MonkeyPatch) -> None:
    """Adding an entry is all it takes: the written source gains it in each class."""
    from dataclasses import replace

    from reasoning_graphs import option_table

    extra = replace(OPTION["token_budget"], name="probe_budget", flag=None)
    monkeypatch.setattr(option_codegen, "OPTIONS", (*option_table.OPTIONS, extra))
    source = option_codegen.source()
    assert 'probe_budget: int | None = run_field("probe_budget")' in source
    assert 'probe_budget: int | None = limit_field("probe_budget")' in source
    assert "    probe_budget: int | None\n" in source  # the build options
    assert "probe_budget: Prompt plus completion tokens" in source  # and their docs


def test_the_flags_are_the_flagged_options() -> None:
    run = build_parser()._subparsers._group_actions[0].choices["run"]  # type: ignore[union-attr]
    dests = {action.dest for action in run._actions}
    assert {o.name for o in OPTIONS if o.flag} <= dests


@pytest.mark.parametrize("flag", ["--max-model-calls=0", "--context-window=0", "--idle-timeout=0"])
def test_a_flag_value_the_bound_refuses_is_a_usage_error(flag: str, tmp_path) -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "reasoning_graphs",
            "--db",
            str(tmp_path / "t.db"),
            "run",
            "q",
            "--pattern",
            "cot",
            "--model",
            "local",
            flag,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 2, done.stderr
    assert flag.split("=")[0] in done.stderr
    assert "Traceback" not in done.stderr
