# Annotated examples for GATE108 context-entered-by-hand.
import sys
from contextlib import AsyncExitStack

from anyio import to_thread
from anyio.from_thread import BlockingPortal


class Adapter:
    async def start(self):
        self._portal = BlockingPortal()
        # ruleid: context-entered-by-hand
        await self._portal.__aenter__()
        await to_thread.run_sync(self.original.start)

    async def stop(self):
        await self._portal.__aexit__(None, None, None)


class Server:
    async def __aenter__(self):
        self._stack = AsyncExitStack()
        # ruleid: context-entered-by-hand
        await self._stack.__aenter__()
        self._session = await self._stack.enter_async_context(self._client())
        await self._session.initialize()
        return self


class ExitsOnFailure:
    # the fix: the portal is exited when what follows fails or is cancelled
    async def start(self):
        self._portal = BlockingPortal()
        # ok: context-entered-by-hand
        await self._portal.__aenter__()
        try:
            await to_thread.run_sync(self.original.start)
        except BaseException:
            await self._portal.__aexit__(*sys.exc_info())
            raise


class ExitsThroughAnAlias:
    async def run(self, span):
        # ok: context-entered-by-hand
        await span.__aenter__()
        cleanup = span
        try:
            await self.work()
        finally:
            await cleanup.__aexit__(None, None, None)
        await self.report()


class Delegates:
    # nothing after the enter can be interrupted: the caller's `async with` owns the exit
    async def __aenter__(self):
        # ok: context-entered-by-hand
        await self.wrapped.__aenter__()
        return self


class HandedToTheEnclosingFunction:
    async def connect(self, open_socket):
        manager = None

        async def dial():
            nonlocal manager
            opening = open_socket()
            # ok: context-entered-by-hand
            socket = await opening.__aenter__()
            manager = opening
            await socket.handshake()
            return socket

        try:
            return await dial()
        finally:
            if manager is not None:
                await manager.__aexit__(None, None, None)



class EitherEngine:
    # judged on real code: the await in the other arm of the `if` never follows the enter (the
    # sync engine's branch); an await after the `if` does
    async def begin(self, engine, stack):
        if engine.is_async:
            cm = engine.begin()
            # ok: context-entered-by-hand
            conn = await cm.__aenter__()
            stack.push_async_exit(cm.__aexit__)
        elif engine.threaded:
            conn = await to_thread.run_sync(engine.connect)
        else:
            conn = await to_thread.run_sync(engine.begin().__enter__)
        return conn

    async def begin_and_check(self, engine):
        if engine.is_async:
            cm = engine.begin()
            # ruleid: context-entered-by-hand
            conn = await cm.__aenter__()
        else:
            conn = await to_thread.run_sync(engine.connect)
        await conn.ping()
        return conn
