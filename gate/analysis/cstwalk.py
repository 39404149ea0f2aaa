"""Reading a libcst tree without libcst's visitors: a visitor rebuilds every node it passes
(dataclass construction and validation), and `libcst.matchers` costs a large import. Questions
that only ask which nodes exist below a node (any `Raise`, every `Name`) read the node's fields
instead. The order of the nodes is the fields' order, not always the source's: use this only
where order does not matter.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import fields

import libcst as cst
from libcst.metadata import CodeRange, PositionProvider

_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


def _child_fields(kind: type) -> tuple[str, ...]:
    names = _CHILD_FIELDS.get(kind)
    if names is None:
        names = _CHILD_FIELDS[kind] = tuple(field.name for field in fields(kind))
    return names


# Layout: nodes that hold only whitespace, comments and other layout nodes.
LAYOUT = frozenset(
    {
        cst.SimpleWhitespace,
        cst.ParenthesizedWhitespace,
        cst.TrailingWhitespace,
        cst.EmptyLine,
        cst.Newline,
        cst.Comment,
        cst.LeftParen,
        cst.RightParen,
    }
)


def descendants(node: cst.CSTNode) -> Iterator[cst.CSTNode]:
    """`node` and every node below it but layout (whitespace, comments, parentheses), each
    once, in no particular order."""
    pending = [node]
    while pending:
        current = pending.pop()
        yield current
        pending.extend(_children_in_source_order(current))


def names_below(node: cst.CSTNode) -> set[str]:
    """The value of every `Name` node at or below `node`."""
    return {found.value for found in descendants(node) if isinstance(found, cst.Name)}


def code_ranges(module: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    """The `PositionProvider` range of every node of `module`: what
    `MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)` gives, without
    the wrapper's walk over the whole module (a visit with no visitors, which rebuilds every
    node) before the provider's own code generation pass. libcst is pinned; a test holds the
    two equal."""
    provider = PositionProvider()
    provider._gen_impl(module)
    return provider._computed  # type: ignore[return-value]


# Nodes whose fields are declared in another order than their code reads: the order libcst's
# visitors (and the source) give their children.
_SOURCE_ORDER: dict[type, tuple[str, ...]] = {
    cst.IfExp: ("body", "test", "orelse"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.ExceptStarHandler: ("type", "name", "body"),
    cst.MatchCase: ("pattern", "guard", "body"),
}


def in_source_order(node: cst.CSTNode, skip: tuple[type, ...]) -> Iterator[cst.CSTNode]:
    """`node` and the nodes below it but layout, in the order a libcst visitor meets them
    (source order), not entering nodes of the `skip` types (nor yielding them, `node` included).
    A test holds the order equal to a visitor's on a corpus."""
    pending = [node]
    while pending:
        current = pending.pop()
        if isinstance(current, skip):
            continue
        yield current
        pending.extend(reversed(_children_in_source_order(current)))


def _children_in_source_order(node: cst.CSTNode) -> list[cst.CSTNode]:
    children: list[cst.CSTNode] = []
    for name in _SOURCE_ORDER.get(type(node)) or _child_fields(type(node)):
        value = getattr(node, name)
        if isinstance(value, cst.CSTNode):
            if type(value) not in LAYOUT:
                children.append(value)
        elif isinstance(value, tuple | list):
            children.extend(
                item for item in value if isinstance(item, cst.CSTNode) and type(item) not in LAYOUT
            )
    return children
