"""What every renderer receives."""

from __future__ import annotations

from dataclasses import dataclass

from gate.model import Finding


@dataclass(frozen=True)
class ReportContext:
    findings: tuple[Finding, ...]
    files: int
    color: bool = False
