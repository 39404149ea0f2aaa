"""One home for "does this `except` clause catch cancellation?", asked by both parsers.

Each parser reduces a handler's type expression to the final names it lists (`None` for a bare
`except:`, `name()` for a call such as `anyio.get_cancelled_exc_class()`); the predicate is
decided here once.
"""

from __future__ import annotations

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
