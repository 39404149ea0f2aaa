"""The helpers the command line hands to renderers: repo-relative paths, source lines, links."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from gate import git
from gate.fsutil import display_path
from gate.source import decode, source_lines


@dataclass(frozen=True)
class PathView:
    """How a canonical (project-relative) path is shown: relative to the current directory for
    people, relative to the repository's top level for review tools; and where to read it."""

    root: Path
    top: Path

    @classmethod
    def of(cls, root: Path) -> PathView:
        resolved = root.resolve()
        return cls(resolved, (git.toplevel(resolved) or resolved).resolve())

    def absolute(self, path: str) -> Path:
        return self.root / path  # an absolute `path` stays as it is

    def shown(self, path: str) -> str:
        return display_path(self.absolute(path))

    def repo_path(self, path: str) -> str:
        try:
            return self.absolute(path).relative_to(self.top).as_posix()
        except ValueError:
            return Path(path).as_posix()

    def line_text(self, path: str, line: int) -> str:
        return line_text(str(self.absolute(path)), line)


@cache
def _lines(path: str) -> tuple[str, ...]:
    try:
        data = Path(path).read_bytes()
    except OSError:
        return ()
    return tuple(line.rstrip("\r\n") for line in source_lines(decode(data)))


def line_text(path: str, line: int) -> str:
    """Line `line` of the file at `path`, numbered as Python numbers lines ('' when absent)."""
    lines = _lines(path)
    return lines[line - 1] if 0 < line <= len(lines) else ""


def link_function(environ: Mapping[str, str]):
    """Links to a line on GitHub or GitLab when CI says where the code lives, else None."""
    server, repository, sha = (
        environ.get("GITHUB_SERVER_URL"),
        environ.get("GITHUB_REPOSITORY"),
        environ.get("GITHUB_SHA"),
    )
    if server and repository and sha:
        base = f"{server}/{repository}/blob/{sha}"
    elif environ.get("CI_PROJECT_URL") and environ.get("CI_COMMIT_SHA"):
        base = f"{environ['CI_PROJECT_URL']}/-/blob/{environ['CI_COMMIT_SHA']}"
    else:
        return lambda path, line: None
    return lambda path, line: f"{base}/{path}#L{line}"
