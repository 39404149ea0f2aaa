# Annotated examples for unshielded-teardown-await in a module of an anyio-based package that
# imports anyio's names relatively (anyio's own source does): it is level-triggered too.
from ._core._tasks import CancelScope


class Process:
    async def aclose(self):
        if self._stdin:
            await self._stdin.aclose()
        # ruleid: skippable-teardown-step
        # ruleid: unshielded-teardown-await
        await self._kill_children()
        with CancelScope(shield=True):
            # ruleid: skippable-teardown-step
            # ok: unshielded-teardown-await
            await self._release_slot()
