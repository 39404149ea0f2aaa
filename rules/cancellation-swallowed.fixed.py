# Annotated examples for GATE103 cancellation-swallowed.
import asyncio


class Pass:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            try:
                await self._run_post_commands()
            # ruleid: cancellation-swallowed
            except asyncio.CancelledError as error:
                interrupt = interrupt or error
            self._finalize_result()
            if interrupt is not None:
                raise interrupt


class FlagNeverRead:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            interrupt: BaseException | None = None
            try:
                await self._run_post_commands()
            # ruleid: cancellation-swallowed
            except BaseException as error:
                cancelled = True  # noqa: F841
                if not isinstance(error, Exception):
                    interrupt = interrupt or error
            self._finalize_result()
            if interrupt is not None:
                raise interrupt


class AbsorbingFlag:
    async def run(self):
        cancelled = False
        try:
            await self.evaluate()
        finally:
            try:
                await self._run_post_commands()
            # ok: cancellation-swallowed
            except asyncio.CancelledError:
                cancelled = True
            # ok: skippable-teardown-step
            self._finalize_result()
            if cancelled:
                raise asyncio.CancelledError


class KeptObject:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            pending = []
            try:
                await self._run_post_commands()
            # ok: cancellation-swallowed
            except asyncio.CancelledError as error:
                pending.append(error)
            self._finalize_result()
            if pending:
                raise pending[0]


class Reraised:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            try:
                # ruleid: unguarded-cleanup-await
                await self._cleanup()
            # ok: cancellation-swallowed
            except asyncio.CancelledError:
                self.log("cancelled during cleanup")
                raise


class BareExcept:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            try:
                await self.notify()
            # ruleid: cancellation-swallowed
            except:  # noqa: E722
                return


class WorkerLoopIsNotTeardown:
    async def run(self):
        try:
            await self.evaluate()
        # ok: cancellation-swallowed
        except asyncio.CancelledError:
            pass
