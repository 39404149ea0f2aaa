"""Values a function acquires with an await, and tasks it starts on their own, that it releases
only on its normal path: the awaits in between, and whether a `finally:` or a handler of the
function releases them too (facts for unprotected-release)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import libcst as cst

from gate.analysis.candidates import CONTAINER_ADDS, FunctionSpan
from gate.analysis.cstwalk import descendants, walk
from gate.analysis.facts import Consequence, UnprotectedRelease
from gate.analysis.vocabulary import Vocabulary, gives_back, looks_up, spawns_task
from gate.analysis.walker import (
    _unconditional_raise,
    collect,
    dotted_name,
    ends_with,
    final_name,
    handler_catches_cancellation,
    is_shield_scope,
)

if TYPE_CHECKING:
    from gate.analysis.walker import _Analyser as Analyser


def unprotected_releases(analyser: Analyser, span: FunctionSpan) -> list[UnprotectedRelease]:
    """The releases of one function that only its normal path reaches, after an await that can
    suspend."""
    snippet = analyser.snippet_of(span)
    body = snippet.function.body
    holders, tasks = _holders(body)
    if not holders:  # nothing acquired by an await or started: nothing to release
        return []
    suspends = await_suspends(analyser, span)
    sheltered = _shielded_awaits(analyser, span, body)
    flow = _Flow(
        holders, tasks, analyser.vocabulary, lambda n: id(n) not in sheltered and suspends(n)
    )
    walk(body, flow)
    found = [
        _fact(span, snippet.module, release, acquired, between)
        for release, acquired, between in flow.unprotected()
    ]
    analyser.node_snippets.update(
        (id(node), snippet)
        for item in found
        for node in (item.release, item.acquired, item.interrupt)
    )
    return found


def _fact(
    span: FunctionSpan,
    module: cst.Module,
    release: _Release,
    acquired: _Acquired,
    between: list[_Await],
) -> UnprotectedRelease:
    return UnprotectedRelease(
        function=span.qualname,
        function_lines=(span.first_line, span.last_line),
        release=release.statement or release.call,
        label=release.label,
        consequence=release.consequence,  # type: ignore[arg-type]
        acquired=acquired.node,
        interrupt=between[0].node,
        interrupt_text=_code(module, between[0].node),
        started=acquired.started,
    )


@dataclass(frozen=True)
class _Acquired:
    order: int
    loops: tuple[int, ...]
    node: cst.CSTNode
    # a lookup (`container = await self.get(name)`) of what exists apart from the function: it
    # may close or release it, but leaves nothing behind by not destroying it
    lookup: bool = False
    # a task started on its own (`asyncio.create_task(...)`), which its `cancel()` releases
    started: bool = False


@dataclass(frozen=True)
class _Await:
    order: int
    loops: tuple[int, ...]
    node: cst.Await
    statement: cst.CSTNode | None
    # the blocks it is in that a cancel landing in it does not leave for the code after them
    within: tuple[int, ...] = ()
    # the started tasks a cancel landing here is passed on to (`await task`, `await
    # asyncio.wait_for(task, 5)`, `await asyncio.gather(*tasks)`): it leaves none of them running
    forwards: frozenset[str] = frozenset()


@dataclass(frozen=True)
class _Release:
    order: int
    loops: tuple[int, ...]
    statement: cst.CSTNode | None
    call: cst.Call
    root: str
    label: str
    consequence: object
    within: tuple[int, ...] = ()


def _between(point: _Await, acquired: _Acquired, release: _Release) -> bool:
    """Can a cancel at this await land after the value was acquired and before it is released:
    later in the same pass, or in a loop's next pass (a second acquisition included)?"""
    if point.order >= release.order:
        return False
    if release.statement is not None and point.statement is release.statement:
        return False
    if not _stays_in(point, release):
        return False  # the await is in a block the cancel does not leave, and the release is not
    # a loop that acquires again only after this pass's release leaks nothing in its next pass
    reacquires = set(acquired.loops) - set(release.loops)
    return point.order > acquired.order or bool(set(point.loops) & reacquires)


def _stays_in(point: _Await, release: _Release) -> bool:
    """Is the release in every block a cancel at the await does not leave for the code after
    it? Then the cancel leaves the function before the release."""
    return set(point.within) <= set(release.within)


def _keeps_the_cancel(handler: cst.ExceptHandler) -> bool:
    """Does the handler catch cancellation and raise nothing (`except CancelledError: pass`)?
    The function goes on after the `try`."""
    return handler_catches_cancellation(handler) and not any(
        isinstance(node, cst.Raise) for node in descendants(handler.body)
    )


def _shielded_awaits(analyser: Analyser, span: FunctionSpan, body: cst.CSTNode) -> set[int]:
    """The awaits (by id) in the body of a `with` that opens a shield scope: a trio/anyio
    scope opened with `shield=`, or a project context manager that opens one (apscheduler's
    `async with self._begin_transaction() as conn:`). A cancel lands in none of them."""
    project = analyser.project
    found: set[int] = set()
    for node in descendants(body):
        if type(node) is not cst.With or not any(
            _opens_shield_scope(item.item, project, span) for item in node.items
        ):
            continue
        found |= {id(awaited) for awaited in collect(node.body).awaits}
    return found


def _opens_shield_scope(manager: cst.BaseExpression, project, span: FunctionSpan) -> bool:
    if not isinstance(manager, cst.Call):
        return False
    name = dotted_name(manager.func)
    if is_shield_scope(manager):
        return True
    return (
        bool(name) and project is not None and project.shields(span.qualname, span.self_class, name)
    )


def await_suspends(analyser: Analyser, span: FunctionSpan) -> Callable[[cst.Await], bool]:
    """Can awaiting this suspend? Not when the project's summary of the callee says it never
    does."""
    project = analyser.project

    def suspends(node: cst.Await) -> bool:
        call = node.expression if isinstance(node.expression, cst.Call) else None
        awaited = dotted_name(call.func) if call is not None else None
        if project is None or not awaited:
            return True
        summary = project.callee(span.qualname, span.self_class, awaited)
        return summary is None or summary.suspends

    return suspends


def _holders(body: cst.CSTNode) -> tuple[dict[str, str], set[str]]:
    """Every name that holds an acquired value, mapped to what was acquired: a name bound to an
    await or to a started task holds itself; a container it is put in holds itself; an item of
    that container holds the container. And those of the roots that hold started tasks."""
    nodes = list(descendants(body))  # read once for every question below
    awaited, started = _acquiring_targets(nodes)
    roots = {name: name for name in awaited | started}
    if not roots:
        return roots, started
    _containers_held(nodes, roots, started)
    loops = [node for node in nodes if isinstance(node, cst.For | cst.CompFor)]
    for _ in loops:  # until nothing changes: a loop over an item of another loop comes after it
        if not _items_held(loops, roots):
            break
    return roots, started


def _containers_held(nodes: list[cst.CSTNode], roots: dict[str, str], started: set[str]) -> None:
    """A container a held value is put in (`conns.append(conn)`) holds itself (and holds
    started tasks when the value is one)."""
    for call in nodes:
        if not _container_add(call):
            continue
        added = _names(call.args) & roots.keys()  # type: ignore[attr-defined]
        if added:
            containers = _names_of([call.func.value])  # type: ignore[attr-defined]
            roots.update((name, name) for name in containers)
            if {roots[name] for name in added} & started:
                started |= containers


def _items_held(loops: list[cst.For | cst.CompFor], roots: dict[str, str]) -> bool:
    """Let the names each loop binds hold what its iterable holds; did anything change?"""
    before = dict(roots)
    for loop in loops:
        containers = _names_of([loop.iter]) & roots.keys()
        if containers:
            root = roots[min(containers)]
            roots.update((name, root) for name in _names_of([loop.target]))
    return roots != before


def _acquiring_targets(nodes: list[cst.CSTNode]) -> tuple[set[str], set[str]]:
    """Names bound to an awaited value among the nodes (`conn = await pool.acquire()`), and
    names bound to a task started on its own (`waiter = asyncio.create_task(...)`)."""
    awaited: set[str] = set()
    started: set[str] = set()
    for assign in nodes:
        if not isinstance(assign, cst.Assign):
            continue
        if isinstance(assign.value, cst.Await):
            kind = awaited
        elif starts_task(assign.value):
            kind = started
        else:
            continue
        kind.update(
            target.target.value for target in assign.targets if isinstance(target.target, cst.Name)
        )
    return awaited, started - awaited


def starts_task(value: cst.BaseExpression) -> bool:
    """Is this a call that starts a task on its own (`asyncio.create_task(...)`,
    `loop.create_task(...)`, `asyncio.get_running_loop().create_task(...)`)?"""
    if not isinstance(value, cst.Call):
        return False
    func = value.func
    if isinstance(func, cst.Name):
        return spawns_task(func.value, None)
    if not isinstance(func, cst.Attribute):
        return False
    receiver = func.value
    if isinstance(receiver, cst.Call):
        inner = dotted_name(receiver.func)
        return inner is not None and spawns_task(func.attr.value, f"{inner}()")
    return spawns_task(func.attr.value, dotted_name(receiver))


# Awaits that pass a cancel on to the tasks they are given
FORWARDING = frozenset({"wait_for", "gather"})


def _container_add(call: cst.CSTNode) -> bool:
    """Is this node a call that puts something in a container (`conns.append(conn)`)?"""
    if not isinstance(call, cst.Call):
        return False
    return isinstance(call.func, cst.Attribute) and call.func.attr.value in CONTAINER_ADDS


def _names(args: tuple[cst.Arg, ...] | list[cst.Arg]) -> set[str]:
    return _names_of([arg.value for arg in args])


def _names_of(nodes: list[cst.BaseExpression | None]) -> set[str]:
    """The plain names among the expressions, looking through `reversed(x)`, `list(x)`."""
    found = set()
    for node in nodes:
        if isinstance(node, cst.Call) and node.args:
            node = node.args[0].value
        if isinstance(node, cst.Name):
            found.add(node.value)
    return found


class _Flow:
    """One function body in source order (cstwalk.walk): where each held value is acquired, its
    awaits, and the calls that release a held value, on the normal path or in a `finally:` or
    handler."""

    def __init__(
        self,
        holders: dict[str, str],
        tasks: set[str],
        vocabulary: Vocabulary,
        suspends: Callable[[cst.Await], bool],
    ) -> None:
        self.holders = holders
        self.tasks = tasks  # the roots that hold started tasks
        self.vocabulary = vocabulary
        self.suspends = suspends
        self.order = 0
        self.loops: list[int] = []
        self.sheltered = 0  # inside a `finally:` or an `except` handler
        self.statement: cst.CSTNode | None = None
        self.acquired: dict[str, _Acquired] = {}
        self.awaits: list[_Await] = []
        self.releases: list[_Release] = []
        self.sheltered_roots: set[str] = set()
        self.raising: list[bool] = []  # per enclosing handler: its block ends by raising
        # blocks a cancel landing inside does not leave for the code after them: `if` arms
        # that end by leaving the function, `try` bodies whose handler keeps the cancel
        self.keeping: set[int] = set()
        self.within: list[int] = []  # those the walk is in
        self.kept: set[int] = set()  # the `try` bodies among them

    def _next(self) -> int:
        self.order += 1
        return self.order

    # nested scopes are their own code
    def visit_FunctionDef(self, node: cst.FunctionDef) -> bool:
        return False

    def visit_ClassDef(self, node: cst.ClassDef) -> bool:
        return False

    def visit_Lambda(self, node: cst.Lambda) -> bool:
        return False

    def visit_SimpleStatementLine(self, node: cst.SimpleStatementLine) -> None:
        self.statement = node

    def leave_SimpleStatementLine(self, original_node: cst.SimpleStatementLine) -> None:
        self.statement = None

    def visit_For(self, node: cst.For) -> None:
        self.loops.append(id(node))

    def leave_For(self, original_node: cst.For) -> None:
        self.loops.pop()

    def visit_While(self, node: cst.While) -> None:
        self.loops.append(id(node))

    def leave_While(self, original_node: cst.While) -> None:
        self.loops.pop()

    def visit_ExceptHandler(self, node: cst.ExceptHandler) -> None:
        self._enter_handler(node)

    def leave_ExceptHandler(self, original_node: cst.ExceptHandler) -> None:
        self._leave_handler()

    def visit_ExceptStarHandler(self, node: cst.ExceptStarHandler) -> None:
        self._enter_handler(node)

    def leave_ExceptStarHandler(self, original_node: cst.ExceptStarHandler) -> None:
        self._leave_handler()

    def _enter_handler(self, node: cst.ExceptHandler | cst.ExceptStarHandler) -> None:
        self.sheltered += 1
        self.raising.append(_unconditional_raise(node.body))

    def _leave_handler(self) -> None:
        self.sheltered -= 1
        self.raising.pop()

    def visit_If(self, node: cst.If) -> None:
        else_block = node.orelse.body if isinstance(node.orelse, cst.Else) else None
        for block in (node.body, else_block):
            if block is not None and ends_with(block, (cst.Return, cst.Raise)):  # each pass leaves
                self.keeping.add(id(block))

    def visit_Try(self, node: cst.Try) -> None:
        if any(_keeps_the_cancel(handler) for handler in node.handlers):
            self.keeping.add(id(node.body))
            self.kept.add(id(node.body))

    def visit_IndentedBlock(self, node: cst.IndentedBlock) -> None:
        if id(node) in self.keeping:
            self.within.append(id(node))

    def leave_IndentedBlock(self, original_node: cst.IndentedBlock) -> None:
        if self.within and self.within[-1] == id(original_node):
            self.within.pop()

    def visit_Finally(self, node: cst.Finally) -> None:
        self.sheltered += 1

    def leave_Finally(self, original_node: cst.Finally) -> None:
        self.sheltered -= 1

    def visit_Await(self, node: cst.Await) -> None:
        # a handler that ends by raising leaves the function before the release whether or not
        # a cancel lands in it: its awaits skip nothing the error had not skipped already
        if self.raising and self.raising[-1]:
            return
        if self.suspends(node):
            point = _Await(
                self._next(),
                tuple(self.loops),
                node,
                self.statement,
                tuple(self.within),
                self._forwarded(node.expression),
            )
            self.awaits.append(point)

    def _forwarded(self, awaited: cst.BaseExpression) -> frozenset[str]:
        """The started tasks a cancel at this await is passed on to."""
        if isinstance(awaited, cst.Name):
            values: list[cst.BaseExpression | None] = [awaited]
        elif isinstance(awaited, cst.Call) and final_name(awaited.func) in FORWARDING:
            values = [arg.value for arg in awaited.args]
        else:
            return frozenset()
        return frozenset(self._roots(values) & self.tasks)

    def leave_Assign(self, original_node: cst.Assign) -> None:
        names = self._first_bound(original_node.targets)
        if not names:
            return
        value = original_node.value
        awaited = value.expression if isinstance(value, cst.Await) else None
        started = awaited is None and starts_task(value)
        if awaited is None and not started:
            return
        lookup = isinstance(awaited, cst.Call) and looks_up(final_name(awaited.func))
        for name in names:
            self.acquired[name] = _Acquired(
                self._next(), tuple(self.loops), original_node, lookup, started
            )

    def _first_bound(self, targets: Sequence[cst.AssignTarget]) -> list[str]:
        """The held names the assignment binds that nothing acquired yet."""
        names = [t.target.value for t in targets if isinstance(t.target, cst.Name)]
        return [name for name in names if name in self.holders and name not in self.acquired]

    def visit_Call(self, node: cst.Call) -> None:
        order = self._next()
        receiver = node.func.value if isinstance(node.func, cst.Attribute) else None
        roots = self._roots([receiver, *(a.value for a in node.args)])
        if not roots:
            return
        if _container_add(node):
            self._put_in(node, receiver, order)
        elif self.sheltered:  # any release there covers every way out, a helper's as well
            if self.vocabulary.releases(final_name(node.func) or ""):
                self.sheltered_roots |= roots
        else:
            name = self._release_name(node)
            roots -= self._tasks_not_cancelled(name, receiver)
            if name is not None and roots:
                self._release(node, name, roots, order)

    def _roots(self, values: list[cst.BaseExpression | None]) -> set[str]:
        """What the held names among the values hold."""
        return {self.holders[name] for name in _names_of(values) if name in self.holders}

    def _put_in(self, node: cst.Call, receiver: cst.BaseExpression | None, order: int) -> None:
        """A held value put in a container: the container is acquired there."""
        for name in _names_of([receiver]):
            started = self.holders.get(name) in self.tasks
            self.acquired.setdefault(
                name, _Acquired(order, tuple(self.loops), node, started=started)
            )

    def _tasks_not_cancelled(
        self, name: str | None, receiver: cst.BaseExpression | None
    ) -> set[str]:
        """The started tasks a call does not release: a task is released by its own cancel()
        alone, not by a call it is handed to."""
        if name != "cancel":
            return self.tasks
        return self.tasks - self._roots([receiver])

    def _release(self, node: cst.Call, name: str, roots: set[str], order: int) -> None:
        """Note a release of these acquired values on the normal path."""
        receiver = node.func.value  # type: ignore[attr-defined]
        label = f"{dotted_name(node.func) or name}()"
        consequence = self.vocabulary.consequence(name, dotted_name(receiver))  # type: ignore[arg-type]
        loops, within = tuple(self.loops), tuple(self.within)
        self.releases += [
            _Release(order, loops, self.statement, node, root, label, consequence, within)
            for root in sorted(roots)
        ]

    def _release_name(self, call: cst.Call) -> str | None:
        """The name of a method call that releases (close, release, kill, ...); a plain function
        handed the value (`cleanup_images(project)`) often acts on something else."""
        name = final_name(call.func)
        if not isinstance(call.func, cst.Attribute) or name is None:
            return None
        return name if self.vocabulary.releases(name) else None

    def unprotected(self) -> Iterator[tuple[_Release, _Acquired, list[_Await]]]:
        """Each release on the normal path, what it releases, and the awaits in between."""
        for release in self.releases:
            acquired = self._released_by(release)
            if acquired is None:
                continue
            between = [
                w
                for w in self.awaits
                if _between(w, acquired, release)
                and release.root not in w.forwards
                and not self._released_after_kept(w, release.root)
            ]
            between.sort(key=lambda point: point.order < acquired.order)  # this pass's first
            if between and acquired.order < release.order:
                yield release, acquired, between

    def _released_after_kept(self, point: _Await, root: str) -> bool:
        """Does a cancel at this await, kept by a handler (or an `if` arm's way out), still
        reach a later release of the same value after the block that keeps it?"""
        return any(
            later.root == root
            and later.order > point.order
            and (set(point.within) - set(later.within)) & self.kept
            for later in self.releases
        )

    def _released_by(self, release: _Release) -> _Acquired | None:
        """What a release on the normal path gives back, unless a `finally:` or handler
        releases it too, or it destroys what the function only looked up (deleting that is the
        function's own work)."""
        acquired = self.acquired.get(release.root)
        if acquired is None or release.root in self.sheltered_roots:
            return None
        if acquired.lookup and not gives_back(final_name(release.call.func) or ""):
            return None
        return acquired


def _code(module: cst.Module, node: cst.CSTNode) -> str:
    text = module.code_for_node(node).strip()
    first = text.splitlines()[0] if text else ""
    return first if len(first) <= 80 else first[:77] + "..."


def unprotected_brackets(analyser: Analyser, span: FunctionSpan) -> list[UnprotectedRelease]:
    """The subtractions from an attribute of `self` that take back an addition the function
    made earlier in the same block (`self._waiting += 1` ... `self._waiting -= 1`) with an await
    that can suspend in between, when no `finally:` or handler of the function subtracts too: a
    cancel at the await leaves the count raised for good."""
    snippet = analyser.snippet_of(span)
    body = snippet.function.body
    suspends = await_suspends(analyser, span)
    protected = _taken_back_on_every_path(body)
    found = []
    for block in _blocks_of(body):
        for added, taken, between in _brackets(block, protected, suspends):
            found.append(
                UnprotectedRelease(
                    function=span.qualname,
                    function_lines=(span.first_line, span.last_line),
                    release=taken,
                    label=snippet.module.code_for_node(taken).strip(),
                    consequence=Consequence.BEST_EFFORT,
                    acquired=added,
                    interrupt=between,
                    interrupt_text=_code(snippet.module, between),
                    undoes=True,
                )
            )
    analyser.node_snippets.update(
        (id(node), snippet)
        for item in found
        for node in (item.release, item.acquired, item.interrupt)
    )
    return found


def _counted(small: cst.CSTNode, operator: type) -> str | None:
    """The attribute of `self` an augmented assignment adds to or subtracts from."""
    if not isinstance(small, cst.AugAssign) or not isinstance(small.operator, operator):
        return None
    name = dotted_name(small.target) if isinstance(small.target, cst.Attribute) else None
    return name if name and name.startswith("self.") and name.count(".") == 1 else None


def _taken_back_on_every_path(body: cst.CSTNode) -> set[str]:
    """The attributes the function subtracts from in a `finally:` or a handler."""
    guarded = [
        node for node in descendants(body) if isinstance(node, cst.Finally | cst.ExceptHandler)
    ]
    return {
        name
        for block in guarded
        for node in descendants(block)
        if (name := _counted(node, cst.SubtractAssign))
    }


def _blocks_of(body: cst.CSTNode) -> Iterator[Sequence[cst.BaseStatement]]:
    """The statement lists of the function's own code (not nested functions or classes)."""
    pending = [body]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.IndentedBlock):
            yield node.body
        for child in node.children:
            if not isinstance(child, cst.FunctionDef | cst.ClassDef | cst.Lambda):
                pending.append(child)


def _brackets(
    block: Sequence[cst.BaseStatement],
    protected: set[str],
    suspends: Callable[[cst.Await], bool],
) -> Iterator[tuple[cst.CSTNode, cst.CSTNode, cst.CSTNode]]:
    """(the addition, the subtraction, the first await between that can suspend) for each
    bracket of one block."""
    open_: dict[str, tuple[cst.CSTNode, int]] = {}
    for index, statement in enumerate(block):
        for small in (
            getattr(statement, "body", ()) if isinstance(statement, cst.SimpleStatementLine) else ()
        ):
            added, taken = _counted(small, cst.AddAssign), _counted(small, cst.SubtractAssign)
            if added and added not in protected:
                open_[added] = (small, index)
            elif taken in open_:
                start, first = open_.pop(taken)  # type: ignore[arg-type]
                between = _first_suspension(block[first + 1 : index], suspends)
                if between is not None:
                    yield start, small, between


def _first_suspension(
    statements: Sequence[cst.BaseStatement], suspends: Callable[[cst.Await], bool]
) -> cst.CSTNode | None:
    """The first await (or `async with`/`async for`) of the statements that can suspend."""
    for statement in statements:
        for node in descendants(statement):
            if isinstance(node, cst.FunctionDef | cst.ClassDef | cst.Lambda):
                break
            if isinstance(node, cst.Await) and suspends(node):
                return node
            if isinstance(node, cst.With | cst.For) and node.asynchronous is not None:
                return node
    return None
