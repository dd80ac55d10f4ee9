"""``langgraph dockerfile`` makes a LangGraph Server image that installs this package and serves
every pattern. Offline and quick: it writes the Dockerfile and builds nothing."""

from __future__ import annotations

import importlib
import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from reasoning_graphs.graphs import PATTERNS

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "langgraph.json"


@pytest.fixture(scope="module")
def dockerfile(tmp_path_factory: pytest.TempPathFactory) -> str:
    pytest.importorskip("langgraph_cli", reason="pip install '.[server]'")
    target = tmp_path_factory.mktemp("image") / "Dockerfile"
    before = sorted(path.name for path in ROOT.iterdir())
    done = subprocess.run(
        [sys.executable, "-m", "langgraph_cli", "dockerfile", str(target), "-c", str(CONFIG)],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ, LANGGRAPH_CLI_NO_ANALYTICS="1", LANGGRAPH_NO_VERSION_CHECK="true"),
        check=False,
    )
    assert done.returncode == 0, done.stderr or done.stdout
    assert sorted(path.name for path in ROOT.iterdir()) == before  # it wrote nothing beside us
    return target.read_text(encoding="utf-8")


def env_value(dockerfile: str, name: str) -> str:
    (line,) = [line for line in dockerfile.splitlines() if line.startswith(f"ENV {name}=")]
    return shlex.split(line.removeprefix(f"ENV {name}="))[0]


def test_the_image_installs_this_package(dockerfile: str) -> None:
    (folder,) = re.findall(r"^ADD \. (/deps/\S+)$", dockerfile, flags=re.MULTILINE)
    assert "uv pip install" in dockerfile
    assert "-e ." in dockerfile  # each folder under /deps is installed, this one among them
    assert folder.startswith("/deps/")


def test_the_image_serves_every_pattern_from_its_checkpointer_free_graph(dockerfile: str) -> None:
    (folder,) = re.findall(r"^ADD \. (/deps/\S+)$", dockerfile, flags=re.MULTILINE)
    graphs = json.loads(env_value(dockerfile, "LANGSERVE_GRAPHS"))

    assert set(graphs) == set(PATTERNS)
    for name, where in graphs.items():
        path, attribute = where.rsplit(":", 1)
        assert attribute == "graph"
        relative = Path(path).relative_to(folder)
        assert relative == Path("src/reasoning_graphs/graphs") / name / "graph.py"
        assert (ROOT / relative).is_file()
        # the server brings its own checkpointer and refuses graphs with one
        served = importlib.import_module(f"reasoning_graphs.graphs.{name}.graph").graph()
        assert served.checkpointer is None


def test_the_image_checks_runs_at_the_servers_door_and_serves_the_page(dockerfile: str) -> None:
    (folder,) = re.findall(r"^ADD \. (/deps/\S+)$", dockerfile, flags=re.MULTILINE)
    path, attribute = json.loads(env_value(dockerfile, "LANGGRAPH_HTTP"))["app"].rsplit(":", 1)

    assert Path(path).relative_to(folder) == Path("src/reasoning_graphs/server_app.py")
    assert attribute == "app"
    app = importlib.import_module("reasoning_graphs.server_app").app
    assert any(getattr(route, "path", None) == "/page/" for route in app.routes)
