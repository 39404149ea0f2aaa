"""# GATE107 unprotected-release

## What it does
Flags a call that releases something the function acquired with an await (`conn.close()`,
`pool.release(conn)`, closing every connection it put in a list) when an await that can
suspend lies between the acquisition and the release, and neither a `finally:` nor a handler of
the function releases it too: only the normal path gives it back.

A task the function starts on its own (`asyncio.create_task(...)`, `asyncio.ensure_future(...)`,
`loop.create_task(...)`, not a task group's `tg.create_task`) is acquired the same way, and its
`cancel()` is its release: cancelled only on the normal path, after an await, a cancel at that
await leaves the task running with nobody waiting for it (nats.py's message iterator lost the
message its orphaned `queue.get()` task then took). An await that passes the cancel on to the
task (`await task`, `asyncio.wait_for(task, ...)`, `asyncio.gather(task, ...)`) leaves nothing
running; `asyncio.wait` does not pass it on. These are warnings: the task is of the process.

A count works the same way: `self._waiting -= 1` taking back a `self._waiting += 1` of the same
block, with an await that can suspend in between, and no subtraction from it in a `finally:` or
a handler of the function. A cancel at the await leaves the count raised for good (livekit's
process pool spawned a process too many for every cancelled launch). These are warnings: the
count is state of the process.

## Why is this bad?
A cancel (a timeout around the call, a client that went away) lands at the await in between and
leaves the function at once: the release below never runs. Connections opened for a check stay
open, a pooled connection is never returned, a subprocess keeps running. The same happens on any
exception, but a cancel needs no bug to happen: a timeout is enough.

Findings are errors when the release leaks something outside the process (a connection to a
server, a subprocess, a lock) and warnings for a best-effort close of an in-process object and
in test code (see the README's tiers).

## Example
```python
async def connect_first(hosts):
    opened = []
    chosen = None
    for host in hosts:
        conn = await open_connection(host)
        opened.append(conn)
        if await conn.is_primary():
            chosen = conn
            break
    for conn in opened:
        if conn is not chosen:
            conn.close()
    return chosen
```

## Use instead
Release on every way out, with a `finally:` (or a context manager):
```python
async def connect_first(hosts):
    opened = []
    chosen = None
    try:
        for host in hosts:
            conn = await open_connection(host)
            opened.append(conn)
            if await conn.is_primary():
                chosen = conn
                break
    finally:
        for conn in opened:
            if conn is not chosen:
                conn.close()
    return chosen
```

Not reported in test code (`test-paths`): judged on real code, tests open a client, use it and
close it on the happy path by the hundred, and a cancelled test run leaks nothing that outlives
it.

## Known problems
Only method calls count as releases on the normal path (`conn.close()`, `pool.release(conn)`): a
plain function handed the value (`cleanup_images(project)`) often acts on something else. In a
`finally:` or a handler, a plain function whose name releases (`cancel_and_drain(task)`) counts
as releasing what it is handed. A release after a `try` whose handler keeps the cancel
(`except CancelledError: pass`) covers the awaits in that `try`. Only values bound by
`name = await ...` in the same function, the containers it appends them
to and their items are followed; a release done by the caller, by a context manager, or by an
object that took ownership is not seen. A value looked up (`await self.get(name)`, `await
store.get_metadata(id)`: a call whose name starts with get, find, lookup, query, search, fetch,
load or read) exists apart from the function: only closing or releasing it counts, and a function
that deletes what it looked up is the delete itself, not a release (judged on real code: delete
routes of a web service and a container's create-or-replace). An awaited release in a
`finally:` still needs its interrupt held (skippable-teardown-step, unguarded-cleanup-await).

## Severity
{teardown-severity}

## Options
- `tool.gate.teardown.critical-tokens`, `extend-critical-tokens`: the names of releases.
- `tool.gate.teardown.test-paths`, `best-effort-severity`, `test-severity`: the tiers.
"""

from __future__ import annotations

from collections.abc import Iterator

from gate.analysis.facts import ModuleAnalysis
from gate.model import INTERRUPT_POINT, Family, Finding, Related, Severity, TeardownDetail
from gate.rule import Locate, Rule, shared_sections


def check(analysis: ModuleAnalysis, locate: Locate) -> Iterator[Finding]:
    if analysis.in_tests:
        return  # judged on real code: tests close what they open on the happy path by design
    for release in analysis.unprotected_releases:
        where = locate(release.interrupt)
        acquired = locate(release.acquired)
        if release.undoes:
            what = f"undoes line {acquired.line}'s change"
        elif release.started:
            what = f"cancels the task line {acquired.line} started: it keeps running"
        else:
            what = f"releases what line {acquired.line} acquired"
        yield RULE.finding(
            locate(release.release),
            f"`{release.label}` runs only on the normal path: a cancel at line {where.line} "
            f"(`{release.interrupt_text}`) leaves the function before it, and no finally "
            f"block {what}",
            f"{release.function}\x1f{release.label}",
            related=(
                Related(where, INTERRUPT_POINT),
                Related(acquired, "started here" if release.started else "acquired here"),
            ),
            detail=TeardownDetail((where,), release.function_lines),
            severity=analysis.severity([release.consequence], None),
        )


RULE = Rule(
    code="GATE107",
    name="unprotected-release",
    summary="What an await acquired (or a started task) is released only on the normal path; a "
    "cancel skips it",
    family=Family.TEARDOWN,
    severity=Severity.ERROR,
    doc=shared_sections(__doc__),
    fix="Release it in a finally block (or use the resource as a context manager).",
    check=check,
    interrupt_order=1,
)
