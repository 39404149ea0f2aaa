"""One parsed function as the fixer reads it: parents, file positions, and the names its code
binds and reads. libcst nodes have no parent links; this builds them once per function."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from gate.analysis.walker import Snippet

_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)
COMPREHENSIONS = (cst.ListComp, cst.SetComp, cst.DictComp, cst.GeneratorExp)


@dataclass(frozen=True)
class Span:
    """Where a node is in the file: 1-based lines, 1-based code-point columns."""

    line: int
    column: int
    end_line: int
    end_column: int


class _Parents(cst.CSTVisitor):
    def __init__(self) -> None:
        self.stack: list[cst.CSTNode] = []
        self.parents: dict[int, cst.CSTNode] = {}

    def on_visit(self, node: cst.CSTNode) -> bool:
        if self.stack:
            self.parents[id(node)] = self.stack[-1]
        self.stack.append(node)
        return True

    def on_leave(self, original_node: cst.CSTNode) -> None:
        self.stack.pop()


class FunctionTree:
    """Parents and file positions of every node of one libcst-parsed function."""

    def __init__(self, snippet: Snippet) -> None:
        self.snippet = snippet
        visitor = _Parents()
        snippet.module.visit(visitor)
        self.parents = visitor.parents
        wrapper = MetadataWrapper(snippet.module, unsafe_skip_copy=True)
        self._ranges = wrapper.resolve(PositionProvider)

    def parent(self, node: cst.CSTNode) -> cst.CSTNode | None:
        return self.parents.get(id(node))

    def ancestors(self, node: cst.CSTNode) -> Iterator[cst.CSTNode]:
        current = self.parent(node)
        while current is not None:
            yield current
            current = self.parent(current)

    def contains(self, outer: cst.CSTNode, inner: cst.CSTNode) -> bool:
        return inner is outer or any(node is outer for node in self.ancestors(inner))

    def span(self, node: cst.CSTNode) -> Span:
        found = self._ranges[node]
        offset = self.snippet.line_offset
        return Span(
            found.start.line + offset,
            found.start.column + 1,
            found.end.line + offset,
            found.end.column + 1,
        )

    def child_of(self, node: cst.CSTNode, block: cst.CSTNode) -> cst.CSTNode | None:
        """The ancestor of `node` (or `node`) whose parent is `block`; None when not inside."""
        current: cst.CSTNode | None = node
        while current is not None:
            parent = self.parent(current)
            if parent is block:
                return current
            current = parent
        return None


def own_nodes(root: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """Every node under `root` (itself included) that is not inside a nested def, class or
    lambda."""
    pending = [root]
    while pending:
        node = pending.pop()
        yield node
        pending.extend(child for child in reversed(node.children) if not isinstance(child, _SCOPES))


def loads(root: cst.CSTNode) -> Iterator[cst.Name]:
    """The names `root` reads (assignment targets left out), outside nested scopes."""
    skipped: set[int] = set()
    for node in own_nodes(root):
        if id(node) in skipped:
            continue
        if isinstance(node, cst.AssignTarget | cst.AnnAssign | cst.NamedExpr):
            target = node.target
            if isinstance(target, cst.Name):
                skipped.add(id(target))
        elif isinstance(node, cst.Name):
            yield node


def bound_names(root: cst.CSTNode) -> set[str]:
    """The plain names `root` assigns (targets of `=`, `+=`, `:=`, `for`, `with ... as`)."""
    names: set[str] = set()
    for node in own_nodes(root):
        targets: list[cst.CSTNode] = []
        assigning = (cst.AssignTarget, cst.AugAssign, cst.AnnAssign, cst.NamedExpr)
        if isinstance(node, (*assigning, cst.For, cst.CompFor)):
            targets.append(node.target)
        elif isinstance(node, cst.WithItem) and node.asname is not None:
            # not an `except ... as name`: Python unbinds that one when the handler ends
            targets.append(node.asname.name)
        for target in targets:
            names.update(_target_names(target))
    return names


def _target_names(target: cst.CSTNode) -> Iterator[str]:
    if isinstance(target, cst.Name):
        yield target.value
    elif isinstance(target, cst.Tuple | cst.List):
        for element in target.elements:
            yield from _target_names(element.value)
    elif isinstance(target, cst.StarredElement):
        yield from _target_names(target.value)


def all_names(root: cst.CSTNode) -> set[str]:
    """Every identifier spelled anywhere under `root`, nested scopes included."""
    names: set[str] = set()

    class _Names(cst.CSTVisitor):
        def visit_Name(self, node: cst.Name) -> None:
            names.add(node.value)

    root.visit(_Names())
    return names


def fresh_name(preferred: tuple[str, ...], taken: set[str]) -> str:
    """The first of `preferred` not in `taken`, else the first with a number appended."""
    for name in preferred:
        if name not in taken:
            return name
    number = 2
    while f"{preferred[0]}_{number}" in taken:
        number += 1
    return f"{preferred[0]}_{number}"
