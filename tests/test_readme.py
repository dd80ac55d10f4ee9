"""Every Python snippet in the README runs as written.

The snippets are run in order in one namespace, as a reader pasting them into
one session would, in a fresh folder. The dev-server snippet (a script that
needs a server to talk to) runs against a real ``langgraph dev`` in
``test_dev_server.py``; here it is only compiled, as plain Python.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reasoning_graphs.models.local import local_model_available

README = Path(__file__).resolve().parents[1] / "README.md"
SERVER_URL = "http://localhost:8123"
AVAILABLE, MISSING = local_model_available()


def python_snippets() -> list[str]:
    return re.findall(r"^```python\n(.*?)^```", README.read_text(encoding="utf-8"), re.M | re.S)


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
