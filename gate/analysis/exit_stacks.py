"""Callbacks pushed onto an exit stack that an `async with` block closes: when the block ends,
the stack awaits each of them, in teardown, as a `finally:` would (facts for
unshielded-teardown-await).

    async with AsyncExitStack() as stack:
        conn = await connect()
        stack.push_async_callback(conn.close)   # awaited when the block exits
        await conn.serve()                      # a cancel here: the exit runs in a cancelled scope

Only callbacks the project does not define are facts here: a project function pushed onto a
stack is a teardown region of its own (`registered`), judged in its body.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

import libcst as cst

from gate.analysis.candidates import FunctionSpan
from gate.analysis.cstwalk import NESTED_SCOPES, in_source_order, is_suspension
from gate.analysis.facts import StackCallback
from gate.analysis.walker import dotted_name, final_name, is_shield_scope

if TYPE_CHECKING:
    from gate.analysis.walker import _Analyser as Analyser

STACKS = frozenset({"AsyncExitStack"})
PUSHES = frozenset({"push_async_callback"})


def stack_callbacks(analyser: Analyser, span: FunctionSpan) -> list[StackCallback]:
    """The callbacks of one function's `async with AsyncExitStack() as stack:` blocks that are
    not shielded, not a no-argument `aclose` (which must close even when cancelled), and not
    defined in the project."""
    snippet = analyser.snippet_of(span)
    found = []
    for block, stack in _stack_blocks(snippet.function.body, shielded=False):
        for push, callback in _pushes(block, stack):
            label = dotted_name(callback)
            if label is None or _exempt(analyser, span, push, callback, label):
                continue
            interrupt = _await_after(block.body, push)
            if interrupt is None:
                continue
            receiver, _, name = label.rpartition(".")
            consequence = analyser.vocabulary.consequence(name, receiver or None)
            found.append(
                StackCallback(
                    span.qualname,
                    (span.first_line, span.last_line),
                    push,
                    label,
                    block,
                    interrupt,
                    consequence,
                )
            )
    analyser.node_snippets.update(
        (id(node), snippet) for item in found for node in (item.push, item.stack, item.interrupt)
    )
    return found


def _stack_blocks(node: cst.CSTNode, shielded: bool) -> Iterator[tuple[cst.With, str]]:
    """The unshielded `async with AsyncExitStack() as name:` blocks below `node`, with the
    name, not entering nested functions."""
    for child in node.children:
        if isinstance(child, NESTED_SCOPES):
            continue
        inner = shielded or (isinstance(child, cst.With) and _shields(child))
        if isinstance(child, cst.With) and child.asynchronous is not None and not inner:
            yield from ((child, name) for name in _stack_names(child))
        yield from _stack_blocks(child, inner)


def _shields(statement: cst.With) -> bool:
    return any(
        isinstance(item.item, cst.Call) and is_shield_scope(item.item) for item in statement.items
    )


def _stack_names(statement: cst.With) -> Iterator[str]:
    for item in statement.items:
        call, target = item.item, item.asname
        if not isinstance(call, cst.Call) or final_name(call.func) not in STACKS:
            continue
        if target is not None and isinstance(target.name, cst.Name):
            yield target.name.value


def _pushes(block: cst.With, stack: str) -> Iterator[tuple[cst.Call, cst.BaseExpression]]:
    for node in in_source_order(block.body, NESTED_SCOPES):
        if not isinstance(node, cst.Call) or not node.args:
            continue
        func = node.func
        if (
            isinstance(func, cst.Attribute)
            and func.attr.value in PUSHES
            and isinstance(func.value, cst.Name)
            and func.value.value == stack
        ):
            yield node, node.args[0].value


def _exempt(
    analyser: Analyser, span: FunctionSpan, push: cst.Call, callback: cst.BaseExpression, label: str
) -> bool:
    """A no-argument `aclose` closes even when cancelled; a bare name or a function the
    project defines is judged as a teardown region in its own body."""
    if label.rpartition(".")[2] == "aclose" and len(push.args) == 1:
        return True
    if isinstance(callback, cst.Name) or label.startswith(("self.", "cls.")):
        return True
    project = analyser.project
    return project is not None and project.callee(span.qualname, span.self_class, label) is not None


def _await_after(body: cst.BaseSuite, push: cst.Call) -> cst.CSTNode | None:
    """The first await, `async for` or `async with` of the block after the push, in source
    order: where a cancel can land with the callback on the stack."""
    seen = False
    for node in in_source_order(body, NESTED_SCOPES):
        if node is push:
            seen = True
        elif seen and is_suspension(node):
            return node
    return None
