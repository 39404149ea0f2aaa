"""State flags that make a pair of methods idempotent: `initialize()` sets `self._initialized`
only once its work is done, and `shutdown()` returns at once unless it is set.

    async def initialize(self):
        if self._initialized:
            return
        await self.bot.initialize()
        self._initialized = True

    async def shutdown(self):
        if not self._initialized:
            return
        await self.bot.shutdown()

An interrupt inside `initialize()` lands before the flag is set, so a `shutdown()` run on that
path returns without doing anything: a handler that would have run it misses nothing (the
state a cancel leaves is the one `shutdown()` already treats as nothing to undo).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator


def required_flag(function: ast.AsyncFunctionDef) -> str:
    """The attribute of `self` without which the method returns before it does anything: its
    body opens (after a docstring and checks that raise) with `if not self.flag: return`."""
    return _guard(function.body, negated=True) or ""


def completing_flag(function: ast.AsyncFunctionDef) -> str:
    """The attribute of `self` the method sets true only when its work is done: it opens with
    `if self.flag: return` (a second call does nothing), and no suspension can follow any
    `self.flag = True` of its body. An interrupt inside it lands while the flag is still
    false, provided it starts false, which the opening guard ensures for any call that
    suspends."""
    flag = _guard(function.body, negated=False)
    if not flag or not _sets(function.body, flag) or _set_then_suspends(function.body, flag):
        return ""
    return flag


def _guard(body: list[ast.stmt], negated: bool) -> str | None:
    """The flag of the body's opening `if [not] self.flag: ... return`, after a docstring and
    checks that raise or return (`if self.running: raise RuntimeError(...)`)."""
    for statement in body:
        if _is_docstring(statement):
            continue
        if not isinstance(statement, ast.If) or statement.orelse or _suspends(statement):
            return None
        flag = _flag_test(statement.test, negated)
        if flag is not None and isinstance(statement.body[-1], ast.Return):
            return flag
        if not isinstance(statement.body[-1], ast.Raise | ast.Return):
            return None  # a check that falls through may act: the guard must come first
    return None


def _flag_test(test: ast.expr, negated: bool) -> str | None:
    """`self.flag` (or `not self.flag` when `negated`): the attribute's name."""
    if negated:
        if not (isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)):
            return None
        test = test.operand
    if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name):
        return test.attr if test.value.id == "self" else None
    return None


def _is_docstring(statement: ast.stmt) -> bool:
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant)


def _is_set(statement: ast.stmt, flag: str) -> bool:
    """`self.flag = True`."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return False
    target, value = statement.targets[0], statement.value
    return (
        _flag_test(target, negated=False) == flag
        and isinstance(value, ast.Constant)
        and value.value is True
    )


def _sets(body: list[ast.stmt], flag: str) -> bool:
    return any(_is_set(statement, flag) for statement in _statements(body))


def _set_then_suspends(block: list[ast.stmt], flag: str, after: bool = False) -> bool:
    """Can a suspension run after a `self.flag = True` of this block? `after`: the code that
    runs once the block falls through suspends. A loop or a `try` counts its own suspensions as
    following its body (a later iteration, a handler)."""
    for index, statement in enumerate(block):
        rest = block[index + 1 :]
        following = any(map(_suspends, rest)) or (after and _falls_through(rest))
        if _is_set(statement, flag):
            if following:
                return True
            continue
        repeats = isinstance(statement, ast.For | ast.AsyncFor | ast.While | ast.Try | ast.TryStar)
        inner_after = following or (repeats and _suspends(statement))
        for inner in _blocks(statement):
            if _set_then_suspends(inner, flag, inner_after):
                return True
    return False


def _falls_through(rest: list[ast.stmt]) -> bool:
    """Does control reach the end of these statements (as far as their last one says)?"""
    return not rest or not isinstance(rest[-1], ast.Return | ast.Raise)


def _blocks(statement: ast.stmt) -> Iterator[list[ast.stmt]]:
    if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return
    for name in ("body", "orelse", "finalbody"):
        inner = getattr(statement, name, None)
        if inner and isinstance(inner[0], ast.stmt):
            yield inner
    for handler in getattr(statement, "handlers", ()):
        yield handler.body
    for case in getattr(statement, "cases", ()):
        yield case.body


def _statements(body: list[ast.stmt]) -> Iterator[ast.stmt]:
    for statement in body:
        yield statement
        for inner in _blocks(statement):
            yield from _statements(inner)


_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)


def _suspends(statement: ast.stmt) -> bool:
    """Does the statement await, outside the functions and classes it defines?"""
    pending: list[ast.AST] = [statement]
    while pending:
        node = pending.pop()
        if isinstance(node, ast.Await | ast.AsyncFor | ast.AsyncWith):
            return True
        pending += (child for child in ast.iter_child_nodes(node) if not isinstance(child, _SCOPES))
    return False
