# Annotated examples for GATE102 guard-misses-cancellation.
import asyncio
import contextlib
import logging

log = logging.getLogger(__name__)


class ExceptException:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            try:
                await self._run_post_commands()
            # ruleid: guard-misses-cancellation
            except Exception:
                log.exception("post-run failed")
            except BaseException as error:
                interrupt = interrupt or error
            # ruleid: skippable-teardown-step
            self._finalize_result()
            if interrupt is not None:
                raise interrupt


class NarrowerStill:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            try:
                # ruleid: unguarded-cleanup-await
                await self.sandbox.cleanup()
            # ruleid: guard-misses-cancellation
            except (OSError, TimeoutError):
                log.warning("cleanup failed")
            except BaseException as error:
                interrupt = interrupt or error
            # ruleid: skippable-teardown-step
            self.write_result()
            if interrupt is not None:
                raise interrupt


class GuardOnTheLastStep:
    # Nothing follows the guarded await, so the guard skips nothing; the cut itself is
    # unguarded-cleanup-await's finding (judged on real code: reporting both was noise).
    async def run(self):
        try:
            await self.evaluate()
        finally:
            try:
                # ruleid: unguarded-cleanup-await
                await self.sandbox.cleanup()
            # ok: guard-misses-cancellation
            except (OSError, TimeoutError):
                log.warning("cleanup failed")


class SuppressException:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            try:
                # ruleid: guard-misses-cancellation
                with contextlib.suppress(Exception):
                    await self.notify()
            except BaseException as error:
                interrupt = interrupt or error
            # ruleid: skippable-teardown-step
            self.write_result()
            if interrupt is not None:
                raise interrupt


class CatchesBoth:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            interrupt = None
            try:
                await self._run_post_commands()
            # ok: guard-misses-cancellation
            except Exception:
                log.exception("post-run failed")
            except asyncio.CancelledError as error:
                interrupt = error
            # ok: skippable-teardown-step
            self._finalize_result()
            if interrupt is not None:
                raise interrupt


class NothingFollows:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            try:
                await self.notify()
            # ok: guard-misses-cancellation
            except Exception:
                log.exception("notify failed")
