"""The text ReAct parser and prompts: a corpus of real-looking replies, and fuzzing.

The corpus (``fixtures/react_text_corpus.json``) holds the messy outputs people
report from text-format agents; each case names the step it must parse to. The
targeted tests pin cutting, schema mapping and the prompt text; the hypothesis
tests check that no input makes the parser raise or leak cut-off text.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reasoning_graphs.text_format import (
    CHINESE,
    ENGLISH,
    LABELS,
    Labels,
    ParsedStep,
    build_system_prompt,
    cut_invented,
    format_error_observation,
    format_reminder,
    labels_for,
    parse_step,
    stop_sequences,
)
from reasoning_graphs.text_format.transcript import observation_line

CORPUS_PATH = Path(__file__).parent / "fixtures" / "react_text_corpus.json"
CORPUS: list[dict[str, Any]] = json.loads(CORPUS_PATH.read_text(encoding="utf-8"))

TOOLS: dict[str, dict[str, Any]] = {
    "calculator": {
        "type": "object",
        "properties": {"expression": {"type": "string"}},
        "required": ["expression"],
    },
    "search": {
        "type": "object",
        "properties": {"query": {"type": "string"}, "k": {"type": "integer"}},
        "required": ["query"],
    },
    "lookup": {
        "type": "object",
        "properties": {"term": {"type": "string"}},
        "required": ["term"],
    },
    "write_file": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
        "required": ["path", "content"],
    },
}
TOOL_SPECS = [
    {
        "name": "calculator",
        "description": "Evaluate an arithmetic expression.",
        "parameters": TOOLS["calculator"],
    },
    {"name": "search", "description": "Search the documents.", "parameters": TOOLS["search"]},
]


def parse(text: str, labels: Labels = ENGLISH) -> ParsedStep:
    return parse_step(text, TOOLS, labels)


# The corpus


@pytest.mark.parametrize("case", CORPUS, ids=[case["id"] for case in CORPUS])
def test_corpus_case(case: dict[str, Any]) -> None:
    expected = case["expected"]
    step = parse_step(case["text"], case.get("tools", TOOLS), LABELS[case["language"]])
    assert step.kind == expected["kind"], step
    for name in ("tool", "args", "answer", "level"):
        if name in expected:
            assert getattr(step, name) == expected[name], step
    if step.kind == "error":
        assert step.error
    else:
        assert step.error is None


def test_corpus_is_large_varied_and_well_formed() -> None:
    ids = [case["id"] for case in CORPUS]
    assert len(ids) >= 150
    assert len(set(ids)) == len(ids)
    kinds = {case["expected"]["kind"] for case in CORPUS}
    levels = {case["expected"].get("level") for case in CORPUS}
    assert kinds == {"action", "final", "error"}
    assert {"exact", "fuzzy", "fallback"} <= levels
    assert sum(case["language"] == "zh" for case in CORPUS) >= 20
    for case in CORPUS:
        assert set(case) <= {"id", "description", "text", "language", "tools", "expected"}
        assert case["description"]
        assert case["language"] in LABELS


# Cutting


def test_text_after_an_invented_observation_never_reaches_the_parse() -> None:
    text = (
        "Thought: I will look it up.\n"
        "Action: search\n"
        'Action Input: {"query": "tallest tree"}\n'
        "Observation: SECRET 115 m\n"
        "Thought: SECRET\n"
        "Final Answer: SECRET"
    )
    cut = cut_invented(text, ENGLISH)
    step = parse(text)
    assert cut == text.split("\nObservation")[0]
    assert step.text == cut
    assert "SECRET" not in repr(step)
    assert (step.kind, step.tool, step.args) == ("action", "search", {"query": "tallest tree"})


def test_an_invented_observation_alone_is_named_in_the_error() -> None:
    step = parse("Thought: I know it.\nObservation: 42\nFinal Answer: 42")
    assert step.kind == "error"
    assert "Observation" in (step.error or "")
    assert "42" not in step.text


def test_nothing_after_a_final_answer_leaks() -> None:
    text = "Thought: done\nFinal Answer: 4\nThought: LEAK\nAction: search\nAction Input: LEAK"
    step = parse(text)
    assert (step.kind, step.answer) == ("final", "4")
    assert "LEAK" not in step.text
    assert cut_invented(text, ENGLISH) == "Thought: done\nFinal Answer: 4"


def test_a_second_action_is_cut() -> None:
    text = "Action: lookup\nAction Input: first\nAction: lookup\nAction Input: second"
    assert cut_invented(text, ENGLISH) == "Action: lookup\nAction Input: first"
    assert parse(text).args == {"term": "first"}


def test_chinese_cut_accepts_both_colons() -> None:
    text = "思考：查一下\n行动：lookup\n行动输入：熊猫\n观察：熊猫是熊科动物"
    assert cut_invented(text, CHINESE) == "思考：查一下\n行动：lookup\n行动输入：熊猫"
    ascii_text = text.replace("观察：", "观察: ")
    assert cut_invented(ascii_text, CHINESE) == "思考：查一下\n行动：lookup\n行动输入：熊猫"


def test_a_clean_reply_is_not_cut() -> None:
    text = 'Thought: add\nAction: calculator\nAction Input: {"expression": "1+1"}'
    assert cut_invented(text, ENGLISH) == text


def test_stop_sequences_end_generation_at_the_observation_label() -> None:
    assert stop_sequences(ENGLISH) == ["\nObservation:", "Observation:"]
    chinese = stop_sequences(CHINESE)
    assert {"\n观察:", "观察:", "\n观察：", "观察：", "\nObservation:"} <= set(chinese)


# Schema mapping and tool names


def test_a_bare_string_fills_the_single_argument() -> None:
    step = parse("Action: lookup\nAction Input: continental drift")
    assert step.args == {"term": "continental drift"}


def test_a_bare_string_for_a_multi_argument_tool_names_the_expected_keys() -> None:
    step = parse("Action: write_file\nAction Input: notes.txt")
    assert step.kind == "error"
    assert "write_file" in (step.error or "")
    assert "path" in (step.error or "")
    assert "content" in (step.error or "")


def test_keys_are_renamed_to_the_schema_properties() -> None:
    step = parse('Action: search\nAction Input: {"QUERY": "otters", "K": "2"}')
    assert step.args == {"query": "otters", "k": "2"}


def test_unknown_tools_pass_through_for_the_runtime_to_answer() -> None:
    step = parse('Thought: x\nAction: summarize\nAction Input: {"text": "long"}')
    assert (step.kind, step.tool, step.args) == ("action", "summarize", {"text": "long"})
    assert step.thought == "x"


def test_an_action_without_a_tool_name_is_an_error() -> None:
    step = parse('Thought: compute\nAction:\nAction Input: {"expression": "1+1"}')
    assert step.kind == "error"
    assert step.thought == "compute"


def test_a_tool_name_is_matched_only_when_unique() -> None:
    tools = {"Search": {}, "search": {}}
    assert parse_step("Action: SEARCH", tools).tool == "SEARCH"
    assert parse_step("Action: search", tools).tool == "search"


def test_odd_schemas_do_not_break_the_parser() -> None:
    tools: dict[str, Any] = {"a": {"properties": "nope", "required": "x"}, "b": {}}
    assert parse_step("Action: a\nAction Input: hello", tools).kind == "error"
    assert parse_step('Action: b\nAction Input: {"x": 1}', tools).args == {"x": 1}


# The fallback's conclusions


@pytest.mark.parametrize("labels", [ENGLISH, CHINESE], ids=["en", "zh"])
@pytest.mark.parametrize("keyword", ["结论", "总结", "最终"])
def test_a_long_thought_that_concludes_in_chinese_is_the_answer(
    keyword: str, labels: Labels
) -> None:
    worked = "我把每一项都核对了一遍，" * 30  # past the length at which prose needs a conclusion
    text = f"{labels.thought}: {worked}{keyword}是三百九十五。"
    step = parse(text, labels)
    assert (step.kind, step.level) == ("final", "fallback")
    assert "三百九十五" in (step.answer or "")


@pytest.mark.parametrize("labels", [ENGLISH, CHINESE], ids=["en", "zh"])
def test_a_long_thought_without_a_conclusion_is_still_no_answer(labels: Labels) -> None:
    worked = "我把每一项都核对了一遍，" * 30
    assert parse(f"{labels.thought}: {worked}共三百九十五。", labels).kind == "error"


# Labels


def test_labels_for_known_and_unknown_languages() -> None:
    assert labels_for("en") is ENGLISH
    assert labels_for("zh") is CHINESE
    with pytest.raises(ValueError, match="en, zh"):
        labels_for("fr")


# Prompts


@pytest.mark.parametrize("labels", [ENGLISH, CHINESE], ids=["en", "zh"])
def test_system_prompt_lists_tools_format_and_an_example(labels: Labels) -> None:
    prompt = build_system_prompt(TOOL_SPECS, labels)
    for label in (labels.thought, labels.action, labels.action_input, labels.final_answer):
        assert f"\n{label}: " in prompt
    assert f"\n{labels.observation}: " in prompt  # only inside the worked example
    for spec in TOOL_SPECS:
        assert spec["name"] in prompt
        assert spec["description"] in prompt
    assert '"required":["expression"]' in prompt
    example = prompt.split("\n")
    last = max(i for i, line in enumerate(example) if line.startswith(f"{labels.final_answer}: "))
    observation = max(
        i for i, line in enumerate(example) if line.startswith(f"{labels.observation}: ")
    )
    assert observation < last


def test_system_prompt_role_override_and_no_tools() -> None:
    prompt = build_system_prompt([], ENGLISH, role="You are a tax assistant.")
    assert prompt.startswith("You are a tax assistant.")
    assert "No tools" in prompt


def test_the_prompts_own_example_parses_step_by_step() -> None:
    prompt = build_system_prompt(TOOL_SPECS, ENGLISH)
    example = prompt.split("Question: ")[1].split("\n", 1)[1]
    step = parse_step(example, {"days_between": {}}, ENGLISH)
    assert (step.kind, step.level, step.tool) == ("action", "exact", "days_between")
    answer = example.split(observation_line("45", "days_between") + "\n")[1]
    assert parse_step(answer, {}, ENGLISH).kind == "final"


def worked_examples(prompt: str, labels: Labels) -> list[list[str]]:
    """Each worked example of the prompt as the model turns it is made of.

    An example is a paragraph with a final answer that is not a ``<hint>``; its
    turns are what the model writes between the runtime's observation blocks.
    """
    final = f"{labels.final_answer}: "
    observation = re.compile(
        rf"^{re.escape(labels.observation)}: <<<data from [^\n]*>>>\n.*?\n<<<end of data>>>$",
        re.MULTILINE | re.DOTALL,
    )
    examples = []
    for paragraph in prompt.split("\n\n"):
        lines = paragraph.splitlines()
        if not any(line.startswith(final) and not line.startswith(f"{final}<") for line in lines):
            continue
        first_thought = next(i for i, line in enumerate(lines) if line.startswith(labels.thought))
        examples.append(observation.split("\n".join(lines[first_thought:])))
    return examples


def example_tools(prompt: str, labels: Labels) -> dict[str, dict[str, Any]]:
    action = f"{labels.action}: "
    return {line[len(action) :]: {} for line in prompt.splitlines() if line.startswith(action)}


@pytest.mark.parametrize("labels", [ENGLISH, CHINESE], ids=["en", "zh"])
def test_the_prompt_shows_a_direct_answer_and_a_multi_step_exchange(labels: Labels) -> None:
    prompt = build_system_prompt(TOOL_SPECS, labels)
    tools = example_tools(prompt, labels)
    shapes = []
    for turns in worked_examples(prompt, labels):
        steps = [parse_step(turn, tools, labels) for turn in turns]
        # as the runtime reads it: an action before every observation, then the answer
        assert [step.kind for step in steps] == ["action"] * (len(turns) - 1) + ["final"]
        assert all(step.level == "exact" for step in steps)
        calls = [(step.tool, json.dumps(step.args, sort_keys=True)) for step in steps[:-1]]
        assert len(set(calls)) == len(calls)  # no example repeats a call
        shapes.append(len(calls))
    assert 0 in shapes  # a direct answer, with no tool
    assert max(shapes) >= 2  # several steps, each a new call


def rules_of(prompt: str, labels: Labels) -> list[str]:
    heading = "Rules:" if labels is ENGLISH else "规则："
    section = prompt.split(f"\n\n{heading}\n")[1].split("\n\n")[0]
    return section.splitlines()


def test_the_prompt_rules_forbid_repeats_and_ask_for_progress_in_both_languages() -> None:
    english = rules_of(build_system_prompt(TOOL_SPECS, ENGLISH), ENGLISH)
    chinese = rules_of(build_system_prompt(TOOL_SPECS, CHINESE), CHINESE)
    assert len(english) == len(chinese)  # the same rules in each language
    assert any("repeat" in rule for rule in english)
    assert any("progress" in rule for rule in english)
    assert any("重复" in rule for rule in chinese)
    assert any("进展" in rule for rule in chinese)


@pytest.mark.parametrize("labels", [ENGLISH, CHINESE], ids=["en", "zh"])
def test_format_error_observation_says_what_and_how(labels: Labels) -> None:
    text = format_error_observation("Action names no tool.", ["calculator", "search"], labels)
    assert "Action names no tool." in text
    assert "calculator, search" in text
    assert format_reminder(labels) in text
    for label in (labels.thought, labels.action, labels.action_input, labels.final_answer):
        assert label in format_reminder(labels)


# Fuzzing

FRAGMENTS = [
    *(
        f"{prefix}{label}{colon}"
        for labels in (ENGLISH, CHINESE)
        for label in (
            labels.thought,
            labels.action,
            labels.action_input,
            labels.observation,
            labels.final_answer,
        )
        for colon in (":", "：", " ", ": ", "")
        for prefix in ("\n", "", "**", " ", "\n  ")
    ),
    *"[](){}【】（）\"'“”：，,`*_#>\n\t \\=",
    "```",
    "```json\n",
    "Act:",
    "Finish[",
    "finish(",
    "None",
    "calculator",
    "search",
    "write_file",
    "lookup",
    'expression="1+1"',
    '{"query": ',
    "{'term': 'x',}",
    '{"action": "search", "action_input": ',
    '{"name": "Finish", "arguments": ',
    "<|im_end|>",
    "I need to ",
    "the answer is ",
    "答案是",
    "Observation 1:",
    "Thought 2:",
]
ALPHABET = st.characters(blacklist_categories=("Cs",))
SPLICED = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(ALPHABET, max_size=8)), max_size=14
).map("".join)
ANY_LABELS = st.sampled_from([ENGLISH, CHINESE])


def check_step(step: ParsedStep) -> None:
    assert step.kind in ("action", "final", "error")
    assert step.level in ("exact", "fuzzy", "fallback")
    assert isinstance(step.thought, str)
    assert isinstance(step.text, str)
    if step.kind == "action":
        assert isinstance(step.tool, str)
        assert step.tool.strip()
        assert isinstance(step.args, dict)
        assert all(isinstance(key, str) for key in step.args)
    elif step.kind == "final":
        assert isinstance(step.answer, str)
        assert step.answer.strip()
    else:
        assert isinstance(step.error, str)
        assert step.error


@settings(max_examples=300, deadline=None)
@given(text=st.text(ALPHABET, max_size=200), labels=ANY_LABELS)
def test_parse_step_never_raises_on_arbitrary_text(text: str, labels: Labels) -> None:
    check_step(parse_step(text, TOOLS, labels))


@settings(max_examples=600, deadline=None)
@given(text=SPLICED, labels=ANY_LABELS)
def test_parse_step_never_raises_on_spliced_labels_and_brackets(text: str, labels: Labels) -> None:
    check_step(parse_step(text, TOOLS, labels))


@settings(max_examples=300, deadline=None)
@given(text=SPLICED, labels=ANY_LABELS)
def test_cut_invented_keeps_a_prefix_and_is_idempotent(text: str, labels: Labels) -> None:
    cut = cut_invented(text, labels)
    assert text.startswith(cut)
    assert cut_invented(cut, labels) == cut


@settings(max_examples=200, deadline=None)
@given(prefix=SPLICED, tail=SPLICED, other=SPLICED, labels=ANY_LABELS)
def test_nothing_after_an_invented_observation_matters(
    prefix: str, tail: str, other: str, labels: Labels
) -> None:
    def parsed(after: str) -> ParsedStep:
        return parse_step(f"{prefix}\n{labels.observation}: {after}", TOOLS, labels)

    assert parsed(tail) == parsed(other)


@settings(max_examples=200, deadline=None)
@given(prefix=SPLICED, answer=SPLICED, tail=SPLICED, other=SPLICED)
def test_nothing_after_a_final_answer_matters(
    prefix: str, answer: str, tail: str, other: str
) -> None:
    def parsed(after: str) -> ParsedStep:
        return parse(f"{prefix}\nFinal Answer: {answer}\nThought: {after}")

    assert parsed(tail) == parsed(other)
