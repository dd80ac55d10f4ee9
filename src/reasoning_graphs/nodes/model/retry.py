"""How a failed model call is tried again: backoff on the errors that may pass
(:func:`~reasoning_graphs.errors.is_transient_model_error`), as many attempts as the mode allows.

The model-call seam retries the one call that failed (a node's earlier calls,
such as a summary, are not made again: :func:`retried` is the link of the chain nearest
the model) and tells the user before each wait:
a ``retry`` event on LangGraph's ``custom`` stream, which the CLI prints as
``retrying in 2 s``. A :class:`~langgraph.types.RetryPolicy` describes the
schedule, so ``build_graph(retry=...)`` takes the type LangGraph users know.
"""

from __future__ import annotations

import logging
import random
import time

from langgraph.config import get_stream_writer
from langgraph.types import RetryPolicy

from reasoning_graphs.context import MODES, Mode
from reasoning_graphs.effects import Body, Pause
from reasoning_graphs.errors import error_summary, is_transient_model_error
from reasoning_graphs.nodes.guards.honest import own_texts
from reasoning_graphs.nodes.model.request import ModelCall, ModelReply, Next, Stopped, stop_record

logger = logging.getLogger(__name__)

DEFAULT_ATTEMPTS = 4
RETRYING = "retrying in {seconds:.1f} s ({error})"
KEPT_FAILING = "the model call failed {attempts} times ({error})"
own_texts(KEPT_FAILING)  # a reply of it is no answer


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


def retries_on(policy: RetryPolicy, error: Exception) -> bool:
    """Whether ``policy`` tries a call that failed with ``error`` again (while tries are left)."""
    retry_on = policy.retry_on
    if callable(retry_on) and not isinstance(retry_on, type):
        return bool(retry_on(error))
    kinds = retry_on if isinstance(retry_on, tuple) else (retry_on,)
    return isinstance(error, kinds)


def retry_delay(policy: RetryPolicy, attempt: int) -> float:
    """Seconds to wait after try ``attempt`` failed: LangGraph's own schedule."""
    interval = policy.initial_interval * policy.backoff_factor ** (attempt - 1)
    interval = min(policy.max_interval, interval)
    return interval + random.uniform(0, 1) if policy.jitter else interval


def announce_retry(seconds: float, attempt: int, error: Exception) -> None:
    """Tell the user (the ``custom`` stream) and the log that a call will be tried again."""
    text = RETRYING.format(seconds=seconds, error=error_summary(error))
    logger.info("model call failed on try %d; %s", attempt, text)
    try:
        write = get_stream_writer()
    except RuntimeError:  # outside a graph run: the log line is all there is
        return
    write({"event": "retry", "text": text, "seconds": round(seconds, 1), "attempt": attempt})


def retried(call: ModelCall, then: Next) -> Body[ModelReply]:
    """The link: ``call`` tried again after a failure the run's policy retries, while tries
    are left, each try with the time the earlier ones took off its deadline; a call still
    failing after its last try stops the question. A call the watch stopped is not retried."""
    policy = call.run.setup.retry_policy
    started = time.perf_counter()
    attempt = 1
    while True:
        allowance = call.allowance.after(time.perf_counter() - started)
        try:
            return (yield from then(call.allowed(allowance)))
        except Stopped:
            raise
        except Exception as error:
            if not retries_on(policy, error):
                raise
            if attempt >= policy.max_attempts:
                raise _failed(call, error, attempt, started) from None
            delay = retry_delay(policy, attempt)
            announce_retry(delay, attempt, error)
            yield Pause(delay)
            attempt += 1


def _failed(call: ModelCall, error: Exception, attempts: int, started: float) -> Stopped:
    """The record of a call that still failed, for a reason that may pass, after its retries."""
    reason = KEPT_FAILING.format(attempts=attempts, error=error_summary(error))
    logger.info("%s; the question stops", reason)
    latency_ms = (time.perf_counter() - started) * 1000
    stopped = stop_record(call, reason, latency_ms, halt=True)
    stopped.error = error
    return stopped
