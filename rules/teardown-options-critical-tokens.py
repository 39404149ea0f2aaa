# gate-config: teardown.critical-tokens = ["persist"]
# Annotated examples for `critical-tokens`, which replaces the default step tokens. The
# `gate-config` line above is this file's [tool.gate] table, in TOML.
class ReplacedTokens:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            await self.post_run()
            # ok: skippable-teardown-step
            self.cleanup()
            # ruleid: skippable-teardown-step
            self.persist_result()
