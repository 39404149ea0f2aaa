"""# GATE101 unguarded-cleanup-await

## What it does
Flags a critical teardown step that is itself awaited with nothing holding the interrupt: no
`try` whose handler keeps the cancellation, no `contextlib.suppress` of it, no shielded trio/anyio
cancel scope, no `try`/`finally` that carries the remaining steps, no configured shield helper.

## Why is this bad?
An interrupt that lands inside the step cuts it short: the cleanup stops halfway and the
cancellation propagates out of the teardown. A bare `asyncio.shield(...)` does not help: the outer
await still raises at once, the inner work is left orphaned, and `asyncio.run` cancels it anyway
when it shuts down.

A no-argument `.aclose()` is exempt: by the trio/anyio convention it completes its essential work
even when cancelled.

## Example
```python
import asyncio


async def run(sandbox):
    try:
        await sandbox.start()
    finally:
        await asyncio.shield(sandbox.cleanup())
```

## Use instead
```python
import asyncio


async def run(sandbox):
    try:
        await sandbox.start()
    finally:
        interrupt = None
        try:
            await sandbox.cleanup()
        except asyncio.CancelledError as error:
            interrupt = error
        if interrupt is not None:
            raise interrupt
```

## Known problems
Holding the interrupt lets the following steps run, but the interrupted step itself still stops
where the cancel landed; make such steps idempotent or shield them in a trio/anyio scope.

## Fix
`gate check --fix` holds the interrupt at the step's await (`try:` ... `except BaseException as
error: interrupt = interrupt or error`), runs the rest of the region, then re-raises the first
interrupt held, as for skippable-teardown-step. The step itself still stops where the cancel
landed: the hold lets what follows it run. When nothing follows, holding would change nothing at
run time and there is no fix: make the step idempotent, or under trio/anyio shield it.

## Fix safety
The hold catches `BaseException`, not only cancellation: a step that fails with an ordinary
exception no longer skips the later steps either, and that exception is re-raised after them,
unchanged. Nothing changes on the path without an interrupt. There is no fix, and the finding
says why, when a `return`, `break` or `continue` leaves the region or it yields (the held
interrupt would be lost or wait), when the awaited statement sets a name read later in the
region (it would be read unset), when the await is inside a comprehension, when the step is
inside the very statement that awaits (the body of an `async with`, an `if` whose test awaits),
or when nothing runs after the held await (holding would change nothing at run time).

## Options
- `tool.gate.teardown.shield-helpers`: helpers that run their argument to completion guard it.
- The critical-step options of skippable-teardown-step.
"""

from __future__ import annotations

from collections.abc import Iterator

from gate.analysis.facts import ModuleAnalysis
from gate.model import Family, Finding, Severity, TeardownDetail
from gate.rule import Autofix, Locate, Rule


def check(analysis: ModuleAnalysis, locate: Locate) -> Iterator[Finding]:
    for region in analysis.regions:
        for step in region.steps:
            if step.only_no_arg_aclose:
                continue
            bare = [point for point in step.points if not point.guarded]
            if not bare:
                continue
            message = (
                f"`{step.label}` is awaited in a {region.kind.words} with nothing "
                "holding an interrupt: a cancel here cuts it short"
            )
            if region.origin:
                message += f" ({region.origin})"
            if step.uses_asyncio_shield:
                message += "; asyncio.shield does not help, the outer await still raises"
            # The interrupt point is the step itself, so there is no related location to add.
            interrupts = tuple(locate(point.node) for point in bare)
            yield RULE.finding(
                locate(step.statement),
                message,
                f"{region.function}\x1f{step.text}",
                detail=TeardownDetail(interrupts, region.function_lines),
            )


RULE = Rule(
    code="GATE101",
    name="unguarded-cleanup-await",
    summary="A teardown step is awaited with nothing holding an interrupt, so it can be cut short",
    family=Family.TEARDOWN,
    severity=Severity.ERROR,
    doc=__doc__ or "",
    fix="Await the step inside try/except CancelledError that keeps the exception and re-raises "
    "it after the remaining steps (asyncio.shield alone is not enough).",
    check=check,
    autofix=Autofix.HOLD,
)
