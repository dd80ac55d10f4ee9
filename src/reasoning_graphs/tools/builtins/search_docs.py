"""Keyword search over a folder of notes, so the model can look things up offline.

Files are cut into paragraphs and ranked with BM25 (:mod:`bm25s`) using its own
regular-expression tokenizer and bundled English stopword list: no stemmer, no
model, no network. The index is built on the first search and rebuilt whenever a
file is added, removed or modified, so a long-running server sees edits. The
same ranking serves titled passages held in memory (:func:`search_passages`),
for a task that brings its own documents.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import bm25s
from pydantic import Field

from reasoning_graphs.tools.spec import ToolSpec, tool_spec

SUFFIXES = (".txt", ".md")
MAX_FILE_BYTES = 2_000_000
"""Larger files are skipped: they are data, not notes, and would swamp the index."""
MAX_PASSAGE_CHARS = 1500
MAX_RESULTS = 10
STOPWORDS = "en"

DESCRIPTION = (
    "Search the local documents (text and Markdown notes) by keywords and return "
    "the best-matching passages with their file names. Use it to look up facts "
    "that may be written in those documents before answering from memory. It "
    "matches words, not meaning: query with the distinctive words you expect in "
    "the passage. Not for arithmetic or for information that is not in the documents."
)
PASSAGES_DESCRIPTION = (
    "Search the documents of this task (titled paragraphs) by keywords and return "
    "the best-matching passages with their titles. Use it to look up facts that "
    "may be written in those documents before answering from memory. It matches "
    "words, not meaning: query with the distinctive words you expect in the "
    "passage, such as a title. Not for arithmetic or for information that is not "
    "in the documents."
)
QUERY_HELP = "Keywords to look for, e.g. 'refund policy deadline'."
K_HELP = f"How many passages to return (1 to {MAX_RESULTS})."

FOLDER_MISSING = "The documents folder {folder} does not exist, so there is nothing to search."
FOLDER_EMPTY = "The documents folder {folder} holds no .txt or .md files with text to search."
NO_PASSAGES = "There are no passages with text to search."
NO_MATCH = "No passage matches {query!r}. Try other or fewer keywords."
PASSAGE = "[{rank}] {file} (score {score:.2f})\n{text}"

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


@dataclass(frozen=True)
class Passage:
    """One paragraph of one file, the unit that is ranked and returned."""

    file: str
    text: str


class PassageIndex:
    """BM25 ranking over a fixed list of passages: the one place the index is built.

    Passages without a single searchable word cannot match, and a corpus of only
    such passages makes bm25s fail, so they are left out; :attr:`empty` says
    whether anything is left to search. Retrieval shares a lock, as calls may
    overlap in worker threads.

    Args:
        passages: What to rank.
        index_titles: Rank by each passage's title (its ``file``) as well as its
            text; right for titled paragraphs (an encyclopedia), not for paths.
    """

    def __init__(self, passages: Sequence[Passage], *, index_titles: bool = False) -> None:
        self._lock = threading.Lock()
        texts = [f"{p.file}\n{p.text}" if index_titles else p.text for p in passages]
        tokens = _tokenize(texts) if texts else []
        indexed = [
            (passage, words) for passage, words in zip(passages, tokens, strict=True) if words
        ]
        self.passages = [passage for passage, _ in indexed]
        self._retriever: bm25s.BM25 | None = None
        if indexed:
            retriever = bm25s.BM25()
            retriever.index([words for _, words in indexed], show_progress=False)
            self._retriever = retriever

    @property
    def empty(self) -> bool:
        return self._retriever is None

    def search(self, query: str, k: int) -> list[tuple[Passage, float]]:
        """The up to ``k`` best passages for ``query`` with a score above zero."""
        if self._retriever is None:
            return []
        tokens = _tokenize([query])
        with self._lock:
            top = min(k, len(self.passages))
            indices, scores = self._retriever.retrieve(tokens, k=top, show_progress=False)
        return [
            (self.passages[int(index)], float(score))
            for index, score in zip(indices[0], scores[0], strict=True)
            if score > 0
        ]


class DocsIndex:
    """A BM25 index over one folder that keeps itself up to date.

    Calls may overlap (the tool is concurrency-safe and sync tools run in worker
    threads), so refreshing shares a lock.
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder).expanduser()
        self._lock = threading.Lock()
        self._signature: tuple[tuple[str, int, int], ...] | None = None
        self._index = PassageIndex([])

    def search(self, query: str, k: int) -> list[tuple[Passage, float]]:
        """The up to ``k`` best passages for ``query`` with a score above zero.

        Raises:
            ValueError: The folder is missing or has no text to search.
        """
        if not self.folder.is_dir():
            raise ValueError(FOLDER_MISSING.format(folder=self.folder))
        with self._lock:
            self._refresh()
            index = self._index
        if index.empty:
            raise ValueError(FOLDER_EMPTY.format(folder=self.folder))
        return index.search(query, k)

    def _refresh(self) -> None:
        files = self._files()
        signature = tuple(_fingerprint(path) for path in files)
        if signature == self._signature:
            return
        self._index = PassageIndex(
            [
                passage
                for path in files
                for passage in passages_of(
                    path.relative_to(self.folder).as_posix(),
                    path.read_text(encoding="utf-8", errors="replace"),
                )
            ]
        )
        self._signature = signature

    def _files(self) -> list[Path]:
        """Text files under the folder, hidden directories (``.git``) left out."""
        return sorted(
            path
            for path in self.folder.rglob("*")
            if path.suffix.lower() in SUFFIXES
            and path.is_file()
            and path.stat().st_size <= MAX_FILE_BYTES
            and not any(part.startswith(".") for part in path.relative_to(self.folder).parts)
        )


def search_docs(folder: str | Path) -> ToolSpec:
    """The ``search_docs`` tool over ``folder`` (searched recursively)."""
    return _search_tool(DocsIndex(folder).search, DESCRIPTION)


def search_passages(passages: Sequence[Passage]) -> ToolSpec:
    """The ``search_docs`` tool over titled passages held in memory (a closed world).

    Each passage's ``file`` is its title, shown like a file name and ranked with
    the text; long passages are cut as a folder's paragraphs are.

    Raises:
        ValueError: No passage has a searchable word.
    """
    index = PassageIndex(
        [piece for p in passages for piece in passages_of(p.file, p.text)], index_titles=True
    )
    if index.empty:
        raise ValueError(NO_PASSAGES)
    return _search_tool(index.search, PASSAGES_DESCRIPTION)


def _search_tool(
    search: Callable[[str, int], list[tuple[Passage, float]]], description: str
) -> ToolSpec:
    """The tool the model calls, whatever the passages come from."""

    def run(
        query: Annotated[str, Field(description=QUERY_HELP)],
        k: Annotated[int, Field(ge=1, le=MAX_RESULTS, description=K_HELP)] = 3,
    ) -> str:
        """Search the passages and format the hits for the model."""
        hits = search(query, k)
        if not hits:
            return NO_MATCH.format(query=query)
        return "\n\n".join(
            PASSAGE.format(rank=rank, file=passage.file, score=score, text=passage.text)
            for rank, (passage, score) in enumerate(hits, start=1)
        )

    return tool_spec(run, name="search_docs", description=description, concurrency_safe=True)


def passages_of(file: str, text: str) -> list[Passage]:
    """The passages of one file or titled document."""
    return [Passage(file=file, text=piece) for piece in _paragraphs(text)]


def _fingerprint(path: Path) -> tuple[str, int, int]:
    """What changes when a file is edited, without reading it."""
    stat = path.stat()
    return str(path), stat.st_mtime_ns, stat.st_size


def _tokenize(texts: Sequence[str]) -> list[list[str]]:
    return bm25s.tokenize(list(texts), stopwords=STOPWORDS, return_ids=False, show_progress=False)


def _paragraphs(text: str) -> list[str]:
    """Blank-line separated paragraphs, long ones split so each passage stays readable."""
    pieces: list[str] = []
    for paragraph in _PARAGRAPH_BREAK.split(text):
        rest = paragraph.strip()
        while len(rest) > MAX_PASSAGE_CHARS:
            cut = rest.rfind(" ", 0, MAX_PASSAGE_CHARS)
            cut = cut if cut > 0 else MAX_PASSAGE_CHARS
            pieces.append(rest[:cut].rstrip())
            rest = rest[cut:].lstrip()
        if rest:
            pieces.append(rest)
    return pieces
