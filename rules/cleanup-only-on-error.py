# Annotated examples for GATE105 cleanup-only-on-error. Each marker applies to the next line.
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
