"""The ``reasoning-graphs`` command in a process of its own, on a scripted model.

Usage: python scripted_cli.py SCRIPT_JSON ARG…

SCRIPT_JSON is the model's replies in order: a string is a text reply,
``{"tool": NAME, "args": {...}}`` a call of one tool. The ARGs are the
command line, as a user would type it after ``reasoning-graphs``. Tests run
two of these on one database to show that a second process, or a second
machine, picks up the first one's thread.
"""

from __future__ import annotations

import json
import sys
from typing import Any

from reasoning_graphs.cli import main as cli
from reasoning_graphs.testing import ScriptedChatModel, tool_call


def reply(item: Any) -> Any:
    return tool_call(item["tool"], **item["args"]) if isinstance(item, dict) else item


def main() -> int:
    script, argv = json.loads(sys.argv[1]), sys.argv[2:]
    model = ScriptedChatModel(script=[reply(item) for item in script])
    cli.resolve_model = lambda spec: model
    return cli.main(argv)


if __name__ == "__main__":
    raise SystemExit(main())
