"""# GATE101 unguarded-cleanup-await

## What it does
Flags a critical teardown step that is itself awaited with nothing holding the interrupt: no
`try` whose handler keeps the cancellation, no `contextlib.suppress` of it, no shielded trio/anyio
cancel scope, no `try`/`finally` that carries the remaining steps, no configured shield helper.

## Why is this bad?
An interrupt that lands inside the step cuts it short: the cleanup stops halfway and the
cancellation propagates out of the teardown. A bare `asyncio.shield(...)` does not fully help:
the outer await still raises at once and the inner work runs on orphaned, until `asyncio.run`
cancels it when it shuts down; since the work usually completes, that case is a warning.

Exempt, because the work finishes even when the await is cancelled: work handed to a thread
(`asyncio.to_thread`, `loop.run_in_executor`, `anyio.to_thread.run_sync`; still an interrupt point
for the steps after it); a no-argument `.aclose()` (by the trio/anyio convention it completes its
essential work even when cancelled), anyio's `aclose_forcefully`, and a delegated `__aexit__` (the
wrapped manager owns its shielding).

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

Under trio and anyio the same await is reported once, as unshielded-teardown-await.

## Known problems
Holding the interrupt lets the following steps run, but the interrupted step itself still stops
where the cancel landed; make such steps idempotent or shield them in a trio/anyio scope.
held-step-cut-short reports a held step where the project's code of the callee shows steps after
its first exposed suspension.

## Fix
`gate check --fix` holds the interrupt at the step's await (`try:` ... `except BaseException as
error: interrupt = interrupt or error`), runs the rest of the region, then re-raises the first
interrupt held, as for skippable-teardown-step. The step itself still stops where the cancel
landed: the hold lets what follows it run. When nothing follows, holding would change nothing at
run time and there is no fix: make the step idempotent, or under trio/anyio shield it.

## Fix safety
{hold-fix-safety}

## Options
- `tool.gate.teardown.shield-helpers`: helpers that run their argument to completion guard it.
- The critical-step options of skippable-teardown-step.
"""

from __future__ import annotations

from collections.abc import Iterator

from gate.analysis.facts import CriticalStep, InterruptPoint, ModuleAnalysis, Region
from gate.model import Family, Finding, Severity
from gate.rule import Autofix, Locate, Rule, shared_sections


def cut_points(step: CriticalStep) -> list[InterruptPoint]:
    """The awaits of a step an interrupt can cut short: nothing holds them, and their work does
    not finish on its own (a thread, a close that is cancel-safe by contract)."""
    if step.only_by_contract:
        return []
    return [
        point
        for point in step.points
        if not (point.guarded or point.by_contract or point.in_thread or point.callee_cut_safe)
    ]


def _message(region: Region, step: CriticalStep) -> str:
    message = (
        f"`{step.label}` is awaited in a {region.kind.words} with nothing "
        "holding an interrupt: a cancel here cuts it short"
    )
    if region.origin:
        message += f" ({region.origin})"
    if step.uses_asyncio_shield:
        message += "; asyncio.shield does not help, the outer await still raises"
    return message


def check(analysis: ModuleAnalysis, locate: Locate) -> Iterator[Finding]:
    for region in analysis.regions:
        for step in region.steps:
            bare = cut_points(step)
            if not bare or (analysis.level_triggered and not any(p.shielded for p in bare)):
                # under trio/anyio, unshielded-teardown-await reports the same await
                continue
            # The interrupt point is the step itself, so there is no related location to add.
            interrupts = tuple(locate(point.node) for point in bare)
            yield RULE.finding(
                locate(step.statement),
                _message(region, step),
                f"{region.function}\x1f{step.text}",
                detail=region.teardown_detail(interrupts, locate),
                severity=Severity.WARNING
                if step.uses_asyncio_shield
                else analysis.severity([step.consequence], region),
            )


RULE = Rule(
    code="GATE101",
    name="unguarded-cleanup-await",
    summary="A teardown step is awaited with nothing holding an interrupt, so it can be cut short",
    family=Family.TEARDOWN,
    severity=Severity.ERROR,
    doc=shared_sections(__doc__),
    fix="Await the step inside try/except CancelledError that keeps the exception and re-raises "
    "it after the remaining steps (asyncio.shield alone is not enough).",
    check=check,
    autofix=Autofix.HOLD,
)
