"""The console command as the CLI tests drive it: in this process, or on a pseudo-terminal."""

from __future__ import annotations

import io
import os
import pty
import signal
import subprocess
import threading
import time
from collections.abc import Sequence

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


class Terminal:
    """A command whose stdin, stdout and stderr are one pseudo-terminal, as a person's shell
    runs it; what it writes is collected as it comes."""

    def __init__(self, command: Sequence[str], env: dict[str, str]) -> None:
        self._controller, terminal = pty.openpty()
        self.process = subprocess.Popen(
            list(command), stdin=terminal, stdout=terminal, stderr=terminal, env=env
        )
        os.close(terminal)
        self._received: list[bytes] = []
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    @property
    def output(self) -> str:
        """Everything written so far, terminal codes included."""
        with self._lock:
            return b"".join(self._received).decode(errors="replace")

    def wait_for(self, text: str, timeout: float = 60.0) -> None:
        """Return once ``text`` has been written; fail after ``timeout`` seconds."""
        self.wait_for_count(text, 1, timeout)

    def wait_for_count(self, text: str, count: int, timeout: float = 30.0) -> None:
        """Return once ``text`` has been written ``count`` times; fail after ``timeout`` s."""
        deadline = time.monotonic() + timeout
        while self.output.count(text) < count:
            assert self.process.poll() is None, f"ended before {text!r} x{count}: {self.output}"
            assert time.monotonic() < deadline, f"never wrote {text!r} x{count}: {self.output}"
            time.sleep(0.02)

    def type(self, line: str) -> None:
        """Type ``line`` and Enter, as a person answering a prompt."""
        os.write(self._controller, line.encode() + b"\n")

    def ctrl_c(self) -> None:
        self.process.send_signal(signal.SIGINT)

    def finish(self, timeout: float = 60.0) -> tuple[int, str]:
        """Wait for the command to end: its exit code and all it wrote."""
        code = self.process.wait(timeout=timeout)
        self._reader.join(timeout=5)
        os.close(self._controller)
        return code, self.output

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self._controller, 4096)
            except OSError:  # the command closed its end
                return
            if not data:
                return
            with self._lock:
                self._received.append(data)
