"""The repo's own ``langgraph.json``, unchanged, on Aegra: two replicas serve every pattern
and the page.

Aegra reads the same config as LangGraph Server, but it wants the HTTP app to be a FastAPI
app and each graph a compiled graph or a plain function; this catches either drifting. The
replicas share one database, so each must list every graph, whichever started first.
Needs ``$REASONING_GRAPHS_TEST_AEGRA`` and ``$REASONING_GRAPHS_TEST_POSTGRES``
(see :mod:`tests.helpers.aegra`).
"""

from __future__ import annotations

import urllib.request

import pytest
from langgraph_sdk import get_client

from reasoning_graphs.graphs import PATTERNS
from tests.helpers.aegra import REPO, AegraCluster, aegra_fixture

pytestmark = pytest.mark.server

aegra = aegra_fixture(REPO / "langgraph.json", replicas=2)


async def test_each_replica_lists_every_pattern(aegra: AegraCluster) -> None:
    for i, url in enumerate(aegra.urls):
        found = await get_client(url=url).assistants.search(limit=100)
        graph_ids = sorted({assistant["graph_id"] for assistant in found})
        assert graph_ids == sorted(PATTERNS), aegra.tail(i)


def test_each_replica_serves_the_page(aegra: AegraCluster) -> None:
    for i, url in enumerate(aegra.urls):
        with urllib.request.urlopen(f"{url}/page/", timeout=10) as response:
            assert response.status == 200, aegra.tail(i)
            assert "html" in response.headers.get("content-type", ""), aegra.tail(i)
