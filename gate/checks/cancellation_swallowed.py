"""# GATE103 cancellation-swallowed

## What it does
Flags a handler inside a teardown region that catches cancellation (bare `except:`,
`BaseException`, `CancelledError`, `trio.Cancelled`, `anyio.get_cancelled_exc_class()`) and then
neither re-raises it nor keeps it for later: no `raise`, the exception object is not used
(handing it to a logging call, `logger.warning("...: %s", error)` or `print`, does not keep it),
and no flag it sets is read anywhere else in the function. Also flags `contextlib.suppress` of
cancellation around an await in a region. A handler whose `try` body awaits only what a shield
covers (a shielded scope around it, or a callee whose body is shielded) catches errors alone and
is not reported.

## Why is this bad?
The task was asked to stop. Swallowing the cancel makes the teardown return normally: the caller's
`wait_for` or task group never learns the task was cancelled, timeouts stop working, and
`asyncio.timeout()` cannot turn the cancel into `TimeoutError`.

## Example
```python
import asyncio


async def run(self):
    try:
        await self.evaluate()
    finally:
        try:
            await self.post_run()
        except asyncio.CancelledError:
            pass
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
        except asyncio.CancelledError as error:
            interrupt = error
        self.write_result()
        if interrupt is not None:
            raise interrupt
```

Waiting for a task the function has just cancelled (`task.cancel(); try: await task; except
CancelledError: pass`, the same with `contextlib.suppress(CancelledError)`,
`await asyncio.wait_for(task, 1)`, or `asyncio.gather(*tasks)` of tasks cancelled one by one in
a loop or collected in a list) is a warning: the handler is there
for the child's cancel, and swallows the caller's own only when one lands during that wait. So is
a handler in trio/anyio code: a cancelled scope raises again at the next checkpoint, so the
cancel is delayed rather than lost.

## Known problems
Only handlers inside a teardown region are checked: a worker loop's top-level
`except CancelledError: pass` is a choice this rule does not judge
(cancellation-swallowed-outside-teardown reports it, as a warning). A flag counts as kept when it
is read anywhere else in the function, even if it is never acted on. A handler of a `try` whose
body cannot suspend (no `await`, `async for` or `async with`) is not checked: a cancel is
delivered only where a task suspends, so what it catches is another's (`task.exception()` of a
cancelled child task).

## Fix
`gate check --fix` makes the handler keep what it caught (`except asyncio.CancelledError as
error: interrupt = interrupt or error`, naming the exception when the handler did not) and
re-raises it after the rest of the region, so the teardown still finishes and the task still
ends cancelled. A handler that also catches ordinary exceptions (`except BaseException`, a bare
`except:`) keeps only what is not an `Exception`: ordinary errors stay swallowed, as before. A
`suppress` of cancellation becomes a `try` that still suppresses the other exceptions it named and
keeps the cancellation.

## Fix safety
The task now ends cancelled where it used to carry on: that is the point, but code that relied on
the swallow (a worker loop inside a teardown) changes behaviour. A `return`, `break` or
`continue` that leaves the region re-raises the kept cancellation first. There is no fix, and the
finding says why, when the region yields (the kept cancellation would wait across the `yield`),
for an `except*` handler (re-raising its group would change what is raised), for a
`suppress` that shares its `with` with other context managers, and when the guarded code awaits
a task or future rather than a call (`task.cancel(); await task`), or gathers tasks
(`asyncio.gather(*tasks)`): the cancellation caught may be that task's own, and re-raising it
would make the function look cancelled. With `return_exceptions=True` the gather hands the
tasks' cancels back as results, so what is caught is the function's own, and is kept. A
coroutine awaited through a call can still hand up a child task's cancel; gate cannot see that.

## Severity
{teardown-severity}

## Options
None.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from gate.analysis.facts import (
    CancelHandler,
    Enclosure,
    EnclosureKind,
    InterruptPoint,
    ModuleAnalysis,
    Region,
)
from gate.model import INTERRUPT_POINT, Family, Finding, Related, Severity
from gate.rule import Autofix, Locate, Rule, shared_sections

if TYPE_CHECKING:
    import libcst as cst


def swallows(handler: CancelHandler) -> bool:
    """A cancellation handler that neither re-raises nor keeps the exception or a flag."""
    import libcst as cst  # loaded only when there is teardown code to judge

    if handler.reraised_after:
        return False  # the block around the `try` ends with a raise that carries the cancel on
    body = handler.node.body
    if _raises(body):
        return False
    name = handler.node.name.name if handler.node.name is not None else None
    if isinstance(name, cst.Name) and name.value in _loaded_names(body):
        return False
    flags = _assigned_names(body)
    if flags is None:
        return False  # an attribute or subscript was set: kept somewhere we cannot follow
    return not flags or not (flags & _names_read_outside(handler.function_body, handler.node))


def _raises(body: cst.CSTNode) -> bool:
    """Is there a `raise`, or a call that never returns (`pytest.fail`), in the block?"""
    import libcst as cst

    from gate.analysis.cstwalk import descendants
    from gate.analysis.walker import RAISING_CALLS, dotted_name

    for node in descendants(body):
        if isinstance(node, cst.Raise):
            return True
        if isinstance(node, cst.Call) and dotted_name(node.func) in RAISING_CALLS:
            return True
    return False


# Calls that only report what they are given: an exception logged or printed is not kept
LOGGERS = frozenset({"log", "logger", "logging", "_log", "_logger", "LOG", "LOGGER"})
LOG_METHODS = frozenset(
    {"debug", "info", "warning", "warn", "error", "exception", "critical", "log", "print"}
)


def _reports_only(call: cst.Call) -> bool:
    """`logger.warning("... %s", error)`, `self._log.debug(...)`, `print(error)`."""
    from gate.analysis.walker import dotted_name

    name = dotted_name(call.func) or ""
    if name == "print":
        return True
    parts = name.split(".")
    return len(parts) >= 2 and parts[-1] in LOG_METHODS and parts[-2] in LOGGERS


def _loaded_names(body: cst.CSTNode) -> set[str]:
    """The names the block reads, leaving out what it only hands to a logging call."""
    import libcst as cst

    from gate.analysis.cstwalk import names_below

    return names_below(body, lambda node: isinstance(node, cst.Call) and _reports_only(node))


def _assigned_names(body: cst.BaseSuite) -> set[str] | None:
    """The plain names the block assigns; None when it sets anything else (an attribute, an
    item, a global or nonlocal name), which a rule cannot follow."""
    import libcst as cst

    names: set[str] = set()
    opaque = False

    class _Targets(cst.CSTVisitor):
        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            self.target(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self.target(node.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            self.target(node.target)

        def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
            nonlocal opaque
            opaque = True

        def visit_Global(self, node: cst.Global) -> None:
            nonlocal opaque
            opaque = True

        def target(self, target: cst.BaseExpression) -> None:
            nonlocal opaque
            if isinstance(target, cst.Name):
                names.add(target.value)
            else:
                opaque = True

    body.visit(_Targets())
    return None if opaque else names


def _names_read_outside(function_body: cst.CSTNode, skip: cst.CSTNode) -> set[str]:
    import libcst as cst

    names: set[str] = set()

    class _Reads(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            if node is skip:
                return False
            if isinstance(node, cst.AssignTarget):
                return not isinstance(node.target, cst.Name)
            if isinstance(node, cst.Name):
                names.add(node.value)
            return True

    function_body.visit(_Reads())
    return names


def _handler_severity(analysis: ModuleAnalysis, handler: CancelHandler, region: Region) -> Severity:
    """A warning when the handler waits for a task the function just cancelled, or when a
    cancelled trio/anyio scope will raise again at the next checkpoint."""
    if handler.awaits_cancelled_task or analysis.level_triggered:
        return Severity.WARNING
    return analysis.severity([], region)


def check(analysis: ModuleAnalysis, locate: Locate) -> Iterator[Finding]:
    for region in analysis.regions:
        if region.reraised_by_callers:
            continue  # what the helper keeps, every caller raises again
        for handler in region.cancel_handlers:
            if drops_cancel(handler, region):
                yield RULE.finding(
                    locate(handler.node),
                    "cancellation is caught here and never re-raised or kept: the task carries "
                    "on as if it had not been cancelled",
                    f"{region.function}\x1f{handler.text}",
                    detail=region.teardown_detail((), locate),
                    severity=_handler_severity(analysis, handler, region),
                )
        for enclosure, point in _swallowing_suppresses(region):
            where = locate(point.node)
            yield RULE.finding(
                locate(enclosure.node),
                "contextlib.suppress of cancellation swallows the interrupt: the task "
                "carries on as if it had not been cancelled",
                f"{region.function}\x1fsuppress\x1f{point.text}",
                related=(Related(where, INTERRUPT_POINT),),
                detail=region.teardown_detail((where,), locate),
                severity=_suppress_severity(analysis, enclosure, region),
            )


def drops_cancel(handler: CancelHandler, region: Region) -> bool:
    """Does the handler swallow a cancel of the task: it neither re-raises nor keeps what it
    catches, and a cancel can land in its `try` (not every await there is shielded)?"""
    return swallows(handler) and not _only_shielded(handler, region)


def _only_shielded(handler: CancelHandler, region: Region) -> bool:
    """Is every await of the handler's `try` body shielded (a scope around it, or a callee
    whose body is)? No cancel lands there: the handler catches errors alone."""
    inside = [
        point
        for point in region.points
        if any(enclosure.node is handler.statement for enclosure in point.enclosures)
    ]
    return bool(inside) and all(point.shielded for point in inside)


def _swallowing_suppresses(region: Region) -> Iterator[tuple[Enclosure, InterruptPoint]]:
    """Each suppress of cancellation around an interrupt point of the region, with the first
    point it covers, unless the block around it ends with a raise that carries the cancel on."""
    seen: set[int] = set()
    for point in region.points:
        for enclosure in point.enclosures:
            if enclosure.kind is not EnclosureKind.SUPPRESS or not enclosure.catches_cancellation:
                continue
            if enclosure.reraised_after or id(enclosure.node) in seen:
                continue
            seen.add(id(enclosure.node))
            yield enclosure, point


def _suppress_severity(analysis: ModuleAnalysis, suppress: Enclosure, region: Region) -> Severity:
    """As for a handler: a warning when the suppress is there for a task the function just
    cancelled."""
    if suppress.awaits_cancelled_task:
        return Severity.WARNING
    return analysis.severity([], region)


RULE = Rule(
    code="GATE103",
    name="cancellation-swallowed",
    summary="A teardown handler catches cancellation and neither re-raises nor keeps it",
    family=Family.TEARDOWN,
    severity=Severity.ERROR,
    doc=shared_sections(__doc__),
    fix="Keep the exception (except CancelledError as e: interrupt = e) and re-raise it once the "
    "teardown is done.",
    check=check,
    autofix=Autofix.KEEP,
)
