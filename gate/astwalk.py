"""Walking only the statements of an `ast` tree: definitions and `try` blocks are statements, so
the far more numerous expression nodes never need a visit."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from typing import Generic, TypeVar


def dotted(node: ast.expr) -> str | None:
    """`a.b.c` for a Name/Attribute chain, None for anything else."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        base = dotted(node.value)
        return None if base is None else f"{base}.{node.attr}"
    return None


def parameters_of(arguments: ast.arguments) -> list[ast.arg]:
    """A function's named parameters: positional ones in order, then keyword-only (not `*args`
    or `**kwargs`)."""
    return [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]


def self_class_of(
    function: ast.FunctionDef | ast.AsyncFunctionDef, owner: str | None, enclosing: str | None
) -> str | None:
    """The class whose instance `self` names in `function`: `owner` for a method of it; for a
    function local to another, the class `enclosing` (the enclosing function's), unless the
    function binds a `self` or `cls` of its own. None for none."""
    if owner:
        return owner
    if any(argument.arg in ("self", "cls") for argument in parameters_of(function.args)):
        return None
    return enclosing


def child_statements(node: ast.AST) -> list[ast.stmt]:
    """The statements directly inside `node`'s blocks (body, else, finally, handlers, cases), in
    that order."""
    kind = type(node)
    blocks = _BLOCKS.get(kind)
    if blocks is None:
        blocks = _BLOCKS[kind] = _blocks_of(kind)
    if not blocks:
        return []  # most statements hold none
    found: list[ast.stmt] = []
    for name in blocks:
        block = getattr(node, name)
        if name == "handlers" or name == "cases":
            for inner in block:
                found.extend(inner.body)
        elif isinstance(block, list):
            found.extend(block)
    return found


_BLOCKS: dict[type, tuple[str, ...]] = {}


def _blocks_of(kind: type) -> tuple[str, ...]:
    """The fields of a node type that hold statements, handlers or cases, in the order
    `child_statements` reads them (a Lambda's or an IfExp's `body` is an expression)."""
    declared = getattr(kind, "_fields", ())
    return tuple(
        name for name in ("body", "orelse", "finalbody", "handlers", "cases") if name in declared
    )


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


# The node types with blocks of statements (compound statements, handlers, match cases): the
# only ones a walk over statements needs to enter.
HOLDS_STATEMENTS = frozenset(
    kind
    for kind in vars(ast).values()
    if isinstance(kind, type) and issubclass(kind, ast.AST) and _blocks_of(kind)
)


# The node types with no nodes below them that a search for calls or awaits never enters:
# names, constants, operators and `ctx` markers.
LEAVES = frozenset(
    {
        ast.Name,
        ast.Constant,
        *(
            kind
            for base in (ast.operator, ast.boolop, ast.cmpop, ast.unaryop, ast.expr_context)
            for kind in base.__subclasses__()
        ),
    }
)


Decided = TypeVar("Decided")


class PerType(dict[type, Decided], Generic[Decided]):
    """What `decide(kind)` says of each node type, decided the first time the type is asked
    about: the walks ask of every node they pass, and a dict lookup is several times quicker
    than an `isinstance` test (libcst's node classes are ABCs) or the decision itself."""

    def __init__(self, decide: Callable[[type], Decided]) -> None:
        super().__init__()
        self.decide = decide

    def __missing__(self, kind: type) -> Decided:
        decided = self[kind] = self.decide(kind)
        return decided


# The fields of each node type, in `ast`'s order, for the walks below
FIELDS: PerType[tuple[str, ...]] = PerType(node_fields)


def walk_nodes(pending: list[ast.AST], entered: PerType[bool]) -> list[ast.AST]:
    """Every node of `pending` and below it that the walk enters (`entered` says which types it
    goes into), depth first: each node's fields in order, the last one's nodes first. Loops
    over per-type tables rather than `isinstance` tests: the summaries and the teardown
    candidates run it over every node of every file. `pending` is consumed."""
    found: list[ast.AST] = []
    pop, push, add, fields = pending.pop, pending.append, found.append, FIELDS
    while pending:
        node = pop()
        add(node)
        for name in fields[type(node)]:
            value = getattr(node, name)
            if type(value) is list:
                for item in value:
                    if entered[type(item)]:
                        push(item)
            elif entered[type(value)]:
                push(value)
    return found
