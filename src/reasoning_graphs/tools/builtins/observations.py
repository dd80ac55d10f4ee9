"""Page through observations that were too long to show in full.

When a tool's output is cut, :mod:`reasoning_graphs.tools.execute` keeps the full
text under a reference and the cut observation names it. This tool lets the model
read any part of that text. The stored texts reach it as the injected argument
``observations``, which the model never sees or fills in.
"""

from __future__ import annotations

from typing import Annotated

from langchain_core.tools import InjectedToolArg
from pydantic import Field

from reasoning_graphs.tools.spec import ToolSpec, tool_spec

READ_OBSERVATION = "read_observation"
"""The tool's name, which every cut observation points the model at."""

DEFAULT_SLICE_CHARS = 4000
MAX_SLICE_CHARS = 8000
MAX_LISTED_REFS = 20
MAX_OBSERVATION_CHARS = MAX_SLICE_CHARS + 500
"""Room for a full slice plus its header, so the slice is never cut a second time."""

DESCRIPTION = (
    "Read part of an earlier tool result that was cut because it was long. Pass the "
    "ref named in the cut result (like 'obs-call_1') and the character offset to "
    "start from; the answer says the total length and the next offset. Use it only "
    "when the cut part matters. Not for files or new searches: call those tools."
)
REF_HELP = "The reference named in the cut result, e.g. 'obs-call_1'."
OFFSET_HELP = "Character position to start reading from (0 is the beginning)."
LENGTH_HELP = f"How many characters to read (1 to {MAX_SLICE_CHARS})."

UNKNOWN_REF = "Unknown ref {ref!r}. Known refs (most recent last): {known}."
NO_REFS = (
    "Unknown ref {ref!r}: no tool result has been cut in this run, so there is nothing to read."
)
OFFSET_PAST_END = "Offset {offset} is past the end of {ref!r}, which has {total} characters."
HEADER = "[{ref}: characters {start} to {end} of {total}; {more}]\n"
MORE = "continue with offset={end}"
END = "this is the end"


def read_observation() -> ToolSpec:
    """The ``read_observation`` tool: read-only, so concurrency-safe."""

    def run(
        ref: Annotated[str, Field(description=REF_HELP)],
        observations: Annotated[dict, InjectedToolArg],
        offset: Annotated[int, Field(ge=0, description=OFFSET_HELP)] = 0,
        length: Annotated[
            int, Field(ge=1, le=MAX_SLICE_CHARS, description=LENGTH_HELP)
        ] = DEFAULT_SLICE_CHARS,
    ) -> str:
        """Return ``length`` characters of the text stored under ``ref`` from ``offset``."""
        if ref not in observations:
            if not observations:
                raise ValueError(NO_REFS.format(ref=ref))
            known = ", ".join(repr(name) for name in list(observations)[-MAX_LISTED_REFS:])
            raise ValueError(UNKNOWN_REF.format(ref=ref, known=known))
        text = str(observations[ref])
        if offset >= len(text) and text:
            raise ValueError(OFFSET_PAST_END.format(offset=offset, ref=ref, total=len(text)))
        end = min(offset + length, len(text))
        more = MORE.format(end=end) if end < len(text) else END
        header = HEADER.format(ref=ref, start=offset, end=end, total=len(text), more=more)
        return header + text[offset:end]

    return tool_spec(
        run,
        name=READ_OBSERVATION,
        description=DESCRIPTION,
        concurrency_safe=True,
        max_observation_chars=MAX_OBSERVATION_CHARS,
    )
