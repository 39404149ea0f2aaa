# Annotated examples for GATE107 unprotected-release. Each marker applies to the next line.
import asyncio


async def connect_first(hosts, open_connection):
    # found on real code: connections opened for candidate hosts are closed after the loop; a
    # timeout during a host check leaves every one of them open
    opened = []
    chosen = None
    for host in hosts:
        conn = await open_connection(host)
        opened.append(conn)
        if await conn.is_primary():
            chosen = conn
            break
    # ruleid: unprotected-release
    await asyncio.gather(
        *(c.close() for c in opened if c is not chosen),
        return_exceptions=True,
    )
    return chosen


async def connect_first_fixed(hosts, open_connection):
    opened = []
    chosen = None
    try:
        for host in hosts:
            conn = await open_connection(host)
            opened.append(conn)
            if await conn.is_primary():
                chosen = conn
                break
    finally:
        for conn in opened:
            if conn is not chosen:
                # ok: unprotected-release
                conn.close()
    return chosen


async def query(pool, sql):
    conn = await pool.acquire()
    rows = await conn.fetch(sql)
    # ruleid: unprotected-release
    await pool.release(conn)
    return rows


async def query_with_finally(pool, sql):
    conn = await pool.acquire()
    try:
        return await conn.fetch(sql)
    finally:
        # ok: unprotected-release
        # ruleid: unguarded-cleanup-await
        await pool.release(conn)


async def nothing_in_between(pool):
    conn = await pool.acquire()
    conn.reset()
    # ok: unprotected-release
    await pool.release(conn)


async def handed_over(pool):
    # returned to the caller, who owns it now: nothing to release here
    conn = await pool.acquire()
    await conn.ping()
    return conn


async def not_acquired_here(conn, sql):
    rows = await conn.fetch(sql)
    # ok: unprotected-release
    conn.close()
    return rows


async def read_only_value(client):
    # a value read with an await is no resource: the release acts on something else
    size = await client.size()
    await client.flush()
    # ok: unprotected-release
    client.close()
    return size


async def drain(reader):
    # each item is released in the pass that acquired it: the next pass's await leaks nothing
    while True:
        item = await reader.next()
        if item is None:
            break
        # ok: unprotected-release
        await item.release()


async def cleanup_images(project_factory, build):
    # a plain function handed the value acts on something of it, not on the value itself
    project = await project_factory()
    await build(project)
    # ok: unprotected-release
    cleanup_project_images(project)


async def register(registry, entry):
    # the handlers end by raising: they leave before the release whether or not a cancel lands
    # in their awaits, so those awaits skip nothing the error had not skipped already
    try:
        async with registry.lock:
            pruned = await registry.prune()
            registry.add(entry)
    except Exception:
        await registry.forget(entry)
        raise
    # ok: unprotected-release
    pruned.close()


async def replace_container(containers, name, config):
    # found on real code: what a lookup returns exists apart from the function; deleting it is
    # the function's own work, and a cancel before the delete leaves nothing behind that the
    # function made
    container = await containers.get(name)
    await container.stop()
    # ok: unprotected-release
    await container.delete()
    return await containers.create(config, name=name)


async def read_logs(session, url):
    # a looked-up value the function must give back is still a release: a response holds a
    # pooled connection until it is released
    response = await session.get(url)
    body = await response.read()
    # ruleid: unprotected-release
    response.release()
    return body


class ProcessPool:
    # A count the function raises and takes back with an await in between: a cancel at the
    # await leaves it raised for good (livekit's ProcPool.launch_job: the pool then spawns a
    # process too many for every cancelled launch)
    async def launch_job(self, job):
        self._waiting += 1
        proc = await self._idle.get()
        # ruleid: unprotected-release
        self._waiting -= 1
        await proc.launch(job)

    async def launch_job_fixed(self, job):
        self._waiting += 1
        try:
            proc = await self._idle.get()
        finally:
            # ok: unprotected-release
            self._waiting -= 1
        await proc.launch(job)

    async def count_sends(self, message):
        self._sending += 1
        self._outbox.append(message)
        # ok: unprotected-release
        self._sending -= 1  # nothing in between can suspend
        await self._flush()


async def follow_redirect(client, url, allowed):
    # judged on real code: the await in the arm that returns leaves the function either way,
    # so it skips no release after the `if`; an await on the way to the release does
    response = await client.get(url)
    if not allowed(response):
        await response.aclose()
        return None
    # ok: unprotected-release
    await response.aclose()
    return response.headers


async def follow_and_log(client, url, log):
    response = await client.get(url)
    if response.is_redirect:
        await log.write(url)
    # ruleid: unprotected-release
    await response.aclose()
    return response.headers


async def chat(connect, session):
    # judged on real code: a cancel at the wait is caught and kept, so the function goes on to
    # the close; an await after the `try` is another matter
    websocket = await connect(session.url)
    try:
        await session.wait_for_either()
    # ruleid: cancellation-swallowed-outside-teardown
    except asyncio.CancelledError:
        pass
    # ok: unprotected-release
    await websocket.close()
    return websocket.close_code


async def chat_and_report(connect, session):
    websocket = await connect(session.url)
    try:
        await session.wait_for_either()
    # ruleid: cancellation-swallowed-outside-teardown
    except asyncio.CancelledError:
        pass
    await session.report()
    # ruleid: unprotected-release
    await websocket.close()
    return websocket.close_code


class SubscriptionIterator:
    # found on real code (nats.py #804): the task that takes the next message is cancelled only
    # on the normal path; a cancel during the wait leaves it running, and the message it then
    # takes off the queue is lost
    async def __anext__(self):
        get_task = asyncio.get_running_loop().create_task(self._queue.get())
        done, _ = await asyncio.wait(
            [get_task, self._unsubscribed], return_when=asyncio.FIRST_COMPLETED
        )
        if get_task in done:
            return get_task.result()
        # ruleid: unprotected-release
        get_task.cancel()
        raise StopAsyncIteration

    async def next_fixed(self):
        get_task = asyncio.create_task(self._queue.get())
        try:
            await asyncio.wait([get_task, self._unsubscribed])
        except BaseException:
            cancel_all(get_task)  # a helper handed the task releases it too
            raise
        if not get_task.done():
            # ok: unprotected-release
            get_task.cancel()
        return get_task


async def waits_for_the_task(queue):
    # wait_for cancels the task it waits for when the wait is cancelled
    task = asyncio.ensure_future(queue.get())
    item = await asyncio.wait_for(task, 5)
    # ok: unprotected-release
    task.cancel()
    return item


async def grouped(group, queue):
    # a task group's task: the group waits for it and cancels it on the way out
    task = group.create_task(queue.get())
    await asyncio.sleep(1)
    # ok: unprotected-release
    task.cancel()


async def kept_then_cancelled(assignment):
    # the cancel the handler keeps reaches the cancel after the `try` as well
    waiter = None
    try:
        while True:
            waiter = asyncio.create_task(assignment.changed.wait())
            await asyncio.wait([assignment.gone, waiter])
            if not waiter.done():
                # ok: unprotected-release
                waiter.cancel()
                waiter = None
    # ruleid: cancellation-swallowed-outside-teardown
    except asyncio.CancelledError:
        pass
    if waiter is not None:
        # ok: unprotected-release
        waiter.cancel()


def cancel_all(*tasks):
    for task in tasks:
        task.cancel()
