"""Per-function cyclomatic complexity from radon's visitor, with identities gate builds itself.

radon names a closure in `A.run` and one in `B.run` both `run.x` and drops classes defined inside
functions, so the key is built here from the tree, in Python's own `__qualname__` spelling, and
radon is asked only for the number of each function node.
"""

from __future__ import annotations

import ast
import hashlib
from collections import Counter
from collections.abc import Iterator
from typing import Any, NamedTuple

import radon  # only its version: the visitor is imported when a file is measured

from gate.astwalk import child_statements

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
        else:
            yield from _walk(child, prefix)


def _flatten(functions: list[Any]) -> Iterator[Any]:
    for function in functions:
        yield function
        yield from _flatten(function.closures)


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


def measure(tree: ast.Module, path: str, hash_floor: int = 0) -> list[FunctionComplexity]:
    """Every function and method in the tree, closures included, in source order.

    `path` is the project-relative POSIX path the keys and findings use. Only
    functions above `hash_floor` (the lowest threshold) get a body hash: only those can be new
    crossings worth matching against a vanished baseline entry.
    """
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
                body_hash=_body_hash(node) if complexity > hash_floor else "",
            )
        )
    return result
