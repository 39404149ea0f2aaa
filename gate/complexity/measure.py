"""Per-function cyclomatic complexity by radon's rules, with identities gate builds itself.

radon names a closure in `A.run` and one in `B.run` both `run.x` and drops classes defined inside
functions, so the key is built here from the tree, in Python's own `__qualname__` spelling, and
radon's visitor is needed only for the number of each function node. That number is counted here
in one flat pass over the tree, by the rules of radon's `ComplexityVisitor` (a test holds the two
equal), several times faster than the visitor's recursion; a tree deep enough that the visitor
might run out of stack is handed to radon itself, so such a file fails as it always did.
"""

from __future__ import annotations

import ast
import hashlib
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import radon  # only its version: the visitor is imported when a file is measured

from gate.astwalk import HOLDS_STATEMENTS, PerType, child_statements, node_fields

RADON_VERSION: str = radon.__version__
OPTIONS: dict[str, object] = {"closures": "separate", "no_assert": False}

FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


class FunctionComplexity(NamedTuple):
    """One function's measurement. `key` is `path::Qualname` (with `#2` for a repeat).

    A named tuple, not a frozen dataclass: a warm run rebuilds tens of thousands of these from
    the cache, and a tuple builds several times faster.
    """

    key: str
    path: str
    qualname: str
    complexity: int
    line: int
    column: int
    end_line: int
    body_hash: str

    @property
    def rank(self) -> str:
        from radon.complexity import cc_rank

        return cc_rank(self.complexity)


def _walk(node: ast.AST, prefix: str) -> Iterator[tuple[str, FunctionNode]]:
    for child in child_statements(node):
        if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
            qualname = f"{prefix}{child.name}"
            yield qualname, child
            yield from _walk(child, f"{qualname}.<locals>.")
        elif isinstance(child, ast.ClassDef):
            yield from _walk(child, f"{prefix}{child.name}.")
        elif type(child) in HOLDS_STATEMENTS:
            yield from _walk(child, prefix)


def _flatten(functions: list[Any]) -> Iterator[Any]:
    for function in functions:
        yield function
        yield from _flatten(function.closures)


def _loop(node: Any) -> int:
    return 1 + bool(node.orelse)


def _match(node: Any) -> int:
    # radon counts the cases but one that is a bare capture or `case _` (an "else")
    underscore = any(getattr(case.pattern, "pattern", False) is None for case in node.cases)
    return max(0, len(node.cases) - underscore)


# What each node adds to the function whose code holds it: radon's decision points.
_DECISIONS: dict[type, Any] = {
    ast.Assert: lambda node: 1,
    ast.If: lambda node: 1,
    ast.IfExp: lambda node: 1,
    ast.For: _loop,
    ast.AsyncFor: _loop,
    ast.While: _loop,
    ast.Try: lambda node: len(node.handlers) + bool(node.orelse),
    ast.BoolOp: lambda node: len(node.values) - 1,
    ast.comprehension: lambda node: len(node.ifs) + 1,
    ast.Match: _match,
}

# radon's visitor recurses about three frames per tree level: below this depth it cannot reach
# Python's default recursion limit, so the flat count gives radon's numbers exactly.
SAFE_DEPTH = 200


# (node, depth, the function whose count it adds to: a (line, column) key, None outside one)
_Pending = list[tuple[ast.AST, int, tuple[int, int] | None]]

# Nodes that add nothing and hold no node radon counts: they are never queued.
_LEAVES = frozenset(
    {
        ast.Name,
        ast.Constant,
        ast.Pass,
        ast.Break,
        ast.Continue,
        ast.Global,
        ast.Nonlocal,
        ast.alias,
        *(
            kind
            for base in (ast.operator, ast.boolop, ast.cmpop, ast.unaryop)
            for kind in base.__subclasses__()
        ),
    }
)
_SCOPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef})


class _Visited(dict[type, tuple[tuple[str, ...], tuple[str, ...]]]):
    """The fields of a node type radon visits, as (those holding one value, those holding a
    list), learnt from the first node of the type: a function's or class's body only; an
    `assert`'s nothing (it counts 1 and is not entered)."""

    def __init__(self) -> None:
        super().__init__({kind: ((), ("body",)) for kind in _SCOPES})
        self[ast.Assert] = ((), ())

    def of(self, node: ast.AST) -> tuple[tuple[str, ...], tuple[str, ...]]:
        kind = type(node)
        found = self.get(kind)
        if found is None:
            names = node_fields(kind)
            lists = tuple(name for name in names if type(getattr(node, name)) is list)
            found = self[kind] = (tuple(n for n in names if n not in lists), lists)
        return found


# Whether a value of a type is a node to queue: a node, and not a leaf
_QUEUED = PerType(lambda kind: issubclass(kind, ast.AST) and kind not in _LEAVES)
_VISITED = _Visited()


def _counted_numbers(tree: ast.Module) -> dict[tuple[int, int], int] | None:
    """radon's complexity of every function by (line, column), None when the tree is deeper
    than SAFE_DEPTH. A function counts 1 plus the decision points of its body; a nested
    function or class counts for itself alone; an `assert` counts 1 and is not entered; a
    function's decorators, defaults and annotations and a class's bases count for nothing.

    One loop over the nodes, each node's children queued in place (this runs once per node of
    every file); decisions outside functions are counted for None and dropped."""
    numbers: dict[tuple[int, int] | None, int] = {None: 0}
    pending: _Pending = [(tree, 0, None)]
    pop, push = pending.pop, pending.append
    queued, visited, counted = _QUEUED, _VISITED, _COUNTED
    while pending:
        node, depth, owner = pop()
        if depth > SAFE_DEPTH:
            return None
        kind = type(node)
        if kind in counted:
            owner = counted[kind](node, owner, numbers)
        singles, lists = visited.of(node)
        depth += 1
        for name in singles:
            value = getattr(node, name)
            if queued[type(value)]:
                push((value, depth, owner))
        for name in lists:
            for item in getattr(node, name):
                if queued[type(item)]:
                    push((item, depth, owner))
    del numbers[None]
    return numbers  # type: ignore[return-value]


_Numbers = dict[tuple[int, int] | None, int]
_Owner = tuple[int, int] | None


def _scope(node: ast.AST, owner: _Owner, numbers: _Numbers) -> _Owner:
    """The owner of a function's or class's body: the function (counting 1), none for a class."""
    if type(node) is ast.ClassDef:
        return None
    key = (node.lineno, node.col_offset)  # type: ignore[attr-defined]
    numbers[key] = 1
    return key


def _adding(decisions: Callable[[Any], int]) -> Callable[[ast.AST, _Owner, _Numbers], _Owner]:
    def add(node: ast.AST, owner: _Owner, numbers: _Numbers) -> _Owner:
        numbers[owner] += decisions(node)
        return owner

    return add


# What a node of each counted type does to the count: a decision point adds to its owner's, a
# function or class starts the count its body adds to.
_COUNTED = {kind: _adding(decisions) for kind, decisions in _DECISIONS.items()}
_COUNTED.update(dict.fromkeys(_SCOPES, _scope))


def _radon_numbers(tree: ast.Module) -> dict[tuple[int, int], int]:
    from radon.visitors import ComplexityVisitor

    visitor = ComplexityVisitor.from_ast(tree)
    numbers = {}
    classes = list(visitor.classes)
    for function in _flatten(visitor.functions):
        numbers[(function.lineno, function.col_offset)] = function.complexity
    while classes:
        cls = classes.pop()
        classes.extend(cls.inner_classes)
        for method in _flatten(cls.methods):
            numbers[(method.lineno, method.col_offset)] = method.complexity
    return numbers


def _single(node: FunctionNode) -> int:
    """radon's number for a function radon's module pass dropped (one in a nested class)."""
    from radon.visitors import ComplexityVisitor

    visitor = ComplexityVisitor.from_ast(node)
    for function in visitor.functions:
        if (function.lineno, function.col_offset) == (node.lineno, node.col_offset):
            return function.complexity
    raise LookupError(f"radon did not measure the function at line {node.lineno}")


def _body_hash(node: FunctionNode) -> str:
    parts = [ast.dump(node.args, include_attributes=False)]
    parts.extend(ast.dump(statement, include_attributes=False) for statement in node.body)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def body_hash_at(tree: ast.Module, line: int, column: int) -> str:
    """The body hash of the function whose `def` is at `line`, `column` (1-based, as measured),
    "" when the tree has none there."""
    for _, node in _walk(tree, ""):
        if node.lineno == line and node.col_offset + 1 == column:
            return _body_hash(node)
    return ""


def measure(tree: ast.Module, path: str, hash_floor: int | None = 0) -> list[FunctionComplexity]:
    """Every function and method in the tree, closures included, in source order.

    `path` is the project-relative POSIX path the keys and findings use. Only
    functions above `hash_floor` (the lowest threshold) get a body hash: only those can be new
    crossings worth matching against a vanished baseline entry. With `hash_floor` None none does:
    the ratchet asks `body_hash_at` for the few it needs.
    """
    numbers = _counted_numbers(tree)
    if numbers is None:
        numbers = _radon_numbers(tree)
    seen: Counter[str] = Counter()
    result = []
    for qualname, node in _walk(tree, ""):
        complexity = numbers.get((node.lineno, node.col_offset))
        if complexity is None:
            complexity = _single(node)
        seen[qualname] += 1
        suffix = f"#{seen[qualname]}" if seen[qualname] > 1 else ""
        result.append(
            FunctionComplexity(
                key=f"{path}::{qualname}{suffix}",
                path=path,
                qualname=qualname + suffix,
                complexity=complexity,
                line=node.lineno,
                column=node.col_offset + 1,
                end_line=node.end_lineno or node.lineno,
                body_hash=_body_hash(node)
                if hash_floor is not None and complexity > hash_floor
                else "",
            )
        )
    return result
