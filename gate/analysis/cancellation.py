"""One home for "does this `except` clause catch cancellation?", asked by both parsers.

Each parser reduces a handler's type expression to the final names it lists (`None` for a bare
`except:`, `name()` for a call such as `anyio.get_cancelled_exc_class()`); the predicate is
decided here once.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

CANCEL_NAMES = frozenset({"CancelledError", "Cancelled", "BaseException"})
CANCEL_CALLS = frozenset({"get_cancelled_exc_class()"})
LEVEL_TRIGGERED_LIBRARIES = frozenset({"trio", "anyio"})

# trio/anyio scopes that shield what they enclose when opened with `shield=` (not literally False)
SHIELD_SCOPES = frozenset({"CancelScope", "move_on_after", "move_on_at", "fail_after", "fail_at"})


def catches_cancellation(names: Iterable[str | None]) -> bool:
    """True when a handler catching these names catches cancellation.

    `names` are the final names of the handler's type expression (a tuple lists several); None
    stands for a bare `except:`.
    """
    return any(name is None or name in CANCEL_NAMES or name in CANCEL_CALLS for name in names)


def catches_only_cancellation(names: Iterable[str | None]) -> bool:
    """True when a handler catching these names catches cancellation and nothing else (not a
    bare `except:` or `BaseException`, which any error enters)."""
    listed = list(names)
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
