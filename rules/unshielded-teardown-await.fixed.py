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
                # ruleid: unshielded-teardown-await
                # ruleid: unguarded-cleanup-await
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
