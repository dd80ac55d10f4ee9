"""The tutorial notebooks run top to bottom, offline, in a fresh kernel of this interpreter.

Each notebook runs in its own kernel, started from a kernelspec written here
for ``sys.executable`` (so no kernelspec installed on the machine can pick
another Python), with a temporary working directory. After the last cell a
check runs in the same kernel and asserts what the notebook demonstrates. A
failing cell fails the test with that cell's source and traceback.
"""

from __future__ import annotations

import json
import os
import re
import sys
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
SRC = ROOT / "src"
KERNEL = "reasoning-graphs-tests"
CELL_TIMEOUT = 180  # seconds; the embedded model's cell takes a few on two cores
ANSI_ESCAPE = re.compile(r"\x1b\[[0-9;]*m")  # the kernel's coloured tracebacks

CHECKS = {
    "quickstart": """
assert set(states) == set(PATTERNS)
assert {state["outcome"]["status"] for state in states.values()} == {"answered"}
assert "".join(chunks) == ANSWER
if available:
    assert final["trajectory"] and final["messages"][-1].content
""",
    "approvals": """
from collections import Counter

assert "__interrupt__" not in state
tool_messages = [message for message in state["messages"] if message.type == "tool"]
decisions = Counter(message.response_metadata["decision"] for message in tool_messages)
assert decisions == {"rejected": 2, "responded": 1, "approved": 1, "edited": 1}
files = {path.name: path.read_text() for path in workspace.iterdir()}
assert files == {"notes.txt": "Standup moved to 10:00.", "todo.txt": "buy oat milk"}
""",
    "durability": """
lines = [line.split() for line in tool_log.read_text().splitlines()]
assert [line[:2] for line in lines] == [
    ["done", "download"], ["start", "convert"], ["done", "upload"],
], lines
assert convert.status == "error"  # its outcome is unknown: not run again blindly
assert tool_log.read_text() == log_before
assert fork.get_state(agent.CONFIG).values["messages"][-1].content.startswith("Convert may")
assert {snap.metadata["source"] for snap in history} >= {"input", "loop", "fork", "update"}
""",
    "comparison": """
assert len(rows) == 2 * len(patterns)
expected = {"three lookups": "Cedar Point, at 334 m.", "four hops": "Donald."}
assert all(row["answer"] == expected[row["task"]] for row in rows), rows
assert {row["model calls"] for row in rows if row["pattern"] in ("rewoo", "llm_compiler")} == {2}
""",
    "ecosystem": """
assert [(e["tool"], e["observation"]) for e in added["trajectory"] if e["kind"] == "action"] == [
    ("add", "42")
]
assert [call["name"] for call in calls] == ["delete_note"]
assert remaining == "todo"
assert typed["structured_response"] == Sum(terms=[2, 40], total=42)
assert server.poll() is not None
assert "Phobos" in recalled
assert "Phobos" not in unrelated
""",
    "text_react_parser": """
assert state["outcome"] == {"status": "answered"}
assert state["messages"][-1].content == "395"
observations = [e["observation"] for e in state["trajectory"] if e["kind"] == "action"]
assert observations == ["391", "395"]
""",
}


def notebook_paths() -> list[Path]:
    return sorted(NOTEBOOKS.glob("*.ipynb"))


def notebook_runs() -> list:
    """One case per notebook; the quick start also runs the embedded model, when installed."""
    marks = {"quickstart": [pytest.mark.local_model]}
    return [
        pytest.param(path, id=path.stem, marks=marks.get(path.stem, []))
        for path in notebook_paths()
    ]


def test_every_notebook_has_a_check() -> None:
    assert {path.stem for path in notebook_paths()} == set(CHECKS)


@pytest.mark.parametrize("path", notebook_paths(), ids=lambda path: path.stem)
def test_notebooks_are_stored_without_outputs(path: Path) -> None:
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [], f"{path.name}: clear the outputs before saving"
            assert cell.execution_count is None, f"{path.name}: clear the outputs before saving"


@pytest.fixture(scope="module")
def this_interpreter_kernel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A kernelspec for ``sys.executable``, found first through ``JUPYTER_PATH``."""
    spec_dir = tmp_path_factory.mktemp("jupyter") / "kernels" / KERNEL
    spec_dir.mkdir(parents=True)
    env = {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(SRC), os.environ.get("PYTHONPATH")])),
        "LANGSMITH_TRACING": "false",  # offline, whatever the caller's environment says
    }
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "reasoning-graphs tests",
        "language": "python",
        "env": env,
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    with pytest.MonkeyPatch.context() as patch:
        paths = [str(spec_dir.parents[1]), os.environ.get("JUPYTER_PATH")]
        patch.setenv("JUPYTER_PATH", os.pathsep.join(filter(None, paths)))
        yield KERNEL


@pytest.mark.parametrize("path", notebook_runs())
def test_notebook_runs_top_to_bottom(
    path: Path, tmp_path: Path, this_interpreter_kernel: str
) -> None:
    notebook = nbformat.read(path, as_version=4)
    notebook.cells.append(nbformat.v4.new_code_cell(CHECKS[path.stem]))  # run, never saved
    client = NotebookClient(
        notebook,
        kernel_name=this_interpreter_kernel,
        timeout=CELL_TIMEOUT,
        resources={"metadata": {"path": str(tmp_path)}},  # the kernel's working directory
    )
    before = sorted(NOTEBOOKS.iterdir())

    try:
        client.execute()
    except CellExecutionError as error:
        pytest.fail(f"{path.name}: {ANSI_ESCAPE.sub('', str(error))}", pytrace=False)

    assert sorted(NOTEBOOKS.iterdir()) == before, "the notebook wrote into the repository"
    assert list(tmp_path.iterdir()) == [], "the notebook left files in its working directory"
