"""LangChain's own unit tests, taken from the sdist of the installed ``langchain`` release.

They are downloaded when a run first needs them (``pip download`` of the sdist, about
30 s) and kept in a cache folder per release, never copied into the repository.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import tempfile
from importlib.metadata import version
from pathlib import Path

CACHE_ENV = "REASONING_GRAPHS_LANGCHAIN_TESTS"
"""A folder to keep the unpacked sdists in (default: ``~/.cache/reasoning-graphs``)."""
SUITES = ("tests/unit_tests/agents/middleware", "tests/unit_tests/agents/middleware_typing")
"""The folders of LangChain's tests that hold its agent-middleware contract."""


class Unavailable(RuntimeError):
    """The sdist could not be had (no network, no such release)."""


def cache_root() -> Path:
    default = Path.home() / ".cache" / "reasoning-graphs"
    return Path(os.environ.get(CACHE_ENV, default))


def langchain_tests(release: str | None = None) -> Path:
    """The unpacked sdist of ``langchain==release`` (the installed one by default): its root,
    which holds ``tests/`` and ``pyproject.toml``.

    Raises:
        Unavailable: pip could not download it.
    """
    release = release or version("langchain")
    root = cache_root() / f"langchain-{release}"
    if (root / "tests").is_dir():
        return root
    root.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root.parent) as scratch:
        command = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps"]
        command += ["--no-binary", ":all:", f"langchain=={release}", "-d", scratch]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        archives = sorted(Path(scratch).glob("langchain-*.tar.gz"))
        if done.returncode or not archives:
            raise Unavailable(f"pip could not download langchain=={release}: {done.stderr[-400:]}")
        with tarfile.open(archives[0]) as archive:
            archive.extractall(scratch, filter="data")
        unpacked = Path(scratch) / f"langchain-{release}"
        unpacked.rename(root)
    return root
