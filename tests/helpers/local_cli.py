"""``reasoning-graphs`` as the console command runs it, on the embedded model, writing at length.

Usage: python local_cli.py ARG…

The model may write up to 2,048 tokens per reply, so that a reply is still
being generated seconds after it began; ``generating`` goes to stderr when
llama.cpp starts on a reply, so that a test can signal the process mid-generation.
"""

from __future__ import annotations

import sys
from typing import Any

from reasoning_graphs.cli import main as cli
from reasoning_graphs.cli import runs
from reasoning_graphs.models.local import LocalChatModel

MODEL = LocalChatModel(max_tokens=2048)
complete = LocalChatModel._complete


def announced(self: LocalChatModel, *args: Any, **kwargs: Any) -> Any:
    print("generating", file=sys.stderr, flush=True)
    return complete(self, *args, **kwargs)


if __name__ == "__main__":
    LocalChatModel._complete = announced  # type: ignore[method-assign]
    runs.resolve_model = lambda spec: MODEL
    cli.entry()
