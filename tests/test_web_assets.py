"""The page's files: each one it refers to is served, and none refers to anything outside it."""

from __future__ import annotations

import re

from reasoning_graphs.web.page import ASSETS, TYPES


def test_every_file_the_page_refers_to_is_served_and_every_served_file_ships() -> None:
    shipped = {item.name for item in ASSETS.iterdir()}
    referred = {"index.html"}
    for name in shipped:
        text = (ASSETS / name).read_text(encoding="utf-8")
        referred |= set(re.findall(r'(?:src|href)="([^"]+)"', text))
        referred |= set(re.findall(r'from "\./([^"]+)"', text))
    assert referred <= set(TYPES), referred - set(TYPES)
    assert set(TYPES) == shipped


def test_nothing_is_fetched_from_anywhere_but_the_server() -> None:
    for name in TYPES:
        text = (ASSETS / name).read_text(encoding="utf-8")
        text = re.sub(r'xmlns="[^"]*"', "", text)  # an SVG's namespace names, fetches nothing
        assert not re.search(r"(?:https?:)?//[a-z0-9.-]+\.[a-z]{2,}", text, flags=re.I), name
        for markup in ("innerHTML", "outerHTML", "insertAdjacentHTML", "document.write"):
            assert markup not in text, (name, markup)  # text goes in as text nodes only
