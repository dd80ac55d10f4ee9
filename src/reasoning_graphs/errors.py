"""Which failures may pass on their own, read the same way for models and tools.

A timeout, a dropped or refused connection, a rate limit or a server error may
succeed a moment later; a bad request, a missing key or a validation error
fails the same way every time, so retrying it would only delay the clear error.
"""

from __future__ import annotations

import re

TRANSIENT_STATUS = frozenset({408, 409, 425, 429})
"""HTTP statuses worth another try, besides every 5xx."""
TRANSIENT_NAME = re.compile(r"Timeout|Timed?Out|Connect(ion)?(Error|Refused|Reset)")
"""Client libraries' own classes for timeouts and lost connections (``httpx.ConnectError``,
``requests.Timeout``, ``openai.APITimeoutError``) do not derive from the built-in ones."""
PROVIDER_BUSY = frozenset({"RateLimitError", "InternalServerError"})


def status_code_of(error: BaseException) -> int | None:
    """The HTTP status an error carries, on itself or on its response."""
    status = getattr(error, "status_code", None)
    if status is None:
        status = getattr(getattr(error, "response", None), "status_code", None)
    return status if isinstance(status, int) else None


def is_transient_failure(error: BaseException) -> bool:
    """A timeout or a lost or refused connection."""
    if isinstance(error, (TimeoutError, ConnectionError)):
        return True
    return any(TRANSIENT_NAME.search(kind.__name__) for kind in type(error).__mro__)


def is_transient_model_error(error: BaseException) -> bool:
    """A model call worth another try: a transient failure, a rate limit (429) or a 5xx."""
    if is_transient_failure(error):
        return True
    if any(kind.__name__ in PROVIDER_BUSY for kind in type(error).__mro__):
        return True
    status = status_code_of(error)
    return status is not None and (status in TRANSIENT_STATUS or status >= 500)


def error_summary(error: BaseException, limit: int = 200) -> str:
    """One short line naming ``error``: its class and the first line of its message."""
    return f"{type(error).__name__}: {error}".splitlines()[0][:limit]


def validation_problems(error: BaseException, whole: str = "reply", limit: int = 300) -> str:
    """What a validation error says is wrong, field by field (``whole`` naming the reply as a
    whole), without its links: what a model reads to mend a reply that did not fit a schema."""
    listed = getattr(error, "errors", None)  # pydantic's ValidationError lists them
    if callable(listed):
        problems = [
            f"{'.'.join(map(str, item['loc'])) or whole}: {item['msg']}" for item in listed()
        ]
        text = "; ".join(problems)
    else:
        text = " ".join(str(error).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"
