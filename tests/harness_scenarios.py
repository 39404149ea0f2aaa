"""Orchestrators for the harness tests: each writes task.json in its teardown, some wrongly."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path


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
