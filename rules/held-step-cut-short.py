# Annotated examples for GATE106 held-step-cut-short. Each marker applies to the next line.
import asyncio
import contextlib


class Runtime:
    async def stop(self):
        # suspends before its own step: a cancel landing in the request leaves the container
        # running (reported here too, as the helper's skippable step)
        await self.api.post("/shutdown")
        # ruleid: skippable-teardown-step
        self.terminate_container()

    async def stop_first(self):
        # does its work before its first suspension: a cancel there loses nothing
        self.terminate_container()
        await self.api.post("/shutdown")

    async def stop_without_steps(self):
        # no step of its own: whether the awaited request is its work, gate cannot tell
        await self.api.post("/shutdown")

    async def run(self, trace):
        try:
            await self.serve()
        finally:
            cancelled = None
            try:
                # ruleid: held-step-cut-short
                await self.stop()
            except asyncio.CancelledError as error:
                cancelled = error
            trace.save()
            if cancelled is not None:
                raise cancelled

    async def run_with_suppress(self, trace):
        try:
            await self.serve()
        finally:
            # ruleid: cancellation-swallowed
            with contextlib.suppress(asyncio.CancelledError):
                # ruleid: held-step-cut-short
                await self.stop()
            trace.save()

    async def run_callee_done_first(self, trace):
        try:
            await self.serve()
        finally:
            cancelled = None
            try:
                # ok: held-step-cut-short
                await self.stop_first()
            except asyncio.CancelledError as error:
                cancelled = error
            trace.save()
            if cancelled is not None:
                raise cancelled

    async def run_callee_without_steps(self, trace):
        try:
            await self.serve()
        finally:
            cancelled = None
            try:
                # ok: held-step-cut-short
                await self.stop_without_steps()
            except asyncio.CancelledError as error:
                cancelled = error
            trace.save()
            if cancelled is not None:
                raise cancelled

    async def run_callee_unknown(self, runtime, trace):
        # a callee gate cannot see keeps the recommended hold-and-re-raise pattern clean
        try:
            await self.serve()
        finally:
            cancelled = None
            try:
                # ok: held-step-cut-short
                await runtime.stop()
            except asyncio.CancelledError as error:
                cancelled = error
            trace.save()
            if cancelled is not None:
                raise cancelled

    async def run_unheld(self):
        try:
            await self.serve()
        finally:
            # ok: held-step-cut-short
            # ruleid: unguarded-cleanup-await
            await self.stop()

    async def stop_awaiting_a_step(self):
        # its only suspension is the step it awaits: whether that step finishes is its callee's
        # business, reported there
        # ruleid: unguarded-cleanup-await
        await self.sandbox.stop()

    async def run_callee_awaits_its_step(self, trace):
        try:
            await self.serve()
        finally:
            cancelled = None
            try:
                # ok: held-step-cut-short
                await self.stop_awaiting_a_step()
            except asyncio.CancelledError as error:
                cancelled = error
            trace.save()
            if cancelled is not None:
                raise cancelled
