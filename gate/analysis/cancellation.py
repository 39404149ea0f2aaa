"""One home for "does this `except` clause catch cancellation?", asked by both parsers.

Each parser reduces a handler's type expression to the final names it lists (`None` for a bare
`except:`, `name()` for a call such as `anyio.get_cancelled_exc_class()`); the predicate is
decided here once.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar

CANCEL_NAMES = frozenset({"CancelledError", "Cancelled", "BaseException"})
CANCEL_CALLS = frozenset({"get_cancelled_exc_class()"})
LEVEL_TRIGGERED_LIBRARIES = frozenset({"trio", "anyio"})

# trio/anyio scopes that shield what they enclose when opened with `shield=` (not literally False)
SHIELD_SCOPES = frozenset({"CancelScope", "move_on_after", "move_on_at", "fail_after", "fail_at"})


# The module-level names of the module being analysed that stand for exception classes, with
# the final names they may hold (see `exception_aliases`); set by `aliases_in_force`.
_ALIASES: ContextVar[dict[str, tuple[str, ...]] | None] = ContextVar("aliases", default=None)

Aliases = tuple[tuple[str, tuple[str, ...]], ...]

# The lines of `except` clauses and `suppress(` calls, and the constants they name
_CLAUSES = re.compile(rb"(?m)^[ \t]*except\b[^\n]*|suppress\([^\n]*")
_CONSTANTS = re.compile(rb"\b[A-Z][A-Z0-9_]+\b")


def exception_aliases(tree: ast.Module, data: bytes) -> Aliases:
    """The module's constants (upper-case names) bound to an exception class or a tuple of them
    (`CLIENT_EXCEPTIONS = (Exception, asyncio.CancelledError)`), with every final name each
    binding lists: a name bound in both arms of an `if` (psycopg's `if True:  # ASYNC` ...
    `else:`) may hold either, so it lists both. Read wherever they are bound (module, class or
    function body), and only for the constants an `except` or a `suppress(...)` names (`data`
    is the module's source: most modules name none, and are not walked). Sorted, so that it can
    key a cache."""
    used = {
        name.decode() for clause in _CLAUSES.findall(data) for name in _CONSTANTS.findall(clause)
    }
    if not used:
        return ()
    found: dict[str, set[str]] = {}
    for node in ast.walk(tree):
        for name, listed in _bound_classes(node, used):
            found.setdefault(name, set()).update(listed)
    return tuple(sorted((name, tuple(sorted(names))) for name, names in found.items()))


def _bound_classes(node: ast.AST, used: set[str]) -> list[tuple[str, list[str]]]:
    """(name, final class names) for each of `used` that `node` binds to classes."""
    if isinstance(node, ast.Assign):
        targets, value = node.targets, node.value
    elif isinstance(node, ast.AnnAssign) and node.value is not None:
        targets, value = [node.target], node.value
    else:
        return []
    names = [t.id for t in targets if isinstance(t, ast.Name) and t.id in used]
    listed = _class_names(value) if names else None
    return [(name, listed) for name in names] if listed else []


def _class_names(node: ast.expr) -> list[str] | None:
    """The final names of `Name`, `a.Name` or a tuple of them; None for anything else."""
    elements = node.elts if isinstance(node, ast.Tuple) else [node]
    names = [_final_class_name(element) for element in elements]
    if not names or None in names:
        return None
    return names  # type: ignore[return-value]


def _final_class_name(node: ast.expr) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    return node.id if isinstance(node, ast.Name) else None


@contextmanager
def aliases_in_force(aliases: Aliases) -> Iterator[None]:
    """Let the predicates below read a module's exception aliases while it is analysed."""
    token = _ALIASES.set(dict(aliases))
    try:
        yield
    finally:
        _ALIASES.reset(token)


def _expanded(names: Iterable[str | None]) -> list[str | None]:
    aliases = _ALIASES.get()
    if aliases is None:
        return list(names)
    return [held for name in names for held in (aliases.get(name or "") or (name,))]


def catches_cancellation(names: Iterable[str | None]) -> bool:
    """True when a handler catching these names catches cancellation.

    `names` are the final names of the handler's type expression (a tuple lists several); None
    stands for a bare `except:`. A module-level alias counts for what it may hold.
    """
    return any(
        name is None or name in CANCEL_NAMES or name in CANCEL_CALLS for name in _expanded(names)
    )


def catches_only_cancellation(names: Iterable[str | None]) -> bool:
    """True when a handler catching these names catches cancellation and nothing else (not a
    bare `except:` or `BaseException`, which any error enters)."""
    listed = _expanded(names)
    return bool(listed) and all(
        name is not None
        and name != "BaseException"
        and (name in CANCEL_NAMES or name in CANCEL_CALLS)
        for name in listed
    )


def opens_shield(scope_name: str | None, shield_values: Iterable[bool | None]) -> bool:
    """Does a `with` item shield: a trio/anyio scope (`scope_name`, its final name) opened with
    `shield=` anything but a literal False (`shield=pending` shields when it matters)?

    `shield_values` lists each `shield=` keyword's value: False for a literal False, True for a
    literal True, None for any other expression."""
    return scope_name in SHIELD_SCOPES and any(value is not False for value in shield_values)


_IMPORTS_ASYNCIO = re.compile(
    r"^[ \t]*(?:import[ \t]+[^#\n]*(?<![\w.])asyncio(?!\w)|from[ \t]+asyncio\b)", re.MULTILINE
)


def imports_asyncio(text: str) -> bool:
    """Does the module import asyncio (at any level)?"""
    return "asyncio" in text and _IMPORTS_ASYNCIO.search(text) is not None
