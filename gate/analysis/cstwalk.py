"""Reading a libcst tree without libcst's visitors: a visitor rebuilds every node it passes
(dataclass construction and validation), and `libcst.matchers` costs a large import. Questions
that only ask which nodes exist below a node (any `Raise`, every `Name`) read the node's fields
(`descendants`, in no particular order); a pass that needs the order of the source calls a
visitor's methods in the order libcst's visitors do (`walk`), still without rebuilding a node.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Mapping
from dataclasses import fields
from typing import Any

import libcst as cst
from libcst._nodes.internal import CodegenState
from libcst._position import CodePosition, CodeRange

from gate.astwalk import PerType

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


# The nodes whose bodies are another scope: a walk of one function's own code stops at them.
NESTED_SCOPES = (cst.FunctionDef, cst.ClassDef, cst.Lambda)


def is_suspension(node: cst.CSTNode) -> bool:
    """Is the node an await, an `async with` or an `async for`?"""
    if isinstance(node, cst.With | cst.For):
        return node.asynchronous is not None
    return isinstance(node, cst.Await)


def descendants(
    node: cst.CSTNode, prune: Callable[[cst.CSTNode], bool] | None = None
) -> Iterator[cst.CSTNode]:
    """`node` and every node below it but layout (whitespace, comments, parentheses), each
    once, in no particular order; nothing below a node `prune` accepts."""
    pending = [node]
    while pending:
        current = pending.pop()
        yield current
        if prune is None or not prune(current):
            pending.extend(_children_in_source_order(current))


# The nodes whose children libcst's visitors (and mostly the source) take in another order than
# the fields are declared (whitespace fields left out: they hold layout alone). Read from libcst
# 1.9's `_visit_and_replace_children`; libcst is pinned, and tests hold `walk` and
# `in_source_order` to its visitors.
_SOURCE_ORDER: dict[type, tuple[str, ...]] = {
    cst.AnnAssign: ("target", "annotation", "equal", "value", "semicolon"),
    cst.Arg: ("keyword", "equal", "value", "comma"),
    cst.Assert: ("test", "comma", "msg", "semicolon"),
    cst.Attribute: ("value", "dot", "attr"),
    cst.ClassDef: ("decorators", "name", "type_parameters", "bases", "keywords", "body"),
    cst.CompFor: ("asynchronous", "target", "iter", "ifs", "inner_for_in"),
    cst.Dict: ("lbrace", "elements", "rbrace"),
    cst.DictComp: ("lbrace", "key", "value", "for_in", "rbrace"),
    cst.ExceptHandler: ("type", "name", "body"),
    cst.ExceptStarHandler: ("type", "name", "body"),
    cst.For: ("asynchronous", "target", "iter", "body", "orelse"),
    cst.FormattedStringExpression: ("expression", "equal", "format_spec"),
    cst.FunctionDef: (
        "decorators",
        "asynchronous",
        "name",
        "type_parameters",
        "params",
        "returns",
        "body",
    ),
    cst.IfExp: ("body", "test", "orelse"),
    cst.ImportFrom: ("relative", "module", "names", "semicolon"),
    cst.Lambda: ("params", "colon", "body"),
    cst.List: ("lbracket", "elements", "rbracket"),
    cst.ListComp: ("lbracket", "elt", "for_in", "rbracket"),
    cst.MatchCase: ("pattern", "guard", "body"),
    cst.MatchList: ("lbracket", "patterns", "rbracket"),
    cst.MatchMapping: ("lbrace", "elements", "rest", "trailing_comma", "rbrace"),
    cst.Parameters: (
        "posonly_params",
        "posonly_ind",
        "params",
        "star_arg",
        "kwonly_params",
        "star_kwarg",
    ),
    cst.Set: ("lbrace", "elements", "rbrace"),
    cst.SetComp: ("lbrace", "elt", "for_in", "rbrace"),
    cst.Slice: ("lower", "first_colon", "upper", "second_colon", "step"),
    cst.StarredDictComp: ("lbrace", "value", "for_in", "rbrace"),
    cst.Subscript: ("value", "lbracket", "slice", "rbracket"),
    cst.TemplatedStringExpression: ("expression", "equal", "format_spec"),
    cst.TypeAlias: ("name", "type_parameters", "value", "semicolon"),
    cst.TypeParam: ("param", "equal", "default", "comma"),
    cst.TypeParameters: ("lbracket", "params", "rbracket"),
    cst.TypeVar: ("name", "colon", "bound"),
    cst.With: ("asynchronous", "items", "body"),
}

Handler = Callable[[Any, cst.CSTNode], Any]
_HANDLERS: dict[tuple[type, type], tuple[Handler | None, Handler | None]] = {}


def _handlers(visitor: type, kind: type) -> tuple[Handler | None, Handler | None]:
    found = _HANDLERS.get((visitor, kind))
    if found is None:
        name = kind.__name__
        found = getattr(visitor, f"visit_{name}", None), getattr(visitor, f"leave_{name}", None)
        _HANDLERS[(visitor, kind)] = found
    return found


def walk(node: cst.CSTNode, visitor: object) -> None:
    """Call `visitor.visit_<Node>(node)`, then the same for every child, then
    `visitor.leave_<Node>(node)`, for `node` and every node below it but layout, in the order
    libcst's visitors do; a `visit_` that returns False skips the children, not the `leave_`.
    The nodes are the tree's own: nothing is rebuilt."""
    visit, leave = _handlers(type(visitor), type(node))
    if visit is None or visit(visitor, node) is not False:
        for child in _children_in_source_order(node):
            walk(child, visitor)
    if leave is not None:
        leave(visitor, node)


def parse_module(source: str) -> cst.Module:
    """`cst.parse_module(source)` without validating each node as it is built.

    Every libcst node checks its own fields when constructed (`CSTNode.__post_init__` calls
    `_validate`), a fifth of a parse; libcst's own comment there calls this a cost to move out
    of parsing. The native parser builds only what its grammar accepts, and gate parses only
    code that Python's own parser took first, so the checks find nothing: they are skipped
    while the parser builds the tree (a test holds the trees equal to validated ones). Raises
    what `cst.parse_module` raises."""
    base = cst.CSTNode
    validate = base.__post_init__
    base.__post_init__ = _built  # type: ignore[method-assign]
    try:
        return cst.parse_module(source)
    finally:
        base.__post_init__ = validate  # type: ignore[method-assign]


def _built(node: cst.CSTNode) -> None:
    """A node's `__post_init__` while `parse_module` runs: nothing to check."""


def names_below(node: cst.CSTNode, prune: Callable[[cst.CSTNode], bool] | None = None) -> set[str]:
    """The value of every `Name` node at or below `node`, not below a node `prune` accepts."""
    return {found.value for found in descendants(node, prune) if isinstance(found, cst.Name)}


def code_ranges(module: cst.Module) -> Mapping[cst.CSTNode, CodeRange]:
    """The `PositionProvider` range of every node of `module`: what
    `MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)` gives, built from
    `node_positions`. libcst is pinned; a test holds the two equal."""
    state = _PositionState(module, keep_nodes=True)
    module._codegen(state)
    return {
        state.nodes[key]: CodeRange(CodePosition(*start), CodePosition(*end))
        for key, (start, end) in state.computed.items()
    }


# (line, column) where a node's code starts and where it ends, as `PositionProvider` counts
Span = tuple[tuple[int, int], tuple[int, int]]


def node_positions(module: cst.Module) -> dict[int, Span]:
    """Where the code of every node of `module` starts and ends (lines from 1, columns from 0),
    by `id` of the node, as libcst's `PositionProvider` says: its code generation pass with the
    bookkeeping done in plain tuples (the provider builds two frozen dataclasses per node, hashes
    every node in Python and opens a generator-based context manager for most of them)."""
    state = _PositionState(module)
    module._codegen(state)
    return state.computed


class _PositionState(CodegenState):
    """libcst's `PositionProvidingCodegenState`, keeping positions as tuples by node id."""

    def __init__(self, module: cst.Module, keep_nodes: bool = False) -> None:
        super().__init__(
            default_indent=module.default_indent, default_newline=module.default_newline
        )
        self.line = 1  # one-indexed
        self.column = 0  # zero-indexed
        self.starts: list[tuple[int, int]] = []
        self.computed: dict[int, Span] = {}
        self.nodes: dict[int, cst.CSTNode] = {}
        self.keep_nodes = keep_nodes

    def add_indent_tokens(self) -> None:
        self.tokens.extend(self.indent_tokens)  # a module with no tokens gets a newline
        for token in self.indent_tokens:
            self._advance(token)

    def add_token(self, value: str) -> None:
        self.tokens.append(value)
        self._advance(value)

    def _advance(self, value: str) -> None:
        if "\n" not in value and "\r" not in value:
            self.column += len(value)
            return
        segments = _NEWLINE.split(value)
        self.line += len(segments) - 1
        self.column = len(segments[-1])

    def before_codegen(self, node: cst.CSTNode) -> None:
        self.starts.append((self.line, self.column))

    def after_codegen(self, node: cst.CSTNode) -> None:
        start = self.starts.pop()
        key = id(node)
        if key not in self.computed:  # a syntactic position recorded inside wins
            self.computed[key] = (start, (self.line, self.column))
            if self.keep_nodes:
                self.nodes[key] = node

    def record_syntactic_position(  # type: ignore[override]
        self,
        node: cst.CSTNode,
        *,
        start_node: cst.CSTNode | None = None,
        end_node: cst.CSTNode | None = None,
    ) -> _Syntactic:
        return _Syntactic(self, node, start_node, end_node)


class _Syntactic:
    """The context manager `record_syntactic_position` returns: the node's range is the code
    generated inside it, or hoisted from the start or end child named."""

    __slots__ = ("end_node", "node", "start", "start_node", "state")

    def __init__(
        self,
        state: _PositionState,
        node: cst.CSTNode,
        start_node: cst.CSTNode | None,
        end_node: cst.CSTNode | None,
    ) -> None:
        self.state = state
        self.node = node
        self.start_node = start_node
        self.end_node = end_node

    def __enter__(self) -> None:
        self.start = (self.state.line, self.state.column)

    def __exit__(self, *raised: object) -> None:
        state = self.state
        start = self.start
        end = (state.line, state.column)
        if self.start_node is not None:
            start = state.computed[id(self.start_node)][0]
        if self.end_node is not None:
            end = state.computed[id(self.end_node)][1]
        state.computed[id(self.node)] = (start, end)
        if state.keep_nodes:
            state.nodes[id(self.node)] = self.node


_NEWLINE = re.compile(r"\r\n?|\n")  # as libcst's position provider splits a token


def in_source_order(node: cst.CSTNode, skip: tuple[type, ...]) -> Iterator[cst.CSTNode]:
    """`node` and the nodes below it but layout, in the order a libcst visitor meets them
    (source order), not entering nodes of the `skip` types (nor yielding them, `node` included).
    A test holds the order equal to a visitor's on a corpus."""
    skipped = _SKIPPED.setdefault(skip, {})
    pending = [node]
    while pending:
        current = pending.pop()
        kind = type(current)
        leave_out = skipped.get(kind)
        if leave_out is None:
            leave_out = skipped[kind] = issubclass(kind, skip)
        if leave_out:
            continue
        yield current
        pending.extend(reversed(_children_in_source_order(current)))


# Whether a node type is one of the `skip` types of `in_source_order`, per `skip`: libcst's
# node classes are ABCs, and an `isinstance` that answers no goes through ABCMeta in Python.
_SKIPPED: dict[tuple[type, ...], dict[type, bool]] = {}


def _children_in_source_order(node: cst.CSTNode) -> list[cst.CSTNode]:
    kept = _KEPT
    children: list[cst.CSTNode] = []
    for name in _ORDERED_FIELDS[type(node)]:
        value = getattr(node, name)
        if kept[type(value)]:
            children.append(value)
        elif isinstance(value, tuple | list):
            children.extend([item for item in value if kept[type(item)]])
    return children


# Each node type's fields in the order its children are taken; whether a value of a type is a
# node that is not layout (`isinstance(value, cst.CSTNode)` asks an ABC)
_ORDERED_FIELDS = PerType(lambda kind: _SOURCE_ORDER.get(kind) or _child_fields(kind))
_KEPT = PerType(lambda kind: issubclass(kind, cst.CSTNode) and kind not in LAYOUT)
