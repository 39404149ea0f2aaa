# Annotated examples for unshielded-teardown-await: callbacks pushed onto the exit stack of an
# `async with` block are awaited when the block exits, in teardown, as a `finally:` would await
# them. A cancel at a later await of the block runs that exit in the cancelled scope.
from contextlib import AsyncExitStack

import anyio


class Listener:
    async def listen(self, factory, channel, callback):
        async with AsyncExitStack() as stack:
            conn = await factory()
            # ruleid: unshielded-teardown-await
            stack.push_async_callback(conn.close)
            await conn.add_listener(channel, callback)
            # ruleid: unshielded-teardown-await
            stack.push_async_callback(conn.remove_listener, channel, callback)
            await conn.serve()


class ShieldedCallbacks:
    # the fix: the pushed callbacks are project functions whose bodies are shielded
    async def listen(self, factory, channel, callback):
        async def close_connection():
            with anyio.move_on_after(3, shield=True):
                # ok: unshielded-teardown-await
                await conn.close()

        async with AsyncExitStack() as stack:
            conn = await factory()
            # ok: unshielded-teardown-await
            stack.push_async_callback(close_connection)
            await conn.serve()


class ShieldedStack:
    async def listen(self, factory):
        with anyio.CancelScope(shield=True):
            async with AsyncExitStack() as stack:
                conn = await factory()
                # ok: unshielded-teardown-await
                stack.push_async_callback(conn.close)
                await conn.ping()


class NothingAfterThePush:
    async def open(self, factory):
        async with AsyncExitStack() as stack:
            conn = await factory()
            # ok: unshielded-teardown-await
            stack.push_async_callback(conn.close)
            conn.ready = True


class AcloseMustClose:
    async def read(self, source):
        async with AsyncExitStack() as stack:
            iterator = source.stream()
            # ok: unshielded-teardown-await
            stack.push_async_callback(iterator.aclose)
            await iterator.read()
