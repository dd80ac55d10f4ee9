"""The shape a typed final answer takes: a Pydantic model, a TypedDict or a JSON schema.

``build_graph(..., response_format=Schema)`` and the run option ``response_format``
(a JSON schema) name the shape; :func:`answer_schema` reads any of the three forms
into one :class:`AnswerSchema`, which gives the model its schema (as the function
it must call) and checks what the model wrote:

- a Pydantic model validates into an instance of that model;
- a TypedDict validates into a ``dict`` (Pydantic's ``TypeAdapter``);
- a JSON schema validates with ``jsonschema`` into a ``dict``, as written.

Fields a Pydantic model or a TypedDict does not declare are dropped, as Pydantic
does; a JSON schema keeps what it allows (``additionalProperties``). A reply of more
than :data:`MAX_ANSWER_CHARS` characters is refused whatever the schema says, so a
model that floods cannot fill the state. This module imports only what it needs on
first use: the command line reads run options without loading Pydantic's validators.

Examples:
    >>> from typing_extensions import TypedDict
    >>> class City(TypedDict):
    ...     name: str
    ...     population: int
    >>> schema = answer_schema(City)
    >>> schema.name, schema.validate({"name": "Oslo", "population": "709000"})
    ('City', {'name': 'Oslo', 'population': 709000})
"""

from __future__ import annotations

import inspect
import json
import re
import sys
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any, Literal, Union

from pydantic import BaseModel, ConfigDict, TypeAdapter, ValidationError
from typing_extensions import is_typeddict

from reasoning_graphs.errors import validation_problems

if TYPE_CHECKING:
    from langchain.agents.structured_output import ProviderStrategy, ToolStrategy

AnswerFormat = Union[type[Any], Mapping[str, Any], "ToolStrategy[Any]", "ProviderStrategy[Any]"]
"""What ``response_format=`` takes: a schema (a class, or a JSON schema or a provider's dict)
or LangChain's strategy of one."""
SchemaKind = Literal["pydantic", "typeddict", "json_schema"]
Strategy = Literal["after", "tool", "provider"]
"""How the typed answer is had: ``after`` the loop, in a call of its own (a plain schema);
as a ``tool`` the loop offers (LangChain's ``ToolStrategy``); or in the ``provider``'s
native structured output of the loop's own calls (``ProviderStrategy``)."""

MAX_SCHEMA_CHARS = 20_000
"""Longest JSON schema a run may give (as JSON): enough for a form, not a flood of prompt."""
MAX_ANSWER_CHARS = 20_000
"""Longest typed answer (as JSON) that is accepted."""
DEFAULT_NAME = "Answer"
"""The function name of a JSON schema without a usable ``title``."""
NAME_CHARS = re.compile(r"[^A-Za-z0-9_-]+")

NOT_A_SCHEMA = (
    "response_format must be a Pydantic model class, a TypedDict class, a JSON schema "
    "(a dict, or a provider's {{'type': 'json_schema', ...}}) or LangChain's ToolStrategy, "
    "ProviderStrategy or AutoStrategy of one, not {kind}."
)
ONE_SCHEMA = (
    "a ToolStrategy of several schemas (a Union or a 'oneOf') is not supported: give it one "
    "schema ({names})"
)
BAD_JSON_SCHEMA = "response_format is not a valid JSON schema: {why}"
NOT_AN_OBJECT = (
    'response_format must describe an object ({"type": "object", "properties": ...}): '
    "the model gives its answer as a function's arguments, which are an object."
)
TOO_LONG_SCHEMA = "response_format is {size} characters of JSON; at most {limit} are allowed."
NO_JSON = "response_format cannot be written as JSON: {why}"
REMOTE_REF = (
    "response_format may refer only to its own definitions ($ref such as '#/$defs/Item', "
    "found in the schema), not {ref!r}: nothing is fetched"
)
NO_REGEX = (
    "a run's response_format may not use {keyword!r}: a regular expression from a client "
    "could take the server's time on every reply it checks"
)
REGEX_KEYWORDS = ("pattern", "patternProperties")
TOO_LONG_ANSWER = "the reply is {size} characters of JSON; at most {limit} are accepted"
NOT_AN_ANSWER_OBJECT = "the reply must be an object of the schema's fields, not {kind}"


class AnswerInvalid(ValueError):
    """A reply does not fit the answer's schema; the message says what is wrong, field by field."""


@dataclass(frozen=True)
class AnswerSchema:
    """One response format, whatever form it was given in.

    Attributes:
        source: The schema as given (the class, or the JSON schema dict).
        kind: Which of the three forms it is.
        name: The function the model is asked to call (letters, digits, ``_`` and ``-``).
        json_schema: The schema the model is shown.
        strategy: How the answer is had (:data:`Strategy`).
        handle_errors: A ``tool`` strategy's ``handle_errors``: what the model is told when
            its call does not fit, or ``False`` to raise (LangChain's meaning).
        tool_message: A ``tool`` strategy's ``tool_message_content``.
        strict: A ``provider`` strategy's ``strict``.
        description: What the schema's tool says it is for.
        given: The LangChain strategy as given, which ``wrap_model_call`` hooks see.
    """

    source: Any
    kind: SchemaKind
    name: str
    json_schema: dict[str, Any] = field(compare=False)
    strategy: Strategy = "after"
    handle_errors: Any = field(default=True, compare=False)
    tool_message: str | None = None
    strict: bool | None = None
    description: str = field(default="", compare=False)
    given: Any = field(default=None, compare=False)

    @property
    def in_loop(self) -> bool:
        """Whether the loop's own calls give the answer (a strategy was named), rather than
        a call of its own after the loop."""
        return self.strategy != "after"

    def validate(self, data: Any) -> Any:
        """``data`` (a reply's arguments) as the typed answer: a model instance for a Pydantic
        schema, else a ``dict``. Raises :class:`AnswerInvalid` saying what does not fit."""
        if not isinstance(data, Mapping):
            raise AnswerInvalid(NOT_AN_ANSWER_OBJECT.format(kind=type(data).__name__))
        size = len(json.dumps(data, ensure_ascii=False, default=str))
        if size > MAX_ANSWER_CHARS:
            raise AnswerInvalid(TOO_LONG_ANSWER.format(size=size, limit=MAX_ANSWER_CHARS))
        if self.kind == "json_schema":
            return _json_schema_value(self.json_schema, data)
        try:
            return self._adapter.validate_python(dict(data))
        except ValidationError as error:
            raise AnswerInvalid(validation_problems(error)) from None

    @cached_property
    def reply_model(self) -> type[BaseModel]:
        """The class the model-call seam asks for: offered to the model as :attr:`name` with
        :attr:`json_schema`, it takes any object, so that :meth:`validate` alone judges it."""
        return _reply_model(self.name, self.json_schema)

    @cached_property
    def tool(self) -> Any:
        """The tool a ``tool`` strategy's schema is offered as in the loop (one object, so
        that a binding of it is reused): never run, only called."""
        from langchain_core.tools import StructuredTool

        return StructuredTool(
            name=self.name, description=self.description, args_schema=self.json_schema
        )

    @cached_property
    def _adapter(self) -> TypeAdapter[Any]:
        return TypeAdapter(self.source)


def answer_schema(schema: Any) -> AnswerSchema:
    """``schema`` as an :class:`AnswerSchema`: a Pydantic model class, a TypedDict class or a
    JSON schema dict (a provider's ``{"type": "json_schema", ...}`` form unwrapped), each
    answered after the loop; or LangChain's ``ToolStrategy``/``ProviderStrategy`` of one,
    answered in the loop as under ``create_agent`` (an ``AutoStrategy`` is its plain schema).
    A ``ValueError`` says why when it is none of them or describes no object."""
    strategies = sys.modules.get("langchain.agents.structured_output")
    if strategies is not None:  # not imported: the schema cannot be one of its strategies
        if isinstance(schema, strategies.AutoStrategy):
            return answer_schema(schema.schema)
        if isinstance(schema, strategies.ToolStrategy):
            specs = schema.schema_specs
            if len(specs) != 1:
                raise ValueError(ONE_SCHEMA.format(names=", ".join(s.name for s in specs)))
            tool = answer_schema(specs[0].schema)
            return replace(
                tool,
                strategy="tool",
                handle_errors=schema.handle_errors,
                tool_message=schema.tool_message_content,
                description=specs[0].description,
                given=schema,
            )
        if isinstance(schema, strategies.ProviderStrategy):
            native = answer_schema(schema.schema)
            return replace(
                native, strategy="provider", strict=schema.schema_spec.strict, given=schema
            )
    if isinstance(schema, type) and issubclass(schema, BaseModel):
        json_schema = schema.model_json_schema()
        name = _function_name(schema.__name__)
        return AnswerSchema(schema, "pydantic", name, json_schema, description=_doc(schema))
    if is_typeddict(schema):
        json_schema = TypeAdapter(schema).json_schema()
        name = _function_name(schema.__name__)
        return AnswerSchema(schema, "typeddict", name, json_schema, description=_doc(schema))
    if isinstance(schema, Mapping):
        provided = provider_schema(schema)
        json_schema = check_json_schema(schema if provided is None else provided)
        title = json_schema.get("title")
        name = _function_name(title) if isinstance(title, str) else DEFAULT_NAME
        description = json_schema.get("description")
        text = description if isinstance(description, str) else ""
        return AnswerSchema(json_schema, "json_schema", name, json_schema, description=text)
    raise ValueError(NOT_A_SCHEMA.format(kind=f"{type(schema).__name__} {schema!r}"[:80]))


def provider_schema(given: Mapping[str, Any]) -> dict[str, Any] | None:
    """The JSON schema inside a provider's structured-output form, ``None`` when ``given`` is
    no such form: OpenAI's Chat Completions ``{"type": "json_schema", "json_schema": {"name":
    ..., "schema": {...}}}`` or its flat Responses form ``{"type": "json_schema", "name": ...,
    "schema": {...}}``. Its ``name`` becomes the schema's title. LangChain passes such a dict
    on as a schema, unread; we read it, since ``"type": "json_schema"`` is no JSON schema a
    tool or a check could use. An empty inner schema allows anything: read as any object,
    the only thing a function's arguments can be."""
    if given.get("type") != "json_schema":
        return None
    wrapper = given.get("json_schema", given)
    if not isinstance(wrapper, Mapping) or not isinstance(wrapper.get("schema"), Mapping):
        return None
    inner: dict[str, Any] = dict(wrapper["schema"]) or {"type": "object"}
    name = wrapper.get("name")
    if isinstance(name, str) and name and "title" not in inner:
        inner["title"] = name
    return inner


def _doc(schema: type) -> str:
    """A class's own docstring, what a tool made from it says it is for (as LangChain's)."""
    return inspect.cleandoc(schema.__doc__ or "")


def check_json_schema(schema: Any, *, regexes: bool = True) -> dict[str, Any]:
    """``schema`` as a plain JSON schema dict, when it is a valid JSON schema of an object of
    at most :data:`MAX_SCHEMA_CHARS` characters whose ``$ref`` point inside it (and, without
    ``regexes``, that holds no regular expression: a run's schema comes from any client);
    else a ``ValueError`` that says why."""
    from jsonschema import SchemaError
    from jsonschema.validators import validator_for

    if not isinstance(schema, Mapping):
        raise ValueError(NOT_A_SCHEMA.format(kind=f"{type(schema).__name__} {schema!r}"[:80]))
    try:
        text = json.dumps(schema)
    except (TypeError, ValueError) as error:
        raise ValueError(NO_JSON.format(why=error)) from None
    if len(text) > MAX_SCHEMA_CHARS:
        raise ValueError(TOO_LONG_SCHEMA.format(size=len(text), limit=MAX_SCHEMA_CHARS))
    plain: dict[str, Any] = json.loads(text)
    try:
        validator_for(plain).check_schema(plain)
    except SchemaError as error:
        where = "/".join(map(str, error.path)) or "the schema"
        raise ValueError(BAD_JSON_SCHEMA.format(why=f"{where}: {error.message}"[:300])) from None
    if plain.get("type") != "object":
        raise ValueError(NOT_AN_OBJECT)
    for keyword, value in _keywords(plain):
        if keyword == "$ref" and not _resolves(plain, value):
            raise ValueError(REMOTE_REF.format(ref=value))
        if keyword in REGEX_KEYWORDS and not regexes:
            raise ValueError(NO_REGEX.format(keyword=keyword))
    return plain


def _resolves(schema: dict[str, Any], ref: Any) -> bool:
    """Whether ``ref`` is a JSON pointer to a part of ``schema`` (``#`` is all of it)."""
    if not isinstance(ref, str) or not (ref == "#" or ref.startswith("#/")):
        return False
    found: Any = schema
    for part in ref[2:].split("/") if ref != "#" else []:
        key = part.replace("~1", "/").replace("~0", "~")
        if isinstance(found, dict) and key in found:
            found = found[key]
        elif isinstance(found, list) and key.isdigit() and int(key) < len(found):
            found = found[int(key)]
        else:
            return False
    return True


def _keywords(schema: Any) -> Iterator[tuple[str, Any]]:
    """Every key of ``schema``'s objects, at any depth, with its value."""
    if isinstance(schema, dict):
        for key, value in schema.items():
            yield key, value
            yield from _keywords(value)
    elif isinstance(schema, list):
        for item in schema:
            yield from _keywords(item)


def _json_schema_value(schema: dict[str, Any], data: Mapping[str, Any]) -> dict[str, Any]:
    from jsonschema.validators import validator_for

    value: dict[str, Any] = json.loads(json.dumps(data, default=str))
    errors = sorted(validator_for(schema)(schema).iter_errors(value), key=lambda e: list(e.path))
    if errors:
        problems = [f"{'.'.join(map(str, e.path)) or 'answer'}: {e.message}" for e in errors]
        raise AnswerInvalid(validation_problems(AnswerInvalid("; ".join(problems))))
    return value


def _function_name(title: str) -> str:
    """``title`` as a function name providers accept (``^[A-Za-z0-9_-]{1,64}$``)."""
    name = NAME_CHARS.sub("_", title).strip("_")[:64]
    return name or DEFAULT_NAME


def _reply_model(name: str, json_schema: dict[str, Any]) -> type[BaseModel]:
    """A class whose schema, as LangChain and the embedded model's grammar read it, is
    ``json_schema`` under ``name``, and which takes any object as it was written."""
    shown = {**json_schema, "title": name}

    class Reply(BaseModel):
        model_config = ConfigDict(extra="allow", title=name)

        @classmethod
        def model_json_schema(cls, *args: Any, **kwargs: Any) -> dict[str, Any]:
            return json.loads(json.dumps(shown))

    Reply.__name__ = Reply.__qualname__ = name
    return Reply


def written(reply: BaseModel) -> dict[str, Any]:
    """What the model wrote into a :attr:`AnswerSchema.reply_model` reply: its fields."""
    return dict(reply.model_extra or {})


def as_json(value: Any) -> Any:
    """A typed answer as JSON data: a model instance dumped, a ``dict`` as it is."""
    return value.model_dump(mode="json") if isinstance(value, BaseModel) else value
