"""What a fix rewrites, planned from the analysis' facts and the findings it is for.

Each finding is matched back to the facts it was judged from (its interrupt points, the handler
or `suppress` it points at); the rule's `autofix` says what to do with them. The plan for one
region is a set of `Edits` for the rewriter, or the reason no rewrite is safe.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from enum import Enum

import libcst as cst

from gate.analysis.cancellation import CANCEL_CALLS, CANCEL_NAMES, catches_cancellation
from gate.analysis.facts import (
    CancelHandler,
    CriticalStep,
    Enclosure,
    EnclosureKind,
    InterruptPoint,
    ModuleAnalysis,
    Region,
    precedes,
)
from gate.analysis.walker import Snippet, exception_names, final_name, literally_false
from gate.checks import RULES
from gate.fix.rewrite import BlockEdit, Edits, Keep, Shield, SuppressToTry
from gate.fix.tree import COMPREHENSIONS, FunctionTree, Span, bound_names, loads, own_nodes
from gate.model import Finding, Location, TeardownDetail
from gate.rule import Autofix

_ONLY_CANCELLATION = (CANCEL_NAMES - {"BaseException"}) | CANCEL_CALLS
_GUARDS = (EnclosureKind.TRY_EXCEPT, EnclosureKind.SUPPRESS)


class Unsafe(Exception):
    """No rewrite of this region is safe; the message says why, for the finding."""


def autofix_of(finding: Finding) -> Autofix | None:
    rule = RULES.get(finding.code)
    return rule.autofix if rule is not None else None


def _key(location: Location | Span) -> tuple[int, int, int | None, int | None]:
    return (location.line, location.column, location.end_line, location.end_column)


@dataclass
class RegionTargets:
    """What the findings of one region ask for."""

    region: Region
    tree: FunctionTree
    findings: list[Finding] = field(default_factory=list)
    points: list[InterruptPoint] = field(default_factory=list)  # to hold or shield
    handlers: list[CancelHandler] = field(default_factory=list)  # to keep
    suppresses: list[Enclosure] = field(default_factory=list)  # to keep

    @property
    def body(self) -> cst.BaseSuite:
        assert self.region.body is not None
        return self.region.body

    def lines(self) -> tuple[int, int]:
        span = self.tree.span(self.body)
        return span.line, span.end_line


class FactIndex:
    """The facts of one file's regions, by the file position a finding reports."""

    def __init__(self, analysis: ModuleAnalysis, tree_of: dict[int, FunctionTree]) -> None:
        self.trees = tree_of
        self.points: dict[tuple, list[tuple[Region, InterruptPoint]]] = defaultdict(list)
        self.handlers: dict[tuple, list[tuple[Region, CancelHandler]]] = defaultdict(list)
        self.suppresses: dict[tuple, list[tuple[Region, Enclosure]]] = defaultdict(list)
        self.region_trees: dict[int, FunctionTree] = {}
        for region in analysis.regions:
            tree = self._tree(region, analysis)
            if tree is None or region.body is None:
                continue
            self.region_trees[id(region)] = tree
            for point in region.points:
                self.points[_key(tree.span(point.node))].append((region, point))
                for enclosure in point.enclosures:
                    if enclosure.kind is EnclosureKind.SUPPRESS and enclosure.catches_cancellation:
                        self.suppresses[_key(tree.span(enclosure.node))].append((region, enclosure))
            for handler in region.cancel_handlers:
                self.handlers[_key(tree.span(handler.node))].append((region, handler))

    def _tree(self, region: Region, analysis: ModuleAnalysis) -> FunctionTree | None:
        nodes = [p.node for p in region.points] + [s.statement for s in region.steps]
        nodes += [h.node for h in region.cancel_handlers]
        if not nodes:
            return None
        snippet = analysis.node_snippets[id(nodes[0])]
        assert isinstance(snippet, Snippet)
        return self.trees[id(snippet)]

    def size(self, region: Region) -> int:
        span = self.region_trees[id(region)].span(region.body)  # type: ignore[arg-type]
        return span.end_line - span.line


def match(index: FactIndex, findings: Iterable[Finding]) -> list[RegionTargets]:
    """Each finding with the facts it asks a fix for, by region (innermost region first when
    a helper's body holds a finally block: its re-raise belongs at the end of that block)."""
    targets: dict[int, RegionTargets] = {}
    for finding in findings:
        found = _match_one(index, finding)
        if found is None:
            continue
        region, facts = found
        entry = targets.setdefault(
            id(region), RegionTargets(region, index.region_trees[id(region)])
        )
        entry.findings.append(finding)
        for fact in facts:
            bucket = (
                entry.points
                if isinstance(fact, InterruptPoint)
                else entry.handlers
                if isinstance(fact, CancelHandler)
                else entry.suppresses
            )
            if not any(known is fact for known in bucket):
                bucket.append(fact)  # type: ignore[arg-type]
    return list(targets.values())


def _match_one(index: FactIndex, finding: Finding) -> tuple[Region, list[object]] | None:
    autofix = autofix_of(finding)
    if autofix is None or not isinstance(finding.detail, TeardownDetail):
        return None
    if autofix is Autofix.KEEP:
        return _match_kept(index, finding)
    return _match_points(index, finding.detail)


def _match_kept(index: FactIndex, finding: Finding) -> tuple[Region, list[object]] | None:
    """The handler or suppress a finding points at, in its innermost region."""
    where = _key(finding.location)
    hits: list[tuple[Region, object]] = [*index.handlers.get(where, [])]
    hits += index.suppresses.get(where, [])
    if not hits:
        return None
    region, fact = min(hits, key=lambda hit: index.size(hit[0]))
    return region, [fact]


def _match_points(index: FactIndex, detail: TeardownDetail) -> tuple[Region, list[object]] | None:
    """A finding's interrupt points, in the innermost region that has them all."""
    by_region: dict[int, tuple[Region, list[object]]] = {}
    wanted = {_key(location) for location in detail.interrupts}
    for key in wanted:
        for region, point in index.points.get(key, []):
            by_region.setdefault(id(region), (region, []))[1].append(point)
    complete = [entry for entry in by_region.values() if len(entry[1]) == len(wanted)]
    return min(complete, key=lambda entry: index.size(entry[0])) if complete else None


# ---------------------------------------------------------------------------------------------
# Safety: what a rewrite of a region could change


def _first(nodes: Iterable[cst.CSTNode], tree: FunctionTree) -> int | None:
    lines = [tree.span(node).line for node in nodes]
    return min(lines) if lines else None


def _loop_exits(body: cst.BaseSuite) -> Iterator[cst.CSTNode]:
    """`break`/`continue` statements that leave `body` (not those of a loop inside it)."""
    pending: list[cst.CSTNode] = [body]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Break | cst.Continue):
            yield node
        elif not isinstance(node, cst.For | cst.While | cst.FunctionDef | cst.ClassDef):
            pending.extend(node.children)
        elif isinstance(node, cst.For | cst.While) and node.orelse is not None:
            pending.append(node.orelse)


def _raise_exits(body: cst.BaseSuite) -> Iterator[cst.CSTNode]:
    """`raise` statements that surely leave `body`: not inside a `try` body or a `with` block of
    it (a handler or a context manager there may take the error and carry on)."""
    pending: list[cst.CSTNode] = [body]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.Raise):
            yield node
        elif _reraised_name(node) is not None:
            continue  # the re-raise of a hold: it raises what came first already
        elif isinstance(node, cst.Try | cst.TryStar):
            pending.extend(part for part in (*node.handlers, node.orelse, node.finalbody) if part)
        elif not isinstance(node, cst.FunctionDef | cst.ClassDef | cst.Lambda | cst.With):
            pending.extend(node.children)


def exits(targets: RegionTargets) -> list[cst.CSTNode]:
    """The ways out of the region that skip its end, where a held interrupt is re-raised: each
    `return`, each `break`/`continue` that leaves it, and each `raise` that surely leaves it
    (else the first interrupt would come out as another error). They get the re-raise too.
    Raises Unsafe for a `yield` in the region: a held interrupt would wait across it."""
    own = list(own_nodes(targets.body))
    line = _first((n for n in own if isinstance(n, cst.Yield)), targets.tree)
    if line is not None:
        words = targets.region.kind.words
        raise Unsafe(f"the {words} yields at line {line}: a held interrupt would wait across it")
    leaving = [n for n in own if isinstance(n, cst.Return)] + list(_loop_exits(targets.body))
    return leaving + _raises_before_the_end(targets.body)


def _raises_before_the_end(body: cst.BaseSuite) -> list[cst.CSTNode]:
    """The `raise` statements that leave `body`, but its trailing one: the region's own re-raise
    goes before that one already."""
    statements = statements_of(body)
    last = statements[-1] if statements and _raises(statements[-1]) else None
    trailing = set() if last is None else {id(node) for node in last.children}
    return [node for node in _raise_exits(body) if id(node) not in trailing]


class Hold(Enum):
    """How an interrupt is held at a boundary."""

    WRAP = "wrap"  # the statement goes in a `try` that holds whatever escapes it
    HANDLER = "handler"  # the `try` gains a handler, after its own, that holds what they miss
    # the statement goes in a `try` that holds only what is not an `Exception`, re-raising the
    # rest to the guards around it, which miss cancellation
    PASSING = "passing"


def _statement_of(point: InterruptPoint, tree: FunctionTree) -> cst.CSTNode:
    """The statement an await is in, as a whole (an `elif` is part of its `if`)."""
    statement: cst.CSTNode = point.statement
    parent = tree.parent(statement)
    while isinstance(statement, cst.If) and isinstance(parent, cst.If):  # an elif
        statement, parent = parent, tree.parent(parent)
    return statement


def hold_boundary(point: InterruptPoint, tree: FunctionTree) -> tuple[cst.CSTNode, Hold]:
    """Where an interrupt at `point` is held, and how.

    Inside a `try` (or `suppress`) of the region whose handlers miss cancellation, the hold
    goes around the outermost of them, so that every handler still sees what it saw before.
    """
    guards = [e for e in point.enclosures if e.kind in _GUARDS]
    if not guards:
        return _statement_of(point, tree), Hold.WRAP
    guard = guards[0]
    if isinstance(guard.node, cst.Try) and not guard.catches_cancellation:
        return guard.node, Hold.HANDLER
    return guard.node, Hold.WRAP


_NOT_EXCEPTIONS = {"KeyboardInterrupt", "SystemExit", "GeneratorExit", "BaseExceptionGroup"}


def _passing(point: InterruptPoint) -> bool:
    """Can the await be held in place, passing every `Exception` on to the guards around it:
    none of them catches cancellation or another `BaseException` that is not an `Exception`?"""
    guards = [e for e in point.enclosures if e.kind in _GUARDS]
    return bool(guards) and not any(
        guard.catches_cancellation or set(_guard_names(guard)) & _NOT_EXCEPTIONS for guard in guards
    )


def _guard_names(guard: Enclosure) -> list[str | None]:
    node = guard.node
    if isinstance(node, cst.Try | cst.TryStar):
        return [name for h in node.handlers for name in exception_names(h.type)]
    call = node.items[0].item if isinstance(node, cst.With) else None
    args = call.args if isinstance(call, cst.Call) else ()
    return [name for arg in args for name in exception_names(arg.value)]


def _skipped_inside(
    targets: RegionTargets, point: InterruptPoint, boundary: cst.CSTNode
) -> CriticalStep | None:
    """A step inside the held statement, after the interrupt: holding there still skips it."""
    inside = boundary.body if isinstance(boundary, cst.Try | cst.TryStar) else boundary
    for step in targets.region.steps:
        if step.statement is point.statement or not precedes(point, step):
            continue
        if targets.tree.contains(inside, step.statement):
            return step
    return None


def _still_skipped(targets: RegionTargets, point: InterruptPoint, step: CriticalStep) -> Unsafe:
    line = targets.tree.span(step.statement).line
    where = targets.tree.span(point.node).line
    return Unsafe(
        f"`{step.label}` (line {line}) is inside the statement the interrupt at line "
        f"{where} is in, so holding the interrupt cannot run it"
    )


def _values_used_later(targets: RegionTargets, boundary: cst.CSTNode) -> None:
    """A name the held statement sets, read later in the region, would be read unset."""
    names = bound_names(boundary)
    if not names:
        return
    end = targets.tree.span(boundary)
    for name in loads(targets.body):
        if name.value not in names:
            continue
        where = targets.tree.span(name)
        if (where.line, where.column) > (end.end_line, end.end_column):
            raise Unsafe(
                f"`{name.value}` is set by the statement at line {end.line} and read at line "
                f"{where.line}: with the interrupt held, line {where.line} would run without it"
            )


def _in_comprehension(point: InterruptPoint, tree: FunctionTree) -> None:
    for node in tree.ancestors(point.node):
        if node is point.statement:
            return
        if isinstance(node, COMPREHENSIONS):
            line = tree.span(point.node).line
            raise Unsafe(
                f"the await at line {line} is inside a comprehension: written as a loop, each "
                "await could be held"
            )


def hold_boundaries(targets: RegionTargets) -> dict[int, tuple[cst.CSTNode, Hold]]:
    """The outermost hold boundaries of the region's points, by id(); raises Unsafe.

    A guard whose body has a step after one of its awaits cannot be held as a whole: each of
    its awaits is held in place instead, passing ordinary exceptions on to it."""
    planned = []
    for point in targets.points:
        _in_comprehension(point, targets.tree)
        planned.append((point, *hold_boundary(point, targets.tree)))
    crowded = {
        id(node) for point, node, _ in planned if _skipped_inside(targets, point, node) is not None
    }
    found: dict[int, tuple[cst.CSTNode, Hold]] = {}
    for point, node, mode in planned:
        if id(node) in crowded and _passing(point):
            node, mode = _statement_of(point, targets.tree), Hold.PASSING
        _check_boundary(targets, point, node)
        found[id(node)] = (node, mode)
    return _outermost(targets, found)


def _check_boundary(targets: RegionTargets, point: InterruptPoint, node: cst.CSTNode) -> None:
    skipped = _skipped_inside(targets, point, node)
    if skipped is not None:
        raise _still_skipped(targets, point, skipped)
    _values_used_later(targets, node)


def _outermost(
    targets: RegionTargets, found: dict[int, tuple[cst.CSTNode, Hold]]
) -> dict[int, tuple[cst.CSTNode, Hold]]:
    """The boundaries that no other one holds already."""
    return {
        key: (node, mode)
        for key, (node, mode) in found.items()
        if not any(
            other is not node and targets.tree.contains(_held_by(other, other_mode), node)
            for other, other_mode in found.values()
        )
    }


def _held_by(node: cst.CSTNode, mode: Hold) -> cst.CSTNode:
    """What a boundary holds: a `try` that gains a handler, only what escapes its body."""
    return node.body if mode is Hold.HANDLER else node  # type: ignore[attr-defined]


def _runs_after(targets: RegionTargets, boundary: cst.CSTNode) -> bool:
    """Does anything of the region run after `boundary` once its interrupt is held: a later
    statement that does not just leave (a `raise`, `return`, `break` or `continue`, or the
    re-raise of a hold), or a later iteration of a loop around it?"""
    node = boundary
    while node is not targets.body:
        parent = targets.tree.parent(node)
        if parent is None:
            return False
        if isinstance(parent, cst.For | cst.While):
            return True
        later = _later(parent, node)
        if later:
            return not _leaves(later[0])
        node = parent
    return False


def _later(parent: cst.CSTNode, node: cst.CSTNode) -> list[cst.CSTNode]:
    """The statements after `node` in the block (or line) `parent`."""
    siblings = getattr(parent, "body", None)
    if not isinstance(siblings, Sequence):
        return []
    position = next((i for i, sibling in enumerate(siblings) if sibling is node), None)
    return [] if position is None else list(siblings)[position + 1 :]


_EXITS = (cst.Raise, cst.Return, cst.Break, cst.Continue)


def _leaves(statement: cst.CSTNode) -> bool:
    if isinstance(statement, cst.SimpleStatementLine):
        return isinstance(statement.body[0], _EXITS)
    return isinstance(statement, _EXITS) or _reraised_name(statement) is not None


def useful_holds(targets: RegionTargets, boundaries: Iterable[cst.CSTNode]) -> None:
    """Raises Unsafe when holding changes nothing: no statement of the region runs after any
    held await, and asyncio cannot finish an awaited step once it is cancelled."""
    boundaries = list(boundaries)
    if targets.handlers or targets.suppresses or not boundaries:
        return
    if any(_runs_after(targets, boundary) for boundary in boundaries):
        return
    line = targets.tree.span(boundaries[-1]).end_line
    raise Unsafe(
        f"nothing in the {targets.region.kind.words} runs after line {line}, so holding the "
        "interrupt would change nothing at run time; a cancelled await cannot be finished: make "
        "the step idempotent (or, under trio/anyio, shield it)"
    )


# ---------------------------------------------------------------------------------------------
# Keeping what a handler or a suppress swallows


def keep_handler(handler: CancelHandler, tree: FunctionTree, hold: str) -> Keep:
    if isinstance(handler.node, cst.ExceptStarHandler):
        line = tree.span(handler.node).line
        raise Unsafe(
            f"the handler at line {line} is an `except*` clause: keeping its exception group "
            "would change what is re-raised"
        )
    guarded = tree.parent(handler.node)
    if isinstance(guarded, cst.Try):
        _own_cancel(guarded.body, tree)
    names = exception_names(handler.node.type)
    return Keep(hold, only_cancellation=not all(n in _ONLY_CANCELLATION for n in names))


def _own_cancel(body: cst.CSTNode, tree: FunctionTree) -> None:
    """Raises Unsafe when the guarded code awaits a task or future rather than a call: the
    cancellation caught may be that task's own (`task.cancel(); await task`), and re-raising it
    would make this function look cancelled. So does `asyncio.gather(*tasks)`, which raises a
    gathered task's cancel, but not with `return_exceptions=True`, which hands it back."""
    for node in own_nodes(body):
        if isinstance(node, cst.Await) and _may_raise_awaited_cancel(node.expression):
            line = tree.span(node).line
            raise Unsafe(
                f"the cancellation caught may be that of the task awaited at line {line}, not "
                "this one's: re-raising it would make this function look cancelled (on Python "
                "3.11+, re-raise only when `asyncio.current_task().cancelling()`)"
            )


def _may_raise_awaited_cancel(expression: cst.BaseExpression) -> bool:
    """Can awaiting this raise the cancel of a task it waits on: a task or future awaited
    as is, or a gather of tasks without `return_exceptions=True`?"""
    if not isinstance(expression, cst.Call):
        return True
    if final_name(expression.func) != "gather":
        return False
    returns = any(
        arg.keyword is not None
        and arg.keyword.value == "return_exceptions"
        and not literally_false(arg.value)
        for arg in expression.args
    )
    awaits_calls = all(
        isinstance(arg.value, cst.Call) for arg in expression.args if not arg.keyword
    )
    return not returns and not awaits_calls


def keep_suppress(
    enclosure: Enclosure, module: cst.Module, tree: FunctionTree, hold: str
) -> SuppressToTry:
    statement = enclosure.node
    assert isinstance(statement, cst.With)
    _own_cancel(statement.body, tree)
    item = statement.items[0].item
    if len(statement.items) != 1 or statement.items[0].asname is not None:
        line = tree.span(statement).line
        raise Unsafe(f"the suppress at line {line} shares its `with` with other context managers")
    assert isinstance(item, cst.Call)
    others, cancels, base = [], [], False
    for arg in item.args:
        code = module.code_for_node(arg.value)
        names = exception_names(arg.value)
        if "BaseException" in names:
            base = True
        elif catches_cancellation(names):
            cancels.append(code)
        else:
            others.append(code)
    if base:
        catch = "BaseException"
    else:
        catch = cancels[0] if len(cancels) == 1 else f"({', '.join(cancels)})"
    return SuppressToTry(hold, tuple(others), catch, also_exception=base)


# ---------------------------------------------------------------------------------------------
# A region's block: where the hold variable starts and is re-raised


def _raises(statement: cst.CSTNode) -> bool:
    if isinstance(statement, cst.SimpleStatementLine):
        return len(statement.body) == 1 and isinstance(statement.body[0], cst.Raise)
    return isinstance(statement, cst.Raise)


def _tested_name(test: cst.BaseExpression) -> str | None:
    """N for the test `N is not None` or `N`."""
    if isinstance(test, cst.Comparison):
        if len(test.comparisons) != 1:
            return None
        target = test.comparisons[0]
        if not isinstance(target.operator, cst.IsNot) or not _is_name(target.comparator, "None"):
            return None
        test = test.left
    return test.value if isinstance(test, cst.Name) else None


def _is_name(node: cst.CSTNode, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _reraised_name(statement: cst.CSTNode) -> str | None:
    """N for `if N is not None: raise N` (or `if N: raise N`)."""
    if not isinstance(statement, cst.If) or statement.orelse is not None:
        return None
    name = _tested_name(statement.test)
    body = statement.body.body
    if name is None or len(body) != 1 or not _raises(body[0]):
        return None
    raised = body[0].body[0] if isinstance(body[0], cst.SimpleStatementLine) else None
    return name if isinstance(raised, cst.Raise) and _is_name(raised.exc, name) else None  # type: ignore[arg-type]


def _assigns_none(statement: cst.CSTNode, name: str) -> bool:
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if isinstance(small, cst.Assign):
        targets = [t.target for t in small.targets]
    elif isinstance(small, cst.AnnAssign):
        targets = [small.target]
    else:
        return False
    value = small.value
    return (
        len(targets) == 1
        and isinstance(targets[0], cst.Name)
        and targets[0].value == name
        and isinstance(value, cst.Name)
        and value.value == "None"
    )


def statements_of(body: cst.BaseSuite) -> list[cst.CSTNode]:
    return list(body.body)


def existing_hold(body: cst.BaseSuite) -> tuple[str, int] | None:
    """The region's own hold variable and where it starts, when it already has one: `N = None`
    at the top and `if N is not None: raise N` at the end (before a trailing `raise`)."""
    statements = statements_of(body)
    last = len(statements) - 1
    if last > 0 and _raises(statements[last]):
        last -= 1
    name = _reraised_name(statements[last]) if last >= 0 else None
    if name is None:
        return None
    for index, statement in enumerate(statements[:last]):
        if _assigns_none(statement, name):
            return name, index
    return None


def block_edit(
    targets: RegionTargets, edited: list[cst.CSTNode], hold: str | None
) -> tuple[BlockEdit, str | None]:
    """Where the region's hold starts and ends, given the nodes whose edits use it; reuses the
    region's own hold variable when it starts above all of them. Returns the edit and the
    variable the edits must use (None when nothing needs one)."""
    if not edited:
        return BlockEdit(), None
    statements = statements_of(targets.body)
    indices = [
        statements.index(targets.tree.child_of(node, targets.body))  # type: ignore[arg-type]
        for node in edited
    ]
    found = existing_hold(targets.body)
    if found is not None and found[1] < min(indices):
        return BlockEdit(), found[0]
    assert hold is not None
    trailing = len(statements) - 1 if len(statements) > 1 and _raises(statements[-1]) else None
    return BlockEdit(hold=hold, init_before=min(indices), reraise_before=trailing), hold


def held_from(targets: RegionTargets, block: BlockEdit) -> int:
    """The index of the region's first statement that runs with the hold variable set."""
    if block.init_before is not None:
        return block.init_before
    found = existing_hold(targets.body)
    return found[1] + 1 if found is not None else 0


def shield_range(targets: RegionTargets, scope: str, library: str) -> Shield:
    """The region's statements from the first to the last shielded point, under `scope`."""
    statements = statements_of(targets.body)
    indices = [
        statements.index(targets.tree.child_of(point.node, targets.body))  # type: ignore[arg-type]
        for point in targets.points
    ]
    first, last = min(indices), max(indices)
    for statement in statements[first : last + 1]:
        line = _first((n for n in own_nodes(statement) if isinstance(n, cst.Yield)), targets.tree)
        if line is not None:
            raise Unsafe(f"a shielded scope cannot span the yield at line {line}")
    return Shield(first, last, scope, library)


def merge(edits: Edits, region_edits: Edits) -> None:
    edits.wrap.update(region_edits.wrap)
    edits.add_handler.update(region_edits.add_handler)
    edits.keep.update(region_edits.keep)
    edits.suppress.update(region_edits.suppress)
    edits.blocks.update(region_edits.blocks)
