"""Reading a committed baseline file strictly, for both baselines (complexity and findings):
a file gate cannot trust is an error naming the file and the problem, never a silent pass."""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from gate.config import ConfigError

CONFLICT = re.compile(r"^(<{7}|={7}|>{7})( |$)", re.M)

Document = TypeVar("Document", bound=BaseModel)


class BaselineError(ConfigError):
    """A baseline file gate cannot trust; the message names the file and the problem."""


def read_text(path: Path, shown: str) -> str | None:
    """The file's text, None when there is none; raises BaselineError when it cannot be read or
    holds a merge-conflict marker."""
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
    return text


def parse_document(text: str, shown: str, model: type[Document]) -> Document:
    """`text` as a JSON object validated by `model`; raises BaselineError naming the line (bad
    JSON) or the dotted key (unknown keys, wrong types)."""
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
        return model.model_validate(data)
    except ValidationError as error:
        problems = []
        for item in error.errors():
            key = ".".join(str(part) for part in item["loc"]) or "(top level)"
            reason = "unknown key" if item["type"] == "extra_forbidden" else item["msg"]
            problems.append(f"{shown}: {key}: {reason}")
        raise BaselineError("\n".join(problems)) from None


def check_schema(tool: str, schema: int, expected: int, shown: str) -> None:
    """Refuse a file another tool, or another version of this file's format, wrote."""
    if tool != "gate" or schema != expected:
        raise BaselineError(
            f"{shown}: written by {tool} with schema {schema}; this gate reads schema {expected}"
        )


def read_document(path: Path, shown: str, model: type[Document]) -> Document | None:
    """The baseline at `path` validated by `model`, None when there is none; raises
    BaselineError when it is broken."""
    text = read_text(path, shown)
    return None if text is None else parse_document(text, shown, model)


def relative_to(root: Path, path: Path) -> str:
    """`path` relative to the project root, POSIX style, as baselines record paths."""
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except (ValueError, OSError, RuntimeError):
        return path.as_posix()


def judged_paths(
    root: Path, checked: Iterable[str], arguments: Sequence[Path], recorded: Iterable[str]
) -> set[str]:
    """The recorded paths a run judges: the files it checked, plus recorded files under a
    directory argument that are gone (so their entries are seen as stale)."""
    judged = set(checked)
    directories = [relative_to(root, arg) for arg in arguments if arg.is_dir()]
    for path in set(recorded):
        if (root / path).exists():
            continue
        if any(d in (".", "") or path == d or path.startswith(d + "/") for d in directories):
            judged.add(path)
    return judged
