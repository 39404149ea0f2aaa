"""# GATE106 held-step-cut-short

## What it does
Flags an awaited teardown step whose interrupt is held (a handler that catches cancellation and
keeps it, or a `contextlib.suppress` of it), when the project's own code of the awaited function
shows that it suspends, with nothing shielding it, before its work is done.

## Why is this bad?
Holding the interrupt lets the steps after it run, but it cannot undo what the cancel did where
it landed: the awaited step stopped at its first exposed suspension. When that step is
`runtime.stop()` and the function first awaits a request and only then tears the runtime down,
the sandbox is left running although the teardown "handled" the cancel:

```python
finally:
    try:
        await runtime.stop()           # stopped half way when a cancel lands here
    except asyncio.CancelledError:
        cancelled = True
    save_trace(trace)
```

gate reports this only where it can read the awaited function in the project: one of its own
steps (a call named like teardown: terminate, close, release, ...) comes after a suspension that
nothing shields or holds, and off the path a cancel there takes. A callee gate cannot see, one
with no step of its own, or one that finishes its steps before its first exposed suspension,
keeps the hold-and-re-raise pattern clean.

Findings are errors when the step loses data or leaks something outside the process, and
warnings for a best-effort close, in test code, and on asyncio where the region is entered only
by the cancel itself (see the README's tiers).

## Example
```python
import asyncio


async def stop_runtime(runtime):
    await runtime.api.post("/shutdown")
    runtime.terminate_container()


async def run(runtime, trace):
    try:
        await runtime.serve()
    finally:
        cancelled = None
        try:
            await stop_runtime(runtime)
        except asyncio.CancelledError as error:
            cancelled = error
        trace.save()
        if cancelled is not None:
            raise cancelled
```

## Use instead
Make the callee do the work that must happen before its first suspension (or run the work to
completion in a shielded task that the hold keeps waiting for):

```python
import asyncio


async def stop_runtime(runtime):
    runtime.terminate_container()
    await runtime.api.post("/shutdown")


async def run(runtime, trace):
    try:
        await runtime.serve()
    finally:
        cancelled = None
        try:
            await stop_runtime(runtime)
        except asyncio.CancelledError as error:
            cancelled = error
        trace.save()
        if cancelled is not None:
            raise cancelled
```

## Known problems
The callee is judged by its own body: a callee that hands its work to a helper that finishes it
(a task it waits for, a thread) may still be reported. Under trio and anyio the same await is
reported as unshielded-teardown-await, which also names the fix (a shielded scope).

## Severity
{teardown-severity}

## Options
The critical-step options of skippable-teardown-step decide which awaits are steps.
"""

from __future__ import annotations

from collections.abc import Iterator

from gate.analysis.facts import (
    CriticalStep,
    EnclosureKind,
    InterruptPoint,
    ModuleAnalysis,
    Region,
)
from gate.model import Family, Finding, Related, Severity
from gate.rule import Locate, Rule, shared_sections

HOLDING = (EnclosureKind.TRY_EXCEPT, EnclosureKind.SUPPRESS)


def held_and_cut(point: InterruptPoint) -> bool:
    """An interrupt here is held by an enclosing handler or suppress, nothing shields the await,
    and the project's code of the awaited function loses work when a cancel lands in it."""
    held = any(e.kind in HOLDING and e.holds for e in point.enclosures)
    return (
        held
        and point.callee_known
        and point.callee_steps_cut
        and not (point.shielded or point.runs_on or point.by_contract)
    )


def _message(step: CriticalStep, point: InterruptPoint) -> str:
    callee = point.awaited_call or step.label.removesuffix("()")
    return (
        f"`{step.label}` is cut short although the interrupt is held: `{callee}` suspends "
        "before its work is done and nothing shields it, so a cancel landing in it stops that "
        "work where it stands; only the steps after this one still run"
    )


def check(analysis: ModuleAnalysis, locate: Locate) -> Iterator[Finding]:
    if analysis.level_triggered:
        return  # unshielded-teardown-await reports every unshielded teardown await there
    for region in analysis.regions:
        for step in region.steps:
            cut = [point for point in step.points if held_and_cut(point)]
            if cut:
                yield _finding(analysis, locate, region, step, cut)


def _finding(
    analysis: ModuleAnalysis,
    locate: Locate,
    region: Region,
    step: CriticalStep,
    cut: list[InterruptPoint],
) -> Finding:
    interrupts = tuple(locate(point.node) for point in cut)
    holder = next(e for e in cut[0].enclosures if e.kind in HOLDING and e.holds)
    related = ()
    if holder.report_node is not None:
        related = (Related(locate(holder.report_node), "holds the interrupt"),)
    return RULE.finding(
        locate(step.statement),
        _message(step, cut[0]),
        f"{region.function}\x1f{step.text}",
        related=related,
        detail=region.teardown_detail(interrupts, locate),
        severity=analysis.severity([step.cut_consequence or step.consequence], region),
    )


RULE = Rule(
    code="GATE106",
    name="held-step-cut-short",
    summary="A held interrupt still cuts short the awaited step it landed in",
    family=Family.TEARDOWN,
    severity=Severity.ERROR,
    doc=shared_sections(__doc__),
    fix="Run the step's work to completion (a shielded task the hold keeps waiting for), or do "
    "the work in the callee before its first suspension.",
    check=check,
)
