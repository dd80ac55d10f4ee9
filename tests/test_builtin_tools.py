"""The built-in tools, called directly and through ``execute_call`` as a graph would."""

from __future__ import annotations

import os
import re
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from reasoning_graphs.effects import adrive
from reasoning_graphs.tools.builtins import (
    DOCS_ENV,
    WORKSPACE_ENV,
    calculator,
    default_tools,
    read_file,
    read_observation,
    search_docs,
    shell,
    write_file,
)
from reasoning_graphs.tools.builtins.calculator import evaluate
from reasoning_graphs.tools.execute import ToolResult, execute_call
from reasoning_graphs.tools.registry import ToolRegistry
from reasoning_graphs.tools.spec import ToolSpec, tool_spec


async def run(spec: ToolSpec, args: dict[str, Any], **kwargs: Any) -> ToolResult:
    """Call one tool the way the graphs do."""
    registry = ToolRegistry([spec])
    return await adrive(execute_call(registry, spec.name, args, call_id="c1", **kwargs))


# calculator


async def test_calculator_computes_through_execute_call() -> None:
    result = await run(calculator(), {"expression": "23*17+4"})
    assert (result.status, result.content) == ("success", "395")


@pytest.mark.parametrize(
    ("expression", "expected"),
    [
        ("0.1 + 0.2", "0.3"),
        ("10 / 4", "2.5"),
        ("10 / 2", "5"),
        ("7 // 2 + 7 % 3", "4"),
        ("-(2 ** 10)", "-1024"),
        ("sqrt(16) + abs(-2) + max(1, 5) - min(3, 4)", "8"),
        ("round(pi, 2)", "3.14"),
        ("log(e)", "1"),
        ("2 ** -2", "0.25"),
    ],
)
def test_calculator_arithmetic(expression: str, expected: str) -> None:
    assert evaluate(expression) == expected


@given(st.integers(-(10**12), 10**12), st.integers(-(10**12), 10**12), st.integers(0, 50))
def test_calculator_matches_python_on_integers(a: int, b: int, c: int) -> None:
    assert evaluate(f"({a}) * ({b}) - ({c}) ** 3") == str(a * b - c**3)


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("__import__('os').system('x')", "attribute .system is not allowed"),
        ("__import__('os')", "Unknown function '__import__'"),
        ("(1).real", "attribute .real is not allowed"),
        ("x + 1", "Unknown name 'x'"),
        ("lambda: 1", "lambda is not allowed"),
        ("[i for i in (1, 2)]", "comprehension is not allowed"),
        ("'abc'", "not a number"),
        ("True + 1", "not a number"),
        ("1 & 3", "BitAnd is not allowed"),
        ("max(*(1, 2))", "Unpacking with * is not allowed"),
        ("round(1.5, ndigits=1)", "positional arguments only"),
        ("1 +", "not a valid arithmetic expression"),
        ("", "empty"),
        ("1 / 0", "Division by zero"),
        ("sqrt(-1)", "sqrt() failed"),
        ("(-8) ** (1 / 3)", "complex"),
        ("1e308 * 10", "not a finite"),
    ],
)
def test_calculator_refuses(expression: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        evaluate(expression)


@pytest.mark.parametrize(
    "expression",
    ["9**9**9", "2**100000", "(10**999)**5", "10**999 * 10**999 * 10**999 * 10**999 * 10**999"],
)
def test_calculator_refuses_huge_results_quickly(expression: str) -> None:
    started = time.perf_counter()
    with pytest.raises(ValueError, match=r"too large|more than 4000 digits"):
        evaluate(expression)
    assert time.perf_counter() - started < 1


async def test_calculator_refusals_become_error_observations() -> None:
    for expression in ["__import__('os').system('touch pwned')", "1+" * 150 + "1"]:
        result = await run(calculator(), {"expression": expression})
        assert result.status == "error"
        assert "not allowed" in result.content or "limit is 200" in result.content


def test_calculator_spec() -> None:
    spec = calculator()
    assert (spec.name, spec.dangerous, spec.concurrency_safe) == ("calculator", False, True)
    assert "Do not use it for facts" in spec.description
    assert list(spec.argument_schema()["properties"]) == ["expression"]


# search_docs


@pytest.fixture
def docs(tmp_path: Path) -> Path:
    folder = tmp_path / "docs"
    (folder / "science" / "light").mkdir(parents=True)
    (folder / "cats.md").write_text(
        "# Cats\n\nCats sleep most of the day and purr when content.\n\nA kitten is a young cat.\n"
    )
    (folder / "science" / "light" / "photons.txt").write_text(
        "Photons are quanta of light.\n\nThe wavelength of a photon sets its energy.\n"
    )
    (folder / "recipes.md").write_text("Bread needs flour, water, salt and yeast.\n")
    (folder / "ignored.csv").write_text("photon,wavelength,energy\n")
    return folder


async def test_search_docs_finds_the_right_file(docs: Path) -> None:
    result = await run(search_docs(docs), {"query": "photon wavelength energy", "k": 2})
    assert result.status == "success"
    first = result.content.split("\n\n")[0]
    assert first.startswith("[1] science/light/photons.txt")
    assert "wavelength of a photon" in first
    assert "ignored.csv" not in result.content


async def test_search_docs_no_match_and_bounds(docs: Path) -> None:
    spec = search_docs(docs)
    assert spec.concurrency_safe
    no_match = await run(spec, {"query": "submarine torpedo"})
    assert (no_match.status, no_match.content) == (
        "success",
        "No passage matches 'submarine torpedo'. Try other or fewer keywords.",
    )
    too_many = await run(spec, {"query": "cat", "k": 11})
    assert too_many.status == "error"
    assert "less than or equal to 10" in too_many.content


async def test_search_docs_sees_new_and_changed_files(docs: Path) -> None:
    spec = search_docs(docs)
    assert "recipes.md" in (await run(spec, {"query": "bread flour"})).content
    (docs / "recipes.md").write_text("Soup needs stock and vegetables, and a long time.\n")
    (docs / "baking.md").write_text("Sourdough bread rises slowly.\n")
    result = await run(spec, {"query": "bread flour"})
    assert result.content.startswith("[1] baking.md")
    assert "recipes.md" not in result.content


async def test_search_docs_missing_or_empty_folder(tmp_path: Path) -> None:
    missing = await run(search_docs(tmp_path / "nope"), {"query": "cats"})
    assert missing.status == "error"
    assert "does not exist" in missing.content
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "stopwords.txt").write_text("the and of\n")
    empty = await run(search_docs(tmp_path / "empty"), {"query": "cats"})
    assert empty.status == "error"
    assert "no .txt or .md files with text" in empty.content


# read_file / write_file


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


async def test_write_then_read_round_trip(workspace: Path) -> None:
    written = await run(write_file(workspace), {"path": "notes/a/b.txt", "content": "héllo\n"})
    assert (written.status, written.content) == ("success", "Wrote 7 bytes to notes/a/b.txt.")
    read = await run(read_file(workspace), {"path": "notes/a/b.txt"})
    assert (read.status, read.content) == ("success", "héllo\n")
    absolute_inside = await run(read_file(workspace), {"path": str(workspace / "notes/a/b.txt")})
    assert absolute_inside.content == "héllo\n"


@pytest.mark.parametrize("path", ["../outside.txt", "notes/../../outside.txt", "/outside.txt"])
async def test_paths_outside_the_workspace_are_refused(workspace: Path, path: str) -> None:
    outside = workspace.parent / "outside.txt"
    outside.write_text("secret")
    if path.startswith("/"):
        path = str(outside)
    for spec, args in [
        (read_file(workspace), {"path": path}),
        (write_file(workspace), {"path": path, "content": "overwritten"}),
    ]:
        result = await run(spec, args)
        assert result.status == "error"
        assert "outside the workspace" in result.content
    assert outside.read_text() == "secret"


async def test_symlinks_pointing_out_are_refused(workspace: Path) -> None:
    outside = workspace.parent / "elsewhere"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    (workspace / "link.txt").symlink_to(outside / "secret.txt")
    (workspace / "linkdir").symlink_to(outside, target_is_directory=True)
    attempts = [
        (read_file(workspace), {"path": "link.txt"}),
        (read_file(workspace), {"path": "linkdir/secret.txt"}),
        (write_file(workspace), {"path": "link.txt", "content": "x"}),
        (write_file(workspace), {"path": "linkdir/new.txt", "content": "x"}),
    ]
    for spec, args in attempts:
        result = await run(spec, args)
        assert result.status == "error"
        assert "outside the workspace" in result.content
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]
    assert (outside / "secret.txt").read_text() == "secret"


async def test_read_file_errors_and_caps(workspace: Path) -> None:
    spec = read_file(workspace)
    assert (await run(spec, {"path": "missing.txt"})).content.endswith(
        "There is no file 'missing.txt' in the workspace."
    )
    (workspace / "blob.bin").write_bytes(b"\0\1\2")
    assert "binary" in (await run(spec, {"path": "blob.bin"})).content
    (workspace / "big.txt").write_text("x" * 300_000)
    big = spec.tool.invoke({"path": "big.txt"})
    assert big.startswith("x" * 200_000)
    assert big.endswith("[... file is 300000 bytes; only the first 200000 were read ...]")


def test_file_tool_flags(workspace: Path) -> None:
    reader, writer = read_file(workspace), write_file(workspace)
    assert (reader.dangerous, reader.concurrency_safe) == (False, True)
    assert (writer.dangerous, writer.concurrency_safe) == (True, False)


# shell


async def test_shell_runs_a_command(workspace: Path) -> None:
    spec = shell(workspace)
    assert (spec.dangerous, spec.concurrency_safe) == (True, False)
    result = await run(spec, {"command": "echo hi; echo oops >&2; pwd; exit 3"})
    assert result.status == "success"
    assert result.content == f"exit code: 3\nstdout:\nhi\n{workspace.resolve()}\nstderr:\noops"


def _alive(pid: int) -> bool:
    """Whether ``pid`` still runs (a zombie waiting for its reaper counts as dead)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
async def test_shell_timeout_kills_the_whole_process_group(workspace: Path) -> None:
    spec = shell(workspace, timeout=0.5)
    assert spec.timeout is not None
    assert spec.timeout > 0.5
    started = time.perf_counter()
    result = await run(spec, {"command": "sleep 5 & echo $! > sleep.pid; echo started; wait"})
    assert time.perf_counter() - started < 4
    assert result.content.startswith("Timed out after 0.5 s")
    assert "exit code: none, killed\nstdout:\nstarted" in result.content
    sleep_pid = int((workspace / "sleep.pid").read_text())
    deadline = time.monotonic() + 2
    while _alive(sleep_pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(sleep_pid)


async def test_shell_keeps_bounded_output(workspace: Path) -> None:
    result = await run(shell(workspace), {"command": "head -c 300000 /dev/zero | tr '\\0' x"})
    assert "[... 200000 more bytes not kept ...]" in result.content


# read_observation


def test_read_observation_hides_observations_from_the_model() -> None:
    spec = read_observation()
    assert list(spec.argument_schema()["properties"]) == ["ref", "offset", "length"]
    assert spec.concurrency_safe
    assert spec.max_observation_chars > 8000


def test_read_observation_declares_observations_as_injected() -> None:
    assert read_observation().injected_arguments() == {"observations"}


async def test_read_observation_pages_through_stored_text() -> None:
    text = "".join(f"{i:05d}" for i in range(2000))
    tool = read_observation().tool
    stored = {"obs-c1": text}
    parts, offset = [], 0
    while True:
        page = await tool.ainvoke({"ref": "obs-c1", "offset": offset, "observations": stored})
        header, body = page.split("\n", 1)
        parts.append(body)
        if header.endswith("this is the end]"):
            break
        offset = int(header.rsplit("offset=", 1)[1].rstrip("]"))
    assert "".join(parts) == text
    assert len(parts) == 3


async def test_read_observation_unknown_ref_lists_known_refs() -> None:
    tool = read_observation().tool
    with pytest.raises(ValueError, match=r"Known refs \(most recent last\): 'obs-a', 'obs-b'"):
        await tool.ainvoke({"ref": "obs-x", "observations": {"obs-a": "1", "obs-b": "2"}})
    with pytest.raises(ValueError, match="past the end"):
        await tool.ainvoke({"ref": "obs-a", "offset": 5, "observations": {"obs-a": "1"}})


async def test_read_observation_returns_full_text_of_cut_observation() -> None:
    full_text = "".join(f"line {i:05d}\n" for i in range(910))[:10_000]

    def long_output() -> str:
        """Return ten thousand characters."""
        return full_text

    registry = ToolRegistry([tool_spec(long_output, max_observation_chars=500), read_observation()])
    cut = await adrive(execute_call(registry, "long_output", {}, call_id="c1"))
    assert cut.ref == "obs-c1"
    assert cut.full_text == full_text
    assert len(cut.content) <= 500
    assert "read_observation(ref='obs-c1')" in cut.content
    stored = {cut.ref: cut.full_text}
    parts, offset = [], 0
    while offset < len(full_text):
        page = await adrive(
            execute_call(
                registry,
                "read_observation",
                {"ref": cut.ref, "offset": offset, "length": 8000},
                call_id="c2",
                observations=stored,
            )
        )
        assert page.status == "success", page.content
        assert page.ref is None  # the slice itself was not cut again
        parts.append(page.content.split("\n", 1)[1])
        offset += len(parts[-1])
    assert "".join(parts) == full_text


# default set


def test_default_tools(workspace: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(WORKSPACE_ENV, str(workspace))
    monkeypatch.delenv(DOCS_ENV, raising=False)
    registry = ToolRegistry(default_tools())
    assert registry.names() == [
        "calculator",
        "read_file",
        "write_file",
        "shell",
        "read_observation",
    ]
    with_docs = ToolRegistry(default_tools(docs=workspace))
    assert "search_docs" in with_docs.names()
    monkeypatch.setenv(DOCS_ENV, str(workspace))
    assert "search_docs" in ToolRegistry(default_tools()).names()
    (workspace / "here.txt").write_text("workspace from the environment")
    read = registry.get("read_file")
    assert read is not None
    assert read.tool.invoke({"path": "here.txt"}) == "workspace from the environment"
    monkeypatch.delenv(WORKSPACE_ENV)
    monkeypatch.chdir(workspace)
    shell_spec = ToolRegistry(default_tools()).get("shell")
    assert shell_spec is not None
    assert str(workspace.resolve()) in shell_spec.tool.invoke({"command": "pwd"})
    assert os.environ.get(WORKSPACE_ENV) is None
