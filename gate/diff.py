"""Diff-aware runs: which lines changed since the merge base of BASE and HEAD."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from gate import git

if TYPE_CHECKING:
    import subprocess
from gate.model import ComplexityDetail, Finding, TeardownDetail

HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@")


class DiffError(Exception):
    """git cannot answer the question `--diff` asks; the message says what to do."""


@dataclass
class ChangedLines:
    """Added or modified lines per file (absolute paths), and the files deleted or renamed away."""

    base: str
    lines: dict[Path, set[int]] = field(default_factory=dict)
    gone: set[Path] = field(default_factory=set)

    def touches(self, path: str, first: int, last: int) -> bool:
        changed = self.lines.get(Path(path).resolve())
        return bool(changed) and any(first <= line <= last for line in changed)


def _git(root: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    completed = git.run(root, *args)
    if completed is None:
        raise DiffError("--diff needs git, and git could not be started")
    return completed


def merge_base(root: Path, base: str) -> str:
    """The merge base of BASE and HEAD; raises DiffError with advice when there is none."""
    if _git(root, "rev-parse", "--git-dir").returncode != 0:
        raise DiffError(f"--diff {base}: {root} is not inside a git repository")
    if _git(root, "rev-parse", "--verify", "-q", f"{base}^{{commit}}").returncode != 0:
        raise DiffError(f"--diff {base}: no such commit or branch (fetch it first?)")
    found = git.merge_base(root, base)
    if found:
        return found
    shallow = _git(root, "rev-parse", "--is-shallow-repository").stdout.decode().strip()
    if shallow == "true":
        raise DiffError(
            f"--diff {base}: no merge base between {base} and HEAD in this shallow clone; fetch "
            "more history (`git fetch --unshallow`, or `fetch-depth: 0` in actions/checkout)"
        )
    raise DiffError(f"--diff {base}: {base} and HEAD have no common history")


def changed_lines(root: Path, base: str) -> ChangedLines:
    """Lines added or changed since the merge base (committed or not), per file."""
    commit = merge_base(root, base)
    top = _git(root, "rev-parse", "--show-toplevel").stdout.decode().strip()
    diff = _git(root, "diff", "-U0", "-M", "--no-color", "--no-ext-diff", commit, "--")
    if diff.returncode != 0:
        raise DiffError(f"--diff {base}: git diff failed: {diff.stderr.decode().strip()}")
    return parse_diff(diff.stdout.decode("utf-8", "surrogateescape"), Path(top), base)


def _header_path(line: str) -> str | None:
    target = line[4:].rstrip("\n")
    if target.endswith("\t"):  # git marks a path with spaces with a trailing tab
        target = target[:-1]
    if target == "/dev/null":
        return None
    if target.startswith('"'):  # a path git still had to quote (a tab, a quote, a newline)
        target = target[1:-1].encode("latin-1", "backslashreplace").decode("unicode_escape")
        target = target.encode("latin-1").decode("utf-8", "surrogateescape")
    return target[2:] if target[:2] in ("a/", "b/") else target


def parse_diff(text: str, top: Path, base: str) -> ChangedLines:
    """The changed lines of a `git diff -U0` output whose paths are relative to `top`."""
    changed = ChangedLines(base)
    current: Path | None = None
    old: str | None = None
    for line in text.splitlines():
        if line.startswith("--- "):
            old = _header_path(line)
        elif line.startswith("+++ "):
            new = _header_path(line)
            current = (top / new).resolve() if new is not None else None
            if new is None and old is not None:
                changed.gone.add((top / old).resolve())
        elif line.startswith("rename from "):
            changed.gone.add((top / line[len("rename from ") :]).resolve())
        elif current is not None:
            _add_hunk(changed, current, line)
    return changed


def _add_hunk(changed: ChangedLines, path: Path, line: str) -> None:
    match = HUNK.match(line)
    if match:
        start, count = int(match.group(1)), int(match.group(2) or "1")
        changed.lines.setdefault(path, set()).update(range(start, start + count))


def _relevant(finding: Finding, changed: ChangedLines, root: Path) -> bool:
    location = finding.location
    detail = finding.detail

    def touched(first: int, last: int | None) -> bool:
        return changed.touches(str(root / location.path), first, last or first)

    if isinstance(detail, ComplexityDetail):
        return touched(location.line, location.end_line) or _file_gone(detail, changed)
    if isinstance(detail, TeardownDetail) and _region_touched(detail, touched):
        return True
    spots = [location, *(item.location for item in finding.related)]
    return any(
        changed.touches(str(root / spot.path), spot.line, spot.end_line or spot.line)
        for spot in spots
    )


def _region_touched(detail: TeardownDetail, touched: Callable[[int, int | None], bool]) -> bool:
    """A teardown is one unit: a change to any line of the region, of a helper it awaits, of an
    await that makes a helper teardown, or of an interrupt point makes its findings new."""
    spans = [*detail.linked_lines, *((at.line, at.end_line) for at in detail.interrupts)]
    if detail.region_lines is not None:
        spans.append(detail.region_lines)
    return any(touched(first, last) for first, last in spans)


def _file_gone(detail: ComplexityDetail, changed: ChangedLines) -> bool:
    """A stale entry of a vanished function counts when its file was deleted or renamed."""
    if not detail.vanished or "::" not in detail.function:
        return False
    old_path = "/" + detail.function.split("::")[0]
    return any(path.as_posix().endswith(old_path) for path in changed.gone)


def keep(findings: Iterable[Finding], changed: ChangedLines, root: Path) -> list[Finding]:
    """The findings a change is responsible for: on a changed line, pointing at one (the
    interrupt point that makes a step skippable), for a teardown finding anywhere in its region
    (or a helper the region awaits, or an await that makes its helper teardown), for a
    function's complexity anywhere in the function; a stale baseline entry counts when its file
    was deleted or renamed. Finding paths are relative to the project `root`."""
    return [finding for finding in findings if _relevant(finding, changed, root)]
