"""The teardown analysis that the GATE1xx rules share.

One pass over a libcst tree finds the teardown regions of every candidate async function, lists
the interrupt points and critical steps in each region in execution order with the constructs
that enclose them, and decides for every interrupt point whether something holds it. The facts
come out frozen; the rule modules judge them. Positions are not resolved here: the analysis keeps
nodes, and the caller resolves positions only for what gets reported.
"""

from __future__ import annotations

import dataclasses
import fnmatch
import functools
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Protocol

import libcst as cst

from gate.analysis.callers import reraising_callers, shield_helpers
from gate.analysis.cancellation import (
    catches_cancellation,
    catches_only_cancellation,
    opens_shield,
)
from gate.analysis.candidates import (
    FunctionSpan,
    configured,
    is_candidate,
    is_teardown_method,
    named_teardown,
    releases_acquired,
)
from gate.analysis.cstwalk import NESTED_SCOPES, descendants, in_source_order, parse_module
from gate.analysis.facts import (
    Arm,
    Branch,
    CancelHandler,
    Consequence,
    CriticalStep,
    Enclosure,
    EnclosureKind,
    HandEntered,
    InterruptPoint,
    ModuleAnalysis,
    NarrowHandler,
    Region,
    RegionKind,
    StackCallback,
    Tiers,
    UnprotectedRelease,
    precedes,
)
from gate.analysis.summary import MADE_BY_CALL, MANAGER_METHODS, FunctionSummary
from gate.analysis.vocabulary import (
    THREAD_WRAPPERS,
    Vocabulary,
    documents_best_effort,
    names_exit_stack,
    reasserts_cancel,
)
from gate.config import TeardownConfig
from gate.model import Severity


class Project(Protocol):
    """What the rest of the project says about names a function uses (ProjectView)."""

    def callee(self, caller: str, owner: str, call: str) -> FunctionSummary | None:
        """The summary of the function an awaited call runs, None when the project lacks it."""

    def shields(self, caller: str, owner: str, name: str) -> bool:
        """Does a `with name(...)` open a shielded scope (a project context manager)?"""

    def shielded_by_callers(self, qualname: str) -> bool:
        """Does every place in the project that runs this function shield it?"""

    def called(self, qualname: str) -> bool:
        """Does any place in the project (other than the function itself) run it?"""

    def uncancelled(self, qualname: str) -> bool:
        """Does nothing cancel the task this function runs in (asyncio.run's main coroutine
        that routes the loop's signals to its own handlers, and what only it awaits)?"""

    def never_cancelled(self, qualname: str) -> bool:
        """As `uncancelled`, with the main coroutine's `asyncio.run(...)` in the project: no
        framework outside it is trusted to run it so."""

    def quiet_when_passed(self, caller: str, owner: str, call: str, passed: str) -> bool:
        """Does the awaited call, with the constants it passes (`nowait=True`), never
        suspend?"""

    def after_cancel(self, qualname: str) -> bool:
        """Is this function run only once its task was cancelled (a hook aiohttp's run_app
        runs after cancelling its main task, and what only such hooks run)?"""

    def exit_stack(self, caller: str, owner: str, receiver: str) -> bool:
        """Does the project record that this receiver (`self._stack`, a local) holds an
        (Async)ExitStack?"""

    def container(self, caller: str, owner: str, receiver: str) -> bool:
        """Does the project record that this receiver (`self._sites`, a local) holds a
        built-in container (a list, set, dict or deque)?"""


# What a built-in container's give-back methods are called, and containers every module sees
CONTAINER_METHODS = frozenset({"remove", "discard", "pop", "popleft", "popitem", "clear"})
STANDARD_CONTAINERS = frozenset({"sys.path", "sys.modules", "os.environ"})


def built_calls(small: cst.BaseSmallStatement) -> set[int]:
    """The calls of a statement that build a value rather than take a step (by id): what a
    `raise` raises (`raise self.connection_closed_exc()`), and a call whose result is called on
    in turn (`table.delete().where(...)`, a statement being built)."""
    if isinstance(small, cst.Raise):
        return {id(node) for node in descendants(small) if type(node) is cst.Call}
    return {
        id(node.value)
        for node in descendants(small)
        if type(node) is cst.Attribute and type(node.value) is cst.Call
    }


def bookkeeping(name: str, receiver: str | None, container: Callable[[str], bool]) -> bool:
    """Is the step a give-back on a built-in container the project records the receiver holds
    (`self._sites.remove(site)`, `self._starting.discard(key)`)? That is bookkeeping in the
    process's memory: best effort, whatever the container holds."""
    return (
        receiver is not None
        and name in CONTAINER_METHODS
        and (receiver in STANDARD_CONTAINERS or container(receiver))
    )


# Awaits whose work runs on when the awaiting task is cancelled: `asyncio.wait(tasks)` stops
# waiting but never cancels the tasks it waits on
TASK_WAITS = frozenset({"asyncio.wait"})


def dotted_name(node: cst.BaseExpression) -> str | None:
    """`a.b.c` for a Name/Attribute chain, None for anything else."""
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        base = dotted_name(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    return None


def _awaited_name(func: cst.BaseExpression) -> str | None:
    """How the project looks up an awaited call: its dotted name, or `super().close` for a
    method of the base class (`await super().close()`)."""
    if (
        isinstance(func, cst.Attribute)
        and isinstance(func.value, cst.Call)
        and not func.value.args
        and dotted_name(func.value.func) == "super"
    ):
        return f"super{MADE_BY_CALL}.{func.attr.value}"
    return _subscripted_name(func)


def _subscripted_name(node: cst.BaseExpression) -> str | None:
    """`dotted_name`, with a subscript of the receiver kept as the summaries' `call_name`
    keeps it: `[N]` for an integer, `[]` for any other key."""
    if isinstance(node, cst.Attribute):
        base = _subscripted_name(node.value)
        return None if base is None else f"{base}.{node.attr.value}"
    if isinstance(node, cst.Subscript) and len(node.slice) == 1:
        base = _subscripted_name(node.value)
        index = node.slice[0].slice
        key = ""
        if isinstance(index, cst.Index) and isinstance(index.value, cst.Integer):
            key = index.value.value
        return None if base is None else f"{base}[{key}]"
    return dotted_name(node)


def _manager_name(node: cst.BaseExpression) -> str | None:
    """How an `async with` item names its manager, as the summaries do (`manager_name`)."""
    if isinstance(node, cst.Call):
        called = dotted_name(node.func)
        return called + MADE_BY_CALL if called else None
    return dotted_name(node)


def final_name(node: cst.BaseExpression) -> str | None:
    if isinstance(node, cst.Name):
        return node.value
    if isinstance(node, cst.Attribute):
        return node.attr.value
    return None


def _names_in(node: cst.CSTNode) -> set[str]:
    return {name.value for name in descendants(node) if isinstance(name, cst.Name)}


def _bound_names(statement: cst.For | cst.While) -> set[str]:
    """The names a `for` loop binds to each item; none for a `while` loop."""
    return _names_in(statement.target) if isinstance(statement, cst.For) else set()


# Calls and methods that hand on the items of what they are given: `for t in list(self._tasks):`
_ITEMS_OF = frozenset({"list", "tuple", "sorted", "reversed", "set", "frozenset"})
_ITEM_METHODS = frozenset({"values", "copy"})


def _iterated(node: cst.BaseExpression) -> str | None:
    """The dotted name of what a `for` loop takes its items from, through `list(...)`,
    `sorted(...)`, `.values()` and the like."""
    while isinstance(node, cst.Call):
        if isinstance(node.func, cst.Name) and node.func.value in _ITEMS_OF and node.args:
            node = node.args[0].value
        elif isinstance(node.func, cst.Attribute) and node.func.attr.value in _ITEM_METHODS:
            node = node.func.value
        else:
            return None
    return dotted_name(node)


def loop_receivers(node: cst.CSTNode) -> dict[int, str]:
    """For the calls at or below `node` whose receiver is the name a `for` loop around them
    binds to each item (`for t in self.tasks: t.cancel()`), by id: what the loop iterates over,
    which says what the name holds. Nested scopes are not entered."""
    found: dict[int, str] = {}
    for loop in in_source_order(node, NESTED_SCOPES):
        if not isinstance(loop, cst.For) or not isinstance(loop.target, cst.Name):
            continue
        source = _iterated(loop.iter)
        if source is None:
            continue
        for call in collect(loop.body).calls:
            func = call.func
            if (
                isinstance(func, cst.Attribute)
                and isinstance(func.value, cst.Name)
                and func.value.value == loop.target.value
            ):
                found[id(call)] = source  # inner loops come later: the innermost wins
    return found


@dataclass
class Collected:
    """The awaits and calls in an expression or statement, in source order."""

    awaits: list[cst.Await] = field(default_factory=list)
    calls: list[cst.Call] = field(default_factory=list)


def collect(node: cst.CSTNode) -> Collected:
    """The awaits and calls at or below `node`, not entering nested scopes (a `def`, `class` or
    `lambda`; nothing when `node` is one)."""
    found = Collected()
    for below in in_source_order(node, NESTED_SCOPES):
        kind = type(below)  # no node class derives from these: an isinstance of an ABC is slow
        if kind is cst.Await:
            found.awaits.append(below)
        elif kind is cst.Call:
            found.calls.append(below)
    return found


# ---------------------------------------------------------------------------------------------
# What an exception clause catches, what a `with` item does


def _sole_awaited_call(body: cst.BaseSuite) -> str | None:
    """The name a body's one statement awaits (`await x.f()`, `return await x.f()`,
    `await super().f()` as `super().f`), a docstring and guards that return early (`if
    self._closed: return`) aside; None for any other body."""
    found = [s for s in statements(body) if not _is_docstring(s) and not _returns_early(s)]
    if len(found) == 2 and _returns_nothing(found[1]):
        found = found[:1]  # `await self.stop(); return None` of an `__aexit__`
    if len(found) != 1 or not isinstance(found[0], cst.SimpleStatementLine):
        return None
    value = _sole_value(found[0])
    if not isinstance(value, cst.Await) or not isinstance(value.expression, cst.Call):
        return None
    return _awaited_name(value.expression.func)


def _sole_value(line: cst.SimpleStatementLine) -> cst.BaseExpression | None:
    """What a line of one expression or `return` evaluates (None for any other line)."""
    small = line.body
    if len(small) != 1 or not isinstance(small[0], cst.Expr | cst.Return):
        return None
    return small[0].value


def _returns_early(statement: cst.CSTNode) -> bool:
    """`if <test>: return` (nothing else, no `else`): a guard that does no teardown."""
    if not isinstance(statement, cst.If) or statement.orelse is not None:
        return False
    inner = statements(statement.body)
    return len(inner) == 1 and _returns_nothing(inner[0])


def _returns_nothing(statement: cst.CSTNode) -> bool:
    """`return`, `return None` or `return False` (an `__aexit__` that suppresses nothing)."""
    return isinstance(statement, cst.SimpleStatementLine) and all(
        isinstance(small, cst.Return)
        and (small.value is None or _names_constant(small.value, ("None", "False")))
        for small in statement.body
    )


def _names_constant(node: cst.BaseExpression, names: tuple[str, ...]) -> bool:
    return isinstance(node, cst.Name) and node.value in names


def _is_docstring(statement: cst.CSTNode) -> bool:
    return (
        isinstance(statement, cst.SimpleStatementLine)
        and len(statement.body) == 1
        and isinstance(statement.body[0], cst.Expr)
        and isinstance(statement.body[0].value, cst.SimpleString | cst.ConcatenatedString)
    )


def _is_code(line: str) -> bool:
    stripped = line.strip()
    return bool(stripped) and not stripped.startswith("#")


def exception_names(node: cst.BaseExpression | None) -> list[str | None]:
    """The final names an `except` type or `suppress` argument lists (None: bare except), for
    `catches_cancellation`."""
    if node is None:
        return [None]
    if isinstance(node, cst.Tuple):
        return [name for element in node.elements for name in exception_names(element.value)]
    if isinstance(node, cst.Call):
        return [f"{final_name(node.func)}()"]
    return [final_name(node) or ""]


def handler_catches_cancellation(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> bool:
    """True when the handler catches CancelledError/trio.Cancelled (bare, BaseException, ...)."""
    return catches_cancellation(exception_names(handler.type))


def _call_args(call: cst.Call) -> list[cst.BaseExpression]:
    return [arg.value for arg in call.args if arg.keyword is None and not arg.star]


def literally_false(node: cst.BaseExpression) -> bool:
    return isinstance(node, cst.Name) and node.value == "False"


def is_shield_scope(call: cst.Call) -> bool:
    """A trio/anyio scope opened with `shield=` anything but a literal False (`shield=pending`
    shields when it matters)."""
    values = [
        False if literally_false(arg.value) else None
        for arg in call.args
        if arg.keyword is not None and arg.keyword.value == "shield"
    ]
    return opens_shield(final_name(call.func), values)


def _sets_shield(statement: cst.CSTNode) -> bool:
    """`scope.shield = True` (or any value but a literal False): the scope shields from here."""
    if not isinstance(statement, cst.SimpleStatementLine):
        return False
    return any(
        isinstance(small, cst.Assign)
        and not literally_false(small.value)
        and any(
            isinstance(t.target, cst.Attribute) and t.target.attr.value == "shield"
            for t in small.targets
        )
        for small in statement.body
    )


def _sole_statement(block: cst.CSTNode, small: cst.BaseSmallStatement) -> bool:
    """Is `small` all that the body of this `try` or `with` runs?"""
    body = getattr(block, "body", None)
    statements = getattr(body, "body", ())
    return (
        len(statements) == 1
        and isinstance(statements[0], cst.SimpleStatementLine)
        and len(statements[0].body) == 1
        and statements[0].body[0] is small
    )


def _ignores_failure(block: cst.CSTNode) -> bool:
    """Does this `try` or `with` drop an `Exception` its body raises, and nothing else of
    note: a handler of `Exception` (not of cancellation) whose body only passes, carries on or
    logs at debug level, or `suppress(Exception)`? The code says the step may fail unnoticed."""
    if isinstance(block, cst.With):
        return any(_suppresses_exception(item.item) for item in block.items)
    if not isinstance(block, cst.Try) or cancel_handler_index(block) is not None:
        return False
    return any(
        "Exception" in exception_names(handler.type) and _silent(handler.body)
        for handler in block.handlers
    )


def _suppresses_exception(manager: cst.BaseExpression) -> bool:
    """`suppress(Exception)` (among other classes, or not)."""
    suppressed = _suppressed_names(manager) if isinstance(manager, cst.Call) else None
    return suppressed is not None and "Exception" in suppressed


def _suppressed_names(call: cst.Call) -> list[str | None] | None:
    """The exception names a `suppress(...)` lists (for `catches_cancellation`); None for any
    other call."""
    if final_name(call.func) != "suppress":
        return None
    return [name for arg in _call_args(call) for name in exception_names(arg)]


def _silent(body: cst.BaseSuite) -> bool:
    """Only `pass`, `...`, `continue`, a string, or a call of a `debug` method."""
    for statement in getattr(body, "body", ()):
        if not isinstance(statement, cst.SimpleStatementLine):
            return False
        for small in statement.body:
            if isinstance(small, cst.Pass | cst.Continue):
                continue
            value = small.value if isinstance(small, cst.Expr) else None
            if isinstance(value, cst.Ellipsis | cst.SimpleString):
                continue
            if isinstance(value, cst.Call) and final_name(value.func) == "debug":
                continue
            return False
    return True


def cancel_handler_index(statement: cst.Try | cst.TryStar) -> int | None:
    """The handler a cancel lands in: the first that catches cancellation (a later broad
    handler never sees it)."""
    for index, handler in enumerate(statement.handlers):
        if handler_catches_cancellation(handler):
            return index
    return None


# Awaited calls that are cancel-safe by contract: anyio's forceful close (it cancels its own
# scope on purpose) and a delegated exit (the wrapped manager owns its shielding); a no-argument
# `.aclose()` is too.
CONTRACT_CALLS = frozenset({"aclose_forcefully", "__aexit__"})


def narrowed_awaits(body: cst.CSTNode) -> dict[int, tuple[tuple[str, str], ...]]:
    """Per await below `body` (by id) inside the body of an `if isinstance(name, Cls):`, the
    (name, class) of each such test around it, innermost last. Only statements are walked:
    the awaits of a narrowing `if`'s body are collected once it is found."""
    found: dict[int, tuple[tuple[str, str], ...]] = {}
    pending: list[cst.CSTNode] = [body]
    while pending:
        node = pending.pop()
        narrowing = _narrowing(node) if type(node) is cst.If else None
        if narrowing is not None:
            for awaited in collect(node.body).awaits:  # type: ignore[attr-defined]
                found[id(awaited)] = (*found.get(id(awaited), ()), narrowing)
        pending += [child for child in node.children if type(child) in _HOLDING_STATEMENTS]
    return found


# What `narrowed_awaits` enters: the blocks and compound statements that hold statements (not
# expressions, simple statements or nested scopes)
_HOLDING_STATEMENTS = frozenset(
    {
        cst.IndentedBlock,
        cst.If,
        cst.Else,
        cst.For,
        cst.While,
        cst.With,
        cst.Try,
        cst.TryStar,
        cst.ExceptHandler,
        cst.ExceptStarHandler,
        cst.Finally,
        cst.Match,
        cst.MatchCase,
    }
)


def _narrowing(statement: cst.If) -> tuple[str, str] | None:
    """(name, class) of an `if isinstance(name, Cls):` test naming one class."""
    test = statement.test
    if not (isinstance(test, cst.Call) and dotted_name(test.func) == "isinstance"):
        return None
    arguments = _call_args(test)
    if len(arguments) != 2:
        return None
    name, cls = dotted_name(arguments[0]), dotted_name(arguments[1])
    return (name, cls) if name and cls else None


def _argument_names(call: cst.Call) -> str:
    """The names a step's call passes (`client.delete(self._sandbox)` -> `self._sandbox`): what
    it acts on, besides its receiver."""
    names = (dotted_name(argument.value) for argument in call.args)
    return "_".join(name for name in names if name)


def _runs_on(call: cst.Call) -> bool:
    """Does the awaited call's work finish even when the await is cancelled: handed to a
    thread, or tasks that `asyncio.wait` waits on?"""
    return final_name(call.func) in THREAD_WRAPPERS or dotted_name(call.func) in TASK_WAITS


def _by_contract(call: cst.Call) -> bool:
    name = final_name(call.func)
    return name in CONTRACT_CALLS or (name == "aclose" and not call.args)


# Calls that never return normally, for handlers that look as if they swallowed a cancel.
RAISING_CALLS = frozenset({"pytest.fail", "pytest.skip", "pytest.exit", "sys.exit", "os._exit"})


def _raises(small: cst.BaseSmallStatement) -> bool:
    if isinstance(small, cst.Raise):
        return True
    call = small.value if isinstance(small, cst.Expr) else None
    return isinstance(call, cst.Call) and dotted_name(call.func) in RAISING_CALLS


def _outside_arguments(points: list[InterruptPoint], call: cst.Call | None) -> list[InterruptPoint]:
    """The points of a step's statement that are not in the step call's own arguments: cut in
    `await save(await fetch())`'s argument, the step has nothing to act on yet (that await is
    still an interrupt point for what follows)."""
    if call is None or not call.args:
        return points
    inside = {id(node) for arg in call.args for node in collect(arg.value).awaits}
    return [point for point in points if id(point.node) not in inside]


def _reasserts_cancel_call(small: cst.BaseSmallStatement) -> bool:
    """`raise_if_cancelling()`: a call that raises a cancel still pending."""
    call = small.value if isinstance(small, cst.Expr) else None
    name = final_name(call.func) if isinstance(call, cst.Call) else None
    return name is not None and reasserts_cancel(name)


def _raises_if_cancelling(statement: cst.If) -> bool:
    """`if task.cancelling(): raise ...` (no `else`): it raises while a cancel is pending."""
    return (
        statement.orelse is None
        and any(final_name(call.func) == "cancelling" for call in collect(statement.test).calls)
        and _unconditional_raise(statement.body)
    )


def ends_with(body: cst.BaseSuite, kinds: type | tuple[type, ...]) -> bool:
    """Does the block's last statement end with one of these (`cst.Return`: `return`,
    `return value`)?"""
    listed = statements(body)
    last = listed[-1] if listed else None
    return isinstance(last, cst.SimpleStatementLine | cst.SimpleStatementSuite) and isinstance(
        last.body[-1], kinds
    )


# The calls that open a task group or a nursery, whose exit cancels its scope on an exception
TASK_GROUP_OPENERS = frozenset({"create_task_group", "open_nursery", "TaskGroup"})


def _enclosing_groups(body: cst.CSTNode, node: cst.CSTNode) -> set[str]:
    """The names of the task groups (`async with anyio.create_task_group() as tg:`) whose block
    in `body` holds `node`."""
    names = set()
    for statement in descendants(body):
        if isinstance(statement, cst.With) and statement.asynchronous is not None:
            opened = {name for item in statement.items if (name := _opened_group(item))}
            if opened and any(below is node for below in descendants(statement.body)):
                names |= opened
    return names


def _opened_group(item: cst.WithItem) -> str | None:
    """The name an `async with` item binds a task group or nursery it opens to."""
    target = item.asname.name if item.asname is not None else None
    opened = item.item
    if (
        isinstance(opened, cst.Call)
        and final_name(opened.func) in TASK_GROUP_OPENERS
        and isinstance(target, cst.Name)
    ):
        return target.value
    return None


def known_done_awaits(body: cst.CSTNode) -> set[int]:
    """The awaits (by id) of a task or future (`await task`) in the body of an `if
    task.done():` of the function: awaiting a done future does not suspend."""
    found: set[int] = set()
    for statement in descendants(body):
        asked = _asked_done(statement.test) if isinstance(statement, cst.If) else None
        if asked is not None:
            found |= {
                id(node)
                for node in descendants(statement.body)
                if isinstance(node, cst.Await) and dotted_name(node.expression) == asked
            }
    return found


def _asked_done(test: cst.BaseExpression) -> str | None:
    """The task or future a test `task.done()` asks about."""
    if (
        isinstance(test, cst.Call)
        and not test.args
        and isinstance(test.func, cst.Attribute)
        and test.func.attr.value == "done"
    ):
        return dotted_name(test.func.value)
    return None


def _unconditional_raise(body: cst.BaseSuite) -> bool:
    """Does the block end by raising, whatever happens inside it?"""
    for statement in statements(body):
        if isinstance(statement, cst.SimpleStatementLine | cst.SimpleStatementSuite) and any(
            _raises(small) for small in statement.body
        ):
            return True
    return False


def _awaited_names(body: cst.CSTNode) -> set[str]:
    """The dotted names a body awaits, directly or through `asyncio.wait_for(task, 1)` or
    `asyncio.shield(task)`, and the tasks `asyncio.gather(*tasks)`, `asyncio.gather(a, b)` and
    `asyncio.wait(tasks)` wait on."""
    names = set()
    for node in collect(body).awaits:
        expression = node.expression
        if isinstance(expression, cst.Call) and final_name(expression.func) in _WAITS_ON_ARGUMENT:
            arguments = _call_args(expression)
            expression = arguments[0] if arguments else expression
        if isinstance(expression, cst.Call) and final_name(expression.func) in _WAITS_ON_TASKS:
            names.update(dotted_name(arg.value) for arg in expression.args if arg.keyword is None)
        else:
            names.add(dotted_name(expression))
    names.discard(None)
    return names  # type: ignore[return-value]


_WAITS_ON_ARGUMENT = frozenset({"wait_for", "shield"})
_WAITS_ON_TASKS = frozenset({"gather", "wait"})


def _cancelled_names(body: cst.CSTNode, leave_out: set[int]) -> set[str]:
    """The dotted names `x.cancel()` calls under `body` cancel (but those in `leave_out`), and
    the collections of them: what a loop cancels item by item (`for t in tasks: t.cancel()`),
    and a list each is appended to (`pending.append(self._reader)`)."""
    cancelled = {
        dotted_name(call.func.value)  # type: ignore[attr-defined]
        for call in _cancel_calls(body)
        if id(call) not in leave_out
    }
    cancelled.discard(None)
    for node in descendants(body):
        collection = _collection_of(node, cancelled)  # type: ignore[arg-type]
        if collection is not None:
            cancelled.add(collection)
    return cancelled  # type: ignore[return-value]


def _collection_of(node: cst.CSTNode, items: set[str]) -> str | None:
    """What `node` makes a collection of some of `items`: the iterable of a loop over them, the
    list one is appended to."""
    if isinstance(node, cst.For | cst.CompFor) and dotted_name(node.target) in items:
        return dotted_name(node.iter)
    if (
        isinstance(node, cst.Call)
        and isinstance(node.func, cst.Attribute)
        and node.func.attr.value == "append"
        and any(dotted_name(arg) in items for arg in _call_args(node))
    ):
        return dotted_name(node.func.value)
    return None


def _cancel_calls(node: cst.CSTNode) -> Iterator[cst.Call]:
    """The `x.cancel()` calls under `node`."""
    for call in descendants(node):
        if (
            isinstance(call, cst.Call)
            and isinstance(call.func, cst.Attribute)
            and call.func.attr.value == "cancel"
        ):
            yield call


def statements(body: cst.BaseSuite) -> Sequence[cst.BaseStatement]:
    if isinstance(body, cst.SimpleStatementSuite):
        return [body]
    return body.body  # type: ignore[return-value]


Blocks = Iterator[tuple["Arm | None", int, cst.CSTNode]]


def _if_blocks(statement: cst.If) -> Blocks:
    yield Arm.IF, 0, statement.body
    if isinstance(statement.orelse, cst.If):
        yield Arm.ELSE, 0, statement.orelse
    elif statement.orelse is not None:
        yield Arm.ELSE, 0, statement.orelse.body


def _loop_blocks(statement: cst.For | cst.While) -> Blocks:
    yield None, 0, statement.body
    if statement.orelse is not None:
        yield None, 0, statement.orelse.body


def _try_blocks(statement: cst.Try | cst.TryStar) -> Blocks:
    yield Arm.TRY_BODY, 0, statement.body
    for index, handler in enumerate(statement.handlers):
        yield Arm.HANDLER, index, handler
    if statement.orelse is not None:
        yield Arm.TRY_ELSE, 0, statement.orelse.body
    if statement.finalbody is not None:
        yield Arm.FINALLY, 0, statement.finalbody.body


def _with_blocks(statement: cst.With) -> Blocks:
    yield None, 0, statement.body


def _match_blocks(statement: cst.Match) -> Blocks:
    for index, case in enumerate(statement.cases):
        yield Arm.CASE, index, case.body


_BLOCKS = {
    cst.If: _if_blocks,
    cst.For: _loop_blocks,
    cst.While: _loop_blocks,
    cst.With: _with_blocks,
    cst.Try: _try_blocks,
    cst.TryStar: _try_blocks,
    cst.Match: _match_blocks,
}


def ending_statements(body: cst.BaseSuite) -> set[int]:
    """The small statements (by id) after which a block runs nothing that an exception raised
    there would skip: its last statement (a bare `raise` or `pass` after it changes nothing),
    and, inside a compound last statement, the ends of its arms; a `try`'s handlers and
    `finally:` and a `with`'s exit run on the exception's own path. A loop's body is followed by
    the next iteration, a `try` body with an `else:` by it."""
    listed = [s for s in statements(body) if not _changes_nothing_after(s)]
    return _ends_of(listed[-1]) if listed else set()


def _ends_of(last: cst.BaseStatement) -> set[int]:
    if isinstance(last, cst.SimpleStatementLine | cst.SimpleStatementSuite):
        return {id(last.body[-1])} if last.body else set()
    if isinstance(last, cst.For | cst.While):
        return set()  # the next iteration follows
    # a `try` body is followed by the `else:` block when there is one
    followed = isinstance(last, cst.Try | cst.TryStar) and last.orelse is not None
    found: set[int] = set()
    for arm, _, block in blocks(last):
        if arm is Arm.TRY_BODY and followed:
            continue
        if isinstance(block, cst.If):
            found |= _ends_of(block)
        elif isinstance(block, cst.ExceptHandler | cst.ExceptStarHandler):
            found |= ending_statements(block.body)
        else:
            found |= ending_statements(block)  # type: ignore[arg-type]
    return found


def _changes_nothing_after(statement: cst.BaseStatement) -> bool:
    """A bare `raise` or `pass`: skipped by an exception, it changes nothing."""
    if not isinstance(statement, cst.SimpleStatementLine | cst.SimpleStatementSuite):
        return False
    return all(
        isinstance(small, cst.Pass) or (isinstance(small, cst.Raise) and small.exc is None)
        for small in statement.body
    )


def blocks(statement: cst.CSTNode) -> Blocks:
    """The blocks of a compound statement in source order, with the arm each is in (None for a
    loop's body or `else`, a `with` body). An `elif` comes out as the nested `If` statement.
    Handler blocks are the handler nodes, so that callers can ask what they catch."""
    split = _BLOCKS.get(type(statement))
    return split(statement) if split is not None else iter(())  # type: ignore[operator]


def child_suites(statement: cst.CSTNode) -> Iterator[cst.BaseSuite]:
    """The blocks of a compound statement to read as lists of statements, in source order: a
    handler's body for the handler, a block holding the nested `if` for an `elif`."""
    for _, _, block in blocks(statement):
        inner = (
            block.body if isinstance(block, cst.ExceptHandler | cst.ExceptStarHandler) else block
        )
        yield cst.IndentedBlock(body=[inner]) if isinstance(inner, cst.If) else inner  # type: ignore[misc]


# ---------------------------------------------------------------------------------------------
# The region walker


Callee = Callable[[str], FunctionSummary | None]


def _no_callee(call: str) -> FunctionSummary | None:
    return None


def _no_stack(receiver: str) -> bool:
    return False


def _no_shield(name: str) -> bool:
    return False


def _never_quiet(call: str, passed: str) -> bool:
    return False


def passed_constants(call: cst.Call) -> str:
    """The keyword arguments a call passes as `True`, `False` or `None`, as `name=True|...`
    (None counts as False), in order; "" for none."""
    found = []
    for argument in call.args:
        value = argument.value
        constant = value.value if isinstance(value, cst.Name) else ""
        if argument.keyword is not None and constant in ("True", "False", "None"):
            truth = "True" if constant == "True" else "False"
            found.append(f"{argument.keyword.value}={truth}")
    return "|".join(found)


class _RegionWalker:
    """Walks one region in execution order, collecting its interrupt points and steps.

    `callee` looks up the project's summary of an awaited call's function (None when the project
    does not define it)."""

    def __init__(
        self,
        module: cst.Module,
        config: TeardownConfig,
        function_body: cst.CSTNode,
        vocabulary: Vocabulary,
        callee: Callee = _no_callee,
        shields: Callable[[str], bool] = _no_shield,
    ) -> None:
        self.module = module
        self.config = config
        self.function_body = function_body
        self.vocabulary = vocabulary
        self.callee = callee
        self.shields = shields
        # does a receiver hold an (Async)ExitStack, by what the project records it holds
        self.exit_stack: Callable[[str], bool] = _no_stack
        self.container: Callable[[str], bool] = _no_stack
        # does an awaited call never suspend with the constants it passes (`nowait=True`)
        self.quiet: Callable[[str, str], bool] = _never_quiet
        self.stack_closes: set[str] = set()  # the labels of steps that close an exit stack
        self.order = 0
        self.branches: list[Branch] = []
        # the arms walked into whose block ends in `return` (a subset of `branches`)
        self.returning: list[Branch] = []
        # per handler walked into (the region's own first, when it is one): only a cancel enters it
        self.cancel_only: list[bool] = []
        self.loops: list[int] = []
        self.loop_items: list[set[str]] = []  # the names each enclosing loop binds per item
        self.enclosures: list[Enclosure] = []
        self.finally_stack: list[int] = []
        self.points: list[InterruptPoint] = []
        self.steps: list[CriticalStep] = []
        self.cancel_handlers: list[CancelHandler] = []
        self.raise_after: list[bool] = []
        # the statements walked that raise a pending cancel: (order, branches, loops)
        self.reasserts: list[tuple[int, tuple[Branch, ...], tuple[int, ...]]] = []
        self.documented_best_effort = False  # the region's function calls itself best effort
        self.ending: set[int] = set()  # the region's ending statements (ending_statements)

    @functools.cached_property
    def loop_receivers(self) -> dict[int, str]:
        """Read only when a step's receiver might be a loop's item."""
        return loop_receivers(self.function_body)

    # -- text helpers
    def code(self, node: cst.CSTNode) -> str:
        """The node's first line of code, shortened: a compound statement's code starts with the
        comment lines above it (`# one session at a time` before an `async with`)."""
        text = self.module.code_for_node(node)
        first = next((line.strip() for line in text.splitlines() if _is_code(line)), "")
        return first if len(first) <= 80 else first[:77] + "..."

    def next_order(self) -> int:
        self.order += 1
        return self.order

    # -- classification
    def critical_call(self, calls: list[cst.Call]) -> tuple[str, Consequence, cst.Call] | None:
        """The label and consequence of the first call that is a step, with the call; None when
        no call is one."""
        for call in calls:
            for candidate in self._called_functions(call):
                found = self._step_of(call, candidate)
                if found is not None:
                    return found[0], found[1], call
        return None

    def _step_of(
        self, call: cst.Call, candidate: cst.BaseExpression
    ) -> tuple[str, Consequence] | None:
        """The label and consequence of one function a call runs, when it is a step."""
        name = final_name(candidate)
        if name is None:
            return None
        receiver = dotted_name(candidate.value) if isinstance(candidate, cst.Attribute) else None
        stack = receiver is not None and self.closes_exit_stack(name, receiver)
        consequence = self._cost(call, candidate, name, receiver, stack)
        if consequence is None:
            return None
        label = f"{dotted_name(candidate) or name}()"
        if stack:
            self.stack_closes.add(label)
        return label, consequence

    def _cost(
        self,
        call: cst.Call,
        candidate: cst.BaseExpression,
        name: str,
        receiver: str | None,
        stack: bool,
    ) -> Consequence | None:
        """What skipping the step costs: by its name and what it acts on, a loop item's by what
        the loop iterates over; a give-back on a built-in container is best effort."""
        acts_on = _argument_names(call)
        consequence = self.vocabulary.consequence(name, receiver, exit_stack=stack, acts_on=acts_on)
        if consequence is Consequence.LOSES_WORK and candidate is call.func:
            source = self.loop_receivers.get(id(call))
            if source is not None:
                consequence = self.vocabulary.consequence(name, receiver, source)
        if consequence is Consequence.LOSES_WORK and bookkeeping(name, receiver, self.container):
            return Consequence.BEST_EFFORT
        return consequence

    def closes_exit_stack(self, name: str, receiver: str) -> bool:
        """Is this a close of an exit stack, by the receiver's name or what the project records
        it holds? What it closes is whatever was entered into it."""
        if self.vocabulary.matched(name) is None or not self.vocabulary.releases(name):
            return False
        return names_exit_stack(receiver) or self.exit_stack(receiver)

    def _called_functions(self, call: cst.Call) -> Iterator[cst.BaseExpression]:
        yield call.func
        wrapper = final_name(call.func)
        if wrapper in THREAD_WRAPPERS:
            args = _call_args(call)
            index = THREAD_WRAPPERS[wrapper]
            if len(args) > index:
                yield args[index]

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
        shields = 0
        self.raise_after.append(_unconditional_raise(body))
        for statement in statements(body):
            self.walk_statement(statement)
            if _sets_shield(statement):
                self.enclosures.append(Enclosure(EnclosureKind.SHIELD, statement))
                shields += 1
        self.raise_after.pop()
        if shields:
            del self.enclosures[-shields:]

    def walk_statement(self, statement: cst.CSTNode) -> None:
        if isinstance(statement, cst.FunctionDef | cst.ClassDef):
            return
        if isinstance(statement, cst.SimpleStatementLine | cst.SimpleStatementSuite):
            marked = self.marked_critical(statement)
            for small in statement.body:
                self.walk_small(small, marked)
        elif isinstance(statement, cst.If):
            self.add_points(statement.test, statement)
            if _raises_if_cancelling(statement):
                self.add_reassert()
            self.walk_blocks(statement)
        elif isinstance(statement, cst.For | cst.While):
            self.walk_loop(statement)
        elif isinstance(statement, cst.With):
            self.walk_with(statement)
        elif isinstance(statement, cst.Try | cst.TryStar):
            self.walk_try(statement)
        elif isinstance(statement, cst.Match):
            self.add_points(statement.subject, statement)
            self.walk_blocks(statement)

    def walk_blocks(self, statement: cst.CSTNode) -> None:
        for arm, index, block in blocks(statement):
            self.enter_branch(Branch(id(statement), arm or Arm.IF, index), block)
            if isinstance(block, cst.If):
                self.walk_statement(block)
            else:
                self.walk_suite(block)  # type: ignore[arg-type]
            self.leave_branch()

    @functools.cached_property
    def narrowed(self) -> dict[int, tuple[tuple[str, str], ...]]:
        """Read only for an awaited method: per await of the region's function (by id), the
        (name, class) of each `if isinstance(name, Cls):` body it is in, innermost last."""
        return narrowed_awaits(self.function_body)

    def as_narrowed(self, node: cst.Await, awaited: str) -> str:
        """An awaited method of a name an enclosing `if isinstance(name, Cls):` narrows, as
        the class's method (`self._body.close` -> `Payload.close`)."""
        receiver, _, method = awaited.rpartition(".")
        if not receiver:
            return awaited
        for name, cls in reversed(self.narrowed.get(id(node), ())):
            if receiver == name:
                return f"{cls}.{method}"
        return awaited

    def enter_branch(self, branch: Branch, block: cst.CSTNode) -> None:
        """Walk into one arm of a compound statement; an arm whose block ends in `return`
        leaves the region, so nothing after the statement runs once code in the arm did."""
        self.branches.append(branch)
        if isinstance(block, cst.ExceptHandler | cst.ExceptStarHandler):
            block = block.body
        if isinstance(block, cst.BaseSuite) and ends_with(block, cst.Return):  # an `elif` is an If
            self.returning.append(branch)

    def leave_branch(self) -> None:
        branch = self.branches.pop()
        if self.returning and self.returning[-1] is branch:
            self.returning.pop()

    def add_reassert(self) -> None:
        self.reasserts.append((self.next_order(), tuple(self.branches), tuple(self.loops)))

    def reasserted(self) -> tuple[tuple[int, tuple[int, ...]], ...]:
        """The cancel re-asserts walked so far that every path to the current statement passes:
        those in the same block or one around it."""
        here, loops = self.branches, self.loops
        return tuple(
            (order, their_loops)
            for order, branches, their_loops in self.reasserts
            if list(branches) == here[: len(branches)]
            and list(their_loops) == loops[: len(their_loops)]
        )

    def walk_small(self, small: cst.BaseSmallStatement, marked: bool) -> None:
        found = collect(small)
        points = self.add_points_from(found.awaits, small)
        if isinstance(small, cst.Assert):
            return  # `assert comm.closed()` checks a state: it takes no step
        if not found.awaits and _reasserts_cancel_call(small):
            self.add_reassert()
            return
        step: tuple[str, Consequence, cst.Call | None] | None = self._step_taken(small, found)
        if step is not None and self._cancels_enclosing_group(step[2], small):
            step = None
        if step is None and marked:
            step = self.code(small), Consequence.LOSES_WORK, None
        if step is not None:
            acts_on = _argument_names(step[2]) if step[2] is not None else ""
            points = _outside_arguments(points, step[2])
            self.add_step(small, step[0], step[1], points, found, acts_on)

    def _cancels_enclosing_group(self, call: cst.Call | None, small: cst.CSTNode) -> bool:
        """Is the step `tg.cancel_scope.cancel()` of a task group or nursery whose `async with`
        encloses it? Any interrupt that would skip it leaves the group's block, and the group's
        exit cancels its scope on every exception."""
        func = call.func if call is not None else None
        if not (
            isinstance(func, cst.Attribute)
            and func.attr.value == "cancel"
            and isinstance(func.value, cst.Attribute)
            and func.value.attr.value == "cancel_scope"
            and isinstance(func.value.value, cst.Name)
        ):
            return False
        return func.value.value.value in _enclosing_groups(self.function_body, small)

    def _step_taken(
        self, small: cst.BaseSmallStatement, found: Collected
    ) -> tuple[str, Consequence, cst.Call] | None:
        """The step a statement takes: its first call that is one, leaving out the calls that
        build a value (most statements take no step, so those are looked for only then)."""
        step = self.critical_call(found.calls)
        if step is None:
            return None
        built = built_calls(small)
        return self.critical_call([call for call in found.calls if id(call) not in built])

    def add_step(
        self,
        small: cst.BaseSmallStatement,
        label: str,
        consequence: Consequence,
        points: list[InterruptPoint],
        found: Collected,
        acts_on: str = "",
    ) -> None:
        self.steps.append(
            CriticalStep(
                statement=small,
                label=label,
                consequence=consequence,
                order=self.next_order(),
                branches=tuple(self.branches),
                loops=tuple(self.loops),
                finally_ancestors=tuple(self.finally_stack),
                text=self.code(small),
                points=tuple(points),
                uses_asyncio_shield=any(
                    dotted_name(call.func) in ("asyncio.shield", "shield") for call in found.calls
                ),
                ends_region=id(small) in self.ending,
                reasserted=self.reasserted() if self.reasserts else (),
                acts_on=acts_on,
                failure_ignored=self.failure_ignored(small),
            )
        )

    def failure_ignored(self, small: cst.BaseSmallStatement) -> bool:
        """Is the step the whole body of a `try` (or `with suppress(...)`) that drops its
        failure: `except Exception: pass`, or a handler that only logs it at debug level?"""
        for enclosure in reversed(self.enclosures):
            if enclosure.kind is EnclosureKind.SHIELD:
                continue
            node = enclosure.node
            return _sole_statement(node, small) and _ignores_failure(node)
        return False

    def add_points(self, expression: cst.CSTNode | None, statement: cst.CSTNode) -> None:
        if expression is not None:
            self.add_points_from(collect(expression).awaits, statement)

    def add_points_from(
        self, awaits: list[cst.Await], statement: cst.CSTNode
    ) -> list[InterruptPoint]:
        points = [self.point_for(node, statement) for node in awaits]
        return [point for point in points if point is not None]

    def enclosures_of(
        self, node: cst.Await, call: cst.Call | None, callee: FunctionSummary
    ) -> list[Enclosure]:
        """What encloses an await: the walker's enclosures, and a shield when the awaited call
        is a configured shield helper or a function whose body is shielded."""
        if call is not None and self.is_shield_helper(call):
            return [*self.enclosures, Enclosure(EnclosureKind.SHIELD, call)]
        if callee.shielded:
            return [*self.enclosures, Enclosure(EnclosureKind.SHIELD, node)]
        return list(self.enclosures)

    def _never_suspends_as_called(
        self, summary: FunctionSummary, call: cst.Call | None, awaited: str | None
    ) -> bool:
        """Does the awaited callee never suspend, or never with the constants the call passes
        (`nowait=True` ruling out its only wait)?"""
        if not summary.suspends:
            return True
        if not summary.awaits_when or call is None or awaited is None:
            return False
        passed = passed_constants(call)
        return bool(passed) and self.quiet(awaited, passed)

    @functools.cached_property
    def done_awaits(self) -> set[int]:
        """Read only for an await of no call: the region's function's awaits of a task known
        to be done (known_done_awaits)."""
        return known_done_awaits(self.function_body)

    def _awaits_done(self, node: cst.Await, call: cst.Call | None) -> bool:
        return call is None and id(node) in self.done_awaits

    def point_for(self, node: cst.Await, statement: cst.CSTNode) -> InterruptPoint | None:
        """The interrupt point of one await, None when awaiting it cannot suspend."""
        call = node.expression if isinstance(node.expression, cst.Call) else None
        if self._awaits_done(node, call):
            return None  # a task or future known to be done: awaiting it returns at once
        awaited = _awaited_name(call.func) if call is not None else None
        summary = self.callee(self.as_narrowed(node, awaited)) if awaited else None
        if summary is not None and self._never_suspends_as_called(summary, call, awaited):
            return None  # awaiting a coroutine that never suspends cannot be interrupted
        known = summary or FunctionSummary(True, False, False, False)
        return self.new_point(
            node,
            statement,
            self.enclosures_of(node, call, known),
            awaited_call=awaited,
            by_contract=call is not None and _by_contract(call),
            runs_on=call is not None and _runs_on(call),
            callee_cut_safe=known.cut_safe,
            callee_holds=known.holds,
            callee_known=summary is not None,
            callee_steps_cut=known.steps_cut,
        )

    def new_point(
        self,
        node: cst.CSTNode,
        statement: cst.CSTNode,
        enclosures: list[Enclosure],
        awaited_call: str | None = None,
        by_contract: bool = False,
        runs_on: bool = False,
        callee_cut_safe: bool = False,
        callee_holds: bool = False,
        callee_known: bool = False,
        callee_steps_cut: bool = False,
    ) -> InterruptPoint:
        point = InterruptPoint(
            node=node,
            statement=statement,
            order=self.next_order(),
            branches=tuple(self.branches),
            loops=tuple(self.loops),
            enclosures=tuple(enclosures),
            text=self.code(node),
            awaited_call=awaited_call,
            by_contract=by_contract,
            runs_on=runs_on,
            callee_cut_safe=callee_cut_safe,
            callee_holds=callee_holds,
            callee_known=callee_known,
            callee_steps_cut=callee_steps_cut,
            returns_in=tuple(self.returning),
            reraises_cancel=bool(self.cancel_only)
            and self.cancel_only[-1]
            and any(self.raise_after),
        )
        self.points.append(point)
        return point

    def walk_loop(self, statement: cst.For | cst.While) -> None:
        if isinstance(statement, cst.For):
            self.add_points(statement.iter, statement)
        else:
            self.add_points(statement.test, statement)
        self.loops.append(id(statement))
        self.loop_items.append(_bound_names(statement))
        if isinstance(statement, cst.For) and statement.asynchronous is not None:
            self.new_point(statement, statement, list(self.enclosures))
        self.walk_suite(statement.body)
        self.loop_items.pop()
        self.loops.pop()
        if statement.orelse is not None:
            self.walk_suite(statement.orelse.body)

    def with_enclosure(self, statement: cst.With, call: cst.Call) -> Enclosure | None:
        name = dotted_name(call.func)
        if is_shield_scope(call) or self.is_shield_helper(call) or (name and self.shields(name)):
            return Enclosure(EnclosureKind.SHIELD, statement)
        suppressed = _suppressed_names(call)
        if suppressed is not None:
            catches = catches_cancellation(suppressed)
            return Enclosure(
                EnclosureKind.SUPPRESS,
                statement,
                catches,
                holds=catches,
                report_node=statement,
                awaits_cancelled_task=catches and self.awaits_cancelled_task(statement),
                reraised_after=any(self.raise_after),
            )
        return None

    def walk_with(self, statement: cst.With) -> None:
        added = 0
        for item in statement.items:
            self.add_points(item.item, statement)
            if isinstance(item.item, cst.Call):
                enclosure = self.with_enclosure(statement, item.item)
                if enclosure is not None:
                    self.enclosures.append(enclosure)
                    added += 1
        if statement.asynchronous is not None and not self.enters_without_suspending(statement):
            # The enter and the exit both suspend; the exit comes after the body, so the point
            # counts for every step that follows, and the shield scopes it opens do not cover it.
            self.new_point(
                statement,
                statement,
                self.enclosures[: len(self.enclosures) - added],
                callee_holds=self.managers_hold(statement),
            )
        self.walk_suite(statement.body)
        if added:
            del self.enclosures[-added:]

    def enters_without_suspending(self, statement: cst.With) -> bool:
        """Does the project say that neither the enter nor the exit of any manager of this
        `async with` suspends (a no-op `__aenter__`, a deadline's)?"""
        return self._every_manager(statement, lambda summary: not summary.suspends)

    def managers_hold(self, statement: cst.With) -> bool:
        """Does the project say that the enter and the exit of every manager of this `async
        with` hold every interrupt (an `@asynccontextmanager` whose awaits all sit in
        `suppress(CancelledError)`), or never suspend?"""
        return self._every_manager(statement, lambda summary: summary.holds or not summary.suspends)

    def _every_manager(
        self, statement: cst.With, settled: Callable[[FunctionSummary], bool]
    ) -> bool:
        """Is `settled` true of the project's summary of the enter and of the exit of every
        manager of this `async with` (False when one is unknown)?"""
        for item in statement.items:
            name = _manager_name(item.item)
            if name is None:
                return False
            for method in MANAGER_METHODS:
                summary = self.callee(f"{name}.{method}")
                if summary is None or not settled(summary):
                    return False
        return True

    def awaits_cancelled_task(self, statement: cst.Try | cst.TryStar | cst.With) -> bool:
        """Does the `try` (or `with suppress(...)`) body await what the function cancels
        (`t.cancel()` ... `await t`)?"""
        awaited = _awaited_names(statement.body)
        if not awaited:
            return False
        handlers = statement.handlers if isinstance(statement, cst.Try | cst.TryStar) else ()
        inside = {  # a cancel in the handlers comes after the wait it would explain
            id(call) for handler in handlers for call in _cancel_calls(handler)
        }
        # cancelled before the await, not in the `try`'s handlers
        return bool(awaited & _cancelled_names(self.function_body, inside))

    def guards_each_item(self, statement: cst.Try | cst.TryStar) -> bool:
        """Is the `try` inside a `for` loop, awaiting something of the loop's item, with a
        handler that carries on with the next item (`for it in exits: try: await it.__anext__()
        except Exception: errors.append(...)`)?"""
        items = self.loop_items[-1] if self.loop_items else set()
        if not items or all(_unconditional_raise(h.body) for h in statement.handlers):
            return False
        return any(_names_in(node.expression) & items for node in collect(statement.body).awaits)

    def try_enclosures(self, statement: cst.Try | cst.TryStar) -> list[Enclosure]:
        enclosures = []
        if statement.handlers:
            index = cancel_handler_index(statement)
            enclosures.append(
                Enclosure(
                    EnclosureKind.TRY_EXCEPT,
                    statement,
                    catches_cancellation=index is not None,
                    holds=index is not None
                    and not _unconditional_raise(statement.handlers[index].body),
                    report_node=statement.handlers[0],
                    cancel_handler=index,
                    per_item=index is None and self.guards_each_item(statement),
                )
            )
        if statement.finalbody is not None:
            enclosures.append(
                Enclosure(
                    EnclosureKind.TRY_FINALLY, statement, finally_body=statement.finalbody.body
                )
            )
        return enclosures

    def walk_try(self, statement: cst.Try | cst.TryStar) -> None:
        for arm, index, block in blocks(statement):
            self.enter_branch(Branch(id(statement), arm or Arm.TRY_BODY, index), block)
            if arm is Arm.TRY_BODY:
                added = self.try_enclosures(statement)
                self.enclosures.extend(added)
                self.walk_suite(block)  # type: ignore[arg-type]
                del self.enclosures[len(self.enclosures) - len(added) :]
            elif isinstance(block, cst.ExceptHandler | cst.ExceptStarHandler):
                # a `try` whose body cannot suspend cannot catch its task's cancel: what its
                # handler catches is another's (`task.exception()` of a cancelled task)
                if index == cancel_handler_index(statement) and _can_suspend(statement.body):
                    reraised = any(self.raise_after)
                    self.cancel_handlers.append(
                        CancelHandler(
                            block,
                            self.code(block),
                            self.function_body,
                            reraised,
                            self.awaits_cancelled_task(statement),
                            statement,
                        )
                    )
                self.cancel_only.append(_entered_only_by_cancel(statement, index))
                self.walk_suite(block.body)
                self.cancel_only.pop()
            elif arm is Arm.FINALLY:
                self.finally_stack.append(id(block))
                self.walk_suite(block)  # type: ignore[arg-type]
                self.finally_stack.pop()
            else:
                self.walk_suite(block)  # type: ignore[arg-type]
            self.leave_branch()

    # -- the frozen result
    def region(
        self,
        kind: RegionKind,
        function: str,
        origin: str,
        function_lines: tuple[int, int],
        entered_by_cancel: bool = False,
        body: cst.BaseSuite | None = None,
    ) -> Region:
        """The region's facts, each interrupt point marked guarded/shielded."""
        resolved = {id(point): self._resolve(point) for point in self.points}
        steps = tuple(self._tiered(kind, step, resolved) for step in self.steps)
        return Region(
            kind=kind,
            function=function,
            origin=origin,
            function_lines=function_lines,
            points=tuple(resolved[id(point)] for point in self.points),
            steps=steps,
            cancel_handlers=tuple(self.cancel_handlers),
            entered_by_cancel=entered_by_cancel,
            entered_by_interrupt=entered_by_cancel or kind is RegionKind.CANCEL_HANDLER,
            body=body,
        )

    def _tiered(
        self, kind: RegionKind, step: CriticalStep, resolved: dict[int, InterruptPoint]
    ) -> CriticalStep:
        tier = self._tier(kind, step)
        return dataclasses.replace(
            step,
            points=tuple(resolved[id(p)] for p in step.points),
            consequence=tier,
            cut_consequence=Consequence.BEST_EFFORT
            if tier is Consequence.LOSES_WORK and self._cut_best_effort(step)
            else None,
        )

    def _cut_best_effort(self, step: CriticalStep) -> bool:
        """Is the step an await of a project function a cut of which loses only best-effort
        work (`await server.stop()` whose file removals sit in its `finally:`,
        ahead of which only in-process connections are closed)?"""
        called = step.label.removesuffix("()")
        return bool(step.points) and all(
            point.awaited_call == called
            and (summary := self.callee(called)) is not None
            and summary.cut_best_effort
            for point in step.points
        )

    def _tier(self, kind: RegionKind, step: CriticalStep) -> Consequence:
        """Judged on real code, a teardown method (close, cleanup, ...) loses in-process state
        or needs a second cancel: its steps are best effort unless they name something outside
        the process (a sandbox, a subprocess, a lock). So is every step of a function whose
        docstring calls it best effort, a step awaiting such a function, and a step awaiting a
        project function whose own steps are all best effort."""
        if kind is RegionKind.METHOD and self._in_process(step):
            return Consequence.BEST_EFFORT
        if self.documented_best_effort or self._awaits_documented_best_effort(step):
            return Consequence.BEST_EFFORT  # the code says losing it is acceptable
        if step.failure_ignored:
            return Consequence.BEST_EFFORT  # a failure of it loses as much, and goes unnoticed
        if step.consequence is Consequence.LOSES_WORK and self._awaits_best_effort(step):
            return Consequence.BEST_EFFORT  # what the step runs only takes best-effort steps
        return step.consequence

    def _in_process(self, step: CriticalStep) -> bool:
        closes_stack = step.label in self.stack_closes
        return self.vocabulary.in_process(step.label, step.acts_on, step.called_name, closes_stack)

    def _awaits_documented_best_effort(self, step: CriticalStep) -> bool:
        """Does the step await a project function whose docstring calls it best effort?"""
        return any(
            (summary := self.callee(point.awaited_call)) is not None and summary.best_effort
            for point in step.points
            if point.awaited_call
        )

    def _awaits_best_effort(self, step: CriticalStep) -> bool:
        """Is the step an await of a project function every step of which is best effort
        (`await self._stop_typing(chat)` whose body cancels an in-process task)?"""
        called = step.label.removesuffix("()")
        return any(
            point.awaited_call == called
            and (summary := self.callee(called)) is not None
            and summary.steps_best_effort
            for point in step.points
        )

    def _resolve(self, point: InterruptPoint) -> InterruptPoint:
        """Something holds an interrupt at `point` when it is shielded, when a handler that
        catches cancellation and does not re-raise encloses it, when a suppress of cancellation
        does, or when a `finally:` around it carries every step that follows it."""
        shielded = any(e.kind is EnclosureKind.SHIELD for e in point.enclosures)
        guarded = shielded or point.callee_holds or any(e.holds for e in point.enclosures)
        guarded = guarded or self._carried_by_finally(point)
        return dataclasses.replace(point, guarded=guarded, shielded=shielded)

    def _carried_by_finally(self, point: InterruptPoint) -> bool:
        """Is every step an interrupt at `point` could skip inside a `finally:` around it?"""
        following = [
            step
            for step in self.steps
            if step.statement is not point.statement and precedes(point, step)
        ]
        return any(
            e.kind is EnclosureKind.TRY_FINALLY
            and all(id(e.finally_body) in step.finally_ancestors for step in following)
            for e in point.enclosures
        )


# ---------------------------------------------------------------------------------------------
# Finding the functions to analyse: a cheap `ast` pass decides which ones can hold a region


class AnalysisError(Exception):
    """libcst could not take a function Python accepts; `line`/`column` say where."""

    def __init__(self, message: str, line: int, column: int) -> None:
        super().__init__(message)
        self.line = line
        self.column = column


@dataclass(frozen=True)
class Snippet:
    """One function parsed by libcst on its own: positions in it are offset by `line_offset`."""

    module: cst.Module
    function: cst.FunctionDef
    line_offset: int


def _can_suspend(block: cst.CSTNode) -> bool:
    """Is there an `await`, `async for` or `async with` in the block, outside the functions and
    classes it defines?"""
    pending = [block]
    while pending:
        node = pending.pop()
        if isinstance(node, cst.FunctionDef | cst.ClassDef | cst.Lambda):
            continue  # its own code
        if isinstance(node, cst.Await) or getattr(node, "asynchronous", None) is not None:
            return True
        pending.extend(node.children)
    return False


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
        module = parse_module("if True:\n" + body if span.indented else body)
    except cst.ParserSyntaxError as error:
        line, column = _error_position(error)
        raise AnalysisError("libcst cannot parse this line", offset + line, column) from None
    except RecursionError:
        raise AnalysisError("nested too deeply", span.first_line, 1) from None
    if span.indented:
        wrapper = module.body[0]
        assert isinstance(wrapper, cst.If)
        function = statements(wrapper.body)[0]
    else:
        function = module.body[0]
    assert isinstance(function, cst.FunctionDef)
    return Snippet(module, function, offset)


# kind, body, entered only by a cancel, and the code the region spans with its header (the
# `finally:` block, the handler)
FoundRegion = tuple[RegionKind, cst.BaseSuite, bool, cst.CSTNode]


def find_regions(body: cst.BaseSuite) -> Iterator[FoundRegion]:
    """The outermost teardown regions in a function body: `finally:` blocks and the bodies of
    handlers that catch cancellation (not entering nested definitions)."""
    for statement in statements(body):
        yield from _regions_in(statement)


def _regions_in(statement: cst.CSTNode) -> Iterator[FoundRegion]:
    if isinstance(statement, cst.FunctionDef | cst.ClassDef):
        return
    for arm, index, block in blocks(statement):
        if arm is Arm.FINALLY:
            assert isinstance(statement, cst.Try | cst.TryStar) and statement.finalbody
            only = _never_finishes(statement.body)
            yield RegionKind.FINALLY, block, only, statement.finalbody  # type: ignore[misc]
        elif isinstance(block, cst.ExceptHandler | cst.ExceptStarHandler):
            if index == cancel_handler_index(statement):  # type: ignore[arg-type]
                only = _entered_only_by_cancel(statement, index)  # type: ignore[arg-type]
                yield RegionKind.CANCEL_HANDLER, block.body, only, block
            else:
                yield from find_regions(block.body)
        elif isinstance(block, cst.If):
            yield from _regions_in(block)
        else:
            yield from find_regions(block)  # type: ignore[arg-type]


def _entered_only_by_cancel(statement: cst.Try | cst.TryStar, index: int) -> bool:
    """Does only a cancel enter this handler: it catches cancellation and nothing else, or it
    is a bare or `BaseException` handler after one for `Exception`, which leaves it only what
    is no Exception (a cancel; KeyboardInterrupt and SystemExit end the program anyway)?"""
    names = exception_names(statement.handlers[index].type)
    if catches_only_cancellation(names):
        return True
    broad = all(name in (None, "BaseException") for name in names)
    return broad and any(
        "Exception" in exception_names(earlier.type) for earlier in statement.handlers[:index]
    )


def _never_finishes(body: cst.BaseSuite) -> bool:
    """Does a `try` body never end normally, so that only an exception takes it to its
    `finally:`? It returns nowhere and ends in a `raise` or in a `while True:` loop that no
    `break` leaves (a server's serve-forever loop)."""
    last = statements(body)[-1] if statements(body) else None
    if isinstance(last, cst.While):
        ends = _literally_true(last.test) and not any(
            isinstance(node, cst.Break) for node in _own_loop_body(last)
        )
    else:
        ends = isinstance(last, cst.SimpleStatementLine) and isinstance(last.body[-1], cst.Raise)
    return ends and not any(
        isinstance(node, cst.Return) for node in in_source_order(body, NESTED_SCOPES)
    )


def _literally_true(node: cst.BaseExpression) -> bool:
    return (isinstance(node, cst.Name) and node.value == "True") or (
        isinstance(node, cst.Integer) and node.value != "0"
    )


def _own_loop_body(loop: cst.While) -> Iterator[cst.CSTNode]:
    """The nodes of a loop's body that a `break` there would leave it from: not those of the
    loops and scopes nested in it."""
    return in_source_order(loop.body, (*NESTED_SCOPES, cst.For, cst.While))


class _Analyser:
    """Parses each function once, on demand, and collects the regions analysed in it."""

    def __init__(
        self,
        lines: Sequence[str],
        spans: list[FunctionSpan],
        config: TeardownConfig,
        project: Project | None = None,
    ) -> None:
        self.lines = lines
        self.config = config
        self.project = project
        self.vocabulary = Vocabulary.of(config)
        self.by_qualname = {span.qualname: span for span in spans}
        self.regions: list[Region] = []
        self.bodies: list[Region] = []
        self.narrow_handlers: list[NarrowHandler] = []
        self.unprotected_releases: list[UnprotectedRelease] = []
        self.stack_callbacks: list[StackCallback] = []
        self.hand_entered: list[HandEntered] = []
        self.node_snippets: dict[int, Snippet] = {}
        self.parsed: dict[int, Snippet] = {}  # by `def` line: qualnames repeat (redefinitions)
        self.links = _Links()

    def snippet_of(self, span: FunctionSpan) -> Snippet:
        if span.first_line not in self.parsed:
            self.parsed[span.first_line] = parse_function(self.lines, span)
        return self.parsed[span.first_line]

    def analyse(
        self,
        span: FunctionSpan,
        kind: RegionKind,
        body: cst.BaseSuite,
        origin: str = "",
        by_cancel: bool = False,
        extent: cst.CSTNode | None = None,
    ) -> Region:
        snippet = self.snippet_of(span)
        region = self._read(span, snippet, kind, body, origin, by_cancel)
        if kind in (RegionKind.AEXIT, RegionKind.METHOD) and self._delegates(span, body):
            region = dataclasses.replace(region, delegates=True)
        region = self._with_caller_facts(region, span, extent or snippet.function)
        self.regions.append(region)
        self.links.add(region, span, self._awaited_helpers(region, span))
        self._register(region, snippet)
        return region

    def _read(
        self,
        span: FunctionSpan,
        snippet: Snippet,
        kind: RegionKind,
        body: cst.BaseSuite,
        origin: str = "",
        by_cancel: bool = False,
    ) -> Region:
        """The facts of one piece of a function, walked with what the project says of the
        calls in it."""
        walker = _RegionWalker(snippet.module, self.config, snippet.function.body, self.vocabulary)
        if self.project is not None:
            project, owner = self.project, span.self_class
            walker.callee = lambda call: project.callee(span.qualname, owner, call)
            walker.shields = lambda name: project.shields(span.qualname, owner, name)
            walker.exit_stack = lambda name: project.exit_stack(span.qualname, owner, name)
            walker.container = lambda name: project.container(span.qualname, owner, name)
            walker.quiet = lambda call, passed: project.quiet_when_passed(
                span.qualname, owner, call, passed
            )
            if span.is_async and project.shielded_by_callers(span.qualname):
                walker.enclosures.append(Enclosure(EnclosureKind.SHIELD, snippet.function))
        walker.documented_best_effort = documents_best_effort(snippet.function.get_docstring())
        walker.ending = ending_statements(body)
        walker.cancel_only.append(kind is RegionKind.CANCEL_HANDLER and by_cancel)
        walker.walk_suite(body)
        lines = (span.first_line, span.last_line)
        return walker.region(kind, span.qualname, origin, lines, by_cancel, body)

    def _delegates(self, span: FunctionSpan, body: cst.BaseSuite) -> bool:
        """Is the body one await of another teardown method, after a docstring and guards that
        return early: of the class this module defines (`await self.shutdown()`, `return await
        self.aclose()`), or a project method of a teardown name the project resolves the call
        to (`await super().stop()`, `await self._inner.stop()` of a wrapped session)? That
        method is a region of its own, where what a cancel cuts is reported."""
        name = _sole_awaited_call(body)
        if name is None:
            return False
        helper = _resolve_helper(name, span, self.by_qualname) if name.startswith("self.") else None
        if helper is not None:
            if helper.qualname == span.qualname:
                return False
            return whole_body_kind(helper, self.config) in (
                RegionKind.METHOD,
                RegionKind.CONFIGURED,
            )
        return self._delegates_elsewhere(span, name)

    def _delegates_elsewhere(self, span: FunctionSpan, name: str) -> bool:
        """Does the call run a teardown method by its name that the project defines outside
        this module's view of the class (a base class's, a wrapped object's)?"""
        receiver, _, method = name.rpartition(".")
        if not receiver or self.project is None or not named_teardown(method, self.config):
            return False
        if receiver == "self" and method == span.name:
            return False  # itself
        found = self.project.callee(span.qualname, span.self_class, name)
        return found is not None

    def _with_caller_facts(self, region: Region, span: FunctionSpan, extent: cst.CSTNode) -> Region:
        """The region with what its function's callers decide: nothing in the project runs a
        teardown method, nothing cancels its task, or it runs only after its task's cancel."""
        project = self.project
        if project is None:
            return dataclasses.replace(region, extent=extent)
        uncalled = region.kind is RegionKind.METHOD and not project.called(span.qualname)
        entered = region.entered_by_cancel or (
            span.is_async and project.after_cancel(span.qualname)
        )
        return dataclasses.replace(
            region,
            extent=extent,
            uncalled=uncalled,
            uncancelled=project.uncancelled(span.qualname),
            never_cancelled=span.is_async and project.never_cancelled(span.qualname),
            entered_by_cancel=entered,
        )

    def _register(self, region: Region, snippet: Snippet) -> None:
        """Remember the snippet of every node a finding can point at, for `locate`."""
        nodes: list[object] = [region.extent, *(h.node for h in region.cancel_handlers)]
        nodes += [step.statement for step in region.steps]
        for point in region.points:
            nodes.append(point.node)
            nodes += [n for e in point.enclosures for n in (e.node, e.report_node) if n]
        self.node_snippets.update((id(node), snippet) for node in nodes)

    def _awaited_helpers(
        self, region: Region, span: FunctionSpan
    ) -> list[tuple[cst.CSTNode, FunctionSpan]]:
        """The awaits of the region that run a coroutine function of this module, with it."""
        found = []
        for point in region.points:
            helper = _resolve_helper(point.awaited_call, span, self.by_qualname)
            if helper is not None and helper.is_async:
                found.append((point.node, helper))
        return found

    def regions_of(self, span: FunctionSpan) -> list[Region]:
        function = self.snippet_of(span).function
        from gate.analysis.handlers import narrow_handlers

        self.narrow_handlers += narrow_handlers(self, span)
        if not span.is_async:
            return []  # a bridged sync function: only its narrow handlers are judged
        if releases_acquired(span, self.config):
            from gate.analysis.releases import unprotected_releases

            self.unprotected_releases += unprotected_releases(self, span)
        if span.brackets:
            from gate.analysis.releases import unprotected_brackets

            self.unprotected_releases += unprotected_brackets(self, span)
        if span.pushes_callbacks:
            from gate.analysis.exit_stacks import stack_callbacks

            self.stack_callbacks += stack_callbacks(self, span)
        if span.enters_by_hand:
            from gate.analysis.hand_entered import hand_entered

            self.hand_entered += hand_entered(self, span)
        kind = whole_body_kind(span, self.config)
        if kind is not None:
            return [self.analyse(span, kind, function.body)]
        found = list(find_regions(function.body))
        if any(kind is RegionKind.CANCEL_HANDLER for kind, *_ in found):
            self.bodies.append(self.body_of(span))
        return [
            self.analyse(span, kind, body, by_cancel=only, extent=extent)
            for kind, body, only, extent in found
        ]

    def body_of(self, span: FunctionSpan) -> Region:
        """The function's whole body read as a region of its own, for the cancellation
        handlers of the `try` statements no teardown region holds. Not one of the regions:
        neither linked to the helpers it awaits nor given its callers' facts."""
        from gate.analysis.kept_cancel import dropped_keep

        snippet = self.snippet_of(span)
        region = self._read(span, snippet, RegionKind.BODY, snippet.function.body)
        handlers = tuple(
            dataclasses.replace(handler, dropped=dropped_keep(handler))
            for handler in region.cancel_handlers
        )
        region = dataclasses.replace(region, extent=snippet.function, cancel_handlers=handlers)
        self._register(region, snippet)
        self.node_snippets.update(
            (id(node), snippet)
            for handler in handlers
            if handler.dropped is not None
            for node in (handler.dropped.returned, handler.dropped.raised)
        )
        return region

    def follow_helpers(self, pending: list[tuple[FunctionSpan, Region]], seen: set[str]) -> None:
        """Awaited helpers called from a region are teardown too: their bodies are regions. A
        helper is entered only by a cancel when every region awaiting it is."""
        callers: dict[str, list[Region]] = {}
        while pending:
            caller, region = pending.pop(0)
            for point in region.points:
                helper = _resolve_helper(point.awaited_call, caller, self.by_qualname)
                if helper is None or not helper.is_async:
                    continue
                callers.setdefault(helper.qualname, []).append(region)
                if helper.qualname in seen:
                    continue
                seen.add(helper.qualname)
                origin = f"awaited from a teardown region in {caller.qualname}"
                body = self.snippet_of(helper).function.body
                pending.append((helper, self.analyse(helper, RegionKind.HELPER, body, origin)))
        self._mark_entered_by_cancel(callers)
        self.regions = shield_helpers(self.regions, self.links.helper_calls, self.links.def_line)
        self.regions = reraising_callers(self.regions, self.links.helper_calls, self.links.def_line)

    def _mark_entered_by_cancel(self, callers: dict[str, list[Region]]) -> None:
        """A helper is entered only by a cancel (or only by an interrupt) when every region
        awaiting it is."""
        by_cancel = _entered_through(callers, "entered_by_cancel")
        by_interrupt = _entered_through(callers, "entered_by_interrupt")
        self.regions = [
            dataclasses.replace(
                region,
                entered_by_cancel=by_cancel(region, frozenset()),
                entered_by_interrupt=by_interrupt(region, frozenset()),
            )
            if region.kind is RegionKind.HELPER
            else region
            for region in self.regions
        ]


def _entered_through(
    callers: dict[str, list[Region]], fact: str
) -> Callable[[Region, frozenset[int]], bool]:
    """Whether a region has `fact` (`entered_by_cancel`): its own, or for a helper, that of
    every region awaiting it."""
    decided: dict[int, bool] = {}

    def entered(region: Region, visiting: frozenset[int]) -> bool:
        if region.kind is not RegionKind.HELPER or getattr(region, fact):
            return bool(getattr(region, fact))
        if id(region) in decided:
            return decided[id(region)]
        if id(region) in visiting:
            return False
        inner = visiting | {id(region)}
        # a recursive call adds nothing: the helper is entered as its first caller enters it
        awaiting = [r for r in callers.get(region.function, []) if id(r) not in inner]
        decided[id(region)] = bool(awaiting) and all(entered(r, inner) for r in awaiting)
        return decided[id(region)]

    return entered


def analyse_functions(
    lines: Sequence[str],
    spans: list[FunctionSpan],
    level_triggered: bool,
    config: TeardownConfig,
    candidates: list[FunctionSpan] | None = None,
    in_tests: bool = False,
    project: Project | None = None,
    uses_asyncio: bool = False,
) -> ModuleAnalysis:
    """Analyse the teardown regions of the candidate functions, and of the awaited helpers
    their regions call; each function is parsed by libcst on its own.

    `candidates` defaults to the spans `is_candidate` picks; `project` answers what other
    functions and classes of the project do (awaited callees, shield managers). Raises
    AnalysisError when libcst
    rejects a function Python accepts, and RecursionError on pathologically deep code.
    """
    analyser = _Analyser(lines, spans, config, project)
    if candidates is None:
        candidates = [span for span in spans if is_candidate(span, config, not in_tests)]
    pending = [(span, region) for span in candidates for region in analyser.regions_of(span)]
    # A function whose whole body was a region needs no second look as a helper; one with only
    # a finally block still does, since an awaiting caller can be interrupted anywhere in it.
    whole = {span.qualname for span in candidates if whole_body_kind(span, config) is not None}
    analyser.follow_helpers(pending, whole)
    tiers = Tiers(
        Severity(config.best_effort_severity),
        Severity(config.test_severity),
        Severity(config.repeat_severity),
    )
    return ModuleAnalysis(
        # a region whose task nothing cancels has no interrupt to lose a step to
        tuple(analyser.links.linked(r) for r in analyser.regions if not r.never_cancelled),
        level_triggered,
        analyser.node_snippets,
        in_tests,
        tiers,
        tuple(analyser.narrow_handlers),
        tuple(analyser.unprotected_releases),
        uses_asyncio,
        tuple(analyser.stack_callbacks),
        tuple(analyser.hand_entered),
        tuple(analyser.bodies),
    )


def _key(region: Region) -> int:
    """A region's identity that survives `dataclasses.replace`: the code it spans."""
    return id(region.extent)


class _Links:
    """Which helpers each region awaits, so that every region can be given the lines of the
    helpers it reaches and every helper region the awaits that reach it."""

    def __init__(self) -> None:
        self.span_of: dict[int, FunctionSpan] = {}  # _key(region) -> its function
        self.calls: dict[int, list[tuple[cst.CSTNode, FunctionSpan]]] = {}  # _key(region) -> ...
        self.by_function: dict[int, list[Region]] = {}  # `def` line -> the function's regions

    def add(
        self, region: Region, span: FunctionSpan, calls: list[tuple[cst.CSTNode, FunctionSpan]]
    ) -> None:
        self.span_of[_key(region)] = span
        self.calls[_key(region)] = calls
        self.by_function.setdefault(span.first_line, []).append(region)

    def helper_calls(self, region: Region) -> list[tuple[cst.CSTNode, int]]:
        """The awaits of the region that run a helper, with the helper's `def` line."""
        return [(node, helper.first_line) for node, helper in self.calls[_key(region)]]

    def def_line(self, region: Region) -> int:
        return self.span_of[_key(region)].first_line

    def _helpers(self, region: Region) -> list[FunctionSpan]:
        """The helpers the region awaits, directly or through each other, in the order met."""
        found: dict[int, FunctionSpan] = {}
        pending = [helper for _, helper in self.calls[_key(region)]]
        while pending:
            helper = pending.pop(0)
            if helper.first_line in found:
                continue
            found[helper.first_line] = helper
            for inner in self.by_function.get(helper.first_line, []):
                pending += [called for _, called in self.calls[_key(inner)]]
        return list(found.values())

    def _callers(self, span: FunctionSpan, seen: set[int]) -> list[cst.CSTNode]:
        """The awaits in regions that run `span`, and those that run the helpers awaiting it."""
        seen.add(span.first_line)
        found = []
        for regions in self.by_function.values():
            for region in regions:
                calls = self.calls[_key(region)]
                nodes = [node for node, helper in calls if helper.first_line == span.first_line]
                if not nodes:
                    continue
                found += nodes
                caller = self.span_of[_key(region)]
                if region.kind is RegionKind.HELPER and caller.first_line not in seen:
                    found += self._callers(caller, seen)
        return found

    def linked(self, region: Region) -> Region:
        helpers = tuple(
            sorted({(helper.first_line, helper.last_line) for helper in self._helpers(region)})
        )
        callers: tuple[cst.CSTNode, ...] = ()
        if region.kind is RegionKind.HELPER:
            callers = tuple(self._callers(self.span_of[_key(region)], set()))
        return dataclasses.replace(region, helper_lines=helpers, awaited_from=callers)


def whole_body_kind(span: FunctionSpan, config: TeardownConfig) -> RegionKind | None:
    """The kind of region a function's whole body is: an `__aexit__`, a configured teardown
    function, an async teardown method (`aclose`, `close`, `shutdown`, ...); None otherwise."""
    if not span.is_async:
        return None
    if span.name == "__aexit__":
        return RegionKind.AEXIT
    if configured(span, config) or span.registered:
        return RegionKind.CONFIGURED
    if is_teardown_method(span, config):
        return RegionKind.METHOD
    return None


def _resolve_helper(
    name: str | None, caller: FunctionSpan, by_qualname: dict[str, FunctionSpan]
) -> FunctionSpan | None:
    """The function an awaited `self.x()` or bare `x()` call runs, when this module defines it."""
    if not name:
        return None
    parts = name.split(".")
    if len(parts) == 2 and parts[0] in ("self", "cls") and caller.self_class:
        return by_qualname.get(f"{caller.self_class}.{parts[1]}")
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
