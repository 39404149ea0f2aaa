"""What the ratchet finds when it compares measurements with the baseline, as frozen facts; the
complexity rules (over threshold, regressed, stale) judge them."""

from __future__ import annotations

from dataclasses import dataclass

from gate.complexity.measure import FunctionComplexity
from gate.model import Location, Severity


@dataclass(frozen=True)
class Judged:
    """A measured function with what it is measured against.

    `allowed` is its baseline entry (None when it has none); `before` its complexity before this
    change (None when it did not exist), meaningful only when `history_known`;
    `likely_rename_of` a vanished baselined function with an identical body, allowed
    `rename_allowance`.
    """

    function: FunctionComplexity
    threshold: int
    allowed: int | None
    before: int | None = None
    history_known: bool = False
    likely_rename_of: str | None = None
    rename_allowance: int | None = None

    @property
    def location(self) -> Location:
        """The def line, spanning to the function's last line (for diff-aware runs)."""
        function = self.function
        return Location(function.path, function.line, function.column, function.end_line)


@dataclass(frozen=True)
class Vanished:
    """A baselined function that no longer exists; `location` is its line in the baseline."""

    key: str
    allowed: int
    location: Location
    renamed_to: str | None = None


@dataclass(frozen=True)
class RatchetFacts:
    """What the complexity rules judge: every measured function, the vanished baseline
    entries, and how severe a stale entry is."""

    judged: tuple[Judged, ...]
    vanished: tuple[Vanished, ...]
    stale_severity: Severity
