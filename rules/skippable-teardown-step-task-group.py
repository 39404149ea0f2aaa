# Annotated examples for GATE100 skippable-teardown-step in a task group's block (anyio).
# Each marker applies to the next code line.
from contextlib import asynccontextmanager

import anyio


@asynccontextmanager
async def client_streams(transport, client):
    # judged on real code: an interrupt that skips the group's own cancel leaves the group's
    # block, and the group's exit cancels its scope on every exception (the streamable HTTP
    # clients of mcp and openai-agents)
    async with anyio.create_task_group() as tg:
        tg.start_soon(transport.post_writer, client)
        try:
            yield transport.streams
        finally:
            if transport.session_id:
                # ruleid: unshielded-teardown-await
                await transport.terminate_session(client)
            # ok: skippable-teardown-step
            tg.cancel_scope.cancel()


class Streams:
    @asynccontextmanager
    async def open(self, transport, client):
        # another group's scope: nothing on the way out cancels it
        async with anyio.create_task_group() as tg:
            tg.start_soon(transport.post_writer, client)
            try:
                yield transport.streams
            finally:
                # ruleid: unshielded-teardown-await
                await transport.terminate_session(client)
                # ruleid: skippable-teardown-step
                self._readers.cancel_scope.cancel()
