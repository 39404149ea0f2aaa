"""The checked files and their fixes: read each file with fixable findings in its own encoding,
plan its fixes, show them as a unified diff, or write them atomically."""

from __future__ import annotations

import difflib
import io
import tokenize
from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from gate.analysis.summary import ProjectSummaries
from gate.config import GateConfig
from gate.filters import Selection
from gate.fix.plan import autofix_of
from gate.fix.source import ROUNDS, fix_source
from gate.fsutil import atomic_write
from gate.model import Finding


@dataclass(frozen=True)
class FileFix:
    """One file whose text the fixes change."""

    path: str  # canonical, as findings carry it
    absolute: Path
    encoding: str
    text: str
    fixed: str

    def diff(self, shown: str) -> str:
        """The change as a unified diff, `shown` being the path a person reads."""
        lines = difflib.unified_diff(
            self.text.splitlines(keepends=True),
            self.fixed.splitlines(keepends=True),
            f"a/{shown}",
            f"b/{shown}",
        )
        return "".join(
            line if line.endswith("\n") else line + "\n\\ No newline at end of file\n"
            for line in lines
        )

    def write(self) -> None:
        """Replace the file atomically (through a symlink, the file it points to)."""
        atomic_write(self.absolute.resolve(), self.fixed.encode(self.encoding))


@dataclass
class FixRun:
    """The run's findings, each teardown finding with its Fix where gate planned one, and the
    files the available fixes change."""

    findings: list[Finding]
    files: list[FileFix] = field(default_factory=list)

    def fixed_findings(self) -> list[Finding]:
        changed = {file.path for file in self.files}
        return [
            f
            for f in self.findings
            if f.fix is not None and f.fix.available and f.location.path in changed
        ]

    def unfixable(self) -> list[Finding]:
        return [f for f in self.findings if f.fix is not None and not f.fix.available]


def read_text(path: Path) -> tuple[str, str] | None:
    """The file's text and encoding (PEP 263), or None when it cannot be read or decoded
    exactly: a file gate could not write back byte for byte is left alone."""
    try:
        data = path.read_bytes()
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding), encoding
    except (OSError, SyntaxError, LookupError, UnicodeDecodeError):
        return None


def plan_fixes(
    findings: Iterable[Finding],
    root: Path,
    settings: GateConfig,
    chosen: Selection,
    whole: bool = True,
    summaries: ProjectSummaries | None = None,
) -> FixRun:
    """Every finding, those with a fixing rule given their Fix; the files that change.

    `whole`: the files as `--fix` leaves them, after a fix of a nested function and one of the
    region around it are applied one after the other; otherwise only the first round, which is
    all a review's suggestions can show."""
    findings = list(findings)
    by_path: dict[str, list[Finding]] = defaultdict(list)
    for finding in findings:
        if autofix_of(finding) is not None:
            by_path[finding.location.path].append(finding)
    planned: dict[str, Finding] = {}
    files = []
    for path, reported in sorted(by_path.items()):
        absolute = root / path
        read = read_text(absolute)
        if read is None:
            continue
        text, encoding = read
        rounds = ROUNDS if whole else 1
        result = fix_source(path, text, reported, settings, chosen, rounds, summaries)
        planned.update((f.fingerprint, f) for f in result.findings)
        if result.fixed is not None:
            files.append(FileFix(path, absolute, encoding, text, result.fixed))
    return FixRun([planned.get(f.fingerprint, f) for f in findings], files)
