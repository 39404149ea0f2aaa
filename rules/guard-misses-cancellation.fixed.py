# Annotated examples for GATE102 guard-misses-cancellation.
import asyncio
import contextlib
import logging

log = logging.getLogger(__name__)

# A module-level alias is read for what it may hold: in the async arm it lists CancelledError
# (psycopg_pool's CLIENT_EXCEPTIONS, whose sync twin is generated from this module)
if True:  # ASYNC
    CLIENT_EXCEPTIONS = (Exception, asyncio.CancelledError)
else:
    CLIENT_EXCEPTIONS = Exception
RETRYABLE = (OSError, TimeoutError)


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


class CleanupContexts:
    # found on real code: an application's cleanup runs every exit in turn, and keeps going when
    # one fails; a cancel in one exit ends the loop, and the remaining exits never run
    async def on_cleanup(self, app):
        errors = []
        interrupt: BaseException | None = None
        for exit_context in reversed(self._exits):
            try:
                await exit_context.__anext__()
            # ruleid: guard-misses-cancellation
            except StopAsyncIteration:
                pass
            except Exception as error:
                errors.append(error)
            except BaseException as exc:
                interrupt = interrupt or exc
        if errors:
            if interrupt is not None:
                raise interrupt
            raise errors[0]
        if interrupt is not None:
            raise interrupt

    async def on_cleanup_fixed(self, app):
        errors = []
        for exit_context in reversed(self._exits):
            try:
                await exit_context.__anext__()
            # ok: guard-misses-cancellation
            except StopAsyncIteration:
                pass
            except (Exception, asyncio.CancelledError) as error:
                errors.append(error)
        if errors:
            raise errors[0]

    async def shutdown(self):
        # a retry loop's guard is about retrying, not about items: it awaits nothing of the item
        for _attempt in range(3):
            try:
                await self.notify_peer()
                break
            # ok: guard-misses-cancellation
            except OSError:
                await asyncio.sleep(1)

    async def close(self):
        # a guard that re-raises does not carry on with the next item
        for exit_context in self._exits:
            try:
                await exit_context.__anext__()
            # ok: guard-misses-cancellation
            except Exception:
                log.exception("exit failed")
                raise


class JobWorker:
    # A handler narrower than cancellation that tests the error it caught for cancellation: the
    # branch for a cancel never runs (arq's Worker.run_job: a cancelled job was never re-queued)
    async def run_job(self, job):
        try:
            await job.run()
        # ruleid: guard-misses-cancellation
        except Exception as error:
            if isinstance(error, (asyncio.CancelledError, RetryJob)):
                self.requeue(job)
            else:
                self.fail(job, error)

    async def run_job_fixed(self, job):
        try:
            await job.run()
        # ok: guard-misses-cancellation
        except (Exception, asyncio.CancelledError) as error:
            if isinstance(error, (asyncio.CancelledError, RetryJob)):
                self.requeue(job)
            raise

    async def listen(self, broker):
        try:
            await broker.publish()
        # ok: guard-misses-cancellation
        except Exception as error:
            if not isinstance(error, asyncio.CancelledError):  # written for Python 3.7
                log.exception("listener crashed")


class RetryJob(Exception):
    pass


class AliasedGuards:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            try:
                await self.post_commands()
            # ok: guard-misses-cancellation
            except CLIENT_EXCEPTIONS as error:
                log.warning("post commands failed: %s", error)
                interrupt = error
            self.write_result()
            if interrupt is not None:
                raise interrupt

    async def run_retryable(self):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            try:
                await self.post_commands()
            # ruleid: guard-misses-cancellation
            except RETRYABLE:
                log.warning("post commands failed")
            except BaseException as error:
                interrupt = interrupt or error
            # ruleid: skippable-teardown-step
            self.write_result()
            if interrupt is not None:
                raise interrupt
