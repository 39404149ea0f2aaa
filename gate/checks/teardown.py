"""The teardown analysis that the GATE1xx rules share.

One pass over a libcst tree finds the teardown regions of every async function, lists the
interrupt points and critical steps in each region in execution order, and decides for every
interrupt point which guards hold it. The rule modules then read their findings off that data.
Positions are not resolved here: the analysis keeps nodes, and the caller resolves positions only
for what gets reported.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import libcst as cst

from gate.config import TeardownConfig

CANCEL_NAMES = frozenset({"CancelledError", "Cancelled", "BaseException"})
SHIELD_SCOPES = frozenset({"CancelScope", "move_on_after", "move_on_at", "fail_after", "fail_at"})
LEVEL_TRIGGERED_LIBRARIES = frozenset({"trio", "anyio"})

# Wrappers that run the function passed as an argument: (final name, index of that argument).
THREAD_WRAPPERS = {"to_thread": 0, "run_sync": 0, "run_in_executor": 1}

_CAMEL = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")


def name_words(name: str) -> tuple[str, ...]:
    """Split an identifier on underscores and case changes, lower-cased."""
    return tuple(word.lower() for part in name.split("_") if part for word in _CAMEL.findall(part))


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, None for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted_name(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


def final_name(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


class _Collector(cst.CSTVisitor):
    """Collects awaits and calls in an expression or statement, not entering nested scopes."""

    def __init__(self) -> None:
        self.awaits: list[cst.Await] = []
        self.calls: list[cst.Call] = []
        self.raises = False
        self.loaded_names: set[str] = set()

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Await(self, node: cst.Await) -> None:
        self.awaits.append(node)

    def visit_Call(self, node: cst.Call) -> None:
        self.calls.append(node)

    def visit_Raise(self, node: cst.Raise) -> None:
        self.raises = True

    def visit_Name(self, node: cst.Name) -> None:
        self.loaded_names.add(node.value)


def collect(node: cst.CSTNode) -> _Collector:
    collector = _Collector()
    node.visit(collector)
    return collector


# ---------------------------------------------------------------------------------------------
# What an exception clause catches


def _catches_cancellation_expr(node: cst.BaseExpression | None) -> bool:
    if node is None:
        return True
    if isinstance(node, cst.Tuple):
        return any(_catches_cancellation_expr(element.value) for element in node.elements)
    if isinstance(node, cst.Call):
        return final_name(node.func) == "get_cancelled_exc_class"
    return final_name(node) in CANCEL_NAMES


def handler_catches_cancellation(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    """True when the handler catches CancelledError/trio.Cancelled (bare, BaseException, ...)."""
    return _catches_cancellation_expr(handler.type)


def _call_args(call: cst.Call) -> list[cst.BaseExpression]:
    return [arg.value for arg in call.args if arg.keyword is None and not arg.star]


def _is_suppress(call: cst.Call) -> bool:
    return final_name(call.func) == "suppress"


def _is_shield_scope(call: cst.Call) -> bool:
    if final_name(call.func) not in SHIELD_SCOPES:
        return False
    return any(
        arg.keyword is not None
        and arg.keyword.value == "shield"
        and isinstance(arg.value, cst.Name)
        and arg.value.value == "True"
        for arg in call.args
    )


def _unconditional_raise(body: cst.BaseSuite) -> bool:
    """Does the block end by raising, whatever happens inside it?"""
    for statement in _statements(body):
        if isinstance(statement, cst.SimpleStatementLine | cst.SimpleStatementSuite) and any(
            isinstance(small, cst.Raise) for small in statement.body
        ):
            return True
    return False


def _statements(body: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    if isinstance(body, cst.SimpleStatementSuite):
        return [body]
    return body.body  # type: ignore[return-value]


# ---------------------------------------------------------------------------------------------
# Events


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


# ---------------------------------------------------------------------------------------------
# The region walker


class _RegionWalker:
    def __init__(
        self,
        module: cst.Module,
        region: Region,
        config: TeardownConfig,
        function_body: cst.CSTNode,
        tokens: tuple[tuple[str, ...], ...],
    ) -> None:
        self.module = module
        self.region = region
        self.config = config
        self.function_body = function_body
        self.tokens = tokens
        self.order = 0
        self.path: list[tuple[int, str]] = []
        self.loops: list[int] = []
        self.guards: list[Guard] = []
        self.finally_stack: list[int] = []

    # -- text helpers
    def code(self, node: cst.CSTNode) -> str:
        text = self.module.code_for_node(node).strip()
        first = text.splitlines()[0] if text else ""
        return first if len(first) <= 80 else first[:77] + "..."

    def next_order(self) -> int:
        self.order += 1
        return self.order

    # -- classification
    def critical_name(self, calls: list[cst.Call]) -> str | None:
        for call in calls:
            for candidate in self._called_functions(call):
                name = final_name(candidate)
                if name is not None and self._is_critical_name(name):
                    return f"{dotted_name(candidate) or name}()"
        return None

    def _called_functions(self, call: cst.Call) -> Iterator[cst.BaseExpression]:
        yield call.func
        wrapper = final_name(call.func)
        if wrapper in THREAD_WRAPPERS:
            args = _call_args(call)
            index = THREAD_WRAPPERS[wrapper]
            if len(args) > index:
                yield args[index]

    def _is_critical_name(self, name: str) -> bool:
        words = name_words(name)
        for token in self.tokens:
            size = len(token)
            if any(words[i : i + size] == token for i in range(len(words) - size + 1)):
                return True
        return False

    def is_shield_helper(self, call: cst.Call) -> bool:
        name = dotted_name(call.func)
        if name is None or not self.config.shield_helpers:
            return False
        last = name.rsplit(".", 1)[-1]
        return any(
            fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(last, pattern)
            for pattern in self.config.shield_helpers
        )

    @staticmethod
    def marked_critical(line: cst.SimpleStatementLine | cst.SimpleStatementSuite) -> bool:
        comments = []
        if isinstance(line, cst.SimpleStatementLine):
            if line.trailing_whitespace.comment is not None:
                comments.append(line.trailing_whitespace.comment.value)
            if line.leading_lines and line.leading_lines[-1].comment is not None:
                comments.append(line.leading_lines[-1].comment.value)
        elif line.trailing_whitespace.comment is not None:
            comments.append(line.trailing_whitespace.comment.value)
        return any(re.search(r"#\s*gate:\s*critical\b", comment) for comment in comments)

    # -- walking
    def walk_suite(self, body: cst.BaseSuite) -> None:
        for statement in _statements(body):
            self.walk_statement(statement)

    def walk_statement(self, statement: cst.CSTNode) -> None:
        if isinstance(statement, cst.FunctionDef | cst.ClassDef):
            return
        if isinstance(statement, cst.SimpleStatementLine | cst.SimpleStatementSuite):
            marked = self.marked_critical(statement)
            for small in statement.body:
                self.walk_small(small, marked)
        elif isinstance(statement, cst.If):
            self.walk_if(statement)
        elif isinstance(statement, cst.For | cst.While):
            self.walk_loop(statement)
        elif isinstance(statement, cst.With):
            self.walk_with(statement)
        elif isinstance(statement, cst.Try | cst.TryStar):
            self.walk_try(statement)
        elif isinstance(statement, cst.Match):
            self.add_points(statement.subject, statement)
            for index, case in enumerate(statement.cases):
                self.path.append((id(statement), f"case:{index}"))
                self.walk_suite(case.body)
                self.path.pop()

    def walk_small(self, small: cst.BaseSmallStatement, marked: bool) -> None:
        found = collect(small)
        points = self.add_points_from(found.awaits, small)
        name = self.critical_name(found.calls)
        if name is None and marked:
            name = self.code(small)
        if name is None:
            return
        step = CriticalStep(
            statement=small,
            label=name,
            order=self.next_order(),
            path=tuple(self.path),
            loops=tuple(self.loops),
            finally_ancestors=tuple(self.finally_stack),
            text=self.code(small),
            points=points,
        )
        step.uses_asyncio_shield = any(
            dotted_name(call.func) in ("asyncio.shield", "shield") for call in found.calls
        )
        step.exempt_aclose = bool(points) and all(p.exempt_level_triggered for p in points)
        self.region.steps.append(step)

    def add_points(self, expression: cst.CSTNode | None, statement: cst.CSTNode) -> None:
        if expression is not None:
            self.add_points_from(collect(expression).awaits, statement)

    def add_points_from(
        self, awaits: list[cst.Await], statement: cst.CSTNode
    ) -> list[InterruptPoint]:
        points = []
        for node in awaits:
            guards = list(self.guards)
            inner = node.expression
            if isinstance(inner, cst.Call) and self.is_shield_helper(inner):
                guards.append(Guard("shield", inner))
            point = self.new_point(node, statement, guards)
            point.exempt_level_triggered = (
                isinstance(inner, cst.Call)
                and final_name(inner.func) == "aclose"
                and not inner.args
            )
            if isinstance(inner, cst.Call) and isinstance(inner.func, cst.Attribute | cst.Name):
                self.region.helper_calls.append(dotted_name(inner.func) or "")
            points.append(point)
        return points

    def new_point(
        self, node: cst.CSTNode, statement: cst.CSTNode, guards: list[Guard]
    ) -> InterruptPoint:
        point = InterruptPoint(
            node=node,
            statement=statement,
            order=self.next_order(),
            path=tuple(self.path),
            loops=tuple(self.loops),
            guards=tuple(guards),
            text=self.code(node),
        )
        self.region.points.append(point)
        return point

    def walk_if(self, statement: cst.If) -> None:
        self.add_points(statement.test, statement)
        self.path.append((id(statement), "if"))
        self.walk_suite(statement.body)
        self.path.pop()
        if statement.orelse is not None:
            self.path.append((id(statement), "else"))
            if isinstance(statement.orelse, cst.If):
                self.walk_if(statement.orelse)
            else:
                self.walk_suite(statement.orelse.body)
            self.path.pop()

    def walk_loop(self, statement: cst.For | cst.While) -> None:
        if isinstance(statement, cst.For):
            self.add_points(statement.iter, statement)
        else:
            self.add_points(statement.test, statement)
        self.loops.append(id(statement))
        if isinstance(statement, cst.For) and statement.asynchronous is not None:
            self.new_point(statement, statement, list(self.guards))
        self.walk_suite(statement.body)
        self.loops.pop()
        if statement.orelse is not None:
            self.walk_suite(statement.orelse.body)

    def walk_with(self, statement: cst.With) -> None:
        added = 0
        for item in statement.items:
            self.add_points(item.item, statement)
            call = item.item
            if not isinstance(call, cst.Call):
                continue
            if _is_shield_scope(call) or self.is_shield_helper(call):
                self.guards.append(Guard("shield", statement))
                added += 1
            elif _is_suppress(call):
                catches = any(_catches_cancellation_expr(arg) for arg in _call_args(call))
                kind = "suppress" if catches else "misses"
                self.guards.append(Guard(kind, statement, report_node=statement))
                added += 1
        if statement.asynchronous is not None:
            # The enter and the exit both suspend; the exit comes after the body, so the point
            # counts for every step that follows, and the shield scopes it opens do not cover it.
            guards = self.guards[: len(self.guards) - added]
            self.new_point(statement, statement, guards)
        self.walk_suite(statement.body)
        if added:
            del self.guards[-added:]

    def walk_try(self, statement: cst.Try | cst.TryStar) -> None:
        cancel_handlers = [h for h in statement.handlers if handler_catches_cancellation(h)]
        added = 0
        holding = [h for h in cancel_handlers if not _unconditional_raise(h.body)]
        if holding:
            self.guards.append(Guard("holds", statement))
            added += 1
        elif statement.handlers and not cancel_handlers:
            self.guards.append(Guard("misses", statement, report_node=statement.handlers[0]))
            added += 1
        if statement.finalbody is not None:
            self.guards.append(Guard("finally", statement, finally_body=statement.finalbody.body))
            added += 1
        self.path.append((id(statement), "body"))
        self.walk_suite(statement.body)
        self.path.pop()
        if added:
            del self.guards[-added:]
        for index, handler in enumerate(statement.handlers):
            if handler in cancel_handlers and self.swallows(handler):
                self.region.swallowing.append(SwallowingHandler(handler, self.code(handler)))
            self.path.append((id(statement), f"handler:{index}"))
            self.walk_suite(handler.body)
            self.path.pop()
        if statement.orelse is not None:
            self.path.append((id(statement), "tryelse"))
            self.walk_suite(statement.orelse.body)
            self.path.pop()
        if statement.finalbody is not None:
            self.path.append((id(statement), "finally"))
            self.finally_stack.append(id(statement.finalbody.body))
            self.walk_suite(statement.finalbody.body)
            self.finally_stack.pop()
            self.path.pop()

    def swallows(self, handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
        """A cancellation handler that neither re-raises nor keeps the exception or a flag."""
        found = collect(handler.body)
        if found.raises:
            return False
        name = handler.name.name if handler.name is not None else None
        if isinstance(name, cst.Name) and name.value in found.loaded_names:
            return False
        flags = _assigned_names(handler.body)
        if flags is None:
            return False  # an attribute or subscript was set: kept somewhere we cannot follow
        return not flags or not (flags & _names_read_outside(self.function_body, handler))


def _assigned_names(body: cst.BaseSuite) -> set[str] | None:
    names: set[str] = set()

    class _Targets(cst.CSTVisitor):
        opaque = False

        def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
            return False

        def visit_AssignTarget(self, node: cst.AssignTarget) -> None:
            self._target(node.target)

        def visit_AugAssign(self, node: cst.AugAssign) -> None:
            self._target(node.target)

        def visit_AnnAssign(self, node: cst.AnnAssign) -> None:
            self._target(node.target)

        def visit_Nonlocal(self, node: cst.Nonlocal) -> None:
            self.opaque = True

        def visit_Global(self, node: cst.Global) -> None:
            self.opaque = True

        def _target(self, target: cst.BaseExpression) -> None:
            if isinstance(target, cst.Name):
                names.add(target.value)
            else:
                self.opaque = True

    visitor = _Targets()
    body.visit(visitor)
    return None if visitor.opaque else names


def _names_read_outside(function_body: cst.CSTNode, skip: cst.CSTNode) -> set[str]:
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


# ---------------------------------------------------------------------------------------------
# Deciding the guards


def resolve_guards(region: Region) -> None:
    """Mark each interrupt point guarded/shielded per the spec's definition of a guard."""
    for point in region.points:
        point.shielded = any(guard.kind == "shield" for guard in point.guards)
        if point.shielded or any(g.kind in ("holds", "suppress") for g in point.guards):
            point.guarded = True
            continue
        following = [
            step
            for step in region.steps
            if step.statement is not point.statement and precedes(point, step)
        ]
        point.guarded = any(
            guard.kind == "finally"
            and guard.finally_body is not None
            and all(id(guard.finally_body) in step.finally_ancestors for step in following)
            for guard in point.guards
        )


# ---------------------------------------------------------------------------------------------
# Finding regions


@dataclass
class _Function:
    node: cst.FunctionDef
    qualname: str
    class_qualname: str | None


class _FunctionIndex(cst.CSTVisitor):
    """Every function with its `__qualname__` and whether the module imports trio/anyio."""

    def __init__(self) -> None:
        self.functions: list[_Function] = []
        self.scope: list[tuple[str, str]] = []  # (kind, name)
        self.libraries: set[str] = set()

    def _qualname(self, name: str) -> str:
        parts = []
        for kind, scope_name in self.scope:
            parts.append(scope_name)
            if kind == "def":
                parts.append("<locals>")
        return ".".join([*parts, name])

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.scope.append(("class", node.name.value))

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.scope.pop()

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        owner = None
        if self.scope and self.scope[-1][0] == "class":
            owner = self._qualname("")[:-1]
        self.functions.append(_Function(node, self._qualname(node.name.value), owner))
        self.scope.append(("def", node.name.value))

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.scope.pop()

    def visit_Import(self, node: cst.Import) -> None:
        for alias in node.names:
            name = dotted_name(alias.name)
            if name:
                self.libraries.add(name.split(".")[0])

    def visit_ImportFrom(self, node: cst.ImportFrom) -> None:
        if node.module is not None and not node.relative:
            name = dotted_name(node.module)
            if name:
                self.libraries.add(name.split(".")[0])


class _RegionFinder:
    """Finds the outermost teardown regions in one function body."""

    def __init__(self) -> None:
        self.found: list[tuple[str, cst.BaseSuite]] = []

    def scan(self, body: cst.BaseSuite) -> None:
        for statement in _statements(body):
            self.scan_statement(statement)

    def scan_statement(self, statement: cst.CSTNode) -> None:
        if isinstance(statement, cst.FunctionDef | cst.ClassDef):
            return
        if isinstance(statement, cst.Try | cst.TryStar):
            self.scan(statement.body)
            for handler in statement.handlers:
                if handler_catches_cancellation(handler):
                    self.found.append(("cancel-handler", handler.body))
                else:
                    self.scan(handler.body)
            if statement.orelse is not None:
                self.scan(statement.orelse.body)
            if statement.finalbody is not None:
                self.found.append(("finally", statement.finalbody.body))
            return
        if isinstance(statement, cst.If):
            self.scan(statement.body)
            if statement.orelse is not None:
                if isinstance(statement.orelse, cst.If):
                    self.scan_statement(statement.orelse)
                else:
                    self.scan(statement.orelse.body)
            return
        if isinstance(statement, cst.For | cst.While):
            self.scan(statement.body)
            if statement.orelse is not None:
                self.scan(statement.orelse.body)
            return
        if isinstance(statement, cst.With):
            self.scan(statement.body)
            return
        if isinstance(statement, cst.Match):
            for case in statement.cases:
                self.scan(case.body)


@dataclass
class ModuleAnalysis:
    regions: list[Region]
    level_triggered: bool


def analyse_module(module: cst.Module, config: TeardownConfig) -> ModuleAnalysis:
    """Find and analyse every teardown region of every async function in the module."""
    index = _FunctionIndex()
    module.visit(index)
    level_triggered = bool(index.libraries & LEVEL_TRIGGERED_LIBRARIES)
    tokens = tuple(name_words(token) for token in config.tokens)
    tokens = tuple(token for token in tokens if token)
    by_qualname = {fn.qualname: fn for fn in index.functions}
    regions: list[Region] = []
    analysed: set[int] = set()

    def analyse(fn: _Function, kind: str, body: cst.BaseSuite, origin: str = "") -> Region:
        region = Region(kind, fn.qualname, body, level_triggered, origin)
        walker = _RegionWalker(module, region, config, fn.node.body, tokens)
        walker.walk_suite(body)
        resolve_guards(region)
        regions.append(region)
        return region

    pending: list[tuple[_Function, Region]] = []
    for fn in index.functions:
        if fn.node.asynchronous is None:
            continue
        whole_body = fn.node.name.value == "__aexit__" or any(
            fnmatch.fnmatchcase(fn.qualname, pattern) for pattern in config.teardown_functions
        )
        if whole_body:
            kind = "__aexit__" if fn.node.name.value == "__aexit__" else "configured"
            analysed.add(id(fn.node))
            pending.append((fn, analyse(fn, kind, fn.node.body)))
            continue
        finder = _RegionFinder()
        finder.scan(fn.node.body)
        for kind, body in finder.found:
            pending.append((fn, analyse(fn, kind, body)))

    # Awaited helpers called from a region are teardown too: analyse their bodies as regions.
    while pending:
        caller, region = pending.pop(0)
        for name in region.helper_calls:
            helper = _resolve_helper(name, caller, by_qualname)
            if helper is None or id(helper.node) in analysed or helper.node.asynchronous is None:
                continue
            analysed.add(id(helper.node))
            origin = f"awaited from a teardown region in {caller.qualname}"
            pending.append((helper, analyse(helper, "helper", helper.node.body, origin)))
    return ModuleAnalysis(regions, level_triggered)


def _resolve_helper(
    name: str, caller: _Function, by_qualname: dict[str, _Function]
) -> _Function | None:
    """The function an awaited `self.x()` or bare `x()` call runs, when this module defines it."""
    parts = name.split(".")
    if len(parts) == 2 and parts[0] in ("self", "cls") and caller.class_qualname:
        return by_qualname.get(f"{caller.class_qualname}.{parts[1]}")
    if len(parts) != 1:
        return None
    # A bare name is looked up in the enclosing function scopes, then the module; class bodies
    # are not scopes for code inside their methods.
    scope = caller.qualname
    while True:
        candidate = by_qualname.get(f"{scope}.<locals>.{name}")
        if candidate is not None:
            return candidate
        if ".<locals>." not in scope:
            return by_qualname.get(name)
        scope = scope.rsplit(".<locals>.", 1)[0]
