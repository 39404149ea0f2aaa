"""What the teardown analysis finds, as neutral, frozen facts the rules judge.

Nothing here imports libcst, so the rule modules (and `gate rules`, `gate explain`, a warm cached
run) load without it; the node fields hold libcst nodes at run time. The facts say what the code
does (which constructs enclose an await, what a handler catches); whether that is a problem is
each rule's own predicate.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst


class RegionKind(Enum):
    """Why a piece of code is teardown, with the words a message uses for it."""

    FINALLY = "finally block"
    CANCEL_HANDLER = "cancellation handler"
    AEXIT = "__aexit__"
    CONFIGURED = "teardown function"
    HELPER = "teardown helper"

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
    no_arg_aclose: bool = False
    awaited_call: str | None = None
    guarded: bool = False
    shielded: bool = False


@dataclass(frozen=True)
class CriticalStep:
    """A statement of the region whose loss matters (by name, or marked `# gate: critical`)."""

    statement: cst.CSTNode
    label: str  # `self._cleanup()`, or the statement's text when marked
    order: int
    branches: tuple[Branch, ...]
    loops: tuple[int, ...]
    finally_ancestors: tuple[int, ...]
    text: str
    points: tuple[InterruptPoint, ...] = ()
    uses_asyncio_shield: bool = False

    @property
    def only_no_arg_aclose(self) -> bool:
        """Awaited, and every await is a no-argument `.aclose()` (closes even when cancelled)."""
        return bool(self.points) and all(point.no_arg_aclose for point in self.points)


@dataclass(frozen=True)
class CancelHandler:
    """A handler inside a region that catches cancellation; `function_body` is the body of the
    function it is in, for rules that ask where a name it sets is read."""

    node: cst.ExceptHandler | cst.ExceptStarHandler
    text: str
    function_body: cst.CSTNode


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
    body: cst.BaseSuite | None = None  # the block that is the region (a finally or handler body)


def _exclusive(a: tuple[Branch, ...], b: tuple[Branch, ...]) -> bool:
    """Can two pieces of code with these branch paths never both run in one pass?"""
    for first, second in zip(a, b, strict=False):
        if first.statement != second.statement:
            return False
        if (first.arm, first.index) != (second.arm, second.index):
            return any({first.arm, second.arm} <= group for group in _EXCLUSIVE)
    return False


def precedes(point: InterruptPoint, step: CriticalStep) -> bool:
    """Can an interrupt at `point` happen before `step` runs, in this pass or a loop's next one?"""
    if _exclusive(point.branches, step.branches):
        return False
    if point.order < step.order and point.statement is not step.statement:
        return True
    return bool(set(point.loops) & set(step.loops))


@dataclass(frozen=True)
class ModuleAnalysis:
    """The regions of one file, whether it is level-triggered (trio/anyio), and where each
    reported node's position can be resolved (by id of the node)."""

    regions: tuple[Region, ...]
    level_triggered: bool
    node_snippets: Mapping[int, object]
