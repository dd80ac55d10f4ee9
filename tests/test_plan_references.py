"""The shared reference walker: each pattern's spelling, one way of finding and filling in."""

from __future__ import annotations

from reasoning_graphs.graphs.llm_compiler.dag import TASK_RESULTS
from reasoning_graphs.graphs.rewoo.steps import EVIDENCE


def test_rewoo_variables_are_found_in_nested_strings_in_order_of_first_mention() -> None:
    args = {"query": "#e2 and #E1", "more": [{"text": "#E2 again"}], "count": 3}
    assert EVIDENCE.references(args) == ["E2", "E1"]


def test_rewoo_substitution_leaves_unknown_variables_and_other_values_alone() -> None:
    args = {"query": "#E1 then #E9", "count": 3, "flags": [True, "#e1"]}
    assert EVIDENCE.substitute(args, {"E1": "paris"}) == {
        "query": "paris then #E9",
        "count": 3,
        "flags": [True, "paris"],
    }


def test_compiler_references_take_both_spellings() -> None:
    args = {"expression": "${2} * $1", "note": "$1"}
    assert TASK_RESULTS.references(args) == [2, 1]
    assert TASK_RESULTS.substitute(args, {1: "6", 2: "7"}) == {"expression": "7 * 6", "note": "6"}


def test_a_string_without_references_is_returned_as_written() -> None:
    assert TASK_RESULTS.substitute("costs $ 5", {5: "x"}) == "costs $ 5"
    assert TASK_RESULTS.references("costs $ 5") == []
