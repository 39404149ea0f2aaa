"""The data every check returns and every renderer reads.

A finding's path is its canonical, project-relative POSIX path, decided once in discovery; the
path a person sees (relative to the current directory) and the repository-relative URI review
tools want are derived when rendering, so nothing here depends on the working directory.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import Enum


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


class Family(str, Enum):
    """What a rule is about; renderers and filters route on this, never on a code's spelling."""

    TEARDOWN = "teardown"
    COMPLEXITY = "complexity"
    FILE = "file"
    RUFF = "ruff"  # ruff's findings, run under the gate: codes, names and noqa are ruff's


@dataclass(frozen=True, order=True)
class Location:
    """A 1-based line and column (in code points) in a file, with an optional end."""

    path: str
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None


# The message of a related location that is an interrupt point: the file pass reads it back to
# report one error per interrupt
INTERRUPT_POINT = "interrupt point"


@dataclass(frozen=True)
class Related:
    """A second place that explains a finding, such as the interrupt point that skips a step."""

    location: Location
    message: str


@dataclass(frozen=True)
class TeardownDetail:
    """Where a teardown finding can be interrupted: the interrupt points that make it happen
    (for an awaited step cut short, the step itself), the first and last lines of its region,
    and `linked_lines`, other code of the same file whose change makes the finding new in a
    change: the helpers the region awaits, and for a helper, the awaits that make it teardown."""

    interrupts: tuple[Location, ...] = ()
    region_lines: tuple[int, int] | None = None
    linked_lines: tuple[tuple[int, int], ...] = ()


@dataclass(frozen=True)
class ComplexityDetail:
    """What the complexity table shows for one function. `complexity` is None for a baselined
    function that no longer exists; `before` is its value before this change, when git knows."""

    function: str
    complexity: int | None
    threshold: int | None = None
    baseline: int | None = None
    before: int | None = None

    @property
    def vanished(self) -> bool:
        return self.complexity is None


@dataclass(frozen=True)
class RuffEdit:
    """Replace the text from (line, column) up to (end_line, end_column), 1-based code points,
    the end exclusive, with `content`."""

    content: str
    line: int
    column: int
    end_line: int
    end_column: int


@dataclass(frozen=True)
class RuffFix:
    """The fix ruff offers: `applicability` is ruff's (safe, unsafe, display)."""

    applicability: str
    message: str | None
    edits: tuple[RuffEdit, ...]


@dataclass(frozen=True)
class RuffDetail:
    """What ruff says about a finding of its own beyond the message: its rule's documentation
    page and its fix, when it has them."""

    url: str | None = None
    fix: RuffFix | None = None


Detail = TeardownDetail | ComplexityDetail | RuffDetail


@dataclass(frozen=True)
class Fix:
    """gate's rewrite of the teardown region a finding is in, or why there is none.

    Lines `start_line`..`end_line` (1-based, whole lines: those the rewrite changes, or the
    region's when there is no rewrite) read `original` and become `replacement`;
    `replacement` is None when no rewrite is safe, and `note` then says why (otherwise, what the
    rewrite does). `where` names the region ("finally block of `Orchestrator.run`"); `lost` the
    steps its findings show can be skipped or cut short. Every finding of one region carries
    the same Fix.
    """

    start_line: int
    end_line: int
    original: str
    replacement: str | None
    note: str
    where: str = ""
    lost: tuple[str, ...] = ()

    @property
    def available(self) -> bool:
        return self.replacement is not None


@dataclass(frozen=True)
class Finding:
    """One reported problem.

    `anchor` is what identifies the finding without line numbers (the enclosing function's
    qualname and the reported source text); the fingerprint is derived from it and the canonical
    path so that it survives code moving up or down the file and any change of working directory.
    """

    code: str
    name: str
    family: Family
    severity: Severity
    location: Location
    message: str
    anchor: str = ""
    related: tuple[Related, ...] = ()
    detail: Detail | None = None
    fix: Fix | None = None

    @property
    def fingerprint(self) -> str:
        text = "\x1f".join((self.code, self.location.path, self.anchor))
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.location.path, self.location.line, self.location.column, self.code)
