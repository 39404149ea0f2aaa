"""Reading a committed baseline file strictly, for both baselines (complexity and findings):
a file gate cannot trust is an error naming the file and the problem, never a silent pass."""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import TypeVar

from gate.config import ConfigError
from gate.document import DocumentError, read_document

CONFLICT = re.compile(r"^(<{7}|\|{7}|={7}|>{7})( |\r?$)", re.M)

Document = TypeVar("Document")


class BaselineError(ConfigError):
    """A baseline file gate cannot trust; the message names the file and the problem."""


def read_raw(path: Path, shown: str) -> str | None:
    """The file's text, None when there is none; raises BaselineError when it cannot be read."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as error:
        raise BaselineError(f"{shown}: cannot read the baseline: {error}") from None


def conflict_line(text: str) -> int | None:
    """The line of the first merge-conflict marker, None when there is none."""
    conflict = CONFLICT.search(text)
    return None if conflict is None else text.count("\n", 0, conflict.start()) + 1


def conflict_parsed(
    text: str, shown: str, line: int, parse: Callable[[str, str], Document]
) -> tuple[Document, Document]:
    """Each side of a conflicted baseline, parsed with `parse(text, shown)`; raises
    BaselineError when the markers do not nest as git writes them or a side does not parse."""
    where = f"{shown}:{line}"
    sides = conflict_sides(text)
    if sides is None:
        raise BaselineError(
            f"{where}: merge-conflict markers that do not nest as git writes them; resolve the "
            "conflict by hand"
        )
    parsed = []
    for name, side in zip(("our", "their"), sides, strict=True):
        try:
            parsed.append(parse(side, f"{shown} ({name} side of the conflict)"))
        except BaselineError as error:
            raise BaselineError(
                f"{error}\n{where}: cannot merge the conflict; resolve it by hand"
            ) from None
    return parsed[0], parsed[1]


def conflict_sides(text: str) -> tuple[str, str] | None:
    """The file as each side of a merge wrote it (diff3's base section dropped), or None
    when the markers do not nest as git writes them."""
    ours: list[str] = []
    theirs: list[str] = []
    section = "both"
    # (section, marker) -> next section; a marker anywhere else is malformed
    moves = {
        ("both", "<"): "ours",
        ("ours", "|"): "base",
        ("ours", "="): "theirs",
        ("base", "="): "theirs",
        ("theirs", ">"): "both",
    }
    for line in text.split("\n"):
        marker = CONFLICT.match(line)
        if marker is not None:
            next_section = moves.get((section, marker.group(1)[0]))
            if next_section is None:
                return None
            section = next_section
            continue
        if section in ("both", "ours"):
            ours.append(line)
        if section in ("both", "theirs"):
            theirs.append(line)
    return ("\n".join(ours), "\n".join(theirs)) if section == "both" else None


def parse_document(text: str, shown: str, model: type[Document]) -> Document:
    """`text` as a JSON object read strictly into the dataclass `model`; raises BaselineError
    naming the line (bad JSON) or the dotted key (unknown keys, wrong types)."""
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
        return read_document(model, data)
    except DocumentError as error:
        problems = []
        for problem in error.problems:
            key = ".".join(str(part) for part in problem.location) or "(top level)"
            reason = "unknown key" if problem.kind == "extra_forbidden" else problem.message
            problems.append(f"{shown}: {key}: {reason}")
        raise BaselineError("\n".join(problems)) from None


def check_schema(tool: str, schema: int, expected: int, shown: str) -> None:
    """Refuse a file another tool, or another version of this file's format, wrote."""
    if tool != "gate" or schema != expected:
        raise BaselineError(
            f"{shown}: written by {tool} with schema {schema}; this gate reads schema {expected}"
        )


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
