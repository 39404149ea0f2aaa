"""# GATE102 guard-misses-cancellation

## What it does
Flags an `except` clause (or a `contextlib.suppress(...)`) that wraps an await in a teardown region
to protect the steps after it, but catches only `Exception` or narrower, so cancellation passes
straight through it.

## Why is this bad?
`asyncio.CancelledError` and `trio.Cancelled` derive from `BaseException`, not `Exception`. A guard
written as `except Exception:` looks like it protects the rest of the teardown, yet a timeout's
cancel goes through it and skips every following step. This is the half-fix that shipped after
the original bug.

The rule reports only guards whose await matters: one that can skip a later critical step, or one
that is itself a critical step.

## Example
```python
async def run(self):
    try:
        await self.evaluate()
    finally:
        try:
            await self.post_run()
        except Exception:
            log.exception("post-run failed")
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
        except Exception:
            log.exception("post-run failed")
        except asyncio.CancelledError as error:
            interrupt = error
        self.write_result()
        if interrupt is not None:
            raise interrupt
```

## Known problems
A handler for a name gate cannot resolve (an alias of `BaseException`, a variable holding
`anyio.get_cancelled_exc_class()`) is taken as narrower than cancellation.

## Options
The critical-step options of GATE100 decide which awaits matter.
"""

from __future__ import annotations

from collections.abc import Iterator

from gate.checks.base import Reporter, Rule
from gate.checks.regions import ModuleAnalysis, precedes
from gate.model import Finding, Severity

RULE = Rule(
    code="GATE102",
    name="guard-misses-cancellation",
    summary="A guard around a teardown await catches Exception or narrower; cancellation passes",
    severity=Severity.ERROR,
    doc=__doc__ or "",
    fix="Also catch asyncio.CancelledError (a BaseException), keep it, and re-raise it after "
    "the remaining steps.",
)


def check(analysis: ModuleAnalysis, report: Reporter) -> Iterator[Finding]:
    for region in analysis.regions:
        awaited_steps = {
            id(point) for step in region.steps if not step.exempt_aclose for point in step.points
        }
        reported: set[int] = set()
        for point in region.points:
            if point.guarded:
                continue
            matters = id(point) in awaited_steps or any(
                step.statement is not point.statement and precedes(point, step)
                for step in region.steps
            )
            if not matters:
                continue
            for guard in point.guards:
                if guard.kind != "misses" or id(guard.node) in reported:
                    continue
                reported.add(id(guard.node))
                what = "this except clause" if guard.report_node is not guard.node else "suppress"
                message = (
                    f"{what} guards `{point.text}` (line {report.line(point.node)}) but does not "
                    "catch cancellation, a BaseException: an interrupt there still skips the "
                    "teardown"
                )
                yield report.finding(
                    RULE.code,
                    guard.report_node,
                    message,
                    f"{region.function}\x1f{point.text}",
                    ((point.node, "interrupt point"),),
                )
