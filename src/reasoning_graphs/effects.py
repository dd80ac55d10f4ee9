"""Write a node once; run it with sync methods on the sync face and async ones on the async face.

LangGraph calls a node's sync function from ``invoke``/``stream`` and its async
function from ``ainvoke``/``astream``. Clients that pool connections (the
OpenAI client, httpx, database drivers) bind to the event loop they first ran
on, so a sync run must use their sync methods — never a private event loop per
call. A node body is therefore written as a generator that *yields effects*
(a model call, a tool run, a batch to overlap) and receives their results;
:func:`drive` performs each effect with the sync method, :func:`adrive` with the
async one. The body's own logic exists once.

Examples:
    >>> from langchain_core.runnables import RunnableLambda
    >>> double = RunnableLambda(lambda x: 2 * x)
    >>> def body(x):
    ...     y = yield Invoke(double, x)
    ...     return y + 1
    >>> drive(body(20))
    41
"""

from __future__ import annotations

import asyncio
import contextvars
import queue
import threading
import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Coroutine, Generator, Sequence
from concurrent.futures import Executor, Future
from contextlib import AbstractContextManager
from typing import Any, TypeVar

from langchain_core.runnables import Runnable, RunnableConfig, RunnableLambda
from langchain_core.runnables.config import get_executor_for_config
from langgraph.config import get_config
from langgraph.func import task
from langgraph.store.base import BaseStore, Op, Result

from reasoning_graphs.private_names import RunnableCallable

T = TypeVar("T")

Body = Generator["Effect", Any, T]
"""A node body: yields effects, receives their results, returns the node's update."""

R = TypeVar("R")


def chained(
    links: Sequence[Callable[[R, Callable[[R], Body[T]]], Body[T]]],
    last: Callable[[R], Body[T]],
) -> Callable[[R], Body[T]]:
    """``links`` in front of ``last``, the first outermost: each link takes a request and
    the rest of the chain, and may answer itself or hand a request on (the shape of a
    model call's and a tool call's guards, and of LangChain's ``wrap_*_call`` hooks)."""
    handler = last
    for link in reversed(links):
        handler = _in_front(link, handler)
    return handler


def _in_front(
    link: Callable[[R, Callable[[R], Body[T]]], Body[T]], then: Callable[[R], Body[T]]
) -> Callable[[R], Body[T]]:
    """``link`` handing on to ``then``."""
    return lambda request: link(request, then)


class Effect(ABC):
    """One piece of outside work, done by the face that runs the body."""

    @abstractmethod
    def run(self) -> Any:
        """Do the work with sync methods (the sync face)."""

    @abstractmethod
    async def arun(self) -> Any:
        """Do the work with async methods (the async face)."""

    def start(self, pool: Executor) -> Future:
        """Begin the work on the sync face without waiting for it (see :class:`Gather`)."""
        return pool.submit(contextvars.copy_context().run, self.run)


class Invoke(Effect):
    """``runnable.invoke(value)`` or ``await runnable.ainvoke(value)``: models, tools, subgraphs."""

    def __init__(self, runnable: Runnable, value: Any, config: RunnableConfig | None = None):
        self.runnable, self.value, self.config = runnable, value, config

    def run(self) -> Any:
        return self.runnable.invoke(self.value, self.config)

    async def arun(self) -> Any:
        return await self.runnable.ainvoke(self.value, self.config)


class Blocking(Effect):
    """A blocking function (a user's evaluator): called directly, or on a thread when async."""

    def __init__(self, func: Callable[..., Any], *args: Any):
        self.func, self.args = func, args

    def run(self) -> Any:
        return self.func(*self.args)

    async def arun(self) -> Any:
        return await asyncio.to_thread(self.func, *self.args)


class StoreOps(Effect):
    """Operations on a LangGraph store (``store.batch`` or ``await store.abatch``): memory
    that outlives the thread, read and written by whichever face runs the body."""

    def __init__(self, store: BaseStore, ops: Sequence[Op]):
        self.store, self.ops = store, list(ops)

    def run(self) -> list[Result]:
        return self.store.batch(self.ops)

    async def arun(self) -> list[Result]:
        return await self.store.abatch(self.ops)


class Pause(Effect):
    """Wait ``seconds``: ``time.sleep`` on the sync face, ``asyncio.sleep`` on the async one."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def run(self) -> None:
        time.sleep(self.seconds)

    async def arun(self) -> None:
        await asyncio.sleep(self.seconds)


class Gather(Effect):
    """Several effects at once; their results in order. The first failure is raised."""

    def __init__(self, effects: Sequence[Effect]):
        self.effects = list(effects)

    def run(self) -> list[Any]:
        if len(self.effects) == 1:
            return [self.effects[0].run()]
        with _run_pool() as pool:
            futures = [effect.start(pool) for effect in self.effects]
            return [future.result() for future in futures]

    async def arun(self) -> list[Any]:
        return list(await asyncio.gather(*(effect.arun() for effect in self.effects)))


class Nested(Effect):
    """A whole body as one effect, so that several bodies can overlap in a :class:`Gather`."""

    def __init__(self, body: Body[Any]):
        self.body = body

    def run(self) -> Any:
        return drive(self.body)

    async def arun(self) -> Any:
        return await adrive(self.body)


def gather_bodies(bodies: Sequence[Body[T]]) -> Body[list[T]]:
    """Run several bodies at once (samples, judges); their results in order."""
    return (yield Gather([Nested(body) for body in bodies]))


class Durable(Effect):
    """A LangGraph ``@task`` call: its result is saved as soon as it finishes.

    After a crash the node runs again and a finished task returns its saved
    result without running. Make one with :func:`durable_task`.
    """

    def __init__(
        self,
        tasks: tuple[Callable[..., Any], Callable[..., Any]],
        args: tuple[Any, ...],
        on_settled: Callable[[Any], None] | None = None,
    ):
        self.tasks, self.args, self.on_settled = tasks, args, on_settled

    def _call(self, face: int) -> Any:
        future = self.tasks[face](*self.args)  # LangGraph runs it and keeps its result
        if self.on_settled is not None:
            future.add_done_callback(self.on_settled)
        return future

    def start(self, pool: Executor) -> Future:
        return self._call(0)

    def run(self) -> Any:
        return self._call(0).result()

    async def arun(self) -> Any:
        return await self._call(1)


def durable_task(name: str, make_body: Callable[..., Body[T]]) -> Callable[..., Durable]:
    """A LangGraph ``@task`` with a sync and an async face over one body.

    Returns a factory: ``factory(*args, on_settled=callback)`` is the effect of
    one call; ``on_settled`` receives the call's future once it has settled.
    """

    def run(*args: Any) -> T:
        return drive(make_body(*args))

    async def arun(*args: Any) -> T:
        return await adrive(make_body(*args))

    # ``task(name=...)`` fixes its type variables at the outer call, where mypy can only
    # solve them as Never, so neither function fits the decorator it returns
    tasks: tuple[Callable[..., Any], Callable[..., Any]] = (
        task(name=name)(run),  # type: ignore[arg-type]
        task(name=name)(arun),  # type: ignore[arg-type]
    )

    def effect(*args: Any, on_settled: Callable[[Any], None] | None = None) -> Durable:
        return Durable(tasks, args, on_settled)

    return effect


class Abandoned(TimeoutError):
    """An effect ran past its time limit and was left to finish on its own."""


class Bounded(Effect):
    """An effect with a time limit: past it the caller moves on and the work is abandoned.

    The sync face runs the work on a daemon thread, so neither the run nor the
    process waits for work that overran; the async face cancels its task.
    """

    def __init__(self, effect: Effect, seconds: float | None):
        self.effect, self.seconds = effect, seconds

    def run(self) -> Any:
        if self.seconds is None:
            return self.effect.run()
        work = Handoff(self.effect.run)
        if not work.wait(self.seconds):
            raise Abandoned(self.seconds)
        return work.result()

    async def arun(self) -> Any:
        if self.seconds is None:
            return await self.effect.arun()
        # a task plus asyncio.wait tells our limit apart from a TimeoutError the work raises
        task = asyncio.ensure_future(self.effect.arun())
        done, _ = await asyncio.wait({task}, timeout=self.seconds)
        if not done:
            task.cancel()
            raise Abandoned(self.seconds)
        return task.result()


class Await(Effect):
    """Something only the async face can await directly (a coroutine function).

    On the sync face it runs on one long-lived private event loop (not a fresh
    loop per call), so clients it creates stay usable on later calls.
    """

    def __init__(self, make: Callable[[], Coroutine[Any, Any, Any]]):
        self.make = make

    def run(self) -> Any:
        loop, done = _private_loop(), Future[Any]()

        def start() -> None:  # runs in the caller's context, which the task copies
            task = loop.create_task(self.make())
            task.add_done_callback(lambda t: _settle(done, t))

        loop.call_soon_threadsafe(start, context=contextvars.copy_context())
        return done.result()

    async def arun(self) -> Any:
        return await self.make()


def _settle(future: Future, task: asyncio.Task) -> None:
    if task.cancelled():
        future.cancel()
    elif task.exception() is not None:
        future.set_exception(task.exception())
    else:
        future.set_result(task.result())


def drive(body: Body[T]) -> T:
    """Run a body on the sync face."""
    effect, result = _resume(body, None, None)
    while effect is not None:
        try:
            value, error = effect.run(), None
        except Exception as exc:  # handed to the body, which may turn it into an observation
            value, error = None, exc
        effect, result = _resume(body, value, error)
    return result


async def adrive(body: Body[T]) -> T:
    """Run a body on the async face."""
    effect, result = _resume(body, None, None)
    while effect is not None:
        try:
            value, error = await effect.arun(), None
        except Exception as exc:
            value, error = None, exc
        effect, result = _resume(body, value, error)
    return result


def _resume(body: Body[T], value: Any, error: Exception | None) -> tuple[Effect | None, Any]:
    """Hand the body its last result (or error): its next effect, or ``None`` and its return."""
    try:
        return (body.send(value) if error is None else body.throw(error)), None
    except StopIteration as stop:
        return None, stop.value


def effect_node(name: str, make_body: Callable[..., Body[Any]]) -> Runnable:
    """A node whose body yields effects: ``invoke`` drives it with sync methods,
    ``ainvoke`` with async ones.

    A node that does no outside work needs no wrapper: LangGraph calls a plain
    function directly on both faces. This one is the callable LangGraph makes
    of a plain function, given both faces: it reads the function's signature
    once, where a ``RunnableLambda`` reads it at every call, and it adds no
    run of its own inside the node's.
    """

    def func(value: Any) -> Any:
        return drive(make_body(value))

    async def afunc(value: Any) -> Any:
        return await adrive(make_body(value))

    if RunnableCallable is None:  # a LangGraph without it: the public, slower wrapper
        return RunnableLambda(func, afunc=afunc, name=name)
    return RunnableCallable(func, afunc, name=name, trace=False)


def in_daemon_thread(func: Callable[[], T]) -> Future:
    """Run ``func`` on a daemon thread with the caller's context (config, callbacks, runtime).

    A daemon thread never holds up the process at exit, so work abandoned
    after a time limit costs nothing once the caller has moved on. The threads
    are reused (see :class:`_DaemonWorkers`): starting one per model call would
    cost more than many a call's own work.
    """
    future: Future = Future()
    context = contextvars.copy_context()

    def work() -> None:
        if not future.set_running_or_notify_cancel():
            return
        try:
            future.set_result(context.run(func))
        except BaseException as exc:
            future.set_exception(exc)

    _workers.submit(work)
    return future


class Handoff:
    """Work on a daemon thread that the sync face waits for (see :func:`in_daemon_thread`).

    Lighter than a ``Future``, which a waiting face pays for with a condition and a
    fresh lock per wait: here one lock, released when the work ends.
    """

    __slots__ = ("_ended", "_error", "_value")

    def __init__(self, func: Callable[[], Any]):
        self._ended = threading.Lock()
        self._ended.acquire()
        self._value: Any = None
        self._error: BaseException | None = None
        context = contextvars.copy_context()

        def work() -> None:
            try:
                self._value = context.run(func)
            except BaseException as exc:
                self._error = exc
            self._ended.release()

        _workers.submit(work)

    def wait(self, seconds: float | None) -> bool:
        """Whether the work has ended, waiting at most ``seconds`` (``None``: until it does)."""
        if not self._ended.acquire(timeout=-1 if seconds is None else seconds):
            return False
        self._ended.release()  # ended for every later wait too
        return True

    def result(self) -> Any:
        """What the ended work returned, or what it raised."""
        if self._error is not None:
            raise self._error
        return self._value


class _DaemonWorkers:
    """Daemon threads that wait for work and run it, one job at a time each.

    A worker whose job was abandoned stays busy until the job ends; others are
    started as needed, and at most :attr:`KEEP` idle ones wait for more.
    """

    KEEP = 16

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._idle: list[queue.SimpleQueue[Callable[[], None]]] = []

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            inbox = self._idle.pop() if self._idle else None
        if inbox is None:
            inbox = queue.SimpleQueue()
            threading.Thread(
                target=self._serve, args=(inbox,), daemon=True, name="reasoning-graphs-work"
            ).start()
        inbox.put(job)

    def _serve(self, inbox: queue.SimpleQueue[Callable[[], None]]) -> None:
        while True:
            inbox.get()()
            with self._lock:
                if len(self._idle) >= self.KEEP:
                    return
                self._idle.append(inbox)


_workers = _DaemonWorkers()


def _run_pool() -> AbstractContextManager[Executor]:
    """A thread pool for one batch, honouring the run's ``max_concurrency``."""
    try:
        config = get_config()
    except RuntimeError:  # outside a graph run
        config = None
    return get_executor_for_config(config)


_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


def _private_loop() -> asyncio.AbstractEventLoop:
    global _loop
    with _loop_lock:
        if _loop is None:
            _loop = asyncio.new_event_loop()
            threading.Thread(
                target=_loop.run_forever, daemon=True, name="reasoning-graphs-loop"
            ).start()
        return _loop
