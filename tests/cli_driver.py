"""The console command run in this process, as the CLI tests drive it."""

from __future__ import annotations

import io

import pytest

from reasoning_graphs.cli import main as cli


def run_cli(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture, *argv: str, stdin: str = ""
) -> tuple[int, str, str]:
    """Run ``reasoning-graphs *argv`` with ``stdin`` typed in; its exit code, stdout and stderr."""
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    code = cli.main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def thread_id_from(out: str) -> str:
    """The thread id the command announces on its first line."""
    return out.splitlines()[0].split()[-1]
