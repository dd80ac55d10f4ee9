"""Every Python snippet in the README and on the documentation site runs as written.

The snippets are run in order (the README, then the site's pages in the order of
``mkdocs.yml``'s navigation) in one namespace, as a reader pasting them into one
session would, in a fresh folder; a snippet the README repeats from the site runs once.
The dev-server snippet (a script that needs a server to talk to) runs against a real
``langgraph dev`` in ``test_dev_server.py``; here it is only compiled, as plain Python.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reasoning_graphs.models.local import local_model_available

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
SITE = ROOT / "mkdocs.yml"
SERVER_URL = "http://localhost:8123"
AVAILABLE, MISSING = local_model_available()


def pages() -> list[Path]:
    """The README, then every page of the site in the order of its navigation."""
    listed = re.findall(r"^\s*- [^:]+: (\S+\.md)$", SITE.read_text(encoding="utf-8"), re.M)
    return [README, *(ROOT / "docs" / name for name in listed)]


def python_snippets() -> list[str]:
    found: list[str] = []
    for page in pages():
        text = page.read_text(encoding="utf-8")
        for snippet in re.findall(r"^```python\n(.*?)^```", text, re.M | re.S):
            if snippet not in found:
                found.append(snippet)
    return found


def test_every_page_of_the_docs_folder_is_on_the_site() -> None:
    on_site = {page.resolve() for page in pages()[1:]}
    assert on_site == {page.resolve() for page in (ROOT / "docs").rglob("*.md")}


def server_snippets() -> list[str]:
    return [snippet for snippet in python_snippets() if SERVER_URL in snippet]


def test_the_readme_has_snippets_of_both_kinds() -> None:
    assert len(python_snippets()) >= 5
    assert len(server_snippets()) == 1


def test_every_snippet_compiles_as_a_script() -> None:
    for snippet in python_snippets():  # no top-level ``await``: each runs as written in a file
        compile(snippet, "README.md", "exec")


@pytest.mark.local_model
@pytest.mark.skipif(not AVAILABLE, reason=f"embedded model not installed: {MISSING}")
def test_the_python_snippets_run_as_written_in_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)  # the default model is the embedded one
    monkeypatch.delenv("REASONING_GRAPHS_MODEL", raising=False)
    namespace: dict = {}

    for snippet in python_snippets():
        if snippet in server_snippets():
            continue
        exec(compile(snippet, "README.md", "exec"), namespace)

    printed = capsys.readouterr().out
    assert "'status':" in printed  # the first snippet's outcome
    assert (tmp_path / "a.txt").read_text() == "draft"  # approved as proposed
    assert (tmp_path / "b.txt").read_text() == "fixed"  # edited
    assert not (tmp_path / "c.txt").exists()  # rejected
    assert not (tmp_path / "d.txt").exists()  # answered by the person instead
