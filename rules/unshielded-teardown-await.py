# Annotated examples for GATE104 unshielded-teardown-await (trio and anyio).
import asyncio
import contextlib
import logging

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
import trio

logger = logging.getLogger(__name__)


class TrioUnshielded:
    async def run(self, conn):
        try:
            await conn.serve()
        finally:
            # ruleid: unshielded-teardown-await
            await conn.send_goodbye()


class TrioShielded:
    async def run(self, conn):
        try:
            await conn.serve()
        finally:
            with trio.move_on_after(5, shield=True):
                # ok: unshielded-teardown-await
                await conn.send_goodbye()
                # ok: unguarded-cleanup-await
                await conn.close_session()


class TrioCancelScope:
    async def run(self, conn):
        try:
            await conn.serve()
        finally:
            with trio.CancelScope(shield=True):
                # ok: unshielded-teardown-await
                await conn.send_goodbye()


class AnyioUnshielded:
    async def run(self, client):
        try:
            await client.work()
        except anyio.get_cancelled_exc_class():
            # One await, one finding: under trio/anyio the unshielded await is the report, and
            # unguarded-cleanup-await stays quiet on it.
            # ruleid: unshielded-teardown-await
            # ok: unguarded-cleanup-await
            await client.release()
            raise


class AnyioShielded:
    async def run(self, client):
        try:
            await client.work()
        finally:
            with anyio.CancelScope(shield=True):
                # ok: unshielded-teardown-await
                await client.release()


class AcloseIsExempt:
    async def run(self, stream):
        try:
            await stream.serve()
        finally:
            # ok: unshielded-teardown-await
            await stream.aclose()


class ShieldFalseDoesNotShield:
    async def run(self, conn):
        try:
            await conn.serve()
        finally:
            with trio.move_on_after(5, shield=False):
                # ruleid: unshielded-teardown-await
                await conn.send_goodbye()


class ShieldExpression:
    # `shield=pending` shields whenever it is set; only a literal False does not.
    async def run(self, conn, pending):
        try:
            await conn.serve()
        finally:
            with anyio.CancelScope(shield=pending):
                # ok: unshielded-teardown-await
                await conn.send_goodbye()


class ShieldSetOnTheScope:
    async def run(self, conn, scope):
        try:
            await conn.serve()
        finally:
            scope.shield = True
            # ok: unshielded-teardown-await
            await conn.send_goodbye()


class OnlyWaitsAfterTheWork:
    # The close is done before the await; waiting for it loses nothing when cut.
    async def run(self, writer):
        try:
            await writer.serve()
        finally:
            writer.close()
            # ok: unshielded-teardown-await
            await writer.wait_closed()


class DelegatedExit:
    # The wrapped manager owns its shielding (a nursery's exit must stay cancellable).
    async def __aexit__(self, *exc_info):
        # ok: unshielded-teardown-await
        # ok: unguarded-cleanup-await
        return await self._inner.__aexit__(*exc_info)


class ForcefulClose:
    async def run(self, stream):
        try:
            await stream.serve()
        except BaseException:
            # ok: unshielded-teardown-await
            # ok: unguarded-cleanup-await
            await anyio.aclose_forcefully(stream)
            raise


class RunLogger:
    # Every place in the project that runs cleanup() shields it (run_tasks below), so a cancel
    # cannot land in it, nor in the helper it awaits.
    async def _stop_timer(self):
        # ok: unshielded-teardown-await
        async with self._lock:
            # ok: skippable-teardown-step
            self._timer_scope.cancel()

    async def cleanup(self):
        # ok: unshielded-teardown-await
        await self._stop_timer()
        # ok: skippable-teardown-step
        self._buffer_db.remove()


async def run_tasks(tasks):
    try:
        await tasks.start()
    except BaseException:
        with anyio.CancelScope(shield=True):
            for task in tasks:
                await task.run_logger.cleanup()
        raise


class TaskRecorder:
    # `_close` is a teardown method of its own, awaited only from a cleanup() that every caller
    # shields (run_recorders below): a cancel cannot land in it either.
    async def _close(self):
        # ok: unshielded-teardown-await
        async with self._lock:
            # ok: skippable-teardown-step
            self._timer_scope.cancel()

    async def cleanup(self):
        # ok: unshielded-teardown-await
        await self._close()
        # ok: skippable-teardown-step
        self._buffer_db.remove()


async def run_recorders(tasks):
    try:
        await tasks.start()
    finally:
        with anyio.CancelScope(shield=True):
            for task in tasks:
                await task.task_recorder.cleanup()


class ServeLogger:
    # The same shape with one caller that does not shield: every finding stays.
    async def cleanup(self):
        # ruleid: unshielded-teardown-await
        await self._flush_lock.acquire()
        # ruleid: skippable-teardown-step
        self._buffer_db.remove()


async def serve(server):
    try:
        await server.run()
    finally:
        # ruleid: unshielded-teardown-await
        await server.serve_logger.cleanup()


class Resource:
    async def __aexit__(self, *exc_info):
        await self.aclose()


class ChildProcess(Resource):
    # Its one explicit caller shields it, but `async with` runs it unshielded through
    # Resource.__aexit__: every finding stays.
    async def aclose(self):
        # ruleid: unshielded-teardown-await
        await self._stdout.drain()
        # ruleid: skippable-teardown-step
        self._child_process.kill()


async def reap(children):
    try:
        await children.run()
    finally:
        with anyio.CancelScope(shield=True):
            for child_process in children:
                await child_process.aclose()


class LifespanServer:
    # An asyncio.Lock that no holder keeps across an await is always free when a task takes it:
    # taking it never suspends, so a cancelled scope cannot interrupt it (fastmcp's lifespan
    # lock, on anyio). trio's and anyio's own locks checkpoint even when free.
    def __init__(self):
        self._ref_lock = asyncio.Lock()
        self._flush_lock = asyncio.Lock()

    async def enter(self):
        async with self._ref_lock:
            self._ref_count += 1

    async def leave(self, stack):
        try:
            with anyio.CancelScope(shield=True):
                await stack.aclose()
        finally:
            # ok: unshielded-teardown-await
            async with self._ref_lock:
                self._ref_count -= 1

    async def flush(self):
        async with self._flush_lock:
            await self.write_buffers()

    async def leave_flushed(self, stack):
        try:
            with anyio.CancelScope(shield=True):
                await stack.aclose()
        finally:
            # flush() keeps this lock across an await: taking it can wait, and be interrupted
            # ruleid: unshielded-teardown-await
            async with self._flush_lock:
                self._ref_count -= 1


class Dispatcher:
    async def _resync_tracer(self):
        # a checkpoint that lets other tasks run but never raises a cancellation
        # ok: unshielded-teardown-await
        await anyio.lowlevel.cancel_shielded_checkpoint()

    async def run(self, tg, stream):
        try:
            await tg.wait()
        finally:
            # ok: unshielded-teardown-await
            await self._resync_tracer()
            with anyio.CancelScope(shield=True):
                # ok: skippable-teardown-step
                await stream.flush()


class ShieldedThroughItsHelpers:
    # `_drain` gathers its tasks in a shielded scope and `close` only awaits `_drain`: a
    # cancelled scope has no checkpoint in `close` to raise at
    async def _drain(self, tasks):
        for task in tasks:
            task.cancel()
        with anyio.CancelScope(shield=True):
            await asyncio.gather(*tasks, return_exceptions=True)

    async def close(self):
        self._closed = True
        await self._drain(self._tasks)

    async def __aexit__(self, *exc_info):
        # ok: unshielded-teardown-await
        await self.close()


class Store:
    # A generator context manager that opens a shield scope before it yields shields the body
    # of every `async with` of it (apscheduler's SQLAlchemyDataStore._begin_transaction)
    @contextlib.asynccontextmanager
    async def _transaction(self):
        async with contextlib.AsyncExitStack() as stack:
            conn = await stack.enter_async_context(self._engine.begin())
            stack.enter_context(anyio.CancelScope(shield=True))
            yield conn

    async def close(self):
        # ruleid: unshielded-teardown-await
        async with self._transaction() as conn:  # entering it is not shielded yet
            # ok: unshielded-teardown-await
            await conn.execute("DELETE FROM leases")


class StdioTransport:
    # disconnect() tells the connection task to stop, then only waits for it; after the wait
    # it resets attributes for a later connect and takes no step: a cut of the wait loses none
    # of its work (fastmcp's StdioTransport.disconnect)
    async def disconnect(self):
        self._stop_event.set()
        await asyncio.wait({self._connect_task})
        self._connect_task = None
        self._session = None

    async def close(self):
        # ok: unshielded-teardown-await
        await self.disconnect()


class KeepAlive:
    # The task is cancelled first; the held await only waits for it, and what follows runs
    # (fastmcp's PingMiddleware exit-stack callback)
    async def stop(self):
        self._ping_task.cancel()
        # ruleid: cancellation-swallowed
        with contextlib.suppress(asyncio.CancelledError):
            # ok: unshielded-teardown-await
            await self._ping_task
        self._active.discard(self._id)


class ShieldedBody:
    # Every await of the `try` body is shielded: no cancel lands there, the handler catches
    # errors alone (inspect_ai's SandboxManager.shutdown)
    async def shutdown(self):
        with anyio.CancelScope(shield=True):
            for cleanup in self._cleanups:
                try:
                    await cleanup()
                # ok: cancellation-swallowed
                except BaseException as error:
                    logger.warning("cleanup failed: %s", error)


class RequestStreams:
    # The ends of anyio memory object streams, kept per request in a dict of (send, receive)
    # tuples: their aclose() never checkpoints, so the helper that closes them never suspends
    # and a cancelled scope cannot cut the teardown there (mcp's StreamableHTTPServerTransport)
    def __init__(self):
        self._streams: dict[str, tuple[MemoryObjectSendStream[bytes], MemoryObjectReceiveStream[bytes]]] = {}

    async def _drop_streams(self, request_id):
        await self._streams[request_id][0].aclose()
        # ok: skippable-teardown-step
        await self._streams[request_id][1].aclose()

    async def close(self):
        for request_id in list(self._streams):
            # ok: unshielded-teardown-await
            await self._drop_streams(request_id)
        # ok: skippable-teardown-step
        self._server_process.kill()

    # A function local to a method sees the method's `self`: its `self._drop_streams()` is the
    # class's helper, which never suspends (mcp's standalone SSE writer, a task the GET handler
    # starts)
    async def serve_events(self, events, task_group):
        async def writer():
            try:
                async for event in events:
                    await self._send(event)
            finally:
                # ok: unshielded-teardown-await
                await self._drop_streams("GET")
                # ok: skippable-teardown-step
                self._server_process.kill()

        task_group.start_soon(writer)
