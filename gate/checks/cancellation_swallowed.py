"""# GATE103 cancellation-swallowed

## What it does
Flags a handler inside a teardown region that catches cancellation (bare `except:`,
`BaseException`, `CancelledError`, `trio.Cancelled`, `anyio.get_cancelled_exc_class()`) and then
neither re-raises it nor keeps it for later: no `raise`, the exception object is not used, and no
flag it sets is read anywhere else in the function. Also flags `contextlib.suppress` of
cancellation around an await in a region.

## Why is this bad?
The task was asked to stop. Swallowing the cancel makes the teardown return normally: the caller's
`wait_for` or task group never learns the task was cancelled, timeouts stop working, and
`asyncio.timeout()` cannot turn the cancel into `TimeoutError`.

## Example
```python
import asyncio


async def run(self):
    try:
        await self.evaluate()
    finally:
        try:
            await self.post_run()
        except asyncio.CancelledError:
            pass
        self.write_result()
```

## Use instead
```python
import asyncio


async def run(self):
    try:
        await self.evaluate()
    finally:
        interrupt = None
        try:
            await self.post_run()
        except asyncio.CancelledError as error:
            interrupt = error
        self.write_result()
        if interrupt is not None:
            raise interrupt
```

## Known problems
Only handlers inside a teardown region are checked: a worker loop's top-level
`except CancelledError: pass` is a choice this rule does not judge. A flag counts as kept when it
is read anywhere else in the function, even if it is never acted on.

## Options
None.
"""

from __future__ import annotations

from collections.abc import Iterator

from gate.checks.base import Reporter, Rule
from gate.checks.regions import ModuleAnalysis
from gate.model import Finding, Severity

RULE = Rule(
    code="GATE103",
    name="cancellation-swallowed",
    summary="A teardown handler catches cancellation and neither re-raises nor keeps it",
    severity=Severity.ERROR,
    doc=__doc__ or "",
    fix="Keep the exception (except CancelledError as e: interrupt = e) and re-raise it once the "
    "teardown is done.",
)


def check(analysis: ModuleAnalysis, report: Reporter) -> Iterator[Finding]:
    for region in analysis.regions:
        for handler in region.swallowing:
            yield report.finding(
                RULE.code,
                handler.handler,
                "cancellation is caught here and never re-raised or kept: the task carries on "
                "as if it had not been cancelled",
                f"{region.function}\x1f{handler.text}",
            )
        seen: set[int] = set()
        for point in region.points:
            for guard in point.guards:
                if guard.kind == "suppress" and id(guard.node) not in seen:
                    seen.add(id(guard.node))
                    yield report.finding(
                        RULE.code,
                        guard.node,
                        "contextlib.suppress of cancellation swallows the interrupt: the task "
                        "carries on as if it had not been cancelled",
                        f"{region.function}\x1fsuppress\x1f{point.text}",
                        ((point.node, "interrupt point"),),
                    )
