"""Which files a run checks, and the one canonical path each is known by.

Every file gets its project-relative POSIX path here, once; findings, cache keys, baselines and
fingerprints use it, so nothing depends on the working directory. Display paths are derived
when rendering.
"""

from __future__ import annotations

import fnmatch
import functools
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from gate import git
from gate.config import DEFAULT_EXCLUDE, LoadedConfig


class UsageError(Exception):
    """A path or option the user gave that gate cannot use."""


@dataclass(frozen=True)
class SourceFile:
    """One file to check: `path` to read it, `relative` its canonical project-relative POSIX
    path (absolute for a file outside the project)."""

    path: Path
    relative: str


@dataclass(frozen=True)
class Discovered:
    """The files to check, and how many were found but left out by `[tool.gate] exclude`."""

    files: list[SourceFile]
    excluded: int


def _git_files(directory: Path) -> list[Path] | None:
    """Files git would track under `directory` (tracked + untracked, not ignored), or None when
    git does not manage it (no repository, or a repository whose ignore rules cover the
    directory itself: a vendored tree the user named on purpose)."""
    listed = git.ls_files(directory)
    if listed is None or (not listed and git.ignores(directory)):
        return None
    names = listed.decode("utf-8", "surrogateescape").split("\0")
    return [directory / name for name in names if name]


def _walk_files(directory: Path) -> list[Path]:
    """Every file below `directory`, pruning tool and build directories below it (never the
    directory itself, which the user named)."""
    found = []
    for root, dirs, files in os.walk(directory, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in DEFAULT_EXCLUDE)
        found.extend(Path(root) / name for name in sorted(files))
    return found


def matches(relative: str, patterns: Sequence[str]) -> bool:
    """Does a glob match the path, one of its parent directories, or its file name?"""
    parts = relative.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(
        fnmatch.fnmatchcase(prefix, pattern) or fnmatch.fnmatchcase(parts[-1], pattern)
        for pattern in patterns
        for prefix in prefixes
    )


class _Placer:
    """A found file's real path (to spot two links to one file) and canonical path. Symlinks
    are resolved only where there is one: resolving every path component of every file is slow
    on big trees."""

    def __init__(self, root: Path) -> None:
        self.root = os.path.realpath(root)

    def place(self, path: Path, base: Path | None = None) -> tuple[str, str]:
        """The file's real path, and its canonical path: the path of the name itself (a link
        keeps its own name) in the real directory that holds it."""
        if base is None or os.path.islink(path):
            real = os.path.realpath(path)
            named = os.path.join(self._real(path.parent), path.name)
        else:
            real = named = os.path.join(self._real(base), os.path.relpath(path, base))
        return real, self.relative(named)

    def relative(self, real: str) -> str:
        relative = os.path.relpath(real, self.root).replace(os.sep, "/")
        return Path(real).as_posix() if relative.startswith("../") else relative

    @functools.cache  # noqa: B019 - one placer per run, a handful of bases
    def _real(self, base: Path) -> str:
        return os.path.realpath(base)


def discover(paths: Sequence[Path], loaded: LoadedConfig) -> Discovered:
    """The files to check under `paths`, honouring .gitignore and include/exclude.

    A path named on the command line is always looked at, even when an ignore rule or a
    default-pruned name (`build`, `venv`, ...) covers it; below it those rules apply. Raises
    UsageError for a path that does not exist.
    """
    settings = loaded.settings
    placer = _Placer(loaded.root)
    seen: set[str] = set()
    files: list[SourceFile] = []
    excluded = 0

    def add(path: Path, base: Path | None) -> None:
        nonlocal excluded
        explicit = base is None
        if not explicit and not matches(path.name, settings.include):
            return
        real, relative = placer.place(path, base)
        if real in seen or (not explicit and os.path.isdir(real)):
            return  # a second link to one file; a symlink to a directory is not followed
        if settings.exclude and matches(relative, settings.exclude):
            excluded += 1
            return
        seen.add(real)
        files.append(SourceFile(path, relative))

    for path in paths:
        if path.is_dir():
            listed = _git_files(path)
            candidates = listed if listed is not None else _walk_files(path)
            for candidate in sorted(candidates):
                add(candidate, path)
        elif os.path.lexists(path):
            add(path, None)
        else:
            raise UsageError(f"{path}: no such file or directory")
    return Discovered(files, excluded)
