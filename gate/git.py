"""The few git questions gate asks; each answers None when git cannot (no repo, no history)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import subprocess


def run(root: Path, *args: str) -> subprocess.CompletedProcess[bytes] | None:
    """git's answer in `root`, paths unquoted; None when git cannot be started."""
    import subprocess  # most runs never ask git

    try:
        return subprocess.run(
            ["git", "-c", "core.quotePath=false", *args], cwd=root, capture_output=True, check=False
        )
    except OSError:
        return None


def _git(root: Path, *args: str) -> bytes | None:
    completed = run(root, *args)
    return completed.stdout if completed is not None and completed.returncode == 0 else None


def toplevel(path: Path) -> Path | None:
    out = _git(path, "rev-parse", "--show-toplevel")
    return Path(out.decode().strip()) if out else None


def last_commit(root: Path, relative: str) -> str | None:
    """The newest commit that touched `relative` (a path relative to `root`)."""
    out = _git(root, "log", "-1", "--format=%H", "--", relative)
    return out.decode().strip() or None if out is not None else None


def ls_files(directory: Path) -> bytes | None:
    """NUL-separated files git would track under `directory`: tracked, and untracked but not
    ignored."""
    return _git(
        directory, "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."
    )


def head(root: Path) -> str | None:
    out = _git(root, "rev-parse", "--verify", "-q", "HEAD")
    return out.decode().strip() or None if out is not None else None


def merge_base(root: Path, base: str, tip: str = "HEAD") -> str | None:
    out = _git(root, "merge-base", base, tip)
    return out.decode().strip() or None if out is not None else None


def show(root: Path, commit: str, relative: str) -> bytes | None:
    """A file's bytes at a commit; `relative` is relative to `root`."""
    return _git(root, "show", f"{commit}:./{relative}")


def renames(root: Path, commit: str) -> dict[str, str]:
    """Files renamed between `commit` and the working tree, as {old: new}, relative to `root`.

    Paths come back relative to the repository top; they are made relative to `root`.
    """
    top = toplevel(root)
    out = _git(root, "diff", "-M", "--name-status", "-z", commit, "--", ".")
    if top is None or out is None:
        return {}
    prefix = root.resolve().relative_to(top.resolve()).as_posix()
    prefix = "" if prefix == "." else prefix + "/"
    fields = out.decode("utf-8", "surrogateescape").split("\0")
    found: dict[str, str] = {}
    index = 0
    while index < len(fields) and fields[index]:
        status = fields[index]
        if status.startswith(("R", "C")):
            old, new = fields[index + 1], fields[index + 2]
            if status.startswith("R") and old.startswith(prefix) and new.startswith(prefix):
                found[old[len(prefix) :]] = new[len(prefix) :]
            index += 3
        else:
            index += 2
    return found


def renamed_away(root: Path, commit: str, gone: set[str]) -> dict[str, str]:
    """The files of `gone` (paths relative to `root`) that git reports as renamed since
    `commit`, as {old: new}."""
    return {old: new for old, new in renames(root, commit).items() if old in gone}


def ignores(path: Path) -> bool:
    """Does the repository around `path` ignore it (a vendored tree in an ignored folder)?"""
    directory = path if path.is_dir() else path.parent
    completed = run(directory, "check-ignore", "-q", "--", str(path.resolve()))
    return completed is not None and completed.returncode == 0
