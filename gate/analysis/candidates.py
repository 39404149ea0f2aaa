"""Which functions can hold a teardown region, decided by a cheap `ast` pass (no libcst)."""

from __future__ import annotations

import ast
import fnmatch
import functools
import re
from collections.abc import Iterator
from dataclasses import dataclass, replace

from gate.analysis.cancellation import LEVEL_TRIGGERED_LIBRARIES, catches_cancellation
from gate.analysis.vocabulary import Vocabulary, spawns_task
from gate.astwalk import (
    HOLDS_STATEMENTS,
    LEAVES,
    PerType,
    child_nodes,
    child_statements,
    dotted,
    self_class_of,
    walk_nodes,
)
from gate.config import TeardownConfig


@dataclass(frozen=True)
class FunctionSpan:
    """A function as the `ast` pass sees it: where it is, and whether it can hold a region."""

    qualname: str
    class_qualname: str | None
    name: str
    is_async: bool
    first_line: int  # the `def` line (decorators excluded)
    last_line: int
    indented: bool
    has_region_syntax: bool
    registered: bool = False  # passed to a cleanup registration (push_async_callback, ...)
    # names of the calls that act on a value the function acquired with an await (`conn =
    # await connect()` ... `conn.close()`, `pool.release(conn)`), for unprotected-release
    acts_on_acquired: tuple[str, ...] = ()
    # a sync function that awaits through a greenlet bridge (sqlalchemy's `await_only()`): a
    # cancel of the task driving it lands in the bridged call
    bridged: bool = False
    # the function adds to an attribute of `self` and takes it back off (`self.n += 1` ...
    # `self.n -= 1`), for unprotected-release
    brackets: bool = False
    # an `async with AsyncExitStack() as stack:` block of it pushes a callback
    # (`stack.push_async_callback(conn.close)`): its exit awaits the callback in teardown
    pushes_callbacks: bool = False
    # it enters a context manager by hand (`await self._portal.__aenter__()`): nothing exits
    # it when a later await of the function is interrupted, unless the function does
    enters_by_hand: bool = False
    # a function local to a method that takes no `self` of its own sees the method's: the
    # class whose methods its `self.x()` calls run (`async def writer(): await self.close()`)
    closure_of: str | None = None

    @property
    def self_class(self) -> str:
        """The class whose methods `self.x()` runs in the function ("" outside any class)."""
        return self.class_qualname or self.closure_of or ""

    @property
    def hands_on_teardown(self) -> bool:
        """Does the function leave teardown to something else: callbacks it pushes onto an exit
        stack, a context it enters by hand?"""
        return self.pushes_callbacks or self.enters_by_hand


def _final_names(node: ast.expr | None) -> list[str | None]:
    """The names a handler's type expression lists, for `catches_cancellation`."""
    if node is None:
        return [None]
    if isinstance(node, ast.Tuple):
        return [name for element in node.elts for name in _final_names(element)]
    if isinstance(node, ast.Call):
        return [f"{_final_name(node.func)}()"]
    return [_final_name(node)]


def _final_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def handler_catches_cancellation(handler: ast.ExceptHandler) -> bool:
    return catches_cancellation(_final_names(handler.type))


def _has_region_syntax(function: ast.AST) -> bool:
    """A `finally:`, or an `except` clause of any kind (a cancellation handler is a region; one
    narrower than cancellation may hold cleanup a cancel bypasses), in the function's own code
    (not nested defs)."""
    pending = list(child_statements(function))
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if isinstance(node, ast.Try | _TRY_STAR) and (node.finalbody or node.handlers):
            return True
        pending.extend(child_statements(node))
    return False


_TRY_STAR: type = getattr(ast, "TryStar", ast.Try)


def _hands_on(
    function: ast.AST, is_async: bool, registers: bool, enters: bool
) -> tuple[bool, bool]:
    """Whether an async function pushes exit-stack callbacks (asked only in a module that
    registers callbacks) and enters a context by hand (only in one whose text calls
    `__aenter__()`)."""
    if not is_async:
        return False, False
    return registers and _pushes_callbacks(function), enters and _enters_by_hand(function)


def _enters_by_hand(function: ast.AST) -> bool:
    """Does the function's own code await a context manager's `__aenter__()`? (Only asked in a
    module whose text calls one.)"""
    return any(
        isinstance(node, ast.Await)
        and isinstance(node.value, ast.Call)
        and isinstance(node.value.func, ast.Attribute)
        and node.value.func.attr == "__aenter__"
        for node in _own_nodes(function)
    )


def _pushes_callbacks(function: ast.AST) -> bool:
    """Does an `async with` of the function's own code enter an `AsyncExitStack` whose
    `push_async_callback` it calls? (Only asked in a module that registers callbacks.)"""
    nodes = _own_nodes(function)
    stacks = {name for node in nodes if isinstance(node, ast.AsyncWith) for name in _stacks(node)}
    return bool(stacks) and any(_pushed_name(node) in stacks for node in nodes)


def _stacks(statement: ast.AsyncWith) -> Iterator[str]:
    """The names an `async with` binds an `AsyncExitStack()` to."""
    for item in statement.items:
        call, target = item.context_expr, item.optional_vars
        named = isinstance(call, ast.Call) and _final_name(call.func) == "AsyncExitStack"
        if named and isinstance(target, ast.Name):
            yield target.id


def _pushed_name(node: ast.AST) -> str | None:
    """The stack a `stack.push_async_callback(...)` call pushes onto, by name."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    func = node.func
    if func.attr == "push_async_callback" and isinstance(func.value, ast.Name):
        return func.value.id
    return None


def _imported(node: ast.Import | ast.ImportFrom) -> set[str]:
    """The top-level packages an import statement names; a relative import of trio/anyio names
    counts as anyio."""
    if isinstance(node, ast.Import):
        return {alias.name.split(".")[0] for alias in node.names}
    if node.level:
        named = {alias.name for alias in node.names}
        return {"anyio"} if named & LEVEL_TRIGGERED_NAMES else set()
    return {node.module.split(".")[0]} if node.module else set()


# Calls that register a callback to run at teardown, and the attribute lists hooks go into.
REGISTRATIONS = frozenset({"push_async_callback", "push_async_exit", "push_callback"})
HOOK_LISTS = frozenset({"on_cleanup", "on_shutdown", "on_close", "on_teardown"})

# Names a module inside a trio/anyio-based package imports relatively (anyio's own code does
# `from ._core._tasks import CancelScope`): it is level-triggered too.
LEVEL_TRIGGERED_NAMES = frozenset(
    {
        "CancelScope",
        "move_on_after",
        "fail_after",
        "create_task_group",
        "open_nursery",
        "get_cancelled_exc_class",
        "to_thread",
        "checkpoint",
    }
)


def registered_callbacks(tree: ast.Module, data: bytes) -> frozenset[str]:
    """Names of functions the module registers as teardown callbacks:
    `stack.push_async_callback(self._close)`, `app.on_cleanup.append(close_db)`."""
    if not any(word in data for word in (b"push_", b"on_cleanup", b"on_shutdown", b"on_close")):
        return frozenset()
    names = set()
    for node in _calls(tree):
        if not node.args:
            continue
        func = node.func
        registers = isinstance(func, ast.Attribute) and (
            func.attr in REGISTRATIONS
            or (func.attr == "append" and _final_name(func.value) in HOOK_LISTS)
        )
        if registers:
            names.add(_final_name(node.args[0]))
    names.discard("")
    return frozenset(names)


def _calls(tree: ast.AST) -> list[ast.Call]:
    """Every call in the tree, in no particular order (what `ast.walk` finds, faster: the
    leaves that hold no call, names and constants, are not visited)."""
    return [node for node in walk_nodes([tree], _VISITED) if type(node) is ast.Call]  # type: ignore[misc]


# Whether `_calls` visits a value of a type
_VISITED = PerType(lambda kind: issubclass(kind, ast.AST) and kind not in LEAVES)


# Calls that run a coroutine to its end from sync code on a greenlet, suspending the task that
# drives it (sqlalchemy's asyncio bridge: `await_only()`, `await_fallback()`, `await_()`).
GREENLET_BRIDGES = frozenset({"await_only", "await_fallback", "await_"})


def may_bridge(data: bytes) -> bool:
    """Can the file call a greenlet bridge at all? (A byte test before any walk: one of the
    names as a whole word, which `__await__` is not.)"""
    return b"await_" in data and _BRIDGE_WORD.search(data) is not None


_BRIDGE_WORD = re.compile(
    rb"\b(?:" + b"|".join(sorted(n.encode() for n in GREENLET_BRIDGES)) + rb")\b"
)


def _bridges(function: ast.FunctionDef) -> bool:
    """Does a sync function call a greenlet bridge in its own code?"""
    return any(_final_name(call.func) in GREENLET_BRIDGES for call in _calls(function))


def index_functions(
    tree: ast.Module,
    registered: frozenset[str] = frozenset(),
    bridges: bool = False,
    enters: bool = False,
) -> tuple[list[FunctionSpan], bool]:
    """Every function with its `__qualname__`, and whether the module is level-triggered: it
    imports trio or anyio, or, inside such a package, imports their names relatively. With
    `bridges`, sync functions that call a greenlet bridge are marked; with `enters`, async
    functions that await an `__aenter__()` by hand."""
    spans: list[FunctionSpan] = []
    libraries: set[str] = set()

    def walk(node: ast.AST, prefix: str, owner: str | None, closure_of: str | None) -> None:
        for child in child_statements(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                span = _span(child, prefix + child.name, owner, registered, bridges, enters)
                seen = self_class_of(child, owner, closure_of)
                if owner is None and seen:
                    span = replace(span, closure_of=seen)
                spans.append(span)
                walk(child, f"{span.qualname}.<locals>.", None, seen)
            elif isinstance(child, ast.ClassDef):
                qualname = prefix + child.name
                walk(child, f"{qualname}.", qualname, None)
            elif isinstance(child, ast.Import | ast.ImportFrom):
                libraries.update(_imported(child))
            elif type(child) in HOLDS_STATEMENTS:
                walk(child, prefix, owner, closure_of)

    walk(tree, "", None, None)
    return spans, bool(libraries & LEVEL_TRIGGERED_LIBRARIES)


def _span(
    function: ast.FunctionDef | ast.AsyncFunctionDef,
    qualname: str,
    owner: str | None,
    registered: frozenset[str],
    bridges: bool,  # the module's text may hold a greenlet bridge
    enters: bool,  # ... an `__aenter__()` call
) -> FunctionSpan:
    is_async = isinstance(function, ast.AsyncFunctionDef)
    return FunctionSpan(
        qualname,
        owner,
        function.name,
        is_async,
        function.lineno,
        function.end_lineno or function.lineno,
        function.col_offset > 0,
        is_async and _has_region_syntax(function),
        function.name in registered,
        _acts_on_acquired(function) if is_async else (),  # type: ignore[arg-type]
        bridges and not is_async and _bridges(function),  # type: ignore[arg-type]
        is_async and _brackets(function),
        *_hands_on(function, is_async, bool(registered), enters),
    )


def is_candidate(span: FunctionSpan, config: TeardownConfig, releases: bool = True) -> bool:
    """Can this function hold a teardown region (before following awaited helpers), or release
    what it acquired with an await (asked when `releases`: unprotected-release is silent in test
    code)?"""
    if span.bridged:
        return True  # its narrow handlers, for cleanup-only-on-error
    return span.is_async and (
        span.has_region_syntax
        or span.registered
        or span.hands_on_teardown
        or _named_teardown(span, config)
        or (releases and (span.brackets or releases_acquired(span, config)))
    )


def _named_teardown(span: FunctionSpan, config: TeardownConfig) -> bool:
    """Is the function teardown by its name: `__aexit__`, a configured function, a teardown
    method?"""
    return span.name == "__aexit__" or configured(span, config) or is_teardown_method(span, config)


def releases_acquired(span: FunctionSpan, config: TeardownConfig) -> bool:
    """Does the function release (close, release, kill, ...) a value it acquired with an await?"""
    if not span.acts_on_acquired:
        return False
    vocabulary = _vocabulary(config)
    return any(vocabulary.releases(name) for name in span.acts_on_acquired)


@functools.cache
def _vocabulary(config: TeardownConfig) -> Vocabulary:
    return Vocabulary.of(config)


_NESTED = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda})


def _own_nodes(function: ast.AST) -> list[ast.AST]:
    """The nodes of a function's own code, not entering nested functions, classes or lambdas,
    in no particular order (`ctx` markers, names, constants and operators left out: what the
    callers read of a name they read from the node above it)."""
    return walk_nodes(list(child_nodes(function, _NESTED)), _ENTERED)


# Whether `_own_nodes` enters a value of a type: a node, neither a leaf nor a nested scope
_ENTERED = PerType(
    lambda kind: issubclass(kind, ast.AST) and kind not in LEAVES and kind not in _NESTED
)


def _own_statements(node: ast.AST) -> Iterator[ast.stmt]:
    """The statements of a function's own code (an assignment is always one)."""
    for child in child_statements(node):
        if type(child) not in _NESTED:
            yield child
            yield from _own_statements(child)


def _brackets(function: ast.AST) -> bool:
    """Does the function's own code both add to and subtract from one attribute of `self`
    (`self._waiting += 1` ... `self._waiting -= 1`)?"""
    changed: dict[str, set[type]] = {}
    for statement in _own_statements(function):
        if type(statement) is ast.AugAssign and type(statement.op) in (ast.Add, ast.Sub):
            target = statement.target
            if type(target) is ast.Attribute and _self_name(target.value):
                changed.setdefault(target.attr, set()).add(type(statement.op))
    return any(len(ops) == 2 for ops in changed.values())


def _self_name(node: ast.expr) -> bool:
    return type(node) is ast.Name and node.id == "self"  # type: ignore[attr-defined]


def _acts_on_acquired(function: ast.AsyncFunctionDef) -> tuple[str, ...]:
    """The final names of method calls whose receiver or an argument is a value the function
    acquired with an await, a container it put one in, or an item of such a container."""
    if not _acquiring_targets(list(_own_statements(function))):
        return ()  # found from the statements alone, without visiting every expression
    nodes = _own_nodes(function)
    holders = _acquiring_targets(nodes)
    calls = [node for node in nodes if type(node) is ast.Call]
    loops = [node for node in nodes if type(node) in _LOOPS]
    holders |= {name for call in calls for name in _container_of(call, holders)}
    holders |= {name for loop in loops for name in _item_of(loop, holders)}
    return tuple(sorted(_methods_on(calls, holders)))


def _methods_on(calls: list[ast.Call], holders: set[str]) -> set[str]:
    """The final names of the method calls whose receiver or an argument is a held name."""
    return {
        call.func.attr
        for call in calls
        if isinstance(call.func, ast.Attribute) and _names([*call.args, call.func.value]) & holders
    }


_LOOPS = frozenset({ast.For, ast.AsyncFor, ast.comprehension})  # the nodes `_item_of` reads


def _acquiring_targets(nodes: list[ast.AST]) -> set[str]:
    """Names bound to an awaited value (`conn = await pool.acquire()`) or to a task started on
    its own (`waiter = asyncio.create_task(...)`)."""
    found = set()
    for node in nodes:
        if isinstance(node, ast.Assign | ast.AnnAssign) and _acquires(node.value):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            found |= {target.id for target in targets if isinstance(target, ast.Name)}
    return found


def _acquires(value: ast.expr | None) -> bool:
    if isinstance(value, ast.Await):
        return True
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Name):
        return spawns_task(func.id, None)
    if not isinstance(func, ast.Attribute):
        return False
    receiver = func.value
    if isinstance(receiver, ast.Call):
        inner = dotted(receiver.func)
        return inner is not None and spawns_task(func.attr, f"{inner}()")
    return spawns_task(func.attr, dotted(receiver))


def _container_of(node: ast.AST, holders: set[str]) -> set[str]:
    """`conns.append(conn)` puts a held value in `conns`."""
    adds = (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in CONTAINER_ADDS
        and bool(_names(node.args) & holders)
    )
    return _names([node.func.value]) if adds else set()  # type: ignore[union-attr]


def _item_of(node: ast.AST, holders: set[str]) -> set[str]:
    """`for c in conns`, `(c.close() for c in conns)`: each item of a container is held."""
    loops = isinstance(node, ast.For | ast.AsyncFor | ast.comprehension)
    if loops and _names([node.iter]) & holders:  # type: ignore[union-attr]
        return _names([node.target])  # type: ignore[union-attr]
    return set()


# Calls that put a value into a container the function keeps.
CONTAINER_ADDS = frozenset({"append", "add", "appendleft", "insert"})


def _names(nodes: list[ast.expr | None]) -> set[str]:
    """The plain names among the expressions, looking through `reversed(x)`, `list(x)`."""
    found = set()
    for node in nodes:
        if isinstance(node, ast.Call) and node.args:
            node = node.args[0]
        if isinstance(node, ast.Name):
            found.add(node.id)
    return found


def is_teardown_method(span: FunctionSpan, config: TeardownConfig) -> bool:
    """An async method named like teardown: `close`, `_aclose`, `on_shutdown`, `_on_cleanup`."""
    return span.class_qualname is not None and named_teardown(span.name, config)


def named_teardown(name: str, config: TeardownConfig) -> bool:
    """Is a method of this name a teardown method (`close`, `_aclose`, `_on_cleanup`)?"""
    name = name.lstrip("_")
    return name in config.teardown_methods or (
        name.startswith("on_") and name[3:] in config.teardown_methods
    )


def configured(span: FunctionSpan, config: TeardownConfig) -> bool:
    return any(fnmatch.fnmatchcase(span.qualname, pattern) for pattern in config.teardown_functions)
