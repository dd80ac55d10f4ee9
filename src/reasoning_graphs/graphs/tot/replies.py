"""The typed replies of Tree-of-Thoughts: steps, proposals, values, votes and the answer.

Each is asked with ``with_structured_output``, so any tool-calling model and the
embedded model's JSON grammar return them whole. A reply that cannot be read
counts as nothing (no step, no vote) or as the least a verdict can say
(``impossible``): an unreadable reply never passes for a good one.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field


class NextStep(BaseModel):
    """One next step of the solution."""

    step: str = Field(description="The step: one short intermediate result.")
    solves: bool = Field(description="True only when this step completes the whole solution.")


class Proposals(BaseModel):
    """Several different possible next steps."""

    steps: list[NextStep] = Field(description="Different possible next steps, best first.")


class Valuation(BaseModel):
    """How likely a path is to reach a correct solution (reason first, then the verdict)."""

    reason: str = Field(description="Why, in one short sentence.")
    verdict: Literal["sure", "likely", "impossible"] = Field(
        description="sure, likely or impossible to reach a correct solution."
    )


class Ballot(BaseModel):
    """A vote for the most promising candidate (reason first, then the choice)."""

    reason: str = Field(description="Why, in one short sentence.")
    choice: int = Field(description="The number of the most promising candidate.")


class FinalAnswer(BaseModel):
    """The answer to the problem."""

    answer: str = Field(description="The final answer, as short as possible.")
