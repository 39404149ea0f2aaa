"""# GATE105 cleanup-only-on-error

## What it does
Flags cleanup (a step such as `discard`, `close`, `kill`, `release`, or any call of a handler
that cleans up and re-raises) that only an `except` clause narrower than cancellation runs,
after a `try` body that can be interrupted: `except Exception:`, `except TimeoutError:`,
`except OSError:`, and `except KeyboardInterrupt:`, which under asyncio never sees Ctrl-C (it
reaches the awaiting task as a cancel). A cancel at the await in the `try` body bypasses the
handler entirely. A sync
function that awaits through a greenlet bridge (sqlalchemy's `await_only()`, `await_fallback()`,
`await_()`) is judged the same way: the bridged call is where the driving task's cancel lands.

Also flags a step of a cancellation handler placed after a re-raise the handler may take
(`if not self.suppress_cancelled_error: raise`, then `self._record_failure(server, exc)`)
when another handler of the same `try` takes that step before it re-raises (`except
BaseException: self._record_failure(server, exc); raise`): the error paths do the bookkeeping
the caller's cleanup relies on, and the cancel that takes the raise skips it.

Also flags cleanup placed right after a `try` with no `finally:` whose `except Exception:` lets
the function go on after an error (it logs, or keeps the error as the result): the code is laid
out so that the cleanup runs whether the work succeeds or fails, and a cancel, no Exception,
leaves the function from the `try` body before it (pydantic-evals ran a case's
`lifecycle.teardown()` so, and a cancelled case left its fixtures behind). Only give-back steps
by name in the statements after the `try` up to the first that awaits, acting on something the
`try` or the code before it already had, and not a step of a teardown region (which
skippable-teardown-step judges) count. These are warnings whatever the settings: on the 34 real
code bases of `benchmarks/realcode/`, one of the three that would have been errors was false (a
task nothing cancels).

Not reported where the cleanup has nothing to undo on the cancel's path: every await of the
`try` body that can suspend is a method of `self` that sets a flag of `self` only once its work
is done (`initialize()` opening with `if self._initialized: return` and ending with
`self._initialized = True`), and the handler's cleanup is a method of `self` that returns at
once unless that flag is set (`shutdown()` opening with `if not self._initialized: return`). A
cancel inside `initialize()` lands while the flag is still false, so `shutdown()` would do
nothing there.

Not cleanup either: a call handed only the caught error, or what the handler made of it
(`self._signal_error(Wrapped.from_exception(e))`, `error = str(e)` then `report(error)`), which
reports or translates the error, unless it is a release by name (`await
ctx.__aexit__(type(e), e, e.__traceback__)` still exits the context); a logging call (also
`self.log("error", ...)` and a method whose name starts with the word log); and, in a timeout
handler, an attribute set to the caught error (`self._err = e`), which records what failed.

## Why is this bad?
`asyncio.CancelledError` (and `trio.Cancelled`) is a `BaseException`. Code written as "acquire,
try the work, on failure give the resource back and re-raise" gives nothing back when the work
is cancelled: the connection stays checked out of the pool, the subprocess keeps running, the
slot is never released. It is the most common cancellation bug in real connection pools and
clients.

Findings are errors when the cleanup loses data or leaks something outside the process, and
warnings for a best-effort close of an in-process object or in test code (see the README's
tiers).

## Example
```python
async def fetch(pool, url):
    conn = await pool.acquire()
    try:
        return await conn.get(url)
    except Exception:
        await pool.discard(conn)
        raise
```

## Use instead
Give the resource back on every way out, cancellation included, without an await that a cancel
could cut (an awaited give-back needs its interrupt held, as for skippable-teardown-step):
```python
async def fetch(pool, url):
    conn = await pool.acquire()
    try:
        return await conn.get(url)
    except BaseException:
        pool.discard_nowait(conn)
        raise
```
Or give it back in a `finally:` (or a context manager), which runs on every way out.

## Known problems
A step the same function also runs in a `finally:` or a cancellation handler is taken as covered
and not reported. A call of an abstract method is judged by the implementations the project
ships (a subclass a user writes may suspend where the shipped ones do not). Cleanup done by a
caller (the caller's own `finally:`) is not seen. Under trio/anyio, the handler's own awaits
also need a shielded scope once it catches cancellation.

## Severity
{teardown-severity}
Cleanup after a `try` whose handler goes on is a warning whatever the settings (see above).

## Options
- `tool.gate.teardown.critical-tokens`, `extend-critical-tokens`: the names of steps.
- `tool.gate.teardown.test-paths`, `best-effort-severity`, `test-severity`: the tiers.
"""

from __future__ import annotations

from collections.abc import Iterator

from gate.analysis.facts import ModuleAnalysis
from gate.model import INTERRUPT_POINT, Family, Finding, Related, Severity, TeardownDetail
from gate.rule import Locate, Rule, shared_sections


def check(analysis: ModuleAnalysis, locate: Locate) -> Iterator[Finding]:
    judged: set[int] | None = None  # the lines of the teardown regions' steps, read once
    for handler in analysis.narrow_handlers:
        if handler.cleaned_elsewhere:
            continue
        where = locate(handler.interrupt)
        related = [Related(where, INTERRUPT_POINT)]
        if handler.raised_at is not None:
            raised = locate(handler.raised_at)
            related.append(Related(raised, "the re-raise a cancel takes first"))
        if handler.after and judged is None:
            judged = _region_step_lines(analysis, locate)
        for step in handler.steps:
            at = locate(step.node)
            if handler.after and at.line in judged:  # type: ignore[operator]
                continue  # a step of a teardown region: skippable-teardown-step judges it
            yield RULE.finding(
                at,
                _message(step.label, where.line, handler, locate),
                f"{handler.function}\x1f{step.label}",
                related=tuple(related),
                detail=TeardownDetail((where,), handler.function_lines),
                # after the `try`: a warning whatever the settings (see Severity)
                severity=Severity.WARNING
                if handler.after
                else analysis.severity([step.consequence], None),
            )


def _region_step_lines(analysis: ModuleAnalysis, locate: Locate) -> set[int]:
    lines: set[int] = set()
    for region in analysis.regions:
        for step in region.steps:
            where = locate(step.statement)
            lines.update(range(where.line, (where.end_line or where.line) + 1))
    return lines


def _message(label, line, handler, locate: Locate) -> str:
    interrupt, raised_at = handler.interrupt_text, handler.raised_at
    if handler.after:
        return (
            f"`{label}` runs after the `try` above whether it succeeds or fails (its `except "
            f"Exception:` at line {locate(handler.handler).line} goes on), but a cancel at line "
            f"{line} (`{interrupt}`) is no Exception and leaves the function before it"
        )
    if raised_at is None:
        return (
            f"`{label}` runs only when the `try` above raises an error: a cancel at line {line} "
            f"(`{interrupt}`) is no Exception and bypasses this handler, so it never runs"
        )
    return (
        f"`{label}` runs in the cancellation handler only when it does not re-raise: a cancel "
        f"at line {line} (`{interrupt}`) that takes the raise at line {locate(raised_at).line} "
        "skips it, though another handler of this `try` runs it before re-raising"
    )


RULE = Rule(
    code="GATE105",
    name="cleanup-only-on-error",
    summary="Cleanup runs only in an except clause narrower than cancellation; a cancel skips it",
    family=Family.TEARDOWN,
    severity=Severity.ERROR,
    doc=shared_sections(__doc__),
    fix="Catch BaseException (or add `except CancelledError`) for the cleanup, re-raising, or "
    "move it to a finally block.",
    check=check,
    interrupt_order=1,
)
