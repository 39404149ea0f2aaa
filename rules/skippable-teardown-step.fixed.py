# Annotated examples for GATE100 skippable-teardown-step (and the other GATE1xx findings that the
# same code draws). Each marker applies to the next code line.
import asyncio
import logging
import signal

logger = logging.getLogger(__name__)


class NoGuard:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            self._refresh_tool_versions()
            interrupt: BaseException | None = None
            try:
                await self._run_post_commands()
            except BaseException as error:
                interrupt = interrupt or error
            try:
                # ruleid: skippable-teardown-step
                # ruleid: unguarded-cleanup-await
                await self._cleanup()
            except BaseException as error:
                interrupt = interrupt or error
            # ruleid: skippable-teardown-step
            self._finalize_result()
            if interrupt is not None:
                raise interrupt


class GuardOnFirstAwaitOnly:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            interrupt = None
            try:
                await self._run_post_commands()
            except asyncio.CancelledError as error:
                interrupt = error
            try:
                # ruleid: unguarded-cleanup-await
                await self._cleanup()
            except BaseException as exc:
                interrupt = interrupt or exc
            # ruleid: skippable-teardown-step
            self._finalize_result()
            if interrupt is not None:
                raise interrupt


class HoldAndReraise:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            interrupt = None
            try:
                await self._run_post_commands()
            except asyncio.CancelledError as error:
                interrupt = error
            try:
                # ok: unguarded-cleanup-await
                await self._cleanup()
            except asyncio.CancelledError as error:
                interrupt = interrupt or error
            # ok: skippable-teardown-step
            self._finalize_result()
            if interrupt is not None:
                raise interrupt


class NestedFinallyChain:
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


class ChainTooShort:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            try:
                await self._run_post_commands()
            finally:
                try:
                    # ruleid: unguarded-cleanup-await
                    await self._cleanup()
                except BaseException as error:
                    interrupt = interrupt or error
                # ruleid: skippable-teardown-step
                self._finalize_result()
            if interrupt is not None:
                raise interrupt


class AsyncWithAndForInFinally:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            try:
                async with self.lock:
                    self.flag = False
            except BaseException as error:
                interrupt = interrupt or error
            # ruleid: skippable-teardown-step
            self.write_result()
            if interrupt is not None:
                raise interrupt

    async def drain(self):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            try:
                async for item in self.pending():
                    self.log(item)
            except BaseException as error:
                interrupt = interrupt or error
            # ruleid: skippable-teardown-step
            self.save_state()
            if interrupt is not None:
                raise interrupt


class ThreadLock:
    # Thread safety for sync code, a no-op under `async with` (httpcore's ThreadLock): entering
    # it never suspends, so a cancel cannot land there.
    async def __aenter__(self):
        pass

    async def __aexit__(self, *exc_info):
        pass


class AsyncWithThatNeverSuspends:
    def __init__(self):
        self._thread_lock = ThreadLock()

    async def run(self):
        try:
            await self.evaluate()
        finally:
            async with self._thread_lock:
                # ok: skippable-teardown-step
                self.release_slot()
            async with ThreadLock():
                # ok: skippable-teardown-step
                self.release_slot()
            # entering a deadline only schedules a callback
            async with asyncio.timeout(5):
                # ok: skippable-teardown-step
                self.write_result()


class CancellationHandler:
    async def run(self):
        try:
            await self.evaluate()
        except asyncio.CancelledError:
            interrupt: BaseException | None = None
            try:
                await self.notify()
            except BaseException as error:
                interrupt = interrupt or error
            # ruleid: skippable-teardown-step
            self.persist_partial()
            if interrupt is not None:
                raise interrupt
            raise


class Resource:
    async def __aexit__(self, *exc_info):
        interrupt: BaseException | None = None
        try:
            # ruleid: unguarded-cleanup-await
            await self.flush_buffers()
        except BaseException as error:
            interrupt = interrupt or error
        # ruleid: skippable-teardown-step
        self.release_lock()
        if interrupt is not None:
            raise interrupt


class LoopCarried:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            for connection in self.connections:
                try:
                    # ruleid: skippable-teardown-step
                    # ruleid: unguarded-cleanup-await
                    await connection.close()
                except BaseException as error:
                    interrupt = interrupt or error
            if interrupt is not None:
                raise interrupt


class ExclusiveBranches:
    async def run(self, failed):
        try:
            await self.evaluate()
        finally:
            if failed:
                await self.report_failure()
            else:
                # ok: skippable-teardown-step
                self.write_result()


class NestedDefInFinally:
    async def run(self):
        try:
            await self.evaluate()
        finally:

            async def later():
                await self.notify()
                self.write_result()

            self.schedule(later)
            # ok: skippable-teardown-step
            self.write_result()


class AwaitedHelper:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            # ruleid: unguarded-cleanup-await
            await self._teardown()

    async def _teardown(self):
        interrupt: BaseException | None = None
        try:
            await self.notify()
        except BaseException as error:
            interrupt = interrupt or error
        # ruleid: skippable-teardown-step
        self.remove_temp_dir()
        if interrupt is not None:
            raise interrupt


class MarkedCritical:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            try:
                await self.notify()
            except BaseException as error:
                interrupt = interrupt or error
            # ruleid: skippable-teardown-step
            self.rows.append(self.result)  # gate: critical
            if interrupt is not None:
                raise interrupt


class StepsOnTheInterruptsOwnPath:
    # Found on real code: the handler the cancel lands in, and the finally of the same try, run
    # because of the interrupt; only what comes after the try is skipped.
    async def run(self, proc):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            try:
                try:
                    await proc.wait()
                except BaseException:
                    # ok: skippable-teardown-step
                    proc.kill()
                    raise
                finally:
                    # ok: skippable-teardown-step
                    release(proc)
            except BaseException as error:
                interrupt = interrupt or error
            # ruleid: skippable-teardown-step
            self.write_result()
            if interrupt is not None:
                raise interrupt


class InflectedAndCancelledSteps:
    async def run(self, tasks):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            for task in tasks:
                # ruleid: skippable-teardown-step
                task.cancel()
                try:
                    await task
                except BaseException as error:
                    interrupt = interrupt or error
            # ruleid: skippable-teardown-step
            self.mark_stopped()
            # ok: skippable-teardown-step
            self.is_stopped()
            if interrupt is not None:
                raise interrupt


class StepsWhoseFailureIsDropped:
    # A step that is all a `try` runs whose `except Exception:` only passes or logs at debug
    # level is one the code lets fail unnoticed: the findings about losing it are warnings.
    async def run(self, transports):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            for transport in transports:
                try:
                    # ruleid: skippable-teardown-step
                    # ruleid: unguarded-cleanup-await
                    await transport.terminate()
                # ruleid: guard-misses-cancellation
                except Exception:
                    logger.debug("could not terminate %s", transport)
                except BaseException as error:
                    interrupt = interrupt or error
            if interrupt is not None:
                raise interrupt


class TeardownMethodIsARegion:
    # An async teardown method (aclose, close, shutdown, stop, cleanup, ...) is teardown as a
    # whole: a cancel at an earlier await skips the rest.
    async def cleanup(self):
        interrupt: BaseException | None = None
        for site in list(self._sites):
            try:
                # ruleid: skippable-teardown-step
                # ruleid: unguarded-cleanup-await
                await site.stop()
            except BaseException as error:
                interrupt = interrupt or error
        try:
            # ruleid: skippable-teardown-step
            # ruleid: unguarded-cleanup-await
            await self._server.shutdown()
        except BaseException as error:
            interrupt = interrupt or error
        try:
            # ruleid: skippable-teardown-step
            # ruleid: unguarded-cleanup-await
            await self._release_hooks()
        except BaseException as error:
            interrupt = interrupt or error
        if interrupt is not None:
            raise interrupt


class RegisteredCallback:
    # A function registered to run at teardown is teardown as a whole.
    async def start(self, stack, app):
        stack.push_async_callback(self._disconnect)
        app.on_cleanup.append(self._on_app_cleanup)

    async def _disconnect(self):
        interrupt: BaseException | None = None
        try:
            await self._session.drain()
        except BaseException as error:
            interrupt = interrupt or error
        # ruleid: skippable-teardown-step
        self._proc.kill()
        if interrupt is not None:
            raise interrupt

    async def _on_app_cleanup(self):
        interrupt: BaseException | None = None
        try:
            await self._pool.drain()
        except BaseException as error:
            interrupt = interrupt or error
        # ruleid: skippable-teardown-step
        self._pool.release_all()
        if interrupt is not None:
            raise interrupt


class ReadsAndBuffersAreNoSteps:
    # A name led by a verb that reads (scan, find, list, read, ...) asks: its later words are
    # adjectives (`committed`), not a commit to lose.
    async def next_checkpoint(self, root):
        try:
            await self.fire()
        finally:
            await self.settle()
            # ok: unguarded-cleanup-await
            # ok: skippable-teardown-step
            latest = await scan_latest_committed_id(root)
            self.next_id = latest + 1

    # Writing into an in-memory buffer (an ssl.MemoryBIO) keeps no data: it only feeds the TLS
    # object in the same process.
    async def unwrap(self):
        try:
            await self.transport_stream.send(self._write_bio.read())
        finally:
            await self.transport_stream.receive()
            # ok: skippable-teardown-step
            self._read_bio.write_eof()
            # ok: skippable-teardown-step
            self._write_bio.write_eof()


class BranchesThatReturn:
    # A branch that ends in `return` leaves the region: an interrupt there cannot skip what
    # comes after the `if`, which that pass never reaches anyway.
    async def shutdown(self, func, timeout):
        if timeout is None:
            await func()
            return
        handle = self.loop.call_later(timeout, self.cancel)
        try:
            await func()
        finally:
            # ok: skippable-teardown-step
            handle.cancel()


class HoldsThroughItsHelpers:
    # `_settle` runs the work as a task and keeps waiting on it while it records the cancel;
    # `_restore` only awaits `_settle`: a cancel lands only where it is held, so the steps
    # after `await self._restore()` run, and the caller re-raises the cancel it was told of
    async def _settle(self, work):
        task = asyncio.ensure_future(work)
        cancelled = False
        while not task.done():
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                cancelled = True
        return cancelled

    async def _restore(self, mounts):
        return await self._settle(self.remount(mounts))

    async def shutdown(self, mounts):
        try:
            await self.run_commands()
        finally:
            cancelled = await self._restore(mounts)
            # ok: skippable-teardown-step
            self.delete_sandbox()
            if cancelled:
                raise asyncio.CancelledError()


class SkippedOnPurposeWhenCancelled:
    # Found on real code (pydantic-ai): the finally re-raises a pending cancel before it
    # finalizes, so the code itself skips the step whenever a cancel is pending; a cancel at the
    # hook above skips it the same way. `raise_if_cancelling()` is no step (it cancels nothing).
    async def run(self, result):
        try:
            await self.evaluate()
        finally:
            await self.after_run(result)
            raise_if_cancelling()
            # ok: skippable-teardown-step
            self.finalize(result)

    async def run_checked(self, result):
        try:
            await self.evaluate()
        finally:
            await self.after_run(result)
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise asyncio.CancelledError
            # ok: skippable-teardown-step
            self.finalize(result)

    async def run_sometimes(self, result):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            try:
                await self.after_run(result)
            except BaseException as error:
                interrupt = interrupt or error
            if self.strict:
                raise_if_cancelling()
            # ruleid: skippable-teardown-step
            self.finalize(result)
            if interrupt is not None:
                raise interrupt


def raise_if_cancelling():
    task = asyncio.current_task()
    if task is not None and task.cancelling():
        raise asyncio.CancelledError


class QuietStream:
    async def detach(self):
        self._response = None  # nothing awaited: a cancel cannot land in it


class EventMonitor:
    # stop() awaits a call that never suspends, then cancels its task and awaits it inside
    # `except CancelledError: pass`: the only interrupt it can take is held, so its caller's
    # later steps run (aiodocker's DockerEvents.stop, awaited from Docker.close)
    def __init__(self):
        self._stream = QuietStream()
        self._task = None

    async def stop(self):
        await self._stream.detach()
        self._task.cancel()
        try:
            await self._task
        # ruleid: cancellation-swallowed
        except asyncio.CancelledError:
            pass


class DockerClient:
    def __init__(self):
        self.events = EventMonitor()

    async def close(self):
        # ok: unguarded-cleanup-await
        await self.events.stop()
        # ok: skippable-teardown-step
        self.session.close()


class ListeningSite:
    async def stop(self):
        self._server.close()  # an async method that never suspends


class RemoteSite:
    async def stop(self):
        await self._client.post("/sites/stop")


class SiteRunner:
    # What a loop binds to each item of a container annotated with one class is that class:
    # `site.stop()` is `ListeningSite.stop`, which never suspends, so no cancel lands in the
    # first loop (aiohttp's BaseRunner.cleanup); a `RemoteSite` can take one
    def __init__(self):
        self._sites: list[ListeningSite] = []
        self._remotes: dict[str, RemoteSite] = {}

    async def cleanup(self):
        for site in list(self._sites):
            # ok: unguarded-cleanup-await
            await site.stop()
        interrupt: BaseException | None = None
        for _name, remote in self._remotes.items():
            try:
                # ruleid: unguarded-cleanup-await
                # ruleid: skippable-teardown-step
                await remote.stop()
            except BaseException as error:
                interrupt = interrupt or error
        # ruleid: skippable-teardown-step
        self._save_state()
        if interrupt is not None:
            raise interrupt



class JobStore:
    # A call whose result is called on in turn builds a value (`table.delete().where(...)`
    # builds a SQL statement), and what a `raise` raises is an exception being made: neither
    # takes a step (apscheduler's SQLAlchemyDataStore, websockets' legacy protocol)
    async def _release_job(self, conn, job_id):
        interrupt: BaseException | None = None
        try:
            await conn.execute(self._results.insert().values(job_id=job_id))
        except BaseException as error:
            interrupt = interrupt or error
        # ok: skippable-teardown-step
        delete = self._jobs.delete().where(self._jobs.c.id == job_id)
        if self._closing:
            if interrupt is not None:
                raise interrupt
            # ok: skippable-teardown-step
            raise self.connection_closed_exc()
        try:
            await conn.execute(delete)
        except BaseException as error:
            interrupt = interrupt or error
        # ruleid: skippable-teardown-step
        conn.commit()
        if interrupt is not None:
            raise interrupt

    async def close(self):
        # ruleid: unguarded-cleanup-await
        await self._release_job(self._conn, self._current)


def install_gateway_handlers(loop, stopping):
    for signum in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(signum, stopping.set)


def run_gateway(gateway):
    # asyncio.run's main coroutine routes Ctrl-C to an event of its own: nothing cancels its
    # task, so no interrupt can skip a step of its finally (nanobot's gateway run())
    async def run():
        stopping = asyncio.Event()
        install_gateway_handlers(asyncio.get_running_loop(), stopping)
        try:
            await stopping.wait()
        finally:
            # ok: unguarded-cleanup-await
            await gateway.stop_channels()
            # ok: skippable-teardown-step
            gateway.flush_sessions()

    asyncio.run(run())


class WebhookServer:
    # A `__slots__` entry declares the lock and takes nothing: only shutdown() takes it, so a
    # cancel while waiting for it skips nothing another shutdown() is not doing
    # (python-telegram-bot's WebhookServer)
    __slots__ = ("_shutdown_lock", "_http_server")

    def __init__(self):
        self._shutdown_lock = asyncio.Lock()

    async def shutdown(self):
        async with self._shutdown_lock:
            # ok: skippable-teardown-step
            self._http_server.terminate()
            # ruleid: unguarded-cleanup-await
            await self._http_server.close_all_connections()


class Pump:
    # judged on real code: awaiting a task known to be done returns at once, so no cancel can
    # land there (pydantic-ai's event stream processor); awaiting one that is not done can
    async def run(self, stream, handler_task):
        try:
            await self.forward(stream)
        finally:
            if handler_task.done():
                await handler_task
            # ok: skippable-teardown-step
            self._save_offsets()

    async def run_waiting(self, stream, handler_task):
        try:
            await self.forward(stream)
        finally:
            interrupt: BaseException | None = None
            if not handler_task.done():
                try:
                    await handler_task
                except BaseException as error:
                    interrupt = interrupt or error
            # ruleid: skippable-teardown-step
            self._save_offsets()
            if interrupt is not None:
                raise interrupt


class BufferedEnd:
    async def aclose(self):
        self._buffer.clear()  # no await: closing never suspends


class make_pipe(tuple[BufferedEnd, BufferedEnd]):  # noqa: N801 - named like the factory it is
    # A factory whose return annotation is a tuple of classes: each name `a, b = make_pipe()`
    # binds holds its place's class (mcp's create_context_streams)
    def __new__(cls) -> tuple[BufferedEnd, BufferedEnd]:
        return (BufferedEnd(), BufferedEnd())


async def relay(handler):
    writer, reader = make_pipe()
    try:
        await handler(reader)
    finally:
        await writer.aclose()  # never suspends: nothing after it can be skipped
        # ok: skippable-teardown-step
        await reader.aclose()
