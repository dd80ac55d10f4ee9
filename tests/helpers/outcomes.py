"""Outcomes as tests compare them."""

from __future__ import annotations

from typing import Any


def without_note(outcome: dict[str, Any]) -> dict[str, Any]:
    """An outcome as compared in tests: how it ended and why, without the note an
    incomplete answer carries for its reader (its wording is the runtime's)."""
    return {key: value for key, value in outcome.items() if key != "note"}
