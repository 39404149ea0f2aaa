"""Locks that never block: an `asyncio.Lock` that no holder keeps across a suspension is always
free when a task takes it, so taking it never suspends and no cancel can land there.

asyncio's `Lock.acquire()` returns at once when the lock is free and nobody waits, and its
`__aexit__` releases without suspending. One event loop runs one task at a time: a holder that
never suspends while it holds the lock gives back the lock before any other task runs, so no
task ever finds it taken. trio's and anyio's locks are no such thing: their `acquire()` is a
checkpoint even when the lock is free.

Whether every holder is such a holder is read from every mention of the lock's attribute name in
the project's sources (`never_held_across_suspension`), since a lock is made in one module and
taken in others.

A lock that only teardown methods of one name take (`async with self._cleanup_lock:` in
`cleanup()`, nowhere else) blocks only while another run of that method on the same object
holds it: a cancel while waiting skips nothing that the holder is not doing
(`entered_only_in`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from gate.source import word_positions

# Locks whose acquire returns without suspending while the lock is free (the dotted names their
# constructors resolve to)
NEVER_BLOCKING_WHEN_FREE = frozenset({"asyncio.Lock", "asyncio.locks.Lock"})

# Ways to use a lock attribute that neither take it nor hand it on
_HARMLESS_CALLS = frozenset({"locked"})

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_SUSPENDS = (ast.Await, ast.AsyncFor, ast.AsyncWith, ast.Yield, ast.YieldFrom)


def mentions(text: str, name: str) -> int:
    """How many times `name` appears in the text as a word (code, strings and comments), as
    the project's sources are searched for it (`word_positions`)."""
    return sum(1 for _ in word_positions(text, name))


def never_held_across_suspension(text: str, name: str) -> bool:
    """Is every mention of `name` in this module's source an attribute (`x.name`) that is
    assigned, asked `.locked()`, or entered by an `async with` (with no `as`) whose body cannot
    suspend (no await, `async for`, `async with` or `yield`)? Any other mention (an `acquire()`,
    a name handed on, a string, a comment) may hold the lock for longer: False."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return False
    harmless: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.AsyncWith):
            harmless.update(_entered_briefly(node, name))
    attributes = _count_harmless(tree, name, harmless)
    return attributes == len(harmless) == mentions(text, name)


def _entered_briefly(statement: ast.AsyncWith, name: str) -> Iterator[int]:
    """The `x.name` managers of an `async with` whose body cannot suspend."""
    if _may_suspend(statement.body):
        return
    for item in statement.items:
        manager = item.context_expr
        if isinstance(manager, ast.Attribute) and manager.attr == name and not item.optional_vars:
            yield id(manager)


def _asks_harmlessly(node: ast.AST, name: str) -> bool:
    """`x.name.locked()`."""
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _HARMLESS_CALLS
        and isinstance(node.func.value, ast.Attribute)
        and node.func.value.attr == name
    )


def _may_suspend(body: list[ast.stmt]) -> bool:
    """Does the block hold a suspension of its own function (not of a nested one)?"""
    return any(isinstance(node, _SUSPENDS) for node in _own_nodes(body))


def entered_only_in(text: str, name: str) -> list[str] | None:
    """The names of the functions whose `async with x.name:` (with no `as`) enters the lock,
    one entry each, when every other mention of `name` in this module's source is an
    attribute that is assigned or asked `.locked()`; None when some other mention may take it
    (an `acquire()`, a name handed on, a string, a comment)."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return None
    harmless: set[int] = set()
    entering: list[str] = []
    for function in _functions(tree):
        for node in _own_nodes(function.body):
            if isinstance(node, ast.AsyncWith):
                entered = _entered(node, name)
                harmless.update(entered)
                entering += [function.name] * len(entered)
    attributes = _count_harmless(tree, name, harmless)
    return entering if attributes == len(harmless) == mentions(text, name) else None


def _count_harmless(tree: ast.AST, name: str, harmless: set[int]) -> int:
    """The `x.name` attributes in the tree, and the `__slots__` entries that declare it; those
    assigned, asked `.locked()` or declared go into `harmless`."""
    attributes = 0
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr == name:
            attributes += 1
            if isinstance(node.ctx, ast.Store):
                harmless.add(id(node))
        elif _asks_harmlessly(node, name):
            harmless.add(id(node.func.value))  # type: ignore[attr-defined]
        elif _declares_slots(node):
            for entry in _slot_entries(node.value, name):  # type: ignore[attr-defined]
                attributes += 1
                harmless.add(id(entry))
    return attributes


def _declares_slots(node: ast.AST) -> bool:
    """`__slots__ = (...)`: the attributes a class declares, by name."""
    return (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and node.targets[0].id == "__slots__"
    )


def _slot_entries(value: ast.expr, name: str) -> list[ast.Constant]:
    elements = value.elts if isinstance(value, ast.Tuple | ast.List | ast.Set) else [value]
    return [e for e in elements if isinstance(e, ast.Constant) and e.value == name]


def _entered(statement: ast.AsyncWith, name: str) -> list[int]:
    return [
        id(item.context_expr)
        for item in statement.items
        if isinstance(item.context_expr, ast.Attribute)
        and item.context_expr.attr == name
        and not item.optional_vars
    ]


def _functions(tree: ast.AST) -> Iterator[ast.FunctionDef | ast.AsyncFunctionDef]:
    return (n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef))


def _own_nodes(body: list[ast.stmt]) -> Iterator[ast.AST]:
    """The nodes of a block, not entering nested functions or classes."""
    pending: list[ast.AST] = list(body)
    while pending:
        node = pending.pop()
        yield node
        pending.extend(
            child for child in ast.iter_child_nodes(node) if not isinstance(child, _NESTED)
        )
