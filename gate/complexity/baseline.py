"""The committed baseline file: read strictly, written byte-identically, atomically."""

from __future__ import annotations

import json
import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gate.complexity.measure import OPTIONS, RADON_VERSION
from gate.config import ConfigError
from gate.fsutil import atomic_write

SCHEMA_VERSION = 1
CONFLICT = re.compile(r"^(<{7}|={7}|>{7})( |$)", re.M)


class BaselineError(ConfigError):
    """A baseline file gate cannot trust; the message names the file and the problem."""


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
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise BaselineError(f"{shown}: cannot read the baseline: {error}") from None
    conflict = CONFLICT.search(text)
    if conflict:
        line = text.count("\n", 0, conflict.start()) + 1
        raise BaselineError(
            f"{shown}:{line}: merge-conflict marker in the baseline; resolve it, or regenerate "
            "the file with `gate baseline update`"
        )
    try:
        data = json.loads(text)
    except json.JSONDecodeError as error:
        raise BaselineError(
            f"{shown}:{error.lineno}: the baseline is not valid JSON ({error.msg}, column "
            f"{error.colno})"
        ) from None
    if not isinstance(data, dict):
        raise BaselineError(f"{shown}: the baseline must be a JSON object")
    try:
        baseline = Baseline.model_validate(data)
    except ValidationError as error:
        problems = []
        for item in error.errors():
            key = ".".join(str(part) for part in item["loc"]) or "(top level)"
            reason = "unknown key" if item["type"] == "extra_forbidden" else item["msg"]
            problems.append(f"{shown}: {key}: {reason}")
        raise BaselineError("\n".join(problems)) from None
    if baseline.tool != "gate" or baseline.schema_version != SCHEMA_VERSION:
        raise BaselineError(
            f"{shown}: written by {baseline.tool} with schema {baseline.schema_version}; this "
            f"gate reads schema {SCHEMA_VERSION}"
        )
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
