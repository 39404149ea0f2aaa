"""What the teardown analysis finds, as neutral, frozen facts the rules judge.

Nothing here imports libcst, so the rule modules (and `gate rules`, `gate explain`, a warm cached
run) load without it; the node fields hold libcst nodes at run time. The facts say what the code
does (which constructs enclose an await, what a handler catches); whether that is a problem is
each rule's own predicate.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

from gate.model import Location, Severity, TeardownDetail

if TYPE_CHECKING:
    import libcst as cst

    from gate.rule import Locate


class Consequence(Enum):
    """What is lost when a step is skipped or cut short."""

    LOSES_WORK = "loses data or leaks something outside the process"
    BEST_EFFORT = "a best-effort close of an in-process object"


@dataclass(frozen=True)
class Tiers:
    """The severity of a teardown finding: an error when a step that loses data or leaks outside
    the process is at stake, a warning for a best-effort close and for test code (each
    configurable)."""

    best_effort: Severity = Severity.WARNING
    test_code: Severity = Severity.WARNING
    # a finding whose every interrupt point an error of its file already reports
    repeat: Severity = Severity.WARNING

    def of(self, consequences: Iterable[Consequence], in_tests: bool) -> Severity:
        """The severity for findings that put steps with these consequences at stake (no step:
        the finding is about cancellation itself, which loses work)."""
        listed = list(consequences) or [Consequence.LOSES_WORK]
        natural = (
            Severity.ERROR
            if Consequence.LOSES_WORK in listed or self.best_effort is Severity.ERROR
            else Severity.WARNING
        )
        if in_tests and self.test_code is Severity.WARNING:
            return Severity.WARNING
        return natural


class RegionKind(Enum):
    """Why a piece of code is teardown, with the words a message uses for it."""

    FINALLY = "finally block"
    CANCEL_HANDLER = "cancellation handler"
    AEXIT = "__aexit__"
    CONFIGURED = "teardown function"
    METHOD = "teardown method"
    HELPER = "teardown helper"
    # not teardown: the whole body of a function whose own `try` catches cancellation outside
    # any teardown region, read for its cancellation handlers alone
    BODY = "function body"

    @property
    def words(self) -> str:
        return self.value


class Arm(Enum):
    """Which block of a compound statement a piece of code is in."""

    IF = "if"
    ELSE = "else"
    TRY_BODY = "try"
    HANDLER = "handler"
    TRY_ELSE = "try-else"
    FINALLY = "finally"
    CASE = "case"


# Arms of one statement that never both run in one pass: the two sides of an `if`; two different
# handlers, or a handler and the `else` of the same `try`; two `match` cases.
_EXCLUSIVE = (
    frozenset({Arm.IF, Arm.ELSE}),
    frozenset({Arm.HANDLER, Arm.TRY_ELSE}),
    frozenset({Arm.CASE}),
)


@dataclass(frozen=True)
class Branch:
    """One step of the path from a region's top to a piece of code: statement, arm, index."""

    statement: int  # id() of the compound statement
    arm: Arm
    index: int = 0  # which handler or case


class EnclosureKind(Enum):
    """A construct of the region that encloses an interrupt point."""

    TRY_EXCEPT = "try/except"  # a `try` with handlers
    TRY_FINALLY = "try/finally"  # a `try` with a `finally:` (after its body)
    SUPPRESS = "suppress"  # `with contextlib.suppress(...)`
    SHIELD = "shield"  # a shielded trio/anyio scope, or a configured shield helper


@dataclass(frozen=True)
class Enclosure:
    """What one enclosing construct does to an interrupt.

    `catches_cancellation`: a handler (or the suppress) catches cancellation; `holds`: a handler
    that catches it does not end by re-raising, so the code after the `try` still runs.
    `report_node` is where a finding about the construct points (the first handler).
    """

    kind: EnclosureKind
    node: cst.CSTNode
    catches_cancellation: bool = False
    holds: bool = False
    report_node: cst.CSTNode | None = None
    finally_body: cst.BaseSuite | None = None
    cancel_handler: int | None = None  # the index of the handler a cancel lands in
    # a `try` in a `for` loop whose body awaits something of the loop's item and whose handler
    # carries on with the next item: every iteration is meant to run
    per_item: bool = False
    # a suppress of cancellation around an await of a task the function cancelled just before
    # (`t.cancel()`; `with suppress(CancelledError): await t`), as for CancelHandler
    awaits_cancelled_task: bool = False
    # a suppress in a block that ends by raising, which carries the cancel on (as for a
    # CancelHandler's `reraised_after`)
    reraised_after: bool = False


@dataclass(frozen=True)
class InterruptPoint:
    """An `await`, `async for` or `async with` of a region, in execution order.

    `guarded`: something holds an interrupt here, so the steps after it still run; `shielded`:
    a shielded scope keeps the cancel from landing at all. `awaited_call` is the dotted name of
    the awaited call, when it is one.
    """

    node: cst.CSTNode
    statement: cst.CSTNode
    order: int
    branches: tuple[Branch, ...]
    loops: tuple[int, ...]
    enclosures: tuple[Enclosure, ...]
    text: str
    awaited_call: str | None = None
    # cancel-safe by contract: a no-argument `.aclose()` (trio/anyio close even when cancelled),
    # anyio's `aclose_forcefully`, a delegated `__aexit__` (the wrapped manager owns its shield)
    by_contract: bool = False
    # its work finishes even when the await is cancelled: handed to a thread, or tasks that
    # `asyncio.wait(...)` waits on (it never cancels them)
    runs_on: bool = False
    # what the project's summary of the awaited function says: its own steps survive an
    # interrupt inside it; it holds the interrupt and returns normally
    callee_cut_safe: bool = False
    callee_holds: bool = False
    callee_known: bool = False  # the project defines the awaited function: the above are facts
    callee_steps_cut: bool = False  # a step of the callee comes after an exposed suspension
    guarded: bool = False
    shielded: bool = False
    # the arms around it whose block ends in `return`: once code in one ran, nothing after its
    # statement runs in that pass
    returns_in: tuple[Branch, ...] = ()
    # it is in a handler only a cancel enters, which ends by raising: what it hands back to that
    # handler, the cancel included, goes on as that cancel
    reraises_cancel: bool = False


@dataclass(frozen=True)
class CriticalStep:
    """A statement of the region whose loss matters (by name, or marked `# gate: critical`)."""

    statement: cst.CSTNode
    label: str  # `self._cleanup()`, or the statement's text when marked
    consequence: Consequence
    order: int
    branches: tuple[Branch, ...]
    loops: tuple[int, ...]
    finally_ancestors: tuple[int, ...]
    text: str
    points: tuple[InterruptPoint, ...] = ()
    uses_asyncio_shield: bool = False
    # nothing the region runs after this statement can be skipped by an exception raised in
    # it: the region's last statement, or followed only by what that exception runs anyway
    ends_region: bool = False
    # the statements on every path to it that raise a pending cancel (`raise_if_cancelling()`,
    # `if task.cancelling(): raise`), as (order, loops): the code skips it whenever a cancel is
    # pending, so a cancel before one of them skips it by design
    reasserted: tuple[tuple[int, tuple[int, ...]], ...] = ()
    # the names its call passes, joined by `_` (`client.delete(self._sandbox)` -> the
    # sandbox): what it acts on besides its receiver
    acts_on: str = ""
    # the step is all a `try` runs whose handler drops an `Exception` unnoticed (`except
    # Exception: pass`, a debug log) or a `with suppress(Exception):` holds: losing it to a
    # failure is accepted, so losing it to a cancel is best effort
    failure_ignored: bool = False
    # what cutting the step short costs, when it costs less than skipping it: the project's
    # callee loses only best-effort work to a cut (its other steps run on the interrupt's path)
    cut_consequence: Consequence | None = None

    @property
    def called_name(self) -> str:
        """The final name the step calls (`close` of `self._response.close()`)."""
        return self.label.removesuffix("()").rpartition(".")[2]

    @property
    def only_by_contract(self) -> bool:
        """Awaited, and every await is cancel-safe by contract."""
        return bool(self.points) and all(point.by_contract for point in self.points)


@dataclass(frozen=True)
class DroppedKeep:
    """Where a cancel a handler keeps to raise later is lost: the name it is kept in
    (`self.error`), a `return` that can leave the function before the raise, and that raise."""

    kept_in: str
    returned: cst.CSTNode
    raised: cst.CSTNode


@dataclass(frozen=True)
class CancelHandler:
    """A handler inside a region that catches cancellation; `function_body` is the body of the
    function it is in, for rules that ask where a name it sets is read."""

    node: cst.ExceptHandler | cst.ExceptStarHandler
    text: str
    function_body: cst.CSTNode
    reraised_after: bool = False  # the block around its `try` ends by raising
    # its `try` awaits a task the function cancelled just before (`t.cancel(); await t`): the
    # handler is there for the child's cancel, and swallows the caller's only if one lands then
    awaits_cancelled_task: bool = False
    statement: cst.CSTNode | None = None  # its `try`
    # outside teardown: the handler keeps the cancel, and the function can return before it
    # raises it (gate.analysis.kept_cancel)
    dropped: DroppedKeep | None = None


@dataclass(frozen=True)
class Region:
    """One teardown region of one function, with the facts found in it."""

    kind: RegionKind
    function: str
    origin: str
    function_lines: tuple[int, int]  # first and last line of the function the region is in
    points: tuple[InterruptPoint, ...]
    steps: tuple[CriticalStep, ...]
    cancel_handlers: tuple[CancelHandler, ...]
    # entered only because a cancel already landed: a cancellation handler, the `finally:` of a
    # serve-forever loop, or a helper awaited from one (on asyncio, cutting it short needs a
    # second cancel)
    entered_by_cancel: bool = False
    # entered only because an interrupt already landed, a cancel or an error: a handler that
    # catches cancellation (`except BaseException:`), or a helper awaited only from one (on
    # asyncio, cutting it short needs a second cancel, or a cancel landing while an error is
    # being handled)
    entered_by_interrupt: bool = False
    # a teardown method (by its name) that nothing in the checked project runs: whether a cancel
    # reaches it depends on callers gate does not see
    uncalled: bool = False
    # nothing cancels the task it runs in: asyncio.run's main coroutine that routes the loop's
    # signals to its own handlers, or code only such a coroutine awaits
    uncancelled: bool = False
    # ... and the project itself runs it so (`asyncio.run(main())`): no finding is made in it
    never_cancelled: bool = False
    body: cst.BaseSuite | None = None  # the block that is the region (a finally or handler body)
    # a helper every region awaits from a handler only a cancel enters, which ends by raising
    # (`except CancelledError: await drain(task); raise`): a cancel the helper keeps and returns
    # from is raised again there, as a cancel
    reraised_by_callers: bool = False

    # The code the region spans, its header included: the `finally:` block, the handler, or the
    # whole function for a region that is a function's body.
    extent: cst.CSTNode | None = None
    # First and last lines of the helpers the region awaits, directly or through each other.
    helper_lines: tuple[tuple[int, int], ...] = ()
    # For a helper: the awaits in teardown regions that make it one, directly or through other
    # helpers.
    awaited_from: tuple[cst.CSTNode, ...] = ()
    # An `__aexit__` or teardown method whose only statement awaits another teardown method of
    # its own class in this module (`await self.shutdown()`, `await self.aclose()`): that
    # method is a region of its own
    delegates: bool = False

    def teardown_detail(self, interrupts: tuple[Location, ...], locate: Locate) -> TeardownDetail:
        """The detail of a finding in this region: its interrupt points, the region's lines and
        the lines whose change makes the finding new in a change (the helpers it awaits, the
        awaits that make a helper teardown). Positions are resolved here, for a reported
        finding only."""
        extent = locate(self.extent) if self.extent is not None else None
        lines = (extent.line, extent.end_line or extent.line) if extent else self.function_lines
        callers = (locate(node) for node in self.awaited_from)
        linked = self.helper_lines + tuple((at.line, at.end_line or at.line) for at in callers)
        return TeardownDetail(interrupts, lines, linked)


@dataclass(frozen=True)
class HandlerStep:
    """A call in an error handler that cleans up: a step by name, or any call of a handler that
    cleans up and re-raises."""

    node: cst.CSTNode
    label: str
    consequence: Consequence


@dataclass(frozen=True)
class NarrowHandler:
    """A handler narrower than cancellation (`except Exception`, `except TimeoutError`) after a
    `try` body that can be interrupted, and what it does. `cleaned_elsewhere`: the function also
    calls those steps in a `finally:` or a cancellation handler."""

    function: str
    function_lines: tuple[int, int]
    handler: cst.CSTNode
    interrupt: cst.CSTNode
    interrupt_text: str
    steps: tuple[HandlerStep, ...]
    cleaned_elsewhere: bool
    # the handler's test of the caught error for cancellation (`isinstance(e, CancelledError)`),
    # a branch that never runs: the handler is narrower than cancellation
    cancel_test: cst.CSTNode | None = None
    # for a cancellation handler's steps placed after a re-raise it may take: that `if ...:
    # raise`, which the try's other handlers take only after those steps
    raised_at: cst.CSTNode | None = None
    # the steps follow the `try`, which this broad handler lets the function go on to after an
    # error (`except Exception: log(...)`): the normal path and the error's reach them, a
    # cancel does not
    after: bool = False


@dataclass(frozen=True)
class UnprotectedRelease:
    """A call that releases a value the function acquired with an await or a task it started on
    its own (or a container holding such values), reached only on the normal path: an await
    that can suspend lies between the acquisition and the release, and no `finally:` or handler
    of the function releases it."""

    function: str
    function_lines: tuple[int, int]
    release: cst.CSTNode  # the statement that releases
    label: str
    consequence: Consequence
    acquired: cst.CSTNode  # the await that acquired it
    interrupt: cst.CSTNode  # the first await between the two
    interrupt_text: str
    # the release takes back a change the function made to an attribute of `self` (`self.n -= 1`
    # after `self.n += 1`), not a value an await acquired
    undoes: bool = False
    # what is released is a task the function started on its own, and the release its cancel()
    started: bool = False


def _exclusive(a: tuple[Branch, ...], b: tuple[Branch, ...]) -> bool:
    """Can two pieces of code with these branch paths never both run in one pass?"""
    for first, second in zip(a, b, strict=False):
        if first.statement != second.statement:
            return False
        if (first.arm, first.index) != (second.arm, second.index):
            return any({first.arm, second.arm} <= group for group in _EXCLUSIVE)
    return False


def on_interrupt_path(point: InterruptPoint, step: CriticalStep) -> bool:
    """Is `step` off the path a cancel at `point` skips? It is in a handler of an enclosing
    `try` (the one the cancel lands in runs because of it; another is that exception's own path,
    and cleanup only there is cleanup-only-on-error's finding), or in that `try`'s `finally:`."""
    for enclosure in point.enclosures:
        if enclosure.kind is EnclosureKind.TRY_EXCEPT:
            statement = id(enclosure.node)
            if any(b.statement == statement and b.arm is Arm.HANDLER for b in step.branches):
                return True
        elif (
            enclosure.kind is EnclosureKind.TRY_FINALLY
            and Branch(id(enclosure.node), Arm.FINALLY) in step.branches
        ):
            return True
    return False


def _returns_before(point: InterruptPoint, step: CriticalStep) -> bool:
    """Does a `return` end every pass that runs `point` before `step` could run? The point is
    in an arm that ends in `return`, and the step is outside that arm's statement. (A handler
    of a `try` around the point, which an error before the `return` could reach, is on the
    interrupt's path: `on_interrupt_path` has already answered for it.)"""
    return any(
        all(branch.statement != arm.statement for branch in step.branches)
        for arm in point.returns_in
    )


def _reasserted_between(point: InterruptPoint, step: CriticalStep) -> bool:
    """Does a statement that raises a pending cancel run after `point` and before `step` (later
    in the pass, or earlier in a loop both are in)?"""
    return any(
        point.order < order or not set(point.loops).isdisjoint(set(loops) & set(step.loops))
        for order, loops in step.reasserted
    )


def precedes(point: InterruptPoint, step: CriticalStep) -> bool:
    """Can an interrupt at `point` happen before `step` runs, in this pass or a loop's next one?"""
    if _exclusive(point.branches, step.branches) or on_interrupt_path(point, step):
        return False
    if point.returns_in and _returns_before(point, step):
        return False
    if step.reasserted and _reasserted_between(point, step):
        return False
    if point.order < step.order and point.statement is not step.statement:
        return True
    return bool(set(point.loops) & set(step.loops))


@dataclass(frozen=True)
class StackCallback:
    """An awaitable pushed onto the exit stack of an `async with` block, with an await after
    the push in the block that a cancel can land in: the block's exit then awaits the callback
    in a cancelled scope."""

    function: str
    function_lines: tuple[int, int]
    push: cst.CSTNode  # the push call
    label: str  # what is pushed (`conn.close`)
    stack: cst.CSTNode  # the `async with` statement
    interrupt: cst.CSTNode  # the first await after the push
    consequence: Consequence | None  # None: the callback's name names no step


@dataclass(frozen=True)
class HandEntered:
    """A context manager the function enters by hand (`await self._portal.__aenter__()`), with
    an await after it, outside any `try` that has a `finally:` or catches cancellation, that a
    cancel can land in: the function then leaves with the context entered and nothing exits it
    (a caller's `async with` never runs the `__aexit__` of an `__aenter__` that raised)."""

    function: str
    function_lines: tuple[int, int]
    enter: cst.CSTNode  # the await of `__aenter__()`
    label: str  # the manager (`self._portal`)
    interrupt: cst.CSTNode
    interrupt_text: str
    consequence: Consequence


@dataclass(frozen=True)
class ModuleAnalysis:
    """The regions of one file, whether it is level-triggered (trio/anyio), where each reported
    node's position can be resolved (by id of the node), whether the file is test code, and the
    severity tiers the project chose."""

    regions: tuple[Region, ...]
    level_triggered: bool
    node_snippets: Mapping[int, object]
    in_tests: bool = False
    tiers: Tiers = Tiers()
    narrow_handlers: tuple[NarrowHandler, ...] = ()
    unprotected_releases: tuple[UnprotectedRelease, ...] = ()
    asyncio: bool = False  # the module imports asyncio
    stack_callbacks: tuple[StackCallback, ...] = ()
    hand_entered: tuple[HandEntered, ...] = ()
    # the bodies of functions with a cancellation handler outside any region (RegionKind.BODY)
    bodies: tuple[Region, ...] = ()

    def severity(self, consequences: Iterable[Consequence], region: Region | None) -> Severity:
        """The tier of a finding in `region` that puts steps with these consequences at stake.
        On asyncio a region entered by a cancel can be cut only by a second cancel, and one
        entered by a cancel or an error (`except BaseException:`, in a module that imports
        asyncio) only by a second cancel or one landing while the error is handled: a warning;
        so is a finding in a teardown method nothing in the project calls, and in a region whose
        task nothing cancels.
        """
        if region is not None and (
            self._second_cancel_needed(region) or region.uncalled or region.uncancelled
        ):
            return Severity.WARNING
        return self.tiers.of(consequences, self.in_tests)

    def _second_cancel_needed(self, region: Region) -> bool:
        if self.level_triggered:
            return False
        return region.entered_by_cancel or (region.entered_by_interrupt and self.asyncio)
