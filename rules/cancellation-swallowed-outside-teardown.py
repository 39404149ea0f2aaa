# Annotated examples for GATE109 cancellation-swallowed-outside-teardown.
import asyncio
import logging

logger = logging.getLogger(__name__)


async def handle(app, scope, receive, send):
    # hypercorn's _handle before d70b15e: the task running the app ends as if it had finished
    try:
        await app(scope, receive, send)
    # ruleid: cancellation-swallowed-outside-teardown
    except asyncio.CancelledError:
        pass


class Subscription:
    # nats.py's Subscription._drain before #378: a cancelled drain returns normally
    async def drain(self):
        try:
            await self._conn.flush()
            await self._pending_queue.join()
        # ruleid: cancellation-swallowed-outside-teardown
        except asyncio.CancelledError:
            logger.debug("drain cancelled")
        self._closed = True


async def handle_reraising(app, scope):
    try:
        await app(scope)
    # ok: cancellation-swallowed-outside-teardown
    except asyncio.CancelledError:
        logger.info("cancelled")
        raise


async def handle_keeping(app, scope):
    cancelled = None
    try:
        await app(scope)
    # ok: cancellation-swallowed-outside-teardown
    except asyncio.CancelledError as error:
        cancelled = error
    await scope.flush()
    if cancelled is not None:
        raise cancelled


async def reap(task):
    # the handler is there for the task's own cancel, which the function asked for
    task.cancel()
    try:
        await task
    # ok: cancellation-swallowed-outside-teardown
    except asyncio.CancelledError:
        pass


async def nothing_to_cancel(task):
    # a `try` that cannot suspend catches no cancel of this task
    try:
        task.result()
    # ok: cancellation-swallowed-outside-teardown
    except asyncio.CancelledError:
        pass


async def in_a_finally(job):
    try:
        await job.evaluate()
    finally:
        try:
            await job.post_run()
        # ok: cancellation-swallowed-outside-teardown
        # ruleid: cancellation-swallowed
        except asyncio.CancelledError:
            pass
        job.write_result()


class WaitingClient:
    # found on real code (psycopg #1277): the cancel is kept in `self.error`, but a connection
    # handed over while it landed is returned first, and the cancelled task carries on
    async def wait(self, timeout):
        async with self._cond:
            if not (self.conn or self.error):
                try:
                    if not await self._cond.wait_timeout(timeout):
                        self.error = TimeoutError()
                # ruleid: cancellation-swallowed-outside-teardown
                except (Exception, asyncio.CancelledError) as ex:
                    self.error = ex
        if self.conn:
            return self.conn
        else:
            raise self.error

    async def wait_fixed(self, timeout):
        async with self._cond:
            if not (self.conn or self.error):
                try:
                    if not await self._cond.wait_timeout(timeout):
                        self.error = TimeoutError()
                # ok: cancellation-swallowed-outside-teardown
                except (Exception, asyncio.CancelledError) as ex:
                    self.error = ex
        if self.error:
            raise self.error
        return self.conn


async def kept_and_raised_first(fut, save):
    cancelled = None
    try:
        await fut
    # ok: cancellation-swallowed-outside-teardown
    except asyncio.CancelledError as error:
        cancelled = error
    save()
    if cancelled is not None:
        raise cancelled
    return fut.result()
