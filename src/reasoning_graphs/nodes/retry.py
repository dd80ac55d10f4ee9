"""Which model errors are worth another try: rate limits, server errors and timeouts.

Anything else (a bad request, a missing key, a validation error) fails the
same way every time, so retrying would only delay the clear error.
"""

from __future__ import annotations

from langgraph.types import RetryPolicy

from reasoning_graphs.context import MODES, Mode

TRANSIENT_STATUS = frozenset({408, 409, 425, 429})
TRANSIENT_NAMES = frozenset(
    {"RateLimitError", "APITimeoutError", "APIConnectionError", "InternalServerError"}
)


def is_transient_model_error(error: BaseException) -> bool:
    """True for rate limits (429), 5xx responses, timeouts and dropped connections."""
    if isinstance(error, (TimeoutError, ConnectionError)):
        return True
    if any(cls.__name__ in TRANSIENT_NAMES for cls in type(error).__mro__):
        return True
    status = getattr(error, "status_code", None)
    if status is None:
        status = getattr(getattr(error, "response", None), "status_code", None)
    return isinstance(status, int) and (status in TRANSIENT_STATUS or status >= 500)


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
