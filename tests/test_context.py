"""Run options override only what they name."""

from __future__ import annotations

import pytest

from reasoning_graphs.context import AgentContext, Limits


def test_named_options_override_and_blank_ones_keep_the_default() -> None:
    built = Limits(max_steps=10, approve=("shell",), tools=("calculator", "shell"))

    run = built.apply({"max_steps": 3, "approve": [], "tools": [], "model": ""})

    assert run.max_steps == 3
    assert run.approve == ("shell",)
    assert run.tools == ("calculator", "shell")
    assert run.model is None


def test_dataclass_context_and_lists_become_tuples() -> None:
    run = Limits().apply(AgentContext(deny=["shell"], token_budget=500))

    assert run.deny == ("shell",)
    assert run.token_budget == 500


def test_unknown_options_are_a_clear_error() -> None:
    with pytest.raises(ValueError, match="max_stpes"):
        Limits().apply({"max_stpes": 3})
