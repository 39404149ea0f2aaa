"""The data every check returns and every reporter renders."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from enum import Enum


class Severity(str, Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True, order=True)
class Location:
    """A 1-based line and column (in code points) in a file, with an optional end."""

    path: str
    line: int
    column: int
    end_line: int | None = None
    end_column: int | None = None


@dataclass(frozen=True)
class Related:
    """A second place that explains a finding, such as the interrupt point that skips a step."""

    location: Location
    message: str


@dataclass(frozen=True)
class Finding:
    """One reported problem.

    `anchor` is what identifies the finding without line numbers (the enclosing function's
    qualname and the reported source text); the fingerprint is derived from it so that it
    survives code moving up or down the file.
    """

    code: str
    name: str
    severity: Severity
    location: Location
    message: str
    anchor: str = ""
    related: tuple[Related, ...] = ()
    extra: dict[str, object] = field(default_factory=dict, compare=False, hash=False)

    @property
    def fingerprint(self) -> str:
        text = "\x1f".join((self.code, self.location.path, self.anchor))
        return hashlib.sha256(text.encode()).hexdigest()[:32]

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.location.path, self.location.line, self.location.column, self.code)
