"""# GATE108 context-entered-by-hand

## What it does
Flags a context manager a function enters by hand, `await manager.__aenter__()`, when an await
after it that can suspend lies outside any `try` of the function that has a `finally:` or a
handler catching cancellation: a cancel there leaves the function with the context entered and
nothing to exit it. Reported at the `__aenter__()`, with the await as the related location.

## Why is this bad?
`async with` exits what it entered however its block ends. Entering by hand hands that exit to
whoever owns the manager later (a `stop()`, an `__aexit__`), and they run only if this function
returns: a caller whose `start()` was cancelled never calls `stop()`, and a caller's
`async with` never runs the `__aexit__` of an `__aenter__` that raised. The task group of a
portal stays open with its thread, an exit stack keeps the subprocesses and sessions entered into
it, and anyio later fails with "exited non-innermost cancel scope".

An exit stack entered by hand is an error (it closes whatever was entered into it, processes
and remote sessions included): a manager named as one (`self._exit_stack`), or one the project
assigns an `AsyncExitStack()` or `ExitStack()` (`self._resources = AsyncExitStack()`); other
managers are warnings (see the README's tiers).

## Example
```python
class Adapter:
    async def start(self):
        self._portal = BlockingPortal()
        await self._portal.__aenter__()
        await to_thread.run_sync(self.original.start)
```

## Use instead
Exit it on the way out when what follows fails or is cancelled:
```python
import sys


class Adapter:
    async def start(self):
        self._portal = BlockingPortal()
        await self._portal.__aenter__()
        try:
            await to_thread.run_sync(self.original.start)
        except BaseException:
            await self._portal.__aexit__(*sys.exc_info())
            raise
```

## Known problems
Any `try` with a `finally:` or a cancel-catching handler around the later awaits is taken to exit
the manager; what it does is not checked. A manager assigned to a `nonlocal` or `global` name is
taken as handed to an enclosing owner that exits it; one stored elsewhere is not followed.

## Severity
{teardown-severity}

## Options
- `tool.gate.teardown.test-paths`, `best-effort-severity`, `test-severity`: the tiers.
"""

from __future__ import annotations

from collections.abc import Iterator

from gate.analysis.facts import ModuleAnalysis
from gate.model import INTERRUPT_POINT, Family, Finding, Related, Severity, TeardownDetail
from gate.rule import Locate, Rule, shared_sections


def check(analysis: ModuleAnalysis, locate: Locate) -> Iterator[Finding]:
    for entered in analysis.hand_entered:
        where = locate(entered.interrupt)
        yield RULE.finding(
            locate(entered.enter),
            f"`{entered.label}` is entered by hand and a cancel at line {where.line} "
            f"(`{entered.interrupt_text}`) leaves the function with it entered: nothing here "
            "exits it on that path, and its owner's exit never runs",
            f"{entered.function}\x1f{entered.label}",
            related=(Related(where, INTERRUPT_POINT),),
            detail=TeardownDetail((where,), entered.function_lines),
            severity=analysis.severity([entered.consequence], None),
        )


RULE = Rule(
    code="GATE108",
    name="context-entered-by-hand",
    summary="A context entered by hand with `__aenter__()` stays entered when a later await is "
    "cancelled",
    family=Family.TEARDOWN,
    severity=Severity.ERROR,
    doc=shared_sections(__doc__),
    fix="Exit it in an `except BaseException:` (or `finally:`) around the awaits that follow, or "
    "enter it with `async with`.",
    check=check,
    interrupt_order=1,
)
