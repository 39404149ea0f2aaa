"""# GATE101 unguarded-cleanup-await

## What it does
Flags a critical teardown step that is itself awaited with nothing holding the interrupt: no
`try` whose handler keeps the cancellation, no `contextlib.suppress` of it, no shielded trio/anyio
cancel scope, no `try`/`finally` that carries the remaining steps, no configured shield helper.

## Why is this bad?
An interrupt that lands inside the step cuts it short: the cleanup stops halfway and the
cancellation propagates out of the teardown.

A bare `asyncio.shield(...)` runs the step in a task of its own that the caller's cancel does not
reach: the step is not cut short, but the outer await still raises at once. When the shielded
await ends its region (nothing the region runs after it can be skipped: its last statement, or
one followed only by a bare `raise` or by what the exception runs anyway, a `finally:` or an
exit), nothing is lost and the step is not reported. When more of the region follows, the step
is a warning: the region stops there while the shielded work runs on, and the work is lost only
when `asyncio.run` cancels the tasks still pending at shutdown.

Exempt, because the work finishes even when the await is cancelled: work handed to a thread
(`asyncio.to_thread`, `loop.run_in_executor`, `anyio.to_thread.run_sync`) and tasks awaited through
`asyncio.wait(...)`, which stops waiting but never cancels them (both still interrupt points for
the steps after them); a no-argument `.aclose()` (by the trio/anyio convention it completes its
essential work even when cancelled), anyio's `aclose_forcefully`, and a delegated `__aexit__` (the
wrapped manager owns its shielding). Exempt too, because the code ends what the cut step was
ending where the cut lands: an await in a `try` whose handler of the cancel closes or destroys
something before it re-raises (`except asyncio.CancelledError: self._response.close(); raise`
around `await self._writer.close()`). A handler that takes a step of another kind (writes a
result) leaves the step reported. An `__aexit__` or a teardown method whose only statement,
after guards that return early and before a `return None`, awaits another teardown method of
its class (`await self.shutdown()`, a `close()` alias of `aclose()`), or a teardown method of
its base class or of an object it wraps that the project defines (`await super().stop()`,
`await self._inner.stop()`), is not reported either: the method it awaits is a region of its
own, where the cut is reported.

## Example
```python
import asyncio


async def run(sandbox):
    try:
        await sandbox.start()
    finally:
        await sandbox.cleanup()
```

## Use instead
The region's last step can run on in a task of its own:
```python
import asyncio


async def run(sandbox):
    try:
        await sandbox.start()
    finally:
        await asyncio.shield(sandbox.cleanup())
```

Where more follows, hold the interrupt and re-raise it after the remaining steps:
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
        sandbox.write_report()
        if interrupt is not None:
            raise interrupt
```

Under trio and anyio the same await is reported once, as unshielded-teardown-await.

## Known problems
Holding the interrupt lets the following steps run, but the interrupted step itself still stops
where the cancel landed; make such steps idempotent or shield them in a trio/anyio scope.
A bare `asyncio.shield(...)` that ends its region is not reported, though the caller goes on (its
cancel propagates) before the shielded work is done, and `asyncio.run` cancels that work if the
program ends first: code that needs the step finished when the await returns, and a step that
must survive the program's shutdown, still want the interrupt held around an unshielded await.
held-step-cut-short reports a held step where the project's code of the callee shows steps after
its first exposed suspension.
A callee that collects calls in a list or a generator and then gathers them (`coros =
(c.shutdown() for c in conns)`, `await asyncio.gather(*coros)`) is judged as if those calls ran
where they are made: right for a sync `close()` that returns a future, wrong for coroutines, which
the gather runs and a cut stops. Such a callee's await is not reported when nothing after the
gather is a step.

## Fix
`gate check --fix` holds the interrupt at the step's await (`try:` ... `except BaseException as
error: interrupt = interrupt or error`), runs the rest of the region, then re-raises the first
interrupt held, as for skippable-teardown-step. The step itself still stops where the cancel
landed: the hold lets what follows it run. When nothing follows, holding would change nothing at
run time and there is no fix: make the step idempotent, or under trio/anyio shield it.

## Fix safety
{hold-fix-safety}

## Severity
{teardown-severity}

## Options
- `tool.gate.teardown.shield-helpers`: helpers that run their argument to completion guard it.
- The critical-step options of skippable-teardown-step.
"""

from __future__ import annotations

from collections.abc import Iterator

from gate.analysis.facts import (
    Arm,
    Branch,
    CriticalStep,
    EnclosureKind,
    InterruptPoint,
    ModuleAnalysis,
    Region,
)
from gate.analysis.vocabulary import closes_or_destroys
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
        if not (point.guarded or point.by_contract or point.runs_on or point.callee_cut_safe)
    ]


def compensated(region: Region, point: InterruptPoint) -> bool:
    """Does a handler of the `try` around the await catch the cancel and close or destroy
    something before it re-raises (`except CancelledError: self._response.close(); raise`
    around `await self._writer.close()`)? The code forces the end of what the cut step was
    ending, where the cut lands. A handler that takes a step of another kind (writes a result)
    does not."""
    for enclosure in point.enclosures:
        index = enclosure.cancel_handler
        if enclosure.kind is not EnclosureKind.TRY_EXCEPT or index is None:
            continue
        handler = Branch(id(enclosure.node), Arm.HANDLER, index)
        if any(
            handler in step.branches and closes_or_destroys(step.called_name)
            for step in region.steps
        ):
            return True
    return False


SHIELD_CALLS = frozenset({"asyncio.shield", "shield"})


def runs_on_to_the_end(step: CriticalStep, bare: list[InterruptPoint]) -> bool:
    """Is the step a bare `asyncio.shield(...)` whose await ends its region? The shielded work
    runs on in its own task, and nothing after the await is left to skip."""
    return step.ends_region and all(point.awaited_call in SHIELD_CALLS for point in bare)


def _message(region: Region, step: CriticalStep) -> str:
    if step.uses_asyncio_shield:
        message = (
            f"`{step.label}` is awaited through a bare asyncio.shield in a {region.kind.words} "
            "that goes on after it: a cancel here raises at once, so the rest of the region is "
            "skipped while the shielded work runs on"
        )
    else:
        message = (
            f"`{step.label}` is awaited in a {region.kind.words} with nothing "
            "holding an interrupt: a cancel here cuts it short"
        )
    if region.origin:
        message += f" ({region.origin})"
    return message


def _judged_regions(analysis: ModuleAnalysis) -> list[Region]:
    """The regions but a delegating `__aexit__` or teardown method, whose awaited teardown
    method is a region of its own."""
    return [region for region in analysis.regions if not region.delegates]


def _reported_points(
    analysis: ModuleAnalysis, region: Region, step: CriticalStep
) -> list[InterruptPoint]:
    """The awaits of the step this rule reports as cut short (none: the step is not)."""
    bare = [point for point in cut_points(step) if not compensated(region, point)]
    if not bare or (analysis.level_triggered and not any(p.shielded for p in bare)):
        return []  # under trio/anyio, unshielded-teardown-await reports the same await
    return [] if runs_on_to_the_end(step, bare) else bare


def check(analysis: ModuleAnalysis, locate: Locate) -> Iterator[Finding]:
    for region in _judged_regions(analysis):
        for step in region.steps:
            bare = _reported_points(analysis, region, step)
            if not bare:
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
                else analysis.severity([step.cut_consequence or step.consequence], region),
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
    interrupt_order=0,
    at_interrupt=True,
)
