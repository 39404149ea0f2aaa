# Annotated examples for GATE103 cancellation-swallowed.
import asyncio
import contextlib
import logging

logger = logging.getLogger(__name__)


class Pass:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            try:
                await self._run_post_commands()
            # ruleid: cancellation-swallowed
            except asyncio.CancelledError:
                pass
            self._finalize_result()


class FlagNeverRead:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            try:
                await self._run_post_commands()
            # ruleid: cancellation-swallowed
            except BaseException:
                cancelled = True  # noqa: F841
            self._finalize_result()


class AbsorbingFlag:
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
            # ok: skippable-teardown-step
            self._finalize_result()
            if cancelled:
                raise asyncio.CancelledError


class KeptObject:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            pending = []
            try:
                await self._run_post_commands()
            # ok: cancellation-swallowed
            except asyncio.CancelledError as error:
                pending.append(error)
            self._finalize_result()
            if pending:
                raise pending[0]


class Reraised:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            try:
                # ruleid: unguarded-cleanup-await
                await self._cleanup()
            # ok: cancellation-swallowed
            except asyncio.CancelledError:
                self.log("cancelled during cleanup")
                raise


class BareExcept:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            try:
                await self.notify()
            # ruleid: cancellation-swallowed
            except:  # noqa: E722
                return


class WorkerLoopIsNotTeardown:
    async def run(self):
        try:
            await self.evaluate()
        # ok: cancellation-swallowed
        # ruleid: cancellation-swallowed-outside-teardown
        except asyncio.CancelledError:
            pass


class BroadHandlerAfterACancelHandler:
    # Found on real code: the second handler never sees the cancel the first one takes.
    async def run(self):
        try:
            await self.evaluate()
        except asyncio.CancelledError:
            self.write_result()
            raise
        # ok: cancellation-swallowed
        except BaseException:
            pass


class FailIsARaise:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            try:
                await self.post_run()
            # ok: cancellation-swallowed
            except asyncio.CancelledError:
                pytest.fail("post_run must not be cancelled")


class SwallowedThenReraised:
    # The inner handler drops the child's cancel; the bare raise after it carries on the outer one.
    async def run(self, task):
        try:
            await self.evaluate()
        except BaseException:
            task.cancel()
            try:
                await task
            # ok: cancellation-swallowed
            except asyncio.CancelledError:
                pass
            raise


class WaitsForTheTaskItCancelled:
    # A warning, not an error: the handler takes the child's cancel.
    async def stop(self):
        self._task.cancel()
        try:
            await self._task
        # ruleid: cancellation-swallowed
        except asyncio.CancelledError:
            pass


class WaitsWithATimeoutForTheTaskItCancelled:
    # The same wait through wait_for: a warning.
    async def shutdown(self):
        self._reader.cancel()
        try:
            await asyncio.wait_for(self._reader, 1.0)
        # ruleid: cancellation-swallowed
        except (asyncio.TimeoutError, asyncio.CancelledError):
            pass


class GathersTheTasksItCancelledInALoop:
    # langgraph's transport close: the tasks are cancelled one by one, then gathered; a warning.
    # The gather returns the tasks' cancels, so the one caught is the caller's: the fix keeps it.
    async def close(self):
        tasks = list(self._streams)
        for task in tasks:
            task.cancel()
        # ruleid: cancellation-swallowed
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.gather(*tasks, return_exceptions=True)


class GathersTheTasksItCollected:
    # nats' close: each task is cancelled and collected into a list, which is gathered; a warning.
    # The cancel caught may be the reader's own: no fix.
    async def close(self):
        pending = []
        if self._reader is not None:
            pending.append(self._reader)
            self._reader.cancel()
        try:
            await asyncio.gather(*pending)
        # ruleid: cancellation-swallowed
        except asyncio.CancelledError:
            pass


class TreatsTheCallersCancelAsATimeout:
    # An error: the task is cancelled only in the handler, after the caller's cancel was taken
    # for a timeout.
    async def cleanup(self):
        for task in self._readers:
            try:
                await asyncio.wait_for(task, timeout=1.0)
            # ruleid: cancellation-swallowed
            except (asyncio.TimeoutError, asyncio.CancelledError):
                task.cancel()


class SuppressInAHandlerThatReraises:
    # The suppress keeps a fallback close from hiding the original error; the bare raise
    # after it carries the cancel (or the error) on.
    async def aclose(self):
        try:
            await self._receive_final_frame()
        except BaseException:
            # ok: cancellation-swallowed
            with contextlib.suppress(BaseException):
                await self._notify_source()
            raise


class HelperWhoseCallerReraises:
    # The helper waits out a cleanup task and keeps the caller's cancel to itself; its only
    # caller raises the cancel again right after it
    async def _await_ignoring_cancellation(self, cleanup):
        while True:
            try:
                return await asyncio.shield(cleanup)
            # ok: cancellation-swallowed
            except asyncio.CancelledError:
                if cleanup.done():
                    return cleanup.result()

    async def run_attempt(self, attempt):
        cleanup = asyncio.ensure_future(self.drain(attempt))
        try:
            await asyncio.shield(cleanup)
        except asyncio.CancelledError:
            await self._await_ignoring_cancellation(cleanup)
            raise


class HelperWhoseCallerCarriesOn:
    async def _await_ignoring_cancellation(self, cleanup):
        while True:
            try:
                return await asyncio.shield(cleanup)
            # ruleid: cancellation-swallowed
            except asyncio.CancelledError:
                if cleanup.done():
                    return cleanup.result()

    async def run_attempt(self, attempt):
        cleanup = asyncio.ensure_future(self.drain(attempt))
        try:
            await asyncio.shield(cleanup)
        # ruleid: cancellation-swallowed-outside-teardown
        except asyncio.CancelledError:
            await self._await_ignoring_cancellation(cleanup)


class HelperWhoseCallerReraisesAnError:
    # Any error enters the caller's handler: when it was an ordinary error, a cancel that lands
    # while the helper waits is kept by the helper and turned into that error
    async def _stop_ignoring_cancellation(self, stop):
        while not stop.done():
            try:
                await asyncio.shield(stop)
            # ruleid: cancellation-swallowed
            except asyncio.CancelledError:
                pass

    async def unmount(self, mount):
        try:
            await mount.detach()
        except BaseException:
            await self._stop_ignoring_cancellation(asyncio.ensure_future(self.stop()))
            raise


class BackgroundExecutor:
    # The `try` cannot suspend: the CancelledError its handler catches is the one
    # `task.exception()` raises for a child task that was cancelled, never this task's own
    # (langgraph's AsyncBackgroundExecutor.__aexit__)
    async def __aexit__(self, exc_type, exc, tb):
        await asyncio.wait(self.tasks)
        for task in self.tasks:
            try:
                if error := task.exception():
                    raise error
            # ok: cancellation-swallowed
            except asyncio.CancelledError:
                pass


class LoggedOnly:
    # Handing the exception to a logging call does not keep it (psycopg_pool's rollback
    # handler of a returned connection, whose alias lists CancelledError)
    async def close(self, conn):
        try:
            await conn.rollback()
        # ruleid: cancellation-swallowed
        except (Exception, asyncio.CancelledError) as error:
            logger.warning("rollback failed: %s: %s", error.__class__.__name__, error)
        conn.finish()

