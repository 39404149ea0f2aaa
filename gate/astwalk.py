"""Walking only the statements of an `ast` tree: definitions and `try` blocks are statements, so
the far more numerous expression nodes never need a visit."""

from __future__ import annotations

import ast
from collections.abc import Iterator


def child_statements(node: ast.AST) -> Iterator[ast.stmt]:
    """The statements directly inside `node`'s blocks (body, else, finally, handlers, cases)."""
    for name in ("body", "orelse", "finalbody"):
        block = getattr(node, name, None)
        if isinstance(block, list):
            yield from block
    for handler in getattr(node, "handlers", ()):
        yield from handler.body
    for case in getattr(node, "cases", ()):
        yield from case.body


_FIELDS: dict[type, tuple[str, ...]] = {}


def node_fields(kind: type) -> tuple[str, ...]:
    """The fields of an `ast` node type that may hold nodes to visit (`ctx` never does), in
    declaration order, computed once per type."""
    names = _FIELDS.get(kind)
    if names is None:
        names = _FIELDS[kind] = tuple(name for name in kind._fields if name != "ctx")  # type: ignore[attr-defined]
    return names
