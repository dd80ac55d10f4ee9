"""Keyword search over a folder of notes, so the model can look things up offline.

Files are cut into paragraphs and ranked with BM25 (:mod:`bm25s`) using its own
regular-expression tokenizer and bundled English stopword list: no stemmer, no
model, no network. The index is built on the first search and rebuilt whenever a
file is added, removed or modified, so a long-running server sees edits.
"""

from __future__ import annotations

import re
import threading
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
QUERY_HELP = "Keywords to look for, e.g. 'refund policy deadline'."
K_HELP = f"How many passages to return (1 to {MAX_RESULTS})."

FOLDER_MISSING = "The documents folder {folder} does not exist, so there is nothing to search."
FOLDER_EMPTY = "The documents folder {folder} holds no .txt or .md files with text to search."
NO_MATCH = "No passage matches {query!r}. Try other or fewer keywords."
PASSAGE = "[{rank}] {file} (score {score:.2f})\n{text}"

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")


@dataclass(frozen=True)
class Passage:
    """One paragraph of one file, the unit that is ranked and returned."""

    file: str
    text: str


class DocsIndex:
    """A BM25 index over one folder that keeps itself up to date.

    Calls may overlap (the tool is concurrency-safe and sync tools run in worker
    threads), so building and querying share a lock.
    """

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder).expanduser()
        self._lock = threading.Lock()
        self._signature: tuple[tuple[str, int, int], ...] | None = None
        self._passages: list[Passage] = []
        self._retriever: bm25s.BM25 | None = None

    def search(self, query: str, k: int) -> list[tuple[Passage, float]]:
        """The up to ``k`` best passages for ``query`` with a score above zero.

        Raises:
            ValueError: The folder is missing or has no text to search.
        """
        if not self.folder.is_dir():
            raise ValueError(FOLDER_MISSING.format(folder=self.folder))
        with self._lock:
            self._refresh()
            if self._retriever is None:
                raise ValueError(FOLDER_EMPTY.format(folder=self.folder))
            tokens = _tokenize([query])
            top = min(k, len(self._passages))
            indices, scores = self._retriever.retrieve(tokens, k=top, show_progress=False)
        return [
            (self._passages[int(index)], float(score))
            for index, score in zip(indices[0], scores[0], strict=True)
            if score > 0
        ]

    def _refresh(self) -> None:
        files = self._files()
        signature = tuple(_fingerprint(path) for path in files)
        if signature == self._signature:
            return
        passages = [
            Passage(file=path.relative_to(self.folder).as_posix(), text=text)
            for path in files
            for text in _paragraphs(path.read_text(encoding="utf-8", errors="replace"))
        ]
        # Passages without a single searchable word cannot match, and a corpus of
        # only such passages makes bm25s fail: leave them out of the index.
        tokens = _tokenize([p.text for p in passages]) if passages else []
        indexed = [
            (passage, words) for passage, words in zip(passages, tokens, strict=True) if words
        ]
        self._passages = [passage for passage, _ in indexed]
        self._retriever = None
        if indexed:
            retriever = bm25s.BM25()
            retriever.index([words for _, words in indexed], show_progress=False)
            self._retriever = retriever
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
    index = DocsIndex(folder)

    def run(
        query: Annotated[str, Field(description=QUERY_HELP)],
        k: Annotated[int, Field(ge=1, le=MAX_RESULTS, description=K_HELP)] = 3,
    ) -> str:
        """Search the folder and format the hits for the model."""
        hits = index.search(query, k)
        if not hits:
            return NO_MATCH.format(query=query)
        return "\n\n".join(
            PASSAGE.format(rank=rank, file=passage.file, score=score, text=passage.text)
            for rank, (passage, score) in enumerate(hits, start=1)
        )

    return tool_spec(run, name="search_docs", description=DESCRIPTION, concurrency_safe=True)


def _fingerprint(path: Path) -> tuple[str, int, int]:
    """What changes when a file is edited, without reading it."""
    stat = path.stat()
    return str(path), stat.st_mtime_ns, stat.st_size


def _tokenize(texts: list[str]) -> list[list[str]]:
    return bm25s.tokenize(texts, stopwords=STOPWORDS, return_ids=False, show_progress=False)


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
