"""How a failed model call is tried again: backoff on the errors that may pass
(:func:`~reasoning_graphs.errors.is_transient_model_error`), as many attempts as the mode allows."""

from __future__ import annotations

from langgraph.types import RetryPolicy

from reasoning_graphs.context import MODES, Mode
from reasoning_graphs.errors import is_transient_model_error

DEFAULT_ATTEMPTS = 4


def mode_retry_policy(mode: Mode | None) -> RetryPolicy:
    """The model-call retry policy of a graph built with ``mode``: as many attempts as the
    mode's ``retries`` (see :data:`~reasoning_graphs.context.MODES`), else the default."""
    attempts = DEFAULT_ATTEMPTS if mode is None else MODES[mode]["retries"]
    return model_retry_policy(max_attempts=attempts)


def model_retry_policy(
    initial_interval: float = 1.0, max_attempts: int = DEFAULT_ATTEMPTS
) -> RetryPolicy:
    """Exponential backoff with jitter for model calls."""
    return RetryPolicy(
        initial_interval=initial_interval,
        backoff_factor=2.0,
        max_interval=30.0,
        max_attempts=max_attempts,
        jitter=True,
        retry_on=is_transient_model_error,
    )
