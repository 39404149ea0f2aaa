"""The committed baseline file: read strictly, written byte-identically, atomically."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from gate.baseline_file import BaselineError, check_schema, read_document
from gate.complexity.measure import OPTIONS, RADON_VERSION
from gate.fsutil import atomic_write

SCHEMA_VERSION = 1

__all__ = ["Baseline", "BaselineError", "read_baseline", "render_baseline", "write_baseline"]


class Baseline(BaseModel):
    """`functions` maps `path::Qualname` to the complexity that is allowed for it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    schema_version: int = Field(SCHEMA_VERSION, alias="schema")
    tool: str = "gate"
    radon: str = RADON_VERSION
    options: dict[str, object] = Field(default_factory=lambda: dict(OPTIONS))
    functions: dict[str, int] = Field(default_factory=dict)


def read_baseline(path: Path, shown: str) -> Baseline | None:
    """The baseline at `path`, None when there is none; raises BaselineError when it is broken."""
    baseline = read_document(path, shown, Baseline)
    if baseline is None:
        return None
    check_schema(baseline.tool, baseline.schema_version, SCHEMA_VERSION, shown)
    for key, value in baseline.functions.items():
        if "::" not in key or value < 1:
            raise BaselineError(f"{shown}: functions.{key}: expected 'path::Qualname': count >= 1")
    return baseline


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
