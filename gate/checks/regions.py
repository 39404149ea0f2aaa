"""What the teardown analysis finds, as plain data the rules read.

Nothing here imports libcst, so the rule modules (and `gate rules`, `gate explain`, a warm cached
run) load without it; the node fields hold libcst nodes at run time.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import libcst as cst


@dataclass(eq=False)
class Guard:
    """A construct inside a region that encloses some code: what it does to an interrupt."""

    kind: str  # "holds" | "suppress" | "shield" | "finally" | "misses"
    node: cst.CSTNode
    report_node: cst.CSTNode | None = None
    finally_body: cst.BaseSuite | None = None


@dataclass(eq=False)
class InterruptPoint:
    node: cst.CSTNode
    statement: cst.CSTNode
    order: int
    path: tuple[tuple[int, str], ...]
    loops: tuple[int, ...]
    guards: tuple[Guard, ...]
    text: str
    exempt_level_triggered: bool = False
    guarded: bool = False
    shielded: bool = False


@dataclass(eq=False)
class CriticalStep:
    statement: cst.CSTNode
    label: str  # `self._cleanup()`, or the statement's text when marked `# gate: critical`
    order: int
    path: tuple[tuple[int, str], ...]
    loops: tuple[int, ...]
    finally_ancestors: tuple[int, ...]
    text: str
    points: list[InterruptPoint] = field(default_factory=list)
    uses_asyncio_shield: bool = False
    exempt_aclose: bool = False


@dataclass(eq=False)
class SwallowingHandler:
    handler: cst.CSTNode
    text: str


@dataclass(eq=False)
class Region:
    """One teardown region of one function, with what the analysis found in it."""

    kind: str  # "finally" | "cancel-handler" | "__aexit__" | "configured" | "helper"
    function: str
    body_owner: cst.CSTNode
    level_triggered: bool
    origin: str = ""
    points: list[InterruptPoint] = field(default_factory=list)
    steps: list[CriticalStep] = field(default_factory=list)
    guards_missing_cancel: list[tuple[Guard, InterruptPoint]] = field(default_factory=list)
    swallowing: list[SwallowingHandler] = field(default_factory=list)
    helper_calls: list[str] = field(default_factory=list)


_EXCLUSIVE_BRANCHES = ({"if", "else"}, {"handler", "tryelse"}, {"case"})


def _exclusive(a: tuple[tuple[int, str], ...], b: tuple[tuple[int, str], ...]) -> bool:
    """Can two pieces of code with these branch paths never both run in one pass?"""
    for (node_a, branch_a), (node_b, branch_b) in zip(a, b, strict=False):
        if node_a != node_b:
            return False
        if branch_a != branch_b:
            kinds = {branch_a.split(":")[0], branch_b.split(":")[0]}
            return any(kinds <= group for group in _EXCLUSIVE_BRANCHES)
    return False


def precedes(point: InterruptPoint, step: CriticalStep) -> bool:
    """Can an interrupt at `point` happen before `step` runs, in this pass or a loop's next one?"""
    if _exclusive(point.path, step.path):
        return False
    if point.order < step.order and point.statement is not step.statement:
        return True
    return bool(set(point.loops) & set(step.loops))


@dataclass
class Snippet:
    """One function parsed by libcst on its own: positions in it are offset by `line_offset`."""

    module: cst.Module
    function: cst.FunctionDef
    line_offset: int


@dataclass
class ModuleAnalysis:
    regions: list[Region]
    level_triggered: bool
    # the parsed function each reported node lives in, by id(node)
    node_snippets: dict[int, Snippet]
