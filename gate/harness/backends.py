"""Running one trial on asyncio, trio or anyio, the way each library runs and cancels.

asyncio: a fresh event loop whose task factory wraps every task's coroutine in a probe; a cancel
is `task.cancel()` of the task that reached the seam, and the run ends as `asyncio.run` ends:
tasks still running when the scenario's task is done are cancelled and awaited.

trio and anyio cancel by scope: the scenario runs as the task "main" in a task group (a nursery),
and a cancel cancels that group's scope, so shielded scopes hold and every later unshielded
checkpoint raises. trio's tasks are wrapped by an instrument when they are spawned; anyio's
asyncio backend by the loop's task factory.

Every runner fills a `RunResult` and enforces the trial's deadline from inside the run (a second
cancel, then stopping); a loop that a blocking call keeps from ever reaching the deadline is the
caller's to abandon (see `sweep.run_bounded`).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Coroutine
from dataclasses import dataclass, field
from typing import Any

from gate.harness.probe import Probe, Trace

Start = Callable[[], Coroutine[Any, Any, Any]]


class NotAsyncError(Exception):
    """The scenario did not return a coroutine when called."""


@dataclass
class RunResult:
    """What one run did, filled in by the runner while it goes."""

    trace: Trace
    cancel_types: tuple[type[BaseException], ...] = (asyncio.CancelledError,)
    raised: BaseException | None = None  # what came out of the run as a whole
    start_error: BaseException | None = None  # calling the scenario itself failed
    leftover_tasks: int = 0
    seconds: float = 0.0
    stopped: bool = False  # still running after the deadline and a second cancel
    blocked: bool = False  # the loop never got back to the harness; its thread was abandoned
    started: float = field(default_factory=time.monotonic)


def grace(timeout: float) -> float:
    """How long a trial gets after its deadline's second cancel before it is stopped."""
    return min(timeout, 1.0)


def _coroutine(start: Start) -> Coroutine[Any, Any, Any]:
    coroutine = start()
    if not isinstance(coroutine, Coroutine):
        raise NotAsyncError(
            f"calling it returned {type(coroutine).__name__}, not a coroutine: "
            "the scenario must be an `async def` function"
        )
    return coroutine


# ---------------------------------------------------------------------------------------------
# asyncio


def _asyncio_factory(trace: Trace) -> Callable[..., asyncio.Task[Any]]:
    def factory(loop: asyncio.AbstractEventLoop, coro: Any, **options: Any) -> asyncio.Task[Any]:
        probe = Probe(coro, trace, lambda: task.get_name())
        task = asyncio.Task(probe, loop=loop, **options)
        probe.task = task
        if trace.main is None:
            trace.main = probe
        return task

    return factory


def _quiet(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """The loop's exception handler: a trial's "exception was never retrieved" and shutdown
    messages are the expected fallout of an injected fault, not news for the person reading
    the sweep."""


def _on_deadline(loop: asyncio.AbstractEventLoop, result: RunResult, timeout: float) -> None:
    result.stopped = True
    for task in asyncio.all_tasks(loop):
        if isinstance(task.get_coro(), Probe):  # the scenario's tasks, not the harness's waiter
            task.cancel()
    loop.call_later(grace(timeout), loop.stop)


def _run_main(loop: asyncio.AbstractEventLoop, main: asyncio.Task[Any], result: RunResult) -> None:
    try:
        loop.run_until_complete(main)
    except BaseException as error:  # the scenario's own exception, KeyboardInterrupt included
        result.raised = error


def _cancel_leftovers(
    loop: asyncio.AbstractEventLoop, main: asyncio.Task[Any], result: RunResult, timeout: float
) -> list[asyncio.Task[Any]]:
    """Cancel every task still running and wait for them, as `asyncio.run` does at its end.

    Before the deadline the deadline's own timer bounds the wait; after it, one grace period.
    Returns the tasks that are still running.
    """
    pending = [task for task in asyncio.all_tasks(loop) if not task.done()]
    result.leftover_tasks = sum(task is not main for task in pending)
    for task in pending:
        task.cancel()
    if pending:
        _wait(loop, pending, grace(timeout) if result.stopped else None, result)
    return [task for task in pending if not task.done()]


def _wait(
    loop: asyncio.AbstractEventLoop,
    tasks: list[asyncio.Task[Any]],
    bound: float | None,
    result: RunResult,
) -> None:
    # A task of the harness's own, made without the factory, so it is not probed.
    waiter = asyncio.Task(asyncio.wait(tasks, timeout=bound), loop=loop)
    try:
        loop.run_until_complete(waiter)
    except BaseException as error:  # KeyboardInterrupt from a teardown, or the deadline's stop
        result.raised = result.raised or error


def _close(loop: asyncio.AbstractEventLoop, stuck: list[asyncio.Task[Any]]) -> None:
    for task in stuck:
        task._log_destroy_pending = False  # type: ignore[attr-defined]
    loop.set_task_factory(None)
    try:
        if not stuck:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.run_until_complete(loop.shutdown_default_executor())
    finally:
        asyncio.set_event_loop(None)
        loop.close()


def run_asyncio(start: Start, result: RunResult, timeout: float) -> None:
    """Run the scenario on a fresh event loop in the calling thread."""
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    trace = result.trace
    trace.cancel = lambda probe: probe.task.cancel()
    loop.set_task_factory(_asyncio_factory(trace))
    loop.set_exception_handler(_quiet)
    stuck: list[asyncio.Task[Any]] = []
    try:
        try:
            main = loop.create_task(_coroutine(start))
        except BaseException as error:
            result.start_error = error
            return
        deadline = loop.call_later(timeout, _on_deadline, loop, result, timeout)
        _run_main(loop, main, result)
        stuck = _cancel_leftovers(loop, main, result, timeout)
        deadline.cancel()
    finally:
        result.seconds = time.monotonic() - result.started
        _close(loop, stuck)


# ---------------------------------------------------------------------------------------------
# trio and anyio: cancel the scenario's task group


async def _scoped(
    start: Start,
    result: RunResult,
    timeout: float,
    open_group: Callable[[], Any],
    deadline_scope: Callable[[float], Any],
) -> None:
    """Run the scenario as task "main" of a task group whose scope the trace cancels."""
    try:
        coroutine = _coroutine(start)
    except BaseException as error:
        result.start_error = error
        return
    with deadline_scope(timeout) as outer:
        async with open_group() as group:
            result.trace.cancel = lambda probe: group.cancel_scope.cancel()
            group.start_soon(lambda: coroutine, name="main")
    result.stopped = bool(outer.cancel_called)


def _trio_instrument(trace: Trace) -> Any:
    import trio

    class WrapTasks(trio.abc.Instrument):  # type: ignore[misc]
        def task_spawned(self, task: Any) -> None:
            probe = Probe(task.coro, trace, lambda: str(task.name))
            probe.task = task
            task.coro = probe
            if trace.main is None:
                trace.main = probe

    return WrapTasks()


def _seed_trio() -> None:
    """Make trio schedule the same way in every run, so that seam k is the same seam.

    trio reverses each batch of runnable tasks at random, on purpose; its random generator is
    private (`trio._core._run._r`), so this is done only where it is found.
    """
    import random

    import trio

    generator = getattr(getattr(getattr(trio, "_core", None), "_run", None), "_r", None)
    if isinstance(generator, random.Random):
        generator.seed(0)


def run_trio(start: Start, result: RunResult, timeout: float) -> None:
    """Run the scenario under `trio.run` in the calling thread."""
    import trio

    result.cancel_types = (trio.Cancelled,)
    _seed_trio()

    async def root() -> None:
        trio.lowlevel.add_instrument(_trio_instrument(result.trace))
        await _scoped(start, result, timeout, trio.open_nursery, trio.move_on_after)

    try:
        trio.run(root, strict_exception_groups=True)
    except BaseException as error:
        result.raised = error
    finally:
        result.seconds = time.monotonic() - result.started


def run_anyio(start: Start, result: RunResult, timeout: float, library: str) -> None:
    """Run the scenario under `anyio.run` on its asyncio or trio backend."""
    import anyio

    async def root() -> None:
        result.cancel_types = (anyio.get_cancelled_exc_class(),)
        if library == "trio":
            import trio

            trio.lowlevel.add_instrument(_trio_instrument(result.trace))
        else:
            loop = asyncio.get_running_loop()
            loop.set_task_factory(_asyncio_factory(result.trace))
            loop.set_exception_handler(_quiet)
        await _scoped(start, result, timeout, anyio.create_task_group, anyio.move_on_after)

    if library == "trio":
        _seed_trio()
    try:
        anyio.run(root, backend=library)
    except BaseException as error:
        result.raised = error
    finally:
        result.seconds = time.monotonic() - result.started


def run(backend: str, start: Start, result: RunResult, timeout: float) -> None:
    """Run one trial on `backend` (asyncio, trio, anyio, anyio:trio) in the calling thread."""
    if backend == "asyncio":
        run_asyncio(start, result, timeout)
    elif backend == "trio":
        run_trio(start, result, timeout)
    else:
        run_anyio(start, result, timeout, "trio" if backend == "anyio:trio" else "asyncio")
