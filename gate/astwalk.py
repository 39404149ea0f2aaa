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


def child_nodes(node: ast.AST, skip: frozenset[type] = frozenset()) -> Iterator[ast.AST]:
    """The nodes directly below `node` (its fields' nodes, lists flattened, in field order),
    leaving out those whose type is in `skip`."""
    for name in node_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, list):
            yield from (item for item in value if _kept(item, skip))
        elif _kept(value, skip):
            yield value


def _kept(value: object, skip: frozenset[type]) -> bool:
    return isinstance(value, ast.AST) and type(value) not in skip
