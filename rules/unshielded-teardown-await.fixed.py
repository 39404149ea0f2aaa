# Annotated examples for GATE104 unshielded-teardown-await (trio and anyio).
import anyio
import trio


class TrioUnshielded:
    async def run(self, conn):
        try:
            await conn.serve()
        finally:
            # Shielded: a cancel cannot cut this teardown short. If it can hang, bound it instead:
            # with anyio.move_on_after(SECONDS, shield=True):
            with anyio.CancelScope(shield=True):
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
            # Shielded: a cancel cannot cut this teardown short. If it can hang, bound it instead:
            # with anyio.move_on_after(SECONDS, shield=True):
            with anyio.CancelScope(shield=True):
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
            # Shielded: a cancel cannot cut this teardown short. If it can hang, bound it instead:
            # with trio.move_on_after(SECONDS, shield=True):
            with trio.CancelScope(shield=True):
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
