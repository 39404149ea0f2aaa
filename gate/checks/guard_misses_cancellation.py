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

The rule reports only guards whose await matters: one that can skip a later critical step, or a
guard of each item of a loop (`for it in exits: try: await it.__anext__() except Exception:
...`), whose handler carries on with the next item: the code says every item must be torn down,
and a cancel at one of them ends the loop. Such a guard is a warning unless the guarded await is a
step whose loss is an error.

It also flags, in any async function, a handler narrower than cancellation after a `try` body
that can be interrupted, when the handler tests the error it caught for cancellation
(`except Exception as e: if isinstance(e, (asyncio.CancelledError, RetryJob)): requeue(job)`):
the branch written for a cancel never runs, since Python 3.8 made `CancelledError` a
`BaseException` (arq shipped this: a cancelled job was never re-queued). A negated test
(`if not isinstance(e, CancelledError): log(...)`), written for Python 3.7, leaves out what never
comes and is not reported. `--fix` has no rewrite for it outside a teardown region.

A constant of the module that names exception classes (`except CLIENT_EXCEPTIONS:` after
`CLIENT_EXCEPTIONS = (Exception, asyncio.CancelledError)`) is read for every class it may hold,
here and in every teardown rule: bound in both arms of an `if`, it holds either (psycopg_pool
binds the async and sync values so). A constant imported from another module is not followed.

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

## Fix
`gate check --fix` gives the `try` one more handler, after its own, that holds what they let
through: `except BaseException as error: interrupt = interrupt or error`; the held interrupt is
re-raised after the rest of the region. A `suppress(...)` is wrapped in such a `try`. When the
guarded block holds a step after the await, each await in it is held in place instead, re-raising
an `Exception` for the guard to see and keeping only what it misses. The existing handlers still
catch what they caught; only cancellation (and the other `BaseException`s) is held now instead of
skipping the teardown.

## Fix safety
{hold-fix-safety}

## Severity
{teardown-severity}

## Options
The critical-step options of skippable-teardown-step decide which awaits matter.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gate.analysis.facts import (
    Consequence,
    CriticalStep,
    Enclosure,
    EnclosureKind,
    InterruptPoint,
    ModuleAnalysis,
    NarrowHandler,
    Region,
    precedes,
)
from gate.model import INTERRUPT_POINT, Family, Finding, Related, Severity, TeardownDetail
from gate.rule import Autofix, Locate, Rule, shared_sections

if TYPE_CHECKING:
    import libcst as cst


def misses_cancellation(enclosure: Enclosure) -> bool:
    """A `try` whose handlers, or a `suppress` whose exceptions, all leave cancellation out."""
    guards = (EnclosureKind.TRY_EXCEPT, EnclosureKind.SUPPRESS)
    return enclosure.kind in guards and not enclosure.catches_cancellation


def _skippable(point: InterruptPoint, region: Region) -> list[CriticalStep]:
    """The later steps an interrupt at the await can skip. Only those make a guard that misses
    cancellation a problem of its own: an awaited step cut short is the cut's finding."""
    return [
        step
        for step in region.steps
        if step.statement is not point.statement and precedes(point, step)
    ]


def _at_stake(
    point: InterruptPoint, region: Region, skipped: list[CriticalStep]
) -> list[Consequence]:
    """What the guard loses: the steps it lets a cancel skip; for a guard of every item of a
    loop, the later items too (the guarded await's own step, else a best-effort loss)."""
    if skipped:
        return [step.consequence for step in skipped]
    own = [step.consequence for step in region.steps if step.statement is point.statement]
    return own or [Consequence.BEST_EFFORT]


def check(analysis: ModuleAnalysis, locate: Locate) -> Iterator[Finding]:
    for handler in analysis.narrow_handlers:
        if handler.cancel_test is not None:
            yield _tested(analysis, locate, handler, handler.cancel_test)
    for region in analysis.regions:
        reported: set[int] = set()
        for point in region.points:
            skipped = [] if point.guarded else _skippable(point, region)
            if point.guarded:
                continue
            for enclosure in point.enclosures:
                if id(enclosure.node) in reported or not _reported(enclosure, bool(skipped)):
                    continue
                reported.add(id(enclosure.node))
                yield _finding(analysis, locate, region, point, enclosure, skipped)


def _tested(
    analysis: ModuleAnalysis, locate: Locate, handler: NarrowHandler, test: cst.CSTNode
) -> Finding:
    """A handler narrower than cancellation that tests the error it caught for cancellation:
    the branch for a cancel never runs, and the cancel at the interrupt skips what it would do."""
    where, tested = locate(handler.interrupt), locate(test)
    return RULE.finding(
        locate(handler.handler),
        f"this except clause tests the error for cancellation (line {tested.line}) but does not "
        f"catch it: a CancelledError is a BaseException, so a cancel at line {where.line} "
        f"(`{handler.interrupt_text}`) never reaches that branch",
        f"{handler.function}\x1fcancel-test\x1f{handler.interrupt_text}",
        related=(Related(where, INTERRUPT_POINT), Related(tested, "cancellation test")),
        detail=TeardownDetail((where,), handler.function_lines),
        severity=analysis.severity([Consequence.LOSES_WORK], None),
    )


def _reported(enclosure: Enclosure, skips: bool) -> bool:
    """A guard that misses cancellation and lets it skip later steps or later items."""
    return misses_cancellation(enclosure) and (skips or enclosure.per_item)


def _finding(
    analysis: ModuleAnalysis,
    locate: Locate,
    region: Region,
    point: InterruptPoint,
    enclosure: Enclosure,
    skipped: list[CriticalStep],
) -> Finding:
    what = "suppress" if enclosure.kind is EnclosureKind.SUPPRESS else "this except clause"
    where = locate(point.node)
    message = (
        f"{what} guards `{point.text}` (line {where.line}) but does not "
        "catch cancellation, a BaseException: an interrupt there still skips the "
        "teardown"
    )
    return RULE.finding(
        locate(enclosure.report_node),
        message,
        f"{region.function}\x1f{point.text}",
        related=(Related(where, INTERRUPT_POINT),),
        detail=region.teardown_detail((where,), locate),
        severity=analysis.severity(_at_stake(point, region, skipped), region),
    )


RULE = Rule(
    code="GATE102",
    name="guard-misses-cancellation",
    summary="A guard around a teardown await catches Exception or narrower; cancellation passes",
    family=Family.TEARDOWN,
    severity=Severity.ERROR,
    doc=shared_sections(__doc__),
    fix="Also catch asyncio.CancelledError (a BaseException), keep it, and re-raise it after "
    "the remaining steps.",
    check=check,
    autofix=Autofix.HOLD,
    interrupt_order=2,
)
