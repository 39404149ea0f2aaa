"""A cancel a handler keeps to raise later, and a `return` the function can take before that
raise: the kept cancel is dropped there (facts for cancellation-swallowed-outside-teardown).

psycopg's pool client kept the cancel of its wait in `self.error` (`except CLIENT_EXCEPTIONS as
ex: self.error = ex`), then went on with `if self.conn: return self.conn` before `raise
self.error`: a connection handed over while the cancel landed won, and the cancelled task
carried on."""

from __future__ import annotations

from collections.abc import Iterator, Sequence

import libcst as cst

from gate.analysis.cstwalk import NESTED_SCOPES, descendants, in_source_order
from gate.analysis.facts import CancelHandler, DroppedKeep
from gate.analysis.walker import blocks, child_suites, dotted_name, statements

LOOPS = (cst.For, cst.While)


def dropped_keep(handler: CancelHandler) -> DroppedKeep | None:
    """The `return` that leaves the function before it raises the cancel the handler kept in a
    name or attribute (`self.error = ex`), when the function does raise it further on; None when
    the handler keeps nothing gate can follow, or every way on raises it or asks for it first."""
    kept = _kept_in(handler.node)
    if not kept or handler.statement is None:
        return None
    following = _following(handler.function_body, handler.statement)
    if following is None:
        return None
    for statement in following:
        if _asks(statement, kept):
            return None
        if _raises_kept(statement, kept) is not None:
            return _returned_first(statement, kept) if isinstance(statement, cst.If) else None
        returned = _first_return(statement)
        if returned is not None:
            raised = _raise_after(following, statement, kept)
            return DroppedKeep(raised[0], returned, raised[1]) if raised else None
    return None


def _kept_in(handler: cst.ExceptHandler | cst.ExceptStarHandler) -> set[str]:
    """The dotted names the handler binds the caught exception to (`self.error = ex`), when it
    binds it and does nothing else with it."""
    caught = handler.name.name if handler.name is not None else None
    if not isinstance(caught, cst.Name):
        return set()
    kept: set[str] = set()
    for node in descendants(handler.body):
        if isinstance(node, cst.Raise):
            return set()
        if isinstance(node, cst.Assign) and _is(node.value, caught.value):
            kept |= {name for t in node.targets if (name := dotted_name(t.target))}
    return kept


def _is(node: cst.BaseExpression, name: str) -> bool:
    return isinstance(node, cst.Name) and node.value == name


def _following(body: cst.CSTNode, target: cst.CSTNode) -> list[cst.BaseStatement] | None:
    """The statements that run after `target` in order, block by block outwards; None when a
    loop lies between (its next pass comes first) or `target` is not found."""
    path = _path_to(body, target)
    if path is None:
        return None
    found: list[cst.BaseStatement] = []
    for listed, index, statement in reversed(path):
        if isinstance(statement, LOOPS) and statement is not target:
            return None
        found += listed[index + 1 :]
    return found


def _path_to(
    body: cst.CSTNode, target: cst.CSTNode
) -> list[tuple[Sequence[cst.BaseStatement], int, cst.BaseStatement]] | None:
    """The statements from the function's body down to `target`, with the block and index of
    each."""
    listed = statements(body) if isinstance(body, cst.BaseSuite) else ()
    for index, statement in enumerate(listed):
        if statement is target:
            return [(listed, index, statement)]
        if isinstance(statement, NESTED_SCOPES):
            continue
        for inner in child_suites(statement):
            below = _path_to(inner, target)
            if below is not None:
                return [(listed, index, statement), *below]
    return None


def _own(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """The nodes at or below `node` in its function's own code, in source order."""
    return in_source_order(node, NESTED_SCOPES)


def _asks(statement: cst.BaseStatement, kept: set[str]) -> bool:
    """Does the statement test a kept name (`if self.error:`) before it does anything else?"""
    test = getattr(statement, "test", None)
    return test is not None and any(
        isinstance(node, cst.Name | cst.Attribute) and dotted_name(node) in kept
        for node in _own(test)
    )


def _raises_kept(statement: cst.CSTNode, kept: set[str]) -> cst.Raise | None:
    for node in _own(statement):
        if isinstance(node, cst.Raise) and node.exc is not None and dotted_name(node.exc) in kept:
            return node
    return None


def _first_return(statement: cst.CSTNode) -> cst.Return | None:
    return next((node for node in _own(statement) if isinstance(node, cst.Return)), None)


def _returned_first(statement: cst.If, kept: set[str]) -> DroppedKeep | None:
    """An `if` that does not ask for the kept name, one arm returning and another raising it
    (`if self.conn: return self.conn` / `else: raise self.error`)."""
    raising: list[cst.Raise] = []
    returns: list[cst.Return] = []
    for _, _, arm in blocks(statement):
        raised = _raises_kept(arm, kept)
        if raised is not None:
            raising.append(raised)  # it may raise before it returns: not a return that drops
        elif (returned := _first_return(arm)) is not None:
            returns.append(returned)
    if not raising or not returns:
        return None
    return DroppedKeep(dotted_name(raising[0].exc) or "", returns[0], raising[0])  # type: ignore[arg-type]


def _raise_after(
    following: list[cst.BaseStatement], statement: cst.BaseStatement, kept: set[str]
) -> tuple[str, cst.Raise] | None:
    later = following[following.index(statement) + 1 :]
    for node in later:
        raised = _raises_kept(node, kept)
        if raised is not None:
            return dotted_name(raised.exc) or "", raised  # type: ignore[arg-type]
    return None
