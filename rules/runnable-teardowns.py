# Runnable teardown examples: gate checks them statically (the markers below), and the test
# suite sweeps each class's `run()` with a cancel at every await seam. `ok:` classes must pass
# every seam; the findings marked `ruleid:` must be confirmed by a failing seam.
import asyncio
import contextlib
from pathlib import Path


class Job:
    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir

    async def evaluate(self):
        await asyncio.sleep(0)

    async def _run_post_commands(self):
        await asyncio.sleep(0)

    async def _cleanup(self):
        # its work is done before its await: a cancel landing in that await loses none of it
        # (so no class below is told that the cleanup is cut short), and a class that holds the
        # interrupt there still passes every seam
        (self.workdir / "cleaned").touch()
        await asyncio.sleep(0)

    def _cleanup_now(self):
        (self.workdir / "cleaned").touch()

    def _finalize_result(self):
        (self.workdir / "task.json").write_text("{}")


class NoGuard(Job):
    async def run(self):
        try:
            await self.evaluate()
        finally:
            await self._run_post_commands()
            # ruleid: skippable-teardown-step
            await self._cleanup()
            # ruleid: skippable-teardown-step
            self._finalize_result()


class GuardOnFirstAwaitOnly(Job):
    async def run(self):
        try:
            await self.evaluate()
        finally:
            interrupt = None
            try:
                await self._run_post_commands()
            except asyncio.CancelledError as error:
                interrupt = error
            # ok: unguarded-cleanup-await
            await self._cleanup()
            # ruleid: skippable-teardown-step
            self._finalize_result()
            if interrupt is not None:
                raise interrupt


class HoldAndReraise(Job):
    async def run(self):
        try:
            await self.evaluate()
        finally:
            interrupt = None
            try:
                await self._run_post_commands()
            except BaseException as error:
                interrupt = error
            try:
                # ok: unguarded-cleanup-await
                await self._cleanup()
            except BaseException as error:
                interrupt = interrupt or error
            # ok: skippable-teardown-step
            self._finalize_result()
            if interrupt is not None:
                raise interrupt


class NestedFinallyChain(Job):
    async def run(self):
        try:
            await self.evaluate()
        finally:
            try:
                await self._run_post_commands()
            finally:
                try:
                    # ok: unguarded-cleanup-await
                    await self._cleanup()
                finally:
                    # ok: skippable-teardown-step
                    self._finalize_result()


class ExceptException(Job):
    async def run(self):
        try:
            await self.evaluate()
        finally:
            try:
                await self._run_post_commands()
            # ruleid: guard-misses-cancellation
            except Exception:
                pass
            try:
                # ruleid: skippable-teardown-step
                await self._cleanup()
            # ruleid: guard-misses-cancellation
            except Exception:
                pass
            # ruleid: skippable-teardown-step
            self._finalize_result()


class BareShield(Job):
    async def run(self):
        try:
            await self.evaluate()
        finally:
            # ruleid: unguarded-cleanup-await
            await asyncio.shield(self._cleanup())
            # ruleid: skippable-teardown-step
            self._finalize_result()


class Suppressed(Job):
    async def run(self):
        try:
            await self.evaluate()
        finally:
            # ruleid: cancellation-swallowed
            with contextlib.suppress(asyncio.CancelledError):
                await self._run_post_commands()
            # ok: skippable-teardown-step
            self._finalize_result()
            self._cleanup_now()


class AbsorbingFlag(Job):
    async def run(self):
        cancelled = False
        try:
            await self.evaluate()
        finally:
            try:
                await self._run_post_commands()
            # ok: cancellation-swallowed
            except asyncio.CancelledError:
                cancelled = True
            self._finalize_result()
            try:
                await self._cleanup()
            except asyncio.CancelledError:
                cancelled = True
            if cancelled:
                raise asyncio.CancelledError
