# Annotated examples for GATE105 cleanup-only-on-error. Each marker applies to the next line.
import abc
import asyncio
import logging

log = logging.getLogger(__name__)


async def fetch(pool, url):
    conn = await pool.acquire()
    try:
        return await conn.get(url)
    except Exception:
        # ruleid: cleanup-only-on-error
        await pool.discard(conn)
        raise


async def fetch_all_exits(pool, url):
    conn = await pool.acquire()
    try:
        return await conn.get(url)
    except BaseException:
        # ok: cleanup-only-on-error
        pool.discard_nowait(conn)
        raise


async def give_back_and_reraise(queue):
    # a handler that cleans up and re-raises, handing back what the function acquired
    holder = await queue.get()
    try:
        proxy = await holder.acquire()
    except Exception:
        # ruleid: cleanup-only-on-error
        queue.put_nowait(holder)
        raise
    return proxy


async def reports_the_error(call, api):
    # an error handler that reports the error is not cleanup
    try:
        return await api.generate()
    except Exception as error:
        # ok: cleanup-only-on-error
        call.set_error(error)
        # ok: cleanup-only-on-error
        call.write_error_log(error)
        raise


async def timed_out(process, limit):
    # found on real code: the timeout kills the process, a cancel leaves it running
    try:
        return await asyncio.wait_for(process.communicate(), timeout=limit)
    except asyncio.TimeoutError:
        # ruleid: cleanup-only-on-error
        process.kill()
        raise


async def logging_only(conn):
    try:
        return await conn.get()
    except Exception:
        # ok: cleanup-only-on-error
        log.exception("get failed")
        raise


async def covered_by_finally(pool, conn):
    try:
        try:
            return await conn.get()
        except Exception:
            # ok: cleanup-only-on-error
            await pool.discard(conn)
            raise
    finally:
        # ruleid: unguarded-cleanup-await
        await pool.discard(conn)


async def cancel_has_its_own_handler(pool, conn):
    try:
        return await conn.get()
    except asyncio.CancelledError:
        conn.close_now()
        raise
    except Exception:
        # ok: cleanup-only-on-error
        await pool.discard(conn)
        raise


async def nothing_to_interrupt(pool, conn):
    try:
        value = conn.parse()
    except Exception:
        # ok: cleanup-only-on-error
        await pool.discard(conn)
        raise
    return value


class Waiter:
    # found on real code (a connection pool's waiter): the pool reads `error` to learn that the
    # waiter left; a timeout records it, a cancel abandons the wait just the same and does not
    async def wait(self, timeout):
        try:
            await asyncio.wait_for(self._ready.wait(), timeout)
        except asyncio.TimeoutError:
            # ruleid: cleanup-only-on-error
            self.error = TimeoutError(f"no connection after {timeout} s")

    async def wait_fixed(self, timeout):
        try:
            await asyncio.wait_for(self._ready.wait(), timeout)
        except asyncio.TimeoutError:
            # ok: cleanup-only-on-error
            self.error = TimeoutError(f"no connection after {timeout} s")
        except BaseException as error:
            self.error = error


async def check_loop(pool):
    # found on real code: a connection that fails its check is put back and the loop tries the
    # next one; a cancel during the check leaves it checked out for good
    while True:
        conn = await pool.get_unchecked()
        try:
            await pool.check(conn)
        except Exception:
            # ruleid: cleanup-only-on-error
            await pool.put_back(conn)
        else:
            return conn


async def check_loop_other_error(pool):
    # a handler for one other error that does not re-raise is that error's own branch
    while True:
        conn = await pool.get_unchecked()
        try:
            await pool.check(conn)
        except ConnectionError:
            # ok: cleanup-only-on-error
            await pool.put_back(conn)
        else:
            return conn


class Connection:
    # found on real code: a graceful close that fails aborts the transport and re-raises; a
    # cancel during the close skips the abort, leaving the socket to the server open
    async def close(self):
        try:
            # ruleid: unguarded-cleanup-await
            await self._protocol.close()
        except Exception:
            # ruleid: cleanup-only-on-error
            self._abort()
            raise

    async def send_fragments(self, fragments):
        try:
            for fragment in fragments:
                await self._write_frame(fragment)
        except (Exception, asyncio.CancelledError):
            # ok: cleanup-only-on-error
            self._fail_connection(1011)
            raise

    async def request(self, payload):
        # a handler that hands the error to a method reports it, and one that raises another
        # error translates it: neither undoes anything
        try:
            return await self._protocol.request(payload)
        except Exception as error:
            # ok: cleanup-only-on-error
            self._remember(error)
            raise
        except TimeoutError:
            # ok: cleanup-only-on-error
            self._count_timeout()
            raise RuntimeError("timed out") from None


class Manager:
    # judged on real code: a handler that hands on what it made of the error reports it (an
    # error event built from it, a logging method of its own), and an attribute set to the
    # error records what failed; a cancel is no failure, so none of them is cleanup
    async def handle(self, ctx, start):
        try:
            await self._next_speaker(ctx)
        except Exception as e:
            error = RemoteError.from_exception(e)
            # ok: cleanup-only-on-error
            await self._signal_termination_with_error(error)
            raise

    async def call(self, ctx, start):
        try:
            return await self._call_next(ctx)
        except Exception as e:
            # ok: cleanup-only-on-error
            self._log_message(self._error_message(ctx, start, e), logging.ERROR)
            # ok: cleanup-only-on-error
            self.log("error", "call failed")
            raise

    async def connect(self, server):
        try:
            await asyncio.wait_for(self._open(server), 5)
        except (OSError, asyncio.TimeoutError) as e:
            # ok: cleanup-only-on-error
            self._err = e
            raise

    async def enter(self, context):
        # an exit handed the error is still an exit: the context stays entered on a cancel
        try:
            await self._start(context)
        except Exception as e:
            # ruleid: cleanup-only-on-error
            await context.__aexit__(type(e), e, e.__traceback__)
            raise


class RemoteError(Exception):
    @classmethod
    def from_exception(cls, error):
        return cls(str(error))


async def warm_worker(worker, timeout):
    # judged on real code: a local object's flag set on a timeout is the timeout's own business
    try:
        await asyncio.wait_for(worker.run(), timeout)
    except asyncio.TimeoutError:
        # ok: cleanup-only-on-error
        worker.started = False
        return None


def await_only(coroutine):
    """A greenlet bridge as sqlalchemy's asyncio adaptation has it: runs `coroutine` to its end
    from sync code, suspending the task that drives the greenlet."""
    return coroutine


class AdaptedConnection:
    # a sync method of a greenlet-bridged driver suspends its task in `await_only()`: a cancel
    # of that task lands there, and a handler without CancelledError never runs
    def terminate(self):
        try:
            await_only(self._connection.close(timeout=2))
        except (asyncio.TimeoutError, OSError):
            # ruleid: cleanup-only-on-error
            self._connection.terminate()

    def stop_waiting(self, future):
        # the bridge is no `wait_for(future)`: nothing but the handler cancels the future
        try:
            await_only(self._connection.wait_for_reply(future))
        except asyncio.TimeoutError:
            # ruleid: cleanup-only-on-error
            future.cancel()

    def terminate_on_cancel_too(self):
        try:
            await_only(self._connection.close(timeout=2))
        except (asyncio.TimeoutError, OSError, asyncio.CancelledError):
            # ok: cleanup-only-on-error
            self._connection.terminate()

    def close(self):
        # no bridge, nothing suspends: the handler is the error's own business
        try:
            self._connection.close_nowait()
        except OSError:
            # ok: cleanup-only-on-error
            self._connection.terminate()


class Cursor:
    async def execute(self, connection, query):
        # judged on real code (sqlalchemy's asyncpg cursor): an awaited value stored on `self`
        # is not something the handler gives back when it hands the error to a method of self
        try:
            self._rows = await connection.fetch(query)
        except Exception as error:
            # ok: cleanup-only-on-error
            self._handle_exception(error)


async def watch_clients(lease, stopping, interval):
    # judged on real code (nanobot's gateway): the timeout is the poll tick of a watcher, and
    # a call whose answer decides a branch asks rather than cleans up
    while not stopping.is_set():
        try:
            await asyncio.wait_for(stopping.wait(), timeout=interval)
        except TimeoutError:
            # ok: cleanup-only-on-error
            if lease.begin_orphan_shutdown():
                stopping.set()
                return True
    return False


async def reply_with_fallback(client, chat_id, media):
    # judged on real code (nanobot's weixin channel): a handler that sends a fallback reply with
    # a token the function refreshed uses the token as the normal path does; it gives nothing back
    token = await client.refresh_token(chat_id)
    try:
        await client.send_media(chat_id, media, token)
    except Exception:
        # ok: cleanup-only-on-error
        await client.send_text(chat_id, "[failed to send the file]", token)
    await client.send_text(chat_id, "done", token)


async def stop_process(process):
    # judged on real code (nanobot's folder picker, inspect's bash session): the kill in the
    # handler escalates the terminate already sent; a cancel during the grace wait skips only
    # the escalation, a warning (see the severity test), still reported
    process.terminate()
    try:
        await asyncio.wait_for(process.wait(), timeout=2)
    except TimeoutError:
        # ruleid: cleanup-only-on-error
        process.kill()


async def interrupt(session, errors):
    # a call handed only the caught error (and constants) records, scrubs or translates that
    # error: nothing the `try` acquired is given back
    try:
        await session.cancel_response()
    except Exception as exc:
        # ok: cleanup-only-on-error
        errors.append(("cancel_response", exc))
    try:
        await session.mount()
    except Exception as exc:
        # ok: cleanup-only-on-error
        discard_source_exception(exc)
        raise RuntimeError("mount failed") from None


async def fetch_aborting(pool, url):
    # handed the error too, but a release of what the function acquired: still cleanup
    conn = await pool.acquire()
    try:
        return await conn.get(url)
    except Exception as exc:
        # ruleid: cleanup-only-on-error
        conn.terminate(exc)
        raise


class Updater:
    # judged on real code (python-telegram-bot): shutdown() returns unless initialize() has
    # finished, and initialize() sets that flag only once its work is done, so a cancel inside
    # it leaves nothing for the handler to undo
    async def __aenter__(self):
        try:
            await self.initialize()
        except Exception:
            # ok: cleanup-only-on-error
            await self.shutdown()
            raise
        return self

    async def initialize(self):
        if self._initialized:
            return
        await self.bot.initialize()
        self._initialized = True

    async def shutdown(self):
        if not self._initialized:
            return
        self.bot.close_pools()
        self._initialized = False


class Bot:
    # the flag is set before the last await: a cancel at get_me() leaves it set, and the
    # handler's shutdown() would have had work to do
    async def __aenter__(self):
        try:
            await self.initialize()
        except Exception:
            # ruleid: cleanup-only-on-error
            await self.shutdown()
            raise
        return self

    async def initialize(self):
        if self._initialized:
            return
        await self.request.initialize()
        self._initialized = True
        await self.get_me()

    async def shutdown(self):
        if not self._initialized:
            return
        self.request.close_pools()
        self._initialized = False


class BaseRequest(abc.ABC):
    # judged on real code (python-telegram-bot): an extension point is run through the
    # implementations the project ships; HTTPXRequest.initialize() never suspends, so no cancel
    # lands in the `try`
    async def __aenter__(self):
        try:
            await self.initialize()
        except Exception:
            # ok: cleanup-only-on-error
            await self.shutdown()
            raise
        return self

    async def __aexit__(self, *exc_info):
        # the shipped shutdown() never suspends: nothing to cut short
        # ok: unguarded-cleanup-await
        await self.shutdown()

    @abc.abstractmethod
    async def initialize(self): ...

    @abc.abstractmethod
    async def shutdown(self): ...


class HTTPXRequest(BaseRequest):
    async def initialize(self):
        if self._client.is_closed:
            self._client = self._build_client()

    async def shutdown(self):
        self._client.close_pools()


class BaseProcessor(abc.ABC):
    # one shipped implementation suspends: the cancel can land in the `try`
    async def __aenter__(self):
        try:
            await self.initialize()
        except Exception:
            # ruleid: cleanup-only-on-error
            await self.shutdown()
            raise
        return self

    @abc.abstractmethod
    async def initialize(self): ...

    @abc.abstractmethod
    async def shutdown(self): ...


class SimpleProcessor(BaseProcessor):
    async def initialize(self):
        pass

    async def shutdown(self):
        pass


class RemoteProcessor(BaseProcessor):
    async def initialize(self):
        await self.connection.open()

    async def shutdown(self):
        self.connection.close_pools()


class SupervisedProcess:
    # `_start()` runs as a task the class keeps and waits on only through `asyncio.shield`
    # and `asyncio.wait`, neither of which passes the waiter's cancel on: no cancel reaches
    # the task, so the handler's cleanup is all the error path needs (livekit's
    # SupervisedProc._start)
    async def start(self):
        self._start_task = asyncio.create_task(self._start())
        await asyncio.shield(self._start_task)

    async def _start(self):
        try:
            self._channel = await open_channel()
        except Exception:
            # ok: cleanup-only-on-error
            await self._sockets.aclose()
            raise

    async def aclose(self):
        if self._start_task is not None and not self._start_task.done():
            await asyncio.wait([self._start_task])


class DeviceClient:
    # A handler that re-raises and sets an attribute of `self` to None forgets what the failed
    # work left half made; a cancel bypasses it and the object keeps claiming it (aioesphomeapi's
    # APIClient: "Already connected" on every later connect)
    async def _execute(self, coro):
        try:
            await coro
        except Exception:
            # ruleid: cleanup-only-on-error
            self._connection = None
            raise

    async def _execute_fixed(self, coro):
        try:
            await coro
        except (Exception, asyncio.CancelledError):
            # ok: cleanup-only-on-error
            self._connection = None
            raise

    async def _retry(self, coro):
        try:
            await coro
        except Exception:
            # ok: cleanup-only-on-error
            self._connection = None  # the error is handled here: no re-raise, no cleanup
            return False
        return True


class ServerManager:
    # The cancel handler re-raises before the bookkeeping the other handlers do on their way
    # out: a server whose connect is cancelled is never recorded as failed, so the caller's
    # cleanup of the failed servers leaves it half open (openai-agents-python's
    # MCPServerManager._attempt_connect, fixed in PR 3919)
    async def _attempt_connect(self, server):
        try:
            await server.connect()
        except asyncio.CancelledError as exc:
            if not self.suppress_cancelled_error:
                raise
            # ruleid: cleanup-only-on-error
            self._record_failure(server, exc)
        except BaseException as exc:
            self._record_failure(server, exc)
            raise

    async def _attempt_connect_fixed(self, server):
        try:
            await server.connect()
        except asyncio.CancelledError as exc:
            # ok: cleanup-only-on-error
            self._record_failure(server, exc)
            if not self.suppress_cancelled_error:
                raise
        except BaseException as exc:
            self._record_failure(server, exc)
            raise

    async def _attempt_quietly(self, server):
        try:
            await server.connect()
        except asyncio.CancelledError as exc:
            if not self.suppress_cancelled_error:
                raise
            # ok: cleanup-only-on-error
            self._record_failure(server, exc)  # no other handler records before re-raising
        except Exception as exc:
            self._record_failure(server, exc)
            return None


class PingingClient:
    # The ping's send keeps every cancel (its flush ends in `except CancelledError: pass`), and
    # a cancel of `wait_for(future, ...)` cancels the future itself: the handler's
    # `future.cancel()` is needed only on the timeout (nats' Client.flush)
    async def _flush_pending(self):
        try:
            await self._flush_queue.put(None)
        # ruleid: cancellation-swallowed-outside-teardown
        except asyncio.CancelledError:
            pass

    async def _send_ping(self, future):
        self._pongs.append(future)
        await self._flush_pending()

    async def flush(self, timeout):
        future = asyncio.Future()
        try:
            await self._send_ping(future)
            await asyncio.wait_for(future, timeout)
        except asyncio.TimeoutError:
            # ok: cleanup-only-on-error
            future.cancel()
            raise


class KeptThenRaised:
    # A helper that keeps the cancel until its write is done and then raises it again lets
    # the cancel out: the handler that cleans up after a failed write is bypassed when a cancel
    # and a failure come together (openai-agents' _await_mutation)
    async def _await_mutation(self, task):
        cancellation = None
        while not task.done():
            try:
                await asyncio.wait({task})
            except asyncio.CancelledError as exc:
                cancellation = exc
        if cancellation is not None:
            raise cancellation from None
        return task.result()

    async def add(self, task):
        try:
            await self._await_mutation(task)
        except Exception:
            # ruleid: cleanup-only-on-error
            await self._cleanup_orphaned_messages()
            raise


class QueryConnection:
    # Ctrl-C under asyncio reaches the awaiting task as a cancel, not as KeyboardInterrupt:
    # the handler that cancels the query on the server never runs (psycopg #543)
    async def wait(self, gen):
        try:
            return await self._wait_async(gen)
        except KeyboardInterrupt:
            # ruleid: cleanup-only-on-error
            self.pgconn.cancel_query()
            raise

    async def wait_fixed(self, gen):
        try:
            return await self._wait_async(gen)
        except (KeyboardInterrupt, asyncio.CancelledError):
            # ok: cleanup-only-on-error
            self.pgconn.cancel_query()
            raise


async def run_case(lifecycle, case, task):
    # found on real code (pydantic-ai #5322): the teardown follows a `try` that absorbs every
    # error so that it always runs; a cancel during setup or the task skips it
    lc = lifecycle(case)
    try:
        await lc.setup()
        result = await task(case)
    except Exception as exc:
        result = exc
    if lc is not None:
        # ruleid: cleanup-only-on-error
        await lc.teardown(result)
    return result


async def run_case_fixed(lifecycle, case, task):
    lc = lifecycle(case)
    result = None
    try:
        await lc.setup()
        result = await task(case)
    except Exception as exc:
        result = exc
    finally:
        # ok: cleanup-only-on-error
        # ruleid: unguarded-cleanup-await
        await lc.teardown(result)
    return result


async def reraised(client, container):
    # the handler re-raises: an error skips the stop as a cancel does, by design
    try:
        await client.post("/stop")
    except Exception:
        log_failure()
        raise
    # ok: cleanup-only-on-error
    container.stop()


async def next_step(self, rpc):
    # what follows the `try` was not there before it: the function's next step, not its cleanup
    try:
        await rpc()
    except Exception:
        log_failure()
    if self._timer:
        # ok: cleanup-only-on-error
        self._timer.cancel()


async def error_branch_after(client, container, hook):
    try:
        await client.post("/stop")
    except Exception:
        log_failure()
    try:
        hook()
    except Exception:
        # ok: cleanup-only-on-error
        container.stop()


def log_failure():
    pass
