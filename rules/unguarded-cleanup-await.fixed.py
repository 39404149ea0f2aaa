# Annotated examples for GATE101 unguarded-cleanup-await.
import asyncio
import contextlib
import shutil


class BareShield:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            # ruleid: unguarded-cleanup-await
            await asyncio.shield(self.sandbox.cleanup())


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
