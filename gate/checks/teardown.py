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

import libcst as cst

from gate.checks.candidates import CANCEL_NAMES, FunctionSpan, configured, is_candidate
from gate.checks.regions import (
    CriticalStep,
    Guard,
    InterruptPoint,
    ModuleAnalysis,
    Region,
    Snippet,
    SwallowingHandler,
    precedes,
)
from gate.config import TeardownConfig

SHIELD_SCOPES = frozenset({"CancelScope", "move_on_after", "move_on_at", "fail_after", "fail_at"})

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
# Finding the functions to analyse: a cheap `ast` pass decides which ones can hold a region


class AnalysisError(Exception):
    """libcst could not take a function Python accepts; `line`/`column` say where."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


def _error_position(error: cst.ParserSyntaxError) -> tuple[int, int]:
    match = re.search(r"error at (\d+):(\d+)", error.message)
    if match:
        return int(match.group(1)), int(match.group(2))
    return error.raw_line, error.raw_column + 1


def parse_function(lines: Sequence[str], span: FunctionSpan) -> Snippet:
    """Parse just this function's lines with libcst; raises AnalysisError when libcst cannot.

    An indented function is wrapped in `if True:` so that its own indentation stays valid and
    columns need no adjusting; only lines shift.
    """
    body = "".join(lines[span.first_line - 1 : span.last_line])
    if not body.endswith(("\n", "\r")):
        body += "\n"
    offset = span.first_line - (2 if span.indented else 1)
    try:
        module = cst.parse_module("if True:\n" + body if span.indented else body)
    except cst.ParserSyntaxError as error:
        line, column = _error_position(error)
        raise AnalysisError("libcst cannot parse this line", offset + line, column) from None
    except RecursionError:
        raise AnalysisError("nested too deeply", span.first_line, 1) from None
    if span.indented:
        wrapper = module.body[0]
        assert isinstance(wrapper, cst.If)
        function = _statements(wrapper.body)[0]
    else:
        function = module.body[0]
    assert isinstance(function, cst.FunctionDef)
    return Snippet(module, function, offset)


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


class _Analyser:
    """Parses each function once, on demand, and collects the regions analysed in it."""

    def __init__(
        self,
        lines: Sequence[str],
        spans: list[FunctionSpan],
        level_triggered: bool,
        config: TeardownConfig,
    ) -> None:
        self.lines = lines
        self.config = config
        self.tokens = tuple(t for t in (name_words(token) for token in config.tokens) if t)
        self.by_qualname = {span.qualname: span for span in spans}
        self.result = ModuleAnalysis([], level_triggered, {})
        self.parsed: dict[int, Snippet] = {}  # by `def` line: qualnames repeat (redefinitions)

    def snippet_of(self, span: FunctionSpan) -> Snippet:
        if span.first_line not in self.parsed:
            self.parsed[span.first_line] = parse_function(self.lines, span)
        return self.parsed[span.first_line]

    def analyse(
        self, span: FunctionSpan, kind: str, body: cst.BaseSuite, origin: str = ""
    ) -> Region:
        snippet = self.snippet_of(span)
        region = Region(kind, span.qualname, body, self.result.level_triggered, origin)
        walker = _RegionWalker(
            snippet.module, region, self.config, snippet.function.body, self.tokens
        )
        walker.walk_suite(body)
        resolve_guards(region)
        self.result.regions.append(region)
        nodes: list[object] = [handler.handler for handler in region.swallowing]
        nodes += [step.statement for step in region.steps]
        for point in region.points:
            nodes.append(point.node)
            nodes += [n for guard in point.guards for n in (guard.node, guard.report_node) if n]
        self.result.node_snippets.update((id(node), snippet) for node in nodes)
        return region

    def regions_of(self, span: FunctionSpan) -> list[Region]:
        function = self.snippet_of(span).function
        if span.name == "__aexit__" or configured(span, self.config):
            kind = "__aexit__" if span.name == "__aexit__" else "configured"
            return [self.analyse(span, kind, function.body)]
        finder = _RegionFinder()
        finder.scan(function.body)
        return [self.analyse(span, kind, body) for kind, body in finder.found]

    def follow_helpers(self, pending: list[tuple[FunctionSpan, Region]], seen: set[str]) -> None:
        """Awaited helpers called from a region are teardown too: their bodies are regions."""
        while pending:
            caller, region = pending.pop(0)
            for name in region.helper_calls:
                helper = _resolve_helper(name, caller, self.by_qualname)
                if helper is None or helper.qualname in seen or not helper.is_async:
                    continue
                seen.add(helper.qualname)
                origin = f"awaited from a teardown region in {caller.qualname}"
                body = self.snippet_of(helper).function.body
                pending.append((helper, self.analyse(helper, "helper", body, origin)))


def analyse_functions(
    lines: Sequence[str],
    spans: list[FunctionSpan],
    level_triggered: bool,
    config: TeardownConfig,
    candidates: list[FunctionSpan] | None = None,
) -> ModuleAnalysis:
    """Analyse the teardown regions of the candidate functions, and of the awaited helpers
    their regions call; each function is parsed by libcst on its own.

    `candidates` defaults to the spans `is_candidate` picks. Raises AnalysisError when libcst
    rejects a function Python accepts, and RecursionError on pathologically deep code.
    """
    analyser = _Analyser(lines, spans, level_triggered, config)
    if candidates is None:
        candidates = [span for span in spans if is_candidate(span, config)]
    pending = [(span, region) for span in candidates for region in analyser.regions_of(span)]
    # A function whose whole body was a region needs no second look as a helper; one with only
    # a finally block still does, since an awaiting caller can be interrupted anywhere in it.
    whole = {
        span.qualname for span in candidates if span.name == "__aexit__" or configured(span, config)
    }
    analyser.follow_helpers(pending, whole)
    return analyser.result


def _resolve_helper(
    name: str, caller: FunctionSpan, by_qualname: dict[str, FunctionSpan]
) -> FunctionSpan | None:
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
