"""Counting the calls of a function a test patches, to show work was not repeated."""

from __future__ import annotations

from typing import Any

import pytest


def counted_calls(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str) -> list[int]:
    """Replaces ``owner.name`` with a wrapper that counts its calls; the count is item 0."""
    count = [0]
    original = getattr(owner, name)

    def counting(*args: Any, **kwargs: Any) -> Any:
        count[0] += 1
        return original(*args, **kwargs)

    monkeypatch.setattr(owner, name, counting)
    return count
