# Annotated examples for GATE101 unguarded-cleanup-await.
import abc
import asyncio
import contextlib
import shutil
import typing


class BareShieldEndsTheRegion:
    # The shielded cleanup runs on in its own task, which the caller's cancel does not reach, and
    # nothing after the await is left to skip (asyncpg's Pool.release, redis-py's Pipeline.reset).
    async def run(self):
        try:
            await self.evaluate()
        finally:
            # ok: unguarded-cleanup-await
            await asyncio.shield(self.sandbox.cleanup())

    async def release(self, connection):
        # ok: unguarded-cleanup-await
        return await asyncio.shield(self._release_impl(connection))

    async def reset(self):
        try:
            await self.connection.send_command("UNWATCH")
        except asyncio.CancelledError:
            # ok: unguarded-cleanup-await
            await asyncio.shield(self.connection.disconnect())
            raise
        finally:
            self.watching = False
            if self.connection:
                connection, self.connection = self.connection, None
                # ok: unguarded-cleanup-await
                await asyncio.shield(self.pool.release(connection))


class BareShieldWithMoreAfterIt:
    # The outer await still raises at once: what follows in the region is skipped while the
    # shielded work runs on.
    async def run(self):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            try:
                # ruleid: unguarded-cleanup-await
                await asyncio.shield(self.sandbox.cleanup())
            except BaseException as error:
                interrupt = interrupt or error
            self.finished = True
            if interrupt is not None:
                raise interrupt

    async def close_all(self, sandboxes):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            for sandbox in sandboxes:
                try:
                    # the next sandbox's cleanup is skipped too
                    # ruleid: skippable-teardown-step
                    # ruleid: unguarded-cleanup-await
                    await asyncio.shield(sandbox.cleanup())
                except BaseException as error:
                    interrupt = interrupt or error
            if interrupt is not None:
                raise interrupt


class OnlyStep:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            # ruleid: unguarded-cleanup-await
            await self.upload_logs()


class ThreadWrapper:
    # Work handed to a thread runs to completion even when the awaiting task is cancelled: it is
    # not cut short. The await is still an interrupt point for the steps after it.
    async def run(self, path):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            try:
                # ok: unguarded-cleanup-await
                await asyncio.to_thread(shutil.rmtree, path)
            except BaseException as error:
                interrupt = interrupt or error
            # ruleid: skippable-teardown-step
            self.write_result()
            if interrupt is not None:
                raise interrupt


class Executor:
    async def run(self, loop, path):
        try:
            await self.evaluate()
        finally:
            # ok: unguarded-cleanup-await
            await loop.run_in_executor(None, self.dump_state, path)


class WaitOnTasks:
    # asyncio.wait stops waiting when the awaiting task is cancelled, but never cancels the tasks
    # it waits on: the flush runs on. The await is still an interrupt point for the steps after it.
    async def stop(self):
        interrupt: BaseException | None = None
        try:
            # ok: unguarded-cleanup-await
            await asyncio.wait([asyncio.create_task(self.flush_batches()), self.sender_task])
        except BaseException as error:
            interrupt = interrupt or error
        # ruleid: skippable-teardown-step
        self.write_offsets()
        if interrupt is not None:
            raise interrupt


class WaitFor:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            # ruleid: unguarded-cleanup-await
            await asyncio.wait_for(self.terminate_process(), 5)


class Held:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            interrupt = None
            try:
                # ok: unguarded-cleanup-await
                await self.upload_logs()
            except BaseException as error:
                interrupt = error
            if interrupt is not None:
                raise interrupt


class Suppressed:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            # ruleid: cancellation-swallowed
            try:
                # ok: unguarded-cleanup-await
                await self.upload_logs()
            except asyncio.CancelledError as error:
                interrupt = interrupt or error
            if interrupt is not None:
                raise interrupt


class AcloseIsExempt:
    async def run(self, stream):
        try:
            await self.evaluate()
        finally:
            # ok: unguarded-cleanup-await
            await stream.aclose()


class NotCritical:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            # ok: unguarded-cleanup-await
            await self.notify_listeners()


class ClosedInATaskOnlyWaitedOnShielded:
    # Found on real code (openai-agents' response stream): the close runs as a task kept in an
    # attribute and only ever waited on through asyncio.shield, and nothing cancels it: a
    # waiter's cancel never reaches the task, so its handler's cleanup runs to the end.
    def __init__(self):
        self._close_task: asyncio.Future[None] | None = None

    async def aclose(self):
        if self._close_task is None:
            self._close_task = asyncio.ensure_future(self._finish_close())
        await asyncio.shield(self._close_task)

    async def _finish_close(self):
        try:
            await self._close_stream()
        except BaseException:
            # ok: unguarded-cleanup-await
            await self.release_upload_slot()
            raise


class ClosedInATaskThatIsCancelled:
    # The same task, cancelled when the wait gives up: the cancel reaches the close.
    async def aclose(self):
        self._close_task = asyncio.ensure_future(self._finish_close())
        try:
            await asyncio.shield(self._close_task)
        except asyncio.CancelledError:
            self._close_task.cancel()
            raise

    async def _finish_close(self):
        try:
            await self._close_stream()
        except BaseException:
            # ruleid: unguarded-cleanup-await
            await self.release_upload_slot()
            raise


class ClosedInATaskKeptThroughALocal:
    # The task is made in a local, stored in the attribute and waited on through the local,
    # always shielded (openai-agents' Dependencies.aclose): no waiter's cancel reaches the close.
    async def aclose(self):
        task = self._close_task
        if task is None:
            task = asyncio.create_task(self._finish_close())
            self._close_task = task
        await asyncio.shield(task)

    async def _finish_close(self):
        try:
            await self._close_stream()
        except BaseException:
            # ok: unguarded-cleanup-await
            await self.release_upload_slot()
            raise


class ClosedInATaskCancelledThroughALocal:
    # The same, but the local is cancelled when the wait gives up: the cancel reaches the close.
    async def aclose(self):
        task = self._close_task
        if task is None:
            task = asyncio.create_task(self._finish_close())
            self._close_task = task
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            task.cancel()
            raise

    async def _finish_close(self):
        try:
            await self._close_stream()
        except BaseException:
            # ruleid: unguarded-cleanup-await
            await self.release_upload_slot()
            raise


class Producer:
    # The transaction context is made with the producer's own `self`, so `self._producer` is a
    # Producer, whose commit only waits, shielded, for the sender task to end the transaction:
    # a cancel stops the wait, not the commit (aiokafka's TransactionContext).
    def transaction(self):
        return TransactionContext(self)

    async def commit_transaction(self):
        self.sender.committing_transaction()
        await asyncio.shield(self.sender.transaction_ended())


class TransactionContext:
    def __init__(self, producer):
        self._producer = producer

    async def __aexit__(self, exc_type, exc, tb):
        # ok: unguarded-cleanup-await
        await self._producer.commit_transaction()


class Payload:
    async def close(self):
        self._file = None  # nothing awaited: a cancel cannot land in it


class Response:
    # Inside `if isinstance(self._body, Payload):` the body is a Payload, whose close never
    # suspends: there is nothing to cut short (aiohttp's Response.write_eof).
    async def write_eof(self):
        if isinstance(self._body, Payload):
            try:
                await self._body.write(self._writer)
            finally:
                # ok: unguarded-cleanup-await
                await self._body.close()


class ContainerServer:
    # stop() hands the container cleanup to a thread, which finishes even when the await is
    # cancelled: awaiting it cuts nothing short (autogen's DockerJupyterServer).
    async def stop(self):
        loop = asyncio.get_running_loop()
        await loop.run_in_executor(None, self._remove_container)

    async def __aexit__(self, exc_type, exc, tb):
        # ok: unguarded-cleanup-await
        await self.stop()


class JsonStream:
    def __init__(self, response):
        self._response = response

    async def aclose_stream(self):
        self._response.close()  # nothing awaited: a cancel cannot land in it


class Events:
    # `self._stream` is made by a factory method that returns a JsonStream, whose close never
    # suspends: there is nothing to cut short (aiodocker's DockerEvents).
    def _open(self, response):
        stream = JsonStream(response)
        return stream

    async def run(self, response):
        self._stream = self._open(response)
        try:
            async for event in self._stream:
                await self.dispatch(event)
        finally:
            # ok: unguarded-cleanup-await
            await self._stream.aclose_stream()

    async def replay(self, response):
        stream = self._open(response)  # a local made by the factory method: a JsonStream too
        try:
            await self.dispatch(stream)
        finally:
            # ok: unguarded-cleanup-await
            await stream.aclose_stream()


class ConnectionPool:
    # The callee hands its work to `asyncio.shield(...)`, whose task a cancel of the waiter
    # does not reach: the connection goes back to the pool whatever happens to the caller
    # (asyncpg's Pool.release, awaited from PoolAcquireContext.__aexit__).
    async def release(self, holder, timeout=None):
        holder.mark_released()
        return await asyncio.shield(holder.release(timeout))


class AcquireContext:
    def __init__(self, pool: ConnectionPool):
        self.pool = pool

    async def __aexit__(self, *exc_info):
        holder, self.holder = self.holder, None
        # ok: unguarded-cleanup-await
        await self.pool.release(holder)


class ServerProcess:
    # `__aexit__` only awaits the class's own teardown method, a teardown region by itself:
    # what a cancel cuts in it is reported there, at the step, not again at the delegation
    # (nats.py's Server.__aexit__)
    async def shutdown(self):
        self._process.terminate()
        interrupt: BaseException | None = None
        try:
            # ruleid: unguarded-cleanup-await
            await self._process.kill_tree()
        except BaseException as error:
            interrupt = interrupt or error
        # ruleid: skippable-teardown-step
        self._log.close_file()
        if interrupt is not None:
            raise interrupt

    async def __aexit__(self, *exc_info):
        # ok: unguarded-cleanup-await
        await self.shutdown()


class CloseAlias:
    # A teardown method whose only statement awaits another teardown method of its class (a
    # deprecated alias) delegates: the method it awaits is a region of its own, where the cut is
    # reported (redis-py's Redis.close)
    async def close(self):
        # ok: unguarded-cleanup-await
        await self.aclose()

    async def aclose(self):
        interrupt: BaseException | None = None
        try:
            # ruleid: unguarded-cleanup-await
            await self._server.stop()
        except BaseException as error:
            interrupt = interrupt or error
        # ruleid: skippable-teardown-step
        self._process.kill()
        if interrupt is not None:
            raise interrupt


class PingFlush:
    # The callee's only await that does work goes to a project function that keeps every
    # interrupt landing in it (the swallow is GATE103's business); after it, the callee only
    # waits for the reply: a cancel loses none of its work (nats.py's Client.flush). It is still
    # an interrupt point for the steps after it.
    async def _flush_pending(self):
        interrupt: BaseException | None = None
        try:
            await self._transport.drain()
        # ruleid: cancellation-swallowed
        except asyncio.CancelledError as error:
            interrupt = interrupt or error
        if interrupt is not None:
            raise interrupt

    async def _send_ping(self, future):
        self._transport.write(b"PING\r\n")
        await self._flush_pending()

    async def flush(self):
        future = asyncio.get_running_loop().create_future()
        await self._send_ping(future)
        await asyncio.wait_for(future, 2.0)

    async def run(self):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            try:
                # ok: unguarded-cleanup-await
                await self.flush()
            except BaseException as error:
                interrupt = interrupt or error
            # ruleid: skippable-teardown-step
            self.write_result()
            if interrupt is not None:
                raise interrupt


class Session(abc.ABC):
    # An extension point whose only shipped implementation never suspends: an await of it
    # never suspends, nor does a callee that only awaits it (SWE-ReX's LocalRuntime.close, whose
    # sessions come from a property annotated as a dict of them).
    @abc.abstractmethod
    async def close(self): ...


class ShellSession(Session):
    async def close(self):
        self._shell.close()


class SessionRuntime:
    @property
    def sessions(self) -> dict[str, Session]:
        return self._sessions

    async def close(self):
        for session in self.sessions.values():
            # ok: unguarded-cleanup-await
            await session.close()


class SessionDeployment:
    async def start(self):
        self._runtime = SessionRuntime()

    async def stop(self):
        # ok: unguarded-cleanup-await
        await self._runtime.close()
        # ok: skippable-teardown-step
        self._container.kill()


class ForcedCloseOnCancel:
    # The handler of the cancel around the awaited close closes the response by force before it
    # re-raises: the code ends what the cut step was ending (aiohttp's ClientWebSocketResponse).
    async def close(self):
        try:
            # ok: unguarded-cleanup-await
            await self._writer.close()
        except asyncio.CancelledError:
            self._response.close()
            raise
        self._closed = True

    async def run(self):
        try:
            await self.evaluate()
        finally:
            try:
                # A handler that writes a result does not end what the cleanup was ending.
                # ruleid: unguarded-cleanup-await
                await self.sandbox.cleanup()
            except asyncio.CancelledError:
                self.write_result()
                raise


RateArgs = typing.TypeVar("RateArgs")


class BaseLimiter(abc.ABC, typing.Generic[RateArgs]):
    # A generic extension point: its implementation derives from `BaseLimiter[int]`, and the
    # property that returns it is annotated with a string (python-telegram-bot's
    # BaseRateLimiter and AIORateLimiter); the shipped shutdown never suspends
    @abc.abstractmethod
    async def shutdown(self): ...


class LocalLimiter(BaseLimiter[int]):
    async def shutdown(self):
        self._buckets.clear()


class LimitedBot:
    @property
    def limiter(self) -> "BaseLimiter[RateArgs] | None":
        return self._limiter

    async def shutdown(self):
        if self.limiter:
            # ok: unguarded-cleanup-await
            await self.limiter.shutdown()
        # ok: skippable-teardown-step
        self._session.release()


class BaseSandbox:
    async def stop(self):
        interrupt: BaseException | None = None
        try:
            # ruleid: unguarded-cleanup-await
            await self._persist_snapshot()
        except BaseException as error:
            interrupt = interrupt or error
        # ruleid: skippable-teardown-step
        self._container.kill()
        if interrupt is not None:
            raise interrupt


class GuardedSandbox(BaseSandbox):
    # A teardown method that only awaits a teardown method of its base, or of the object it
    # wraps, after a guard that returns early, delegates: the cut is reported in the method it
    # awaits (openai-agents' BlaxelSandboxSession.stop and SandboxSession.stop)
    async def stop(self):
        if self._closed:
            return
        # ok: unguarded-cleanup-await
        await super().stop()


class WrappedSandbox:
    def __init__(self, inner: BaseSandbox):
        self._inner = inner

    async def stop(self):
        # ok: unguarded-cleanup-await
        await self._inner.stop()

    async def __aexit__(self, *exc_info):
        # ok: unguarded-cleanup-await
        await self.stop()
        return None


class FlaggedDisconnect:
    # A call that passes the flag that skips the callee's only wait never suspends: nothing is
    # cut, nothing after it is skipped (redis-py's `disconnect(nowait=True)`)
    async def disconnect(self, nowait=False):
        self._writer.close()
        if not nowait:
            await self._writer.wait_closed()

    async def send(self, data):
        try:
            await self._writer.drain()
        except BaseException:
            # ok: unguarded-cleanup-await
            await self.disconnect(nowait=True)
            # ok: skippable-teardown-step
            self._pool.release_connection(self)
            raise


class Conversation:
    async def disconnect(self):
        self._stream.close()  # no await: nothing to cut short


class ConversationManager:
    # A loop over a copy of a mapping of tuples binds each place to the class its annotation
    # gives: `conversation` is a Conversation, whose disconnect() never suspends (OpenHands'
    # StandaloneConversationManager._cleanup_stale)
    _detached: dict[str, tuple[Conversation, float]] = {}

    async def _cleanup_stale(self):
        try:
            await asyncio.sleep(60)
        except asyncio.CancelledError:
            items = list(self._detached.items())
            for sid, (conversation, since) in items:
                # ok: unguarded-cleanup-await
                await conversation.disconnect()
            # ok: skippable-teardown-step
            self._runtime.kill()
            raise


class McpSession:
    # What `session = await McpSession.create()` holds is what create's return annotation
    # names; its terminate() keeps a cancel and kills the process on one, so no cancel cuts
    # it short (inspect_ai's MCPServerSession)
    @classmethod
    async def create(cls, params) -> "McpSession":
        return cls(await asyncio.create_subprocess_exec(*params))

    def __init__(self, process):
        self._process = process

    async def terminate(self):
        self._process.terminate()
        try:
            await asyncio.wait_for(self._process.wait(), 30)
        # ruleid: cancellation-swallowed-outside-teardown
        except (asyncio.TimeoutError, asyncio.CancelledError):
            self._process.kill()


async def run_session(params):
    session = await McpSession.create(params)
    try:
        await asyncio.sleep(1)
    finally:
        # ok: unguarded-cleanup-await
        await session.terminate()
