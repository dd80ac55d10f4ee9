"""The command line on a scripted model (scripted_cli.py), reporting what it sent where.

Usage: python traced_cli.py SCRIPT_JSON ARG… (as scripted_cli.py)

After the command returns, the last line of output is a JSON object: the
LangSmith clients made, the internet connections tried, whether tracing was on,
and the LangSmith settings the process ended with. Then the process exits as
the ``reasoning-graphs`` script does, so a test sees how long the interpreter
takes to end.
"""

from __future__ import annotations

import json
import os
import socket
from typing import Any

import langsmith.client
from langsmith.utils import tracing_is_enabled

from reasoning_graphs.tracing import EXIT_SAFE_UPLOADS
from tests.helpers import scripted_cli

clients: list[object] = []
connections: list[Any] = []


def _count_clients() -> None:
    start = langsmith.client.Client.__init__

    def counted(self: langsmith.client.Client, *args: Any, **kwargs: Any) -> None:
        clients.append(self)
        start(self, *args, **kwargs)

    langsmith.client.Client.__init__ = counted  # type: ignore[method-assign]


def _count_connections() -> None:
    connect = socket.socket.connect

    def counted(self: socket.socket, address: Any) -> None:
        if self.family in (socket.AF_INET, socket.AF_INET6):
            connections.append(address)
        connect(self, address)

    socket.socket.connect = counted  # type: ignore[method-assign]


if __name__ == "__main__":
    _count_clients()
    _count_connections()
    code = scripted_cli.main()
    facts = {
        "clients": len(clients),
        "connections": len(connections),
        "tracing": bool(tracing_is_enabled()),
        "settings": {name: os.environ.get(name) for name in EXIT_SAFE_UPLOADS},
    }
    print(json.dumps(facts), flush=True)
    raise SystemExit(code)
