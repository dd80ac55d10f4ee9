"""The token estimate used when a provider reports no usage counts CJK text as such."""

from __future__ import annotations

from langchain_core.messages import AIMessage, HumanMessage

from reasoning_graphs.nodes.model.tokens import estimate_tokens, text_tokens
from reasoning_graphs.nodes.model.trajectory import thought_event

CHINESE = "北京是中华人民共和国的首都，也是全国的政治和文化中心。"


def test_chinese_text_counts_about_one_and_a_half_tokens_per_character() -> None:
    assert abs(text_tokens(CHINESE) - 1.5 * len(CHINESE)) <= 1


def test_english_text_counts_about_four_characters_per_token() -> None:
    text = "The capital of France is Paris, and it sits on the Seine. " * 4
    assert abs(text_tokens(text) - len(text) / 4) <= 1


def test_a_chinese_prompt_costs_more_than_the_four_characters_rule_says() -> None:
    naive = len(CHINESE) / 4
    assert estimate_tokens([HumanMessage(CHINESE)]) > 5 * naive


def test_tool_call_arguments_count() -> None:
    bare = AIMessage("")
    calling = AIMessage(
        "", tool_calls=[{"name": "search", "args": {"query": "天气 " * 20}, "id": "c1"}]
    )
    assert estimate_tokens([calling]) > estimate_tokens([bare]) + 30


def test_a_reply_without_usage_is_estimated_with_cjk_counted() -> None:
    prompt = [HumanMessage(CHINESE)]
    reply = AIMessage(CHINESE)
    event = thought_event({"messages": prompt}, reply=reply, prompt=prompt, latency_ms=1.0)
    assert event["input_tokens"] >= 1.5 * len(CHINESE)
    assert event["output_tokens"] >= 1.5 * len(CHINESE)
