# gate-config: teardown.extend-critical-tokens = ["archive"]
# gate-config: teardown.teardown-functions = ["*.shutdown_all"]
# gate-config: teardown.shield-helpers = ["run_to_completion"]
# Annotated examples for the teardown rules' options. The `gate-config` lines above are this
# file's [tool.gate] table, in TOML. Each marker applies to the next code line.
import asyncio


class ExtendedTokens:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            await self.post_run()
            # ruleid: skippable-teardown-step
            self.archive_logs()
            # ok: skippable-teardown-step
            self.note_done()


class Pool:
    # a configured teardown function: its whole body is a region
    async def shutdown_all(self):
        await self.drain()
        # ruleid: skippable-teardown-step
        self.release_workers()


async def run_to_completion(awaitable):
    return await asyncio.shield(awaitable)


class ShieldHelper:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            await run_to_completion(self.post_run())
            # ok: skippable-teardown-step
            self.write_result()
