"""Context managers a function enters by hand, `await manager.__aenter__()`, and the awaits after
that a cancel can land in with nothing to exit the manager (facts for context-entered-by-hand).

    async def start(self):
        self._portal = BlockingPortal()
        await self._portal.__aenter__()
        await to_thread.run_sync(self.original.start)   # a cancel here: the portal stays entered

An `async with` exits what it entered whatever ends its block; a hand-made enter has no such
exit until the code that owns the manager runs its `__aexit__` (`stop()`), and a caller that saw
`start()` fail never calls it. An await inside a `try` that has a `finally:` or a handler that
catches cancellation is taken for guarded: what runs there is the function's own unwinding.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

import libcst as cst

from gate.analysis.candidates import FunctionSpan
from gate.analysis.cstwalk import NESTED_SCOPES, descendants, is_suspension
from gate.analysis.facts import Consequence, HandEntered
from gate.analysis.releases import await_suspends
from gate.analysis.vocabulary import names_exit_stack
from gate.analysis.walker import dotted_name, handler_catches_cancellation

if TYPE_CHECKING:
    from gate.analysis.walker import _Analyser as Analyser

# The arms of `if` and `match` statements a piece of code is in: (id of the statement, arm)
Arms = tuple[tuple[int, int], ...]
# A suspension of the function's own code, whether a `try` around it unwinds on a cancel, and
# the arms it is in
Suspension = tuple[cst.CSTNode, bool, Arms]


def hand_entered(analyser: Analyser, span: FunctionSpan) -> list[HandEntered]:
    """The managers one function enters by hand, never exits itself (nor through a name it
    assigns the manager to), and leaves entered when a later await, outside any unwinding `try`,
    is interrupted; a manager handed on to an enclosing function (assigned to a `nonlocal` or
    `global` name, whose owner exits it) is left out. A function that exits the manager on some
    path is judged by the rules of those paths (cleanup-only-on-error, unprotected-release)."""
    snippet = analyser.snippet_of(span)
    assigned = _assignments(snippet.function.body)
    suspends = await_suspends(analyser, span)
    found = []
    suspensions = list(_suspensions(snippet.function.body, guarded=False, arms=()))
    for index, (node, _, arms) in enumerate(suspensions):
        label = _entered(node)
        if label is None or label in assigned.handed_on:
            continue
        names = {label} | assigned.aliases(label)
        if any(_exits(other, names) for other, _, _ in suspensions):
            continue  # the function exits it itself: cleanup-only-on-error judges the paths
        later = _first_exposed(suspensions[index + 1 :], node, arms, suspends)
        if later is not None:
            stack = names_exit_stack(label) or _holds_exit_stack(analyser, span, label)
            found.append(_fact(span, snippet.module, node, label, later, stack))
    analyser.node_snippets.update(
        (id(n), snippet) for item in found for n in (item.enter, item.interrupt)
    )
    return found


def _first_exposed(
    after: list[Suspension],
    enter: cst.CSTNode,
    entered_in: Arms,
    suspends: Callable[[cst.Await], bool],
) -> cst.CSTNode | None:
    """The first of the suspensions after the enter that no unwinding `try` guards, that is not
    part of the enter's own await, that a pass through the enter can reach (not in another arm
    of an `if` or `match` the enter is in), and that can suspend."""
    for node, guarded, arms in after:
        if guarded or _inside(node, enter) or _exclusive(arms, entered_in):
            continue
        if _can_suspend(node, suspends):
            return node
    return None


def _exclusive(first: Arms, second: Arms) -> bool:
    """Are the two in different arms of one `if` or `match` (never both run in one pass)?"""
    taken = dict(first)
    return any(statement in taken and taken[statement] != arm for statement, arm in second)


def _holds_exit_stack(analyser: Analyser, span: FunctionSpan, label: str) -> bool:
    """Does the project record that the manager (`self._stack`) holds an (Async)ExitStack,
    from what was assigned to it (`self._stack = AsyncExitStack()`)?"""
    project = analyser.project
    return project is not None and project.exit_stack(span.qualname, span.self_class, label)


def _fact(
    span: FunctionSpan,
    module: cst.Module,
    enter: cst.CSTNode,
    label: str,
    later: cst.CSTNode,
    exit_stack: bool,
) -> HandEntered:
    """An exit stack left entered keeps whatever it entered (a server process, a session)
    open: an error; another manager is judged a best-effort close."""
    consequence = Consequence.LOSES_WORK if exit_stack else Consequence.BEST_EFFORT
    text = module.code_for_node(later).strip().splitlines()[0].removesuffix(":")
    return HandEntered(
        span.qualname,
        (span.first_line, span.last_line),
        enter,
        label,
        later,
        text,
        consequence,
    )


def _entered(node: cst.CSTNode) -> str | None:
    """The manager an `await manager.__aenter__()` enters, by its dotted name."""
    if not isinstance(node, cst.Await) or not isinstance(node.expression, cst.Call):
        return None
    func = node.expression.func
    if isinstance(func, cst.Attribute) and func.attr.value == "__aenter__":
        return dotted_name(func.value)
    return None


def _suspensions(node: cst.CSTNode, guarded: bool, arms: Arms) -> Iterator[Suspension]:
    """The awaits, `async with` and `async for` statements below `node`, in source order, not
    entering nested functions; `guarded` when a `try` around them has a `finally:` or catches
    cancellation; with the arms of the `if` and `match` statements they are in."""
    for child in node.children:
        if isinstance(child, NESTED_SCOPES):
            continue
        if is_suspension(child):
            yield child, guarded, arms
        if isinstance(child, cst.Try):
            yield from _try_suspensions(child, guarded, arms)
        elif isinstance(child, cst.If | cst.Match):
            yield from _arm_suspensions(child, guarded, arms)
        else:
            yield from _suspensions(child, guarded, arms)


def _arm_suspensions(
    statement: cst.If | cst.Match, guarded: bool, arms: Arms
) -> Iterator[Suspension]:
    """An `if`'s suspensions (its test, its body, its `else`/`elif`), or a `match`'s (its
    subject, each case), each arm marked."""
    if isinstance(statement, cst.If):
        parts = [(statement.test, None), (statement.body, 0), (statement.orelse, 1)]
    else:
        parts = [(statement.subject, None), *((case, i) for i, case in enumerate(statement.cases))]
    for part, arm in parts:
        if part is None:
            continue
        marked = arms if arm is None else (*arms, (id(statement), arm))
        if isinstance(part, cst.If):  # an `elif`: arms of its own
            yield from _arm_suspensions(part, guarded, marked)
            continue
        if is_suspension(part):
            yield part, guarded, marked
        yield from _suspensions(part, guarded, marked)


def _try_suspensions(statement: cst.Try, guarded: bool, arms: Arms) -> Iterator[Suspension]:
    """A `try`'s suspensions: its body and its unwinding (handlers, `finally:`) are guarded
    when it unwinds on a cancel, its `else:` only as the code around it is."""
    unwinds = guarded or _unwinds(statement)
    yield from _suspensions(statement.body, unwinds, arms)
    if statement.orelse is not None:
        yield from _suspensions(statement.orelse, guarded, arms)
    for rest in (*statement.handlers, statement.finalbody):
        if rest is not None:
            yield from _suspensions(rest, unwinds, arms)


def _unwinds(statement: cst.Try) -> bool:
    """Does a `try` run code of the function when a cancel lands in its body?"""
    return statement.finalbody is not None or any(
        handler_catches_cancellation(handler) for handler in statement.handlers
    )


def _exits(node: cst.CSTNode, names: set[str]) -> bool:
    """Is the await the manager's own exit (`await manager.__aexit__(...)`, `aclose()`)?"""
    if not isinstance(node, cst.Await) or not isinstance(node.expression, cst.Call):
        return False
    func = node.expression.func
    return (
        isinstance(func, cst.Attribute)
        and func.attr.value in ("__aexit__", "aclose")
        and dotted_name(func.value) in names
    )


def _inside(node: cst.CSTNode, outer: cst.CSTNode) -> bool:
    """Is `node` part of the `__aenter__()` await itself (an await in its arguments)?"""
    return any(node is below for below in descendants(outer))


def _can_suspend(node: cst.CSTNode, suspends: Callable[[cst.Await], bool]) -> bool:
    """An `async with`/`async for` may suspend; an await unless the project's summary of the
    callee says it never does."""
    return not isinstance(node, cst.Await) or suspends(node)


class _Assignments:
    """The plain assignments of a function (`cleanup = init_span`) and its `nonlocal` and
    `global` names."""

    def __init__(self, pairs: list[tuple[str, str]], declared: set[str]) -> None:
        self.pairs = pairs
        # the managers handed to an enclosing owner: `cm = opening` with `nonlocal cm`
        self.handed_on = {value for target, value in pairs if target in declared}

    def aliases(self, label: str) -> set[str]:
        return {target for target, value in self.pairs if value == label}


def _assignments(body: cst.BaseSuite) -> _Assignments:
    declared: set[str] = set()
    pairs: list[tuple[str, str]] = []
    for node in descendants(body):
        if isinstance(node, cst.Nonlocal | cst.Global):
            declared.update(item.name.value for item in node.names)
        elif isinstance(node, cst.Assign | cst.AnnAssign) and node.value is not None:
            value = dotted_name(node.value)
            targets = node.targets if isinstance(node, cst.Assign) else [node]
            for target in targets:
                if isinstance(target.target, cst.Name) and value:
                    pairs.append((target.target.value, value))
    return _Assignments(pairs, declared)
