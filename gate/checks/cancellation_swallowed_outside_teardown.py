"""# GATE109 cancellation-swallowed-outside-teardown

## What it does
Flags a handler that catches cancellation (bare `except:`, `BaseException`, `CancelledError`,
`trio.Cancelled`, `anyio.get_cancelled_exc_class()`) around an await and neither re-raises nor
keeps it, in an async function's own code outside any teardown region: the cases
cancellation-swallowed leaves alone. What counts as swallowing is that rule's: no
`raise`, the exception object unused (a logging call does not keep it), no flag it sets read
elsewhere in the function; a handler of a `try` whose every await a shield covers catches errors
alone.

Also flags a handler that keeps the cancel to raise later (`self.error = ex`, `err = e`) when
the function raises it further on but can return first, on a path that does not ask for it
(`if self.conn: return self.conn` before `raise self.error`): psycopg's pool client returned a
connection handed over while the cancel landed, and the cancelled task carried on holding it.

## Why is this bad?
Judged on real, already-fixed bugs: hypercorn's `_handle` dropped the cancel of the task running
an ASGI app (`except asyncio.CancelledError: pass`), nats.py's subscription drain returned
normally from a cancelled wait, temporal's SDK went back round a start-wait loop after a
workflow cancel. The task was asked to stop; swallowing the cancel makes its function return as
if it had finished, so a `wait_for` or a task group never learns it was cancelled, timeouts stop
working, and code after the call runs on.

## Example
```python
import asyncio


async def handle(app, scope):
    try:
        await app(scope)
    except asyncio.CancelledError:
        pass
```

## Use instead
```python
import asyncio


async def handle(app, scope):
    try:
        await app(scope)
    except asyncio.CancelledError:
        raise
```

## Known problems
A task's top-level `except CancelledError: pass` is often a choice (a worker loop that ends
quietly when cancelled), which is why this is a rule of its own and a warning. Judged on the 34
real code bases of `benchmarks/realcode/` (stop 42): of 77 findings 7 are real, 64 debatable (50
of them such a task's quiet end, whose canceller then waits with the cancel suppressed) and 6
false (a `CancelledError` imported from `concurrent.futures`, which is not asyncio's; a `try`
no cancel of the task can reach).

Not reported: a handler that waits for a task the function has just cancelled (`task.cancel();
try: await task; except CancelledError: pass`, or `wait_for` or `gather` of such tasks), which
is there for that task's cancel and swallows the caller's only when one lands during the wait
(cancellation-swallowed reports it in a teardown, as a warning); and trio or anyio code, where a
cancelled scope raises again at the next checkpoint.

## Fix
None automatic: re-raise the cancellation (`raise`), or keep it and raise it once the work that
must finish is done.

## Severity
A warning, always: outside teardown a swallowed cancel is judged a bug case by case.

## Options
None.
"""

from __future__ import annotations

from collections.abc import Iterator

from gate.analysis.facts import ModuleAnalysis
from gate.checks.cancellation_swallowed import drops_cancel
from gate.model import Family, Finding, Related, Severity
from gate.rule import Locate, Rule, shared_sections


def check(analysis: ModuleAnalysis, locate: Locate) -> Iterator[Finding]:
    if analysis.level_triggered:
        return  # a cancelled trio/anyio scope raises again at the next checkpoint
    judged = {id(h.node) for region in analysis.regions for h in region.cancel_handlers}
    for body in analysis.bodies:
        for handler in body.cancel_handlers:
            if id(handler.node) in judged or handler.awaits_cancelled_task:
                continue  # a teardown region's (cancellation-swallowed's), or a child's cancel
            if drops_cancel(handler, body):
                yield RULE.finding(
                    locate(handler.node),
                    "cancellation is caught here and never re-raised or kept: the function "
                    "returns as if it had not been cancelled",
                    f"{body.function}\x1f{handler.text}",
                    detail=body.teardown_detail((), locate),
                )
                continue
            dropped = handler.dropped
            if dropped is not None:
                returned, raised = locate(dropped.returned), locate(dropped.raised)
                yield RULE.finding(
                    locate(handler.node),
                    f"cancellation is kept in `{dropped.kept_in}` here, but the return at line "
                    f"{returned.line} can leave the function before line {raised.line} raises "
                    "it: the function returns as if it had not been cancelled",
                    f"{body.function}\x1f{handler.text}",
                    related=(
                        Related(returned, "returns without the kept cancel"),
                        Related(raised, "raises it only here"),
                    ),
                    detail=body.teardown_detail((), locate),
                )


RULE = Rule(
    code="GATE109",
    name="cancellation-swallowed-outside-teardown",
    summary="A handler outside teardown catches cancellation and neither re-raises nor keeps it",
    family=Family.TEARDOWN,
    severity=Severity.WARNING,
    doc=shared_sections(__doc__),
    fix="Re-raise the cancellation (`raise`), or keep it and raise it once the work that must "
    "finish is done.",
    check=check,
)
