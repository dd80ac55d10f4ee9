"""HotpotQA's distractor setting as a bench suite.

HotpotQA (Yang et al., 2018, "HotpotQA: A Dataset for Diverse, Explainable
Multi-hop Question Answering", EMNLP; data under CC BY-SA 4.0) asks questions
that need two Wikipedia paragraphs; in the distractor setting each question
comes with ten paragraphs, the two gold ones among eight retrieved to look
alike. Here each question becomes a task whose ``search_docs`` ranks only its
own ten paragraphs — a closed world, so a run measures the pattern's reasoning
and not a retriever's reach — and whose gold trajectory searches each
supporting paragraph by its title, in the order the supporting facts first
name them.

The file is a JSON list of questions, either as published (``_id``,
``context: [[title, [sentence, ...]], ...]``, ``supporting_facts: [[title,
sent_id], ...]``) or as ``paragraphs: [{"title", "sentences"}]`` with
``supporting_facts: [{"title", "sent_id"}]``. Answers are scored by token F1,
HotpotQA's main answer metric alongside exact match (which the score's detail
reports too); F1 forgives a dropped "the" or a missing middle name that EM
would not, and 0.8 counts as correct.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from reasoning_graphs.bench.suite import Document, GoldStep, Suite, SuiteError, Task, tool_patterns

DESCRIPTION = "HotpotQA distractor questions: two-hop lookups over each question's ten paragraphs"

NOT_JSON = "{path} is not JSON: {error}"
NOT_A_LIST = "{path} must hold a JSON list of questions, not {kind}"
BAD_QUESTION = "{path}: question {number} ({id}): {problem}"
EMPTY = "{path} holds no questions"
MISSING = "has no {field!r}"
NO_PARAGRAPHS = "has neither 'context' nor 'paragraphs'"
BAD_PARAGRAPH = "paragraph {index} is not [title, [sentences]] or {{title, sentences}}"
BAD_FACT = "supporting fact {index} is not [title, sent_id] or {{title, sent_id}}"
UNKNOWN_TITLE = "supporting fact {index} names {title!r}, which is not among its paragraphs"


def load_hotpotqa(path: str | Path, limit: int | None = None) -> Suite:
    """Read a HotpotQA distractor file as a suite of (at most ``limit``) tasks.

    Raises:
        SuiteError: The file is not JSON or a question is malformed; the message
            says which question and what is wrong.
        OSError: The file cannot be read.
    """
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as error:
        raise SuiteError(NOT_JSON.format(path=path, error=error)) from None
    if not isinstance(data, list):
        raise SuiteError(NOT_A_LIST.format(path=path, kind=type(data).__name__))
    tasks = []
    for number, item in enumerate(data[:limit] if limit is not None else data, 1):
        try:
            tasks.append(question_task(item))
        except SuiteError as error:
            name = item.get("_id", item.get("id", "?")) if isinstance(item, Mapping) else "?"
            raise SuiteError(
                BAD_QUESTION.format(path=path, number=number, id=name, problem=error)
            ) from None
    if not tasks:
        raise SuiteError(EMPTY.format(path=path))
    return Suite(
        name=path.stem,
        tasks=tuple(tasks),
        description=DESCRIPTION,
        patterns=tool_patterns(),  # without the paragraphs a question tests memory
        source=path,
    )


def question_task(item: Any) -> Task:
    """One HotpotQA question as a task (either format of the module docstring).

    Raises:
        SuiteError: The question is malformed.
    """
    if not isinstance(item, Mapping):
        raise SuiteError(f"is a {type(item).__name__}, not an object")
    for name in ("question", "answer", "supporting_facts"):
        if name not in item:
            raise SuiteError(MISSING.format(field=name))
    if "_id" not in item and "id" not in item:
        raise SuiteError(MISSING.format(field="_id"))
    documents = _documents(item)
    titles = {document.title for document in documents}
    supporting: list[str] = []
    for index, fact in enumerate(_list(item["supporting_facts"], "supporting_facts"), 1):
        title = _fact_title(fact, index)
        if title not in titles:
            raise SuiteError(UNKNOWN_TITLE.format(index=index, title=title))
        supporting.append(title)
    return Task(
        id=str(item.get("_id", item.get("id"))),
        question=str(item["question"]),
        answer=str(item["answer"]),
        tools=("search_docs",),
        scorer="f1",
        trajectory=tuple(
            GoldStep(tool="search_docs", args={"query": title})
            for title in dict.fromkeys(supporting)
        ),
        documents=documents,
    )


def _documents(item: Mapping[str, Any]) -> tuple[Document, ...]:
    if "context" in item:
        paragraphs, name = item["context"], "context"
    elif "paragraphs" in item:
        paragraphs, name = item["paragraphs"], "paragraphs"
    else:
        raise SuiteError(NO_PARAGRAPHS)
    return tuple(
        _document(paragraph, index) for index, paragraph in enumerate(_list(paragraphs, name), 1)
    )


def _pair(value: Any, first: str, second: str) -> tuple[Any, Any]:
    """The two fields of ``value``, written as an object with those keys or as a pair
    (the two forms of the file); ``(None, None)`` for anything else."""
    if isinstance(value, Mapping):
        return value.get(first), value.get(second)
    if isinstance(value, Sequence) and not isinstance(value, str) and len(value) == 2:
        return value[0], value[1]
    return None, None


def _document(paragraph: Any, index: int) -> Document:
    title, sentences = _pair(paragraph, "title", "sentences")
    if not isinstance(title, str) or not _strings(sentences):
        raise SuiteError(BAD_PARAGRAPH.format(index=index))
    # Published sentences carry their leading space; joining stripped ones suits both forms.
    return Document(title=title, text=" ".join(sentence.strip() for sentence in sentences))


def _fact_title(fact: Any, index: int) -> str:
    title, sentence = _pair(fact, "title", "sent_id")
    if not isinstance(title, str) or not isinstance(sentence, int):
        raise SuiteError(BAD_FACT.format(index=index))
    return title


def _list(value: Any, name: str) -> list[Any]:
    if not isinstance(value, list):
        raise SuiteError(f"{name!r} is not a list")
    return value


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) for item in value)
