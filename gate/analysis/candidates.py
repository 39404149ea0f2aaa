"""Which functions can hold a teardown region, decided by a cheap `ast` pass (no libcst)."""

from __future__ import annotations

import ast
import fnmatch
from dataclasses import dataclass

from gate.analysis.cancellation import LEVEL_TRIGGERED_LIBRARIES, catches_cancellation
from gate.astwalk import child_statements
from gate.config import TeardownConfig


@dataclass(frozen=True)
class FunctionSpan:
    """A function as the `ast` pass sees it: where it is, and whether it can hold a region."""

    qualname: str
    class_qualname: str | None
    name: str
    is_async: bool
    first_line: int  # the `def` line (decorators excluded)
    last_line: int
    indented: bool
    has_region_syntax: bool


def _final_names(node: ast.expr | None) -> list[str | None]:
    """The names a handler's type expression lists, for `catches_cancellation`."""
    if node is None:
        return [None]
    if isinstance(node, ast.Tuple):
        return [name for element in node.elts for name in _final_names(element)]
    if isinstance(node, ast.Call):
        return [f"{_final_name(node.func)}()"]
    return [_final_name(node)]


def _final_name(node: ast.expr) -> str:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else ""


def handler_catches_cancellation(handler: ast.ExceptHandler) -> bool:
    return catches_cancellation(_final_names(handler.type))


def _has_region_syntax(function: ast.AST) -> bool:
    """A `finally:`, or an `except` clause of any kind (a cancellation handler is a region; one
    narrower than cancellation may hold cleanup a cancel bypasses), in the function's own code
    (not nested defs)."""
    pending = list(child_statements(function))
    while pending:
        node = pending.pop()
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        if isinstance(node, ast.Try | _TRY_STAR) and (node.finalbody or node.handlers):
            return True
        pending.extend(child_statements(node))
    return False


_TRY_STAR: type = getattr(ast, "TryStar", ast.Try)


def _imported(node: ast.Import | ast.ImportFrom) -> set[str]:
    """The top-level packages an import statement names (relative imports name none)."""
    if isinstance(node, ast.Import):
        return {alias.name.split(".")[0] for alias in node.names}
    return {node.module.split(".")[0]} if node.module and not node.level else set()


def index_functions(tree: ast.Module) -> tuple[list[FunctionSpan], bool]:
    """Every function with its `__qualname__`, and whether the module imports trio or anyio."""
    spans: list[FunctionSpan] = []
    libraries: set[str] = set()

    def walk(node: ast.AST, prefix: str, owner: str | None) -> None:
        for child in child_statements(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                qualname = prefix + child.name
                is_async = isinstance(child, ast.AsyncFunctionDef)
                spans.append(
                    FunctionSpan(
                        qualname,
                        owner,
                        child.name,
                        is_async,
                        child.lineno,
                        child.end_lineno or child.lineno,
                        child.col_offset > 0,
                        is_async and _has_region_syntax(child),
                    )
                )
                walk(child, f"{qualname}.<locals>.", None)
            elif isinstance(child, ast.ClassDef):
                qualname = prefix + child.name
                walk(child, f"{qualname}.", qualname)
            elif isinstance(child, ast.Import | ast.ImportFrom):
                libraries.update(_imported(child))
            else:
                walk(child, prefix, owner)

    walk(tree, "", None)
    return spans, bool(libraries & LEVEL_TRIGGERED_LIBRARIES)


def is_candidate(span: FunctionSpan, config: TeardownConfig) -> bool:
    """Can this function hold a teardown region (before following awaited helpers)?"""
    return span.is_async and (
        span.has_region_syntax
        or span.name == "__aexit__"
        or configured(span, config)
        or span.name in config.teardown_methods
    )


def configured(span: FunctionSpan, config: TeardownConfig) -> bool:
    return any(fnmatch.fnmatchcase(span.qualname, pattern) for pattern in config.teardown_functions)
