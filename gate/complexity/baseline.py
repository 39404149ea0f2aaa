"""The committed baseline file: read strictly, written byte-identically, atomically."""

from __future__ import annotations

import dataclasses
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from gate.baseline_file import (
    BaselineError,
    check_schema,
    conflict_line,
    conflict_parsed,
    parse_document,
    read_raw,
)
from gate.complexity.measure import OPTIONS, RADON_VERSION
from gate.document import alias
from gate.fsutil import atomic_write

SCHEMA_VERSION = 1

__all__ = ["Baseline", "BaselineError", "read_baseline", "render_baseline", "write_baseline"]


@dataclass(frozen=True)
class Baseline:
    """`functions` maps `path::Qualname` to the complexity that is allowed for it."""

    # read strictly (gate.document): a count written as `true` or `"12"` is a broken baseline
    schema_version: int = field(default=SCHEMA_VERSION, metadata=alias("schema", by_name=False))
    tool: str = "gate"
    radon: str = RADON_VERSION
    options: dict[str, object] = field(default_factory=lambda: dict(OPTIONS))
    functions: dict[str, int] = field(default_factory=dict)


def read_baseline(path: Path, shown: str, merge_conflicts: bool = False) -> Baseline | None:
    """The baseline at `path`, None when there is none; raises BaselineError when it is broken.

    A file with merge-conflict markers is an error, unless `merge_conflicts`: then both sides
    are read and merged (every entry of either side, the lower count where both have one).
    """
    text = read_raw(path, shown)
    if text is None:
        return None
    line = conflict_line(text)
    if line is None:
        return parse_baseline(text, shown)
    if not merge_conflicts:
        raise BaselineError(
            f"{shown}:{line}: merge-conflict marker in the baseline; resolve it, or run "
            "`gate baseline update`, which merges both sides (the lower count where they differ)"
        )
    return merge_conflict(text, shown, line)


def parse_baseline(text: str, shown: str) -> Baseline:
    """A baseline from the file's text; raises BaselineError naming the file and the problem."""
    baseline = parse_document(text, shown, Baseline)
    check_schema(baseline.tool, baseline.schema_version, SCHEMA_VERSION, shown)
    for key, value in baseline.functions.items():
        if "::" not in key or value < 1:
            raise BaselineError(f"{shown}: functions.{key}: expected 'path::Qualname': count >= 1")
    return baseline


def merge_conflict(text: str, shown: str, line: int) -> Baseline:
    """Both sides of a conflicted baseline merged: every entry of either side, the lower count
    where both have one. Raises BaselineError when a side does not parse or the sides were
    measured differently."""
    ours, theirs = conflict_parsed(text, shown, line, parse_baseline)
    where = f"{shown}:{line}"
    if (ours.radon, ours.options) != (theirs.radon, theirs.options):
        raise BaselineError(
            f"{where}: the two sides of the conflict were measured with radon {ours.radon} and "
            f"{theirs.radon}; keep one side, or start over with `gate baseline update "
            "--rebaseline`"
        )
    functions = dict(theirs.functions)
    for key, allowed in ours.functions.items():
        functions[key] = min(allowed, functions.get(key, allowed))
    return dataclasses.replace(ours, functions=functions)


def check_radon_version(baseline: Baseline, shown: str) -> None:
    """Refuse to compare numbers from another radon: its counts are the ratchet's unit."""
    if baseline.radon != RADON_VERSION or baseline.options != OPTIONS:
        raise BaselineError(
            f"{shown}: written with radon {baseline.radon} {baseline.options}, but this gate "
            f"measures with radon {RADON_VERSION} {OPTIONS}; re-baseline deliberately with "
            "`gate baseline update --rebaseline` and review the diff"
        )


def render_baseline(functions: dict[str, int]) -> str:
    """The file's text: sorted keys, one entry per line, a trailing newline, no timestamps."""
    document = {
        "functions": dict(sorted(functions.items())),
        "options": OPTIONS,
        "radon": RADON_VERSION,
        "schema": SCHEMA_VERSION,
        "tool": "gate",
    }
    return json.dumps(document, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_baseline(path: Path, functions: dict[str, int]) -> None:
    atomic_write(path, render_baseline(functions))


def is_current(path: Path, functions: dict[str, int]) -> bool:
    """Does the file hold exactly what `write_baseline(path, functions)` would write?"""
    try:
        return path.read_text(encoding="utf-8") == render_baseline(functions)
    except (OSError, UnicodeDecodeError):
        return False


def key_lines(path: Path) -> dict[str, int]:
    """The line of each function key in the baseline file, for pointing at stale entries."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return {}
    lines = {}
    for number, line in enumerate(text.splitlines(), start=1):
        match = re.match(r'\s*"([^"]*::[^"]*)":', line)
        if match:
            lines[json.loads(f'"{match.group(1)}"')] = number
    return lines
