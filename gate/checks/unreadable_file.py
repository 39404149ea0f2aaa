"""# GATE901 unreadable-file

## What it does
Reports a file gate was asked to check but could not read: permission denied, a broken symlink, a
symlink loop, or a path that vanished while gate ran.

## Why is this bad?
A file that is silently skipped is a file that is silently unchecked. Reporting it keeps the run
honest: the gate fails until the file can be read or is excluded on purpose.

## Example
A file with mode `000`, or `a.py -> b.py -> a.py`, named on the command line or found in a
directory. gate reports `a.py:1:1: GATE901 cannot read file: Too many levels of symbolic links`.

## Use instead
Fix the permissions or the link, or exclude the path in `[tool.gate] exclude`.

## Known problems
Directories are not followed through symlinks at all (which is how gate avoids directory loops);
only symlinked files are read.

## Options
`tool.gate.exclude`.
"""

from __future__ import annotations

from gate.model import Family, Finding, Location, Severity
from gate.rule import Rule


def finding(path: str, reason: str) -> Finding:
    """The finding for a file that could not be read, and why."""
    return RULE.finding(Location(path, 1, 1), f"cannot read file: {reason}", "unreadable")


RULE = Rule(
    code="GATE901",
    name="unreadable-file",
    summary="A file gate was asked to check could not be read",
    family=Family.FILE,
    severity=Severity.ERROR,
    doc=__doc__ or "",
    fix="Fix the file's permissions or symlink, or exclude it in [tool.gate] exclude.",
)
