"""Orchestrators for the harness tests: each writes task.json in its teardown, some wrongly."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import anyio
import trio


def check(workdir: Path) -> None:
    assert (workdir / "task.json").exists(), "task.json was not written"


async def step() -> None:
    await asyncio.sleep(0)


def finalize(workdir: Path) -> None:
    (workdir / "task.json").write_text("{}")


async def no_guard(workdir: Path) -> None:
    try:
        await step()
    finally:
        await step()  # post-run commands
        await step()  # cleanup
        finalize(workdir)


async def hold_and_reraise(workdir: Path) -> None:
    try:
        await step()
        await step()
    finally:
        interrupt = None
        try:
            await step()
        except BaseException as error:
            interrupt = error
        try:
            await step()
        except BaseException as error:
            interrupt = interrupt or error
        finalize(workdir)
        if interrupt is not None:
            raise interrupt


async def swallows(workdir: Path) -> None:
    try:
        await step()
    finally:
        try:  # noqa: SIM105 - the swallowing handler is what this scenario is about
            await step()
        except BaseException:
            pass
        finalize(workdir)


async def replaces(workdir: Path) -> None:
    try:
        await step()
    except BaseException as error:
        finalize(workdir)
        raise RuntimeError("teardown failed") from error
    finalize(workdir)


async def hangs(workdir: Path) -> None:
    try:
        await step()
    except asyncio.CancelledError:
        finalize(workdir)
        while True:  # refuses every cancel
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.sleep(10)
    finalize(workdir)


async def flaky_clean_run(workdir: Path) -> None:
    await step()
    raise OSError("the sandbox did not start")


async def writes_nothing(workdir: Path) -> None:
    await step()


# -- the kinds of seams


async def _in_thread(workdir: Path) -> None:
    await asyncio.to_thread(time.sleep, 0.001)


async def _numbers():
    for number in range(2):
        await asyncio.sleep(0)
        yield number


class _Resource:
    async def __aenter__(self) -> _Resource:
        await asyncio.sleep(0)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await asyncio.sleep(0)


async def every_kind_of_seam(workdir: Path) -> None:
    """Each kind of await, with the teardown held so that every seam passes."""
    interrupt = None
    try:
        await asyncio.sleep(0)
        await _in_thread(workdir)
        await asyncio.gather(step(), step())
        await asyncio.wait_for(step(), 5)
        async for _ in _numbers():
            pass
        async with _Resource():
            await asyncio.sleep(0.001)
    except BaseException as error:
        interrupt = error
    finalize(workdir)
    if interrupt is not None:
        raise interrupt


async def leaves_a_child_running(workdir: Path) -> None:
    async def forever() -> None:
        await asyncio.sleep(3600)

    task = asyncio.get_running_loop().create_task(forever())
    leaves_a_child_running.children.append(task)  # type: ignore[attr-defined]
    try:
        await step()
    finally:
        finalize(workdir)


leaves_a_child_running.children = []  # type: ignore[attr-defined]


# -- correct fixes that are not "the same exception object"


async def fresh_cancel(workdir: Path) -> None:
    """Saves on cancel, then raises a fresh CancelledError on purpose."""
    try:
        await step()
    except asyncio.CancelledError:
        finalize(workdir)
        raise asyncio.CancelledError("cancelled after saving") from None
    finalize(workdir)


class Result:
    def __init__(self) -> None:
        self.completed_at: float | None = None
        self.error: str | None = None


async def records_error(workdir: Path, state) -> None:
    """Records a plain exception in its result instead of re-raising it, by design."""
    state.result = Result()
    try:
        await step()
        await step()
    except Exception as error:
        state.result.error = repr(error)
    finally:
        state.result.completed_at = time.monotonic()
        finalize(workdir)


def check_completed(workdir: Path, state) -> None:
    check(workdir)
    assert state.result.completed_at is not None, "result.completed_at was not set"


async def forgets_completed_at(workdir: Path, state) -> None:
    """Writes task.json in its teardown but sets completed_at only on success."""
    state.result = Result()
    try:
        await step()
        state.result.completed_at = time.monotonic()
    finally:
        finalize(workdir)


# -- what a real shutdown brings


async def save(workdir: Path, name: str = "task.json") -> None:
    await asyncio.sleep(0)  # opening the file
    await asyncio.sleep(0)  # writing it
    (workdir / name).write_text("{}")


async def saves_on_cancel(workdir: Path) -> None:
    """Saves when cancelled: a second cancel during the save loses it."""
    try:
        await step()
        await step()
    except asyncio.CancelledError:
        await save(workdir)
        raise
    finalize(workdir)


async def saves_on_cancel_shielded(workdir: Path) -> None:
    """Saves when cancelled, in a task of its own that a second cancel cannot cut."""
    try:
        await step()
        await step()
    except asyncio.CancelledError:
        saving = asyncio.ensure_future(save(workdir))
        while not saving.done():
            try:
                await asyncio.shield(saving)
            except asyncio.CancelledError:
                continue
        raise
    finalize(workdir)


async def holds_only_cancelled(workdir: Path) -> None:
    """Saves on CancelledError only: a KeyboardInterrupt passes the save."""
    try:
        await step()
    except asyncio.CancelledError:
        finalize(workdir)
        raise
    finalize(workdir)


async def bare_shield_save(workdir: Path) -> None:
    """Shields the save, but the shielded task is cut when the run shuts down."""
    try:
        await step()
    finally:
        await asyncio.shield(save(workdir))


async def hangs_on_second_cancel(workdir: Path) -> None:
    """A teardown that takes too long; the harness's second cancel turns it into an error."""
    try:
        await step()
    except asyncio.CancelledError:
        try:
            await asyncio.sleep(30)
        except asyncio.CancelledError:
            raise RuntimeError("teardown interrupted") from None
        raise
    finalize(workdir)


async def blocks_when_cancelled(workdir: Path) -> None:
    """Blocks the event loop (a synchronous sleep in a coroutine) when cancelled."""
    try:
        await step()
    except BaseException:
        time.sleep(BLOCK_SECONDS)
        raise
    finalize(workdir)


BLOCK_SECONDS = 30.0  # far longer than any bound the tests set, even on a loaded machine


async def exits_when_cancelled(workdir: Path) -> None:
    try:
        await step()
    except asyncio.CancelledError:
        finalize(workdir)
        raise SystemExit(5) from None
    finalize(workdir)


async def exits(workdir: Path) -> None:
    await step()
    raise SystemExit(5)


def not_async(workdir: Path) -> None:
    finalize(workdir)


async def async_check(workdir: Path) -> None:
    check(workdir)


# -- child tasks


async def child_writes(workdir: Path, name: str) -> None:
    try:
        await step()
    finally:
        await step()  # a teardown await that a cancel can cut
        (workdir / name).write_text("{}")


async def child_holds(workdir: Path, name: str) -> None:
    interrupt = None
    try:
        await step()
    except BaseException as error:
        interrupt = error
    try:
        await step()
    except BaseException as error:
        interrupt = interrupt or error
    (workdir / name).write_text("{}")
    if interrupt is not None:
        raise interrupt


def check_pair(workdir: Path) -> None:
    missing = [name for name in ("a.json", "b.json") if not (workdir / name).exists()]
    assert not missing, f"not written: {missing}"


async def gathered(workdir: Path) -> None:
    await asyncio.gather(child_writes(workdir, "a.json"), child_holds(workdir, "b.json"))


async def task_group(workdir: Path) -> None:
    async with asyncio.TaskGroup() as group:  # type: ignore[attr-defined]  # 3.11+
        group.create_task(child_writes(workdir, "a.json"), name="writer")
        group.create_task(child_holds(workdir, "b.json"), name="holder")


async def created_task(workdir: Path) -> None:
    writer = asyncio.create_task(child_holds(workdir, "a.json"))
    (workdir / "b.json").write_text("{}")
    await writer


# -- trio and anyio: cancel scopes


async def trio_unshielded(workdir: Path) -> None:
    try:
        await trio.sleep(0)
    finally:
        await trio.sleep(0)  # a cancelled scope raises again here
        finalize(workdir)


async def trio_shielded(workdir: Path) -> None:
    try:
        await trio.sleep(0)
    finally:
        with trio.CancelScope(shield=True):
            await trio.sleep(0)
            finalize(workdir)


async def trio_children(workdir: Path) -> None:
    async def child(name: str) -> None:
        try:
            await trio.sleep(0)
        finally:
            with trio.CancelScope(shield=True):
                await trio.sleep(0)
                (workdir / name).write_text("{}")

    async with trio.open_nursery() as nursery:
        nursery.start_soon(child, "a.json")
        nursery.start_soon(child, "b.json")


async def trio_replaces(workdir: Path) -> None:
    try:
        await trio.sleep(0)
    except trio.Cancelled:
        finalize(workdir)
        raise RuntimeError("teardown failed") from None
    finalize(workdir)


async def anyio_unshielded(workdir: Path) -> None:
    try:
        await anyio.sleep(0)
    finally:
        await anyio.sleep(0)
        finalize(workdir)


async def anyio_shielded(workdir: Path) -> None:
    try:
        await anyio.sleep(0)
    finally:
        with anyio.CancelScope(shield=True):
            await anyio.sleep(0)
            finalize(workdir)


async def trio_hangs_shielded(workdir: Path) -> None:
    try:
        await trio.sleep(0)
    except trio.Cancelled:
        with trio.CancelScope(shield=True):
            await trio.sleep(10)  # longer than the test lets a trial run: no cancel reaches it
        raise
    finalize(workdir)


async def anyio_hangs_shielded(workdir: Path) -> None:
    try:
        await anyio.sleep(0)
    except anyio.get_cancelled_exc_class():
        with anyio.CancelScope(shield=True):
            await anyio.sleep(10)
        raise
    finalize(workdir)


async def leaves_a_stubborn_child(workdir: Path) -> None:
    """Leaves a task that ignores its first cancel and finishes its teardown slowly."""

    async def stubborn() -> None:
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            try:
                await asyncio.sleep(3600)  # ignores the shutdown's cancel
            except asyncio.CancelledError:
                await asyncio.sleep(0.05)  # the deadline's second cancel: wraps up quickly
                (workdir / "stubborn").write_text("")
                raise

    asyncio.get_running_loop().create_task(stubborn())
    await step()
    finalize(workdir)
