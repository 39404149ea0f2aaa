"""# GATE104 unshielded-teardown-await

## What it does
In a module that uses trio or anyio, flags every await, `async for` and `async with` in a teardown
region that is not inside a shielded cancel scope (`CancelScope(shield=True)`,
`move_on_after(..., shield=True)`, `fail_after(..., shield=True)`) or a configured shield helper,
and every awaitable pushed onto the exit stack of an `async with AsyncExitStack() as stack:`
block (`stack.push_async_callback(conn.close)`) with an await after the push: the block's exit
awaits it, in teardown, as a `finally:` would. A project function pushed there is a teardown
region of its own and is judged in its body.
A no-argument `.aclose()` is exempt: those must close even when cancelled. So is what cannot
suspend, and so cannot raise: an await of a project function that never suspends, and an
`async with` whose managers never suspend (a no-op `__aenter__`, an `asyncio.Lock` attribute that
no holder anywhere in the project keeps across an await: it is always free when taken; one that
only teardown methods of this one's name take, which waits only while another run of it holds
the lock and does the same work).

## Why is this bad?
trio and anyio cancellation is level-triggered: once a scope is cancelled, every checkpoint inside
it raises `Cancelled` again. In a `finally:` that runs because of a cancel, every await fails at
once, so awaited cleanup never runs unless it is shielded. Catching the exception does not help:
the next checkpoint raises again.

## Example
```python
import trio


async def run(conn):
    try:
        await conn.serve()
    finally:
        await conn.send_goodbye()
```

## Use instead
```python
import trio


async def run(conn):
    try:
        await conn.serve()
    finally:
        with trio.move_on_after(5, shield=True):
            await conn.send_goodbye()
```

## Known problems
A module counts as trio/anyio when it imports either; an asyncio module that imports anyio for one
helper is judged by the level-triggered rules too. Shield scopes opened in a caller are not seen.

## Fix
`gate check --fix` puts the region's statements, from the first unshielded await to the last,
under a shielded cancel scope of the module's library (`with trio.CancelScope(shield=True):`,
`anyio.CancelScope` under anyio; the one the function spells out when the module imports both),
with a comment suggesting a deadline:
```
finally:
    # Shielded: a cancel cannot cut this teardown short. If it can hang, bound it instead:
    # with trio.move_on_after(SECONDS, shield=True):
    with trio.CancelScope(shield=True):
        await conn.send_goodbye()
```
The same fix resolves skippable-teardown-step, unguarded-cleanup-await and
guard-misses-cancellation in a trio/anyio module.

## Fix safety
A shielded scope without a deadline cannot be cancelled: a teardown await that hangs now hangs
for ever. Give it a deadline (`move_on_after(SECONDS, shield=True)`) when it can. There is no fix
when the shielded range would hold a `yield`, or when the module imports neither `trio` nor
`anyio` by name (nor `CancelScope` from them).

## Severity
{teardown-severity}

## Options
- `tool.gate.teardown.shield-helpers`: helpers that shield what they run.
"""

from __future__ import annotations

from collections.abc import Iterator

from gate.analysis.facts import CriticalStep, InterruptPoint, ModuleAnalysis, Region, precedes
from gate.analysis.vocabulary import only_waits
from gate.model import INTERRUPT_POINT, Family, Finding, Related, Severity, TeardownDetail
from gate.rule import Autofix, Locate, Rule, shared_sections


def _severity(analysis: ModuleAnalysis, at_stake: list[CriticalStep], region: Region) -> Severity:
    """The steps the await can cut or skip decide; an await that puts no step at stake is a
    warning."""
    if not at_stake:
        return Severity.WARNING
    return analysis.severity((step.consequence for step in at_stake), region)


def _exposed(point: InterruptPoint, at_stake: list[CriticalStep]) -> bool:
    """Can a cancelled scope make this await raise with something lost? Not when it is shielded,
    cancel-safe by contract, or only waits with nothing left to cut or skip."""
    if point.shielded or point.by_contract:
        return False
    if point.guarded and any(e.awaits_cancelled_task for e in point.enclosures):
        return False  # `t.cancel()`, then a held `await t`: it only waits, and what follows runs
    if point.callee_cut_safe and not at_stake:
        return False  # the callee's own steps survive; nothing after it is at stake
    return bool(at_stake) or not only_waits(point.awaited_call)


def check(analysis: ModuleAnalysis, locate: Locate) -> Iterator[Finding]:
    if not analysis.level_triggered:
        return
    yield from _stack_callbacks(analysis, locate)
    for region in analysis.regions:
        for point in region.points:
            at_stake = [
                step
                for step in region.steps
                if (point in step.points and not point.callee_cut_safe) or precedes(point, step)
            ]
            if not _exposed(point, at_stake):
                continue
            where = locate(point.node)
            yield RULE.finding(
                where,
                f"`{point.text}` in a teardown region is not in a shielded cancel scope: under "
                "trio/anyio a cancelled scope makes it raise at once",
                f"{region.function}\x1f{point.text}",
                detail=region.teardown_detail((where,), locate),
                severity=_severity(analysis, at_stake, region),
            )


def _stack_callbacks(analysis: ModuleAnalysis, locate: Locate) -> Iterator[Finding]:
    """An awaitable pushed onto the exit stack of an `async with` block is awaited when the
    block exits: after a cancel at a later await of the block, in the cancelled scope."""
    for pushed in analysis.stack_callbacks:
        where = locate(pushed.interrupt)
        stack = locate(pushed.stack)
        consequences = [pushed.consequence] if pushed.consequence is not None else []
        yield RULE.finding(
            locate(pushed.push),
            f"`{pushed.label}` is pushed onto the exit stack of the `async with` at line "
            f"{stack.line}, which awaits it when the block exits, outside a shielded cancel "
            f"scope: under trio/anyio a cancel at line {where.line} makes it raise at once",
            f"{pushed.function}\x1f{pushed.label}",
            related=(Related(where, INTERRUPT_POINT), Related(stack, "exit stack")),
            detail=TeardownDetail((where,), pushed.function_lines),
            severity=(analysis.severity(consequences, None) if consequences else Severity.WARNING),
        )


RULE = Rule(
    code="GATE104",
    name="unshielded-teardown-await",
    summary="trio/anyio: an await in a teardown region outside a shielded cancel scope",
    family=Family.TEARDOWN,
    severity=Severity.ERROR,
    doc=shared_sections(__doc__),
    fix="Wrap the teardown awaits in `with trio.move_on_after(T, shield=True):` "
    "(anyio.move_on_after(T, shield=True) under anyio).",
    check=check,
    autofix=Autofix.SHIELD,
)
