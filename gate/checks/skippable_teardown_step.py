"""# GATE100 skippable-teardown-step

## What it does
Flags a critical teardown step (a cleanup, close, write, upload, ... call) in a `finally:` block,
a cancellation handler, an `__aexit__` or a configured teardown function, when an earlier await in
the same region can be interrupted with nothing holding the interrupt.

## Why is this bad?
A timeout watchdog calls `task.cancel()`, and the `CancelledError` lands at whichever `await` the
task is suspended in. If that await is in the teardown and nothing holds the interrupt, everything
after it is skipped: the temp dir leaks, the result file is never written. `except Exception` does
not help, because `CancelledError` is a `BaseException`.

Loop-carried skips are reported too: a cancel while awaiting inside a loop skips the steps of the
remaining iterations. Awaited helpers called from a teardown region (`await self._teardown()` on a
method of the same class, or a module-level coroutine function) are analysed as regions too.

## Example
```python
import asyncio


class Runner:
    async def run(self):
        try:
            await self.evaluate()
        finally:
            await self.post_run()
            self.write_result()
```

## Use instead
Hold the interrupt, finish every step, then re-raise the same exception object:
```python
import asyncio


class Runner:
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
Which calls are steps is decided by name (see Options); a step whose name has none of the tokens is
missed unless marked with `# gate: critical`. Order is source order: an await in the `if` branch
and a step in the `else` branch are known not to precede each other, but a `return` or `raise`
between them is not followed. Helpers are followed only within one module.

## Fix
`gate check --fix` (and the suggestion in review formats) holds the interrupt at every unguarded
await before the step, runs the rest of the region, then re-raises the first interrupt it held,
the same object:
```
finally:
    interrupt: BaseException | None = None
    try:
        await self.post_run()
    except BaseException as error:
        interrupt = interrupt or error
    self.write_result()
    if interrupt is not None:
        raise interrupt
```
A region that already holds in a variable (`interrupt = None` above, `if interrupt is not None:
raise interrupt` at its end) has that variable extended rather than a second one added. An await
inside a `try` whose handlers miss cancellation gains a handler after them (they still see what
they saw before); one under a `suppress(...)` has the `with` wrapped. When the guarded block holds
a step after the await, each await in it is held in place instead, re-raising an `Exception` for
the guard to see and keeping only what it misses. Under trio/anyio the awaits go under a shielded
cancel scope instead (see unshielded-teardown-await): a held cancel would fire again at the next
await.

## Fix safety
{hold-fix-safety}

## Severity
{teardown-severity}

## Options
- `tool.gate.teardown.critical-tokens`, `extend-critical-tokens`: the name tokens of steps.
- `tool.gate.teardown.teardown-functions`: qualname globs whose whole body is a region.
- `tool.gate.teardown.shield-helpers`: helpers that run their argument to completion.
"""

from __future__ import annotations

from collections.abc import Iterator

from gate.analysis.facts import CriticalStep, InterruptPoint, ModuleAnalysis, Region, precedes
from gate.model import INTERRUPT_POINT, Family, Finding, Related, Severity
from gate.rule import Autofix, Locate, Rule, shared_sections


def _message(region: Region, step: CriticalStep, first: InterruptPoint, line: int) -> str:
    carried = first.order >= step.order or first.statement is step.statement
    when = "in an earlier iteration " if carried else ""
    message = (
        f"`{step.label}` can be skipped: an interrupt at line {line} "
        f"{when}(`{first.text}`) is not held, so the rest of this {region.kind.words} "
        "never runs"
    )
    return f"{message} ({region.origin})" if region.origin else message


def check(analysis: ModuleAnalysis, locate: Locate) -> Iterator[Finding]:
    for region in analysis.regions:
        for step in region.steps:
            skippers = [
                point for point in region.points if not point.guarded and precedes(point, step)
            ]
            if not skippers:
                continue
            interrupts = tuple(locate(point.node) for point in skippers)
            yield RULE.finding(
                locate(step.statement),
                _message(region, step, skippers[0], interrupts[0].line),
                f"{region.function}\x1f{step.text}",
                related=tuple(Related(where, INTERRUPT_POINT) for where in interrupts),
                detail=region.teardown_detail(interrupts, locate),
                severity=analysis.severity([step.consequence], region),
            )


RULE = Rule(
    code="GATE100",
    name="skippable-teardown-step",
    summary="A teardown step can be skipped by an interrupt at an earlier, unguarded await",
    family=Family.TEARDOWN,
    severity=Severity.ERROR,
    doc=shared_sections(__doc__),
    fix="Hold the interrupt around each earlier await (except CancelledError as e: keep e), "
    "finish every step, then re-raise it.",
    check=check,
    autofix=Autofix.HOLD,
    interrupt_order=1,
)
