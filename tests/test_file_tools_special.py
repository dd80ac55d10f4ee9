"""File tools refuse named pipes, sockets and devices instead of blocking on them.

Opening a FIFO for writing waits for a reader, for ever; each call here runs on
a daemon thread with a deadline, so a regression fails instead of hanging.
"""

from __future__ import annotations

import concurrent.futures
import os
import socket
import stat
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from reasoning_graphs.effects import drive, in_daemon_thread
from reasoning_graphs.tools.builtins import read_file, write_file
from reasoning_graphs.tools.execute import ToolResult, execute_call
from reasoning_graphs.tools.registry import ToolRegistry
from reasoning_graphs.tools.spec import ToolSpec, tool_spec

DEADLINE_SECONDS = 5.0

Make = Callable[[Path], Path]


def call_promptly(spec: ToolSpec, args: dict[str, Any]) -> ToolResult:
    """Call one tool as the graphs do (with no tool timeout of its own) or fail at the deadline."""
    unbounded = tool_spec(spec, timeout=None)
    registry = ToolRegistry([unbounded])
    body = execute_call(registry, unbounded.name, args, call_id="c1")
    future = in_daemon_thread(lambda: drive(body))
    try:
        return future.result(timeout=DEADLINE_SECONDS)
    except concurrent.futures.TimeoutError:
        pytest.fail(f"{spec.name}({args}) did not return within {DEADLINE_SECONDS} s")


def make_fifo(path: Path) -> Path:
    os.mkfifo(path)
    return path


@pytest.fixture
def make_socket() -> Iterator[Make]:
    listeners: list[socket.socket] = []

    def make(path: Path) -> Path:
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(str(path))
        listener.listen()
        listeners.append(listener)
        return path

    yield make
    for listener in listeners:
        listener.close()


def make_device(path: Path) -> Path:
    """A character device like /dev/null (needs root)."""
    os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    return path


def special_files(make_socket: Make) -> list[tuple[str, Make]]:
    kinds: list[tuple[str, Make]] = [("fifo", make_fifo), ("socket", make_socket)]
    if os.geteuid() == 0:
        kinds.append(("device", make_device))
    return kinds


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    folder = tmp_path / "workspace"
    folder.mkdir()
    return folder


@pytest.mark.parametrize("through_symlink", [False, True])
def test_special_files_are_refused_for_reading_and_writing(
    workspace: Path, make_socket: Make, through_symlink: bool
) -> None:
    for kind, make in special_files(make_socket):
        target = make(workspace / kind)
        path = kind
        if through_symlink:
            path = f"link-to-{kind}"
            (workspace / path).symlink_to(target)
        written = call_promptly(write_file(workspace), {"path": path, "content": "x"})
        read = call_promptly(read_file(workspace), {"path": path})
        assert (written.status, read.status) == ("error", "error"), kind
        assert "regular file" in written.content, written.content
        assert "regular file" in read.content, read.content
        assert stat.S_IFMT(target.stat().st_mode) != stat.S_IFREG


def test_a_fifo_with_a_reader_is_refused_too(workspace: Path) -> None:
    fifo = make_fifo(workspace / "pipe")
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        written = call_promptly(write_file(workspace), {"path": "pipe", "content": "secret"})
        assert written.status == "error"
        assert os.read(reader, 100) == b""  # nothing reached the pipe
    finally:
        os.close(reader)


def test_regular_files_and_folders_behave_as_before(workspace: Path) -> None:
    (workspace / "folder").mkdir()
    (workspace / "old.txt").write_text("a much longer old text")
    written = call_promptly(write_file(workspace), {"path": "old.txt", "content": "new"})
    assert written.status == "success"
    assert (workspace / "old.txt").read_text() == "new"  # replaced, not overwritten in place
    assert call_promptly(read_file(workspace), {"path": "old.txt"}).content == "new"
    created = call_promptly(write_file(workspace), {"path": "new/file.txt", "content": "x"})
    assert created.status == "success"
    assert stat.S_IMODE((workspace / "new/file.txt").stat().st_mode) & 0o111 == 0
    for spec, args in [
        (read_file(workspace), {"path": "folder"}),
        (write_file(workspace), {"path": "folder", "content": "x"}),
    ]:
        result = call_promptly(spec, args)
        assert (result.status, "folder" in result.content) == ("error", True)
    missing = call_promptly(read_file(workspace), {"path": "missing.txt"})
    assert missing.status == "error"
    assert not (workspace / "missing.txt").exists()
