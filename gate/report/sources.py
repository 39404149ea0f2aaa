"""The helpers the command line hands to renderers: repo-relative paths, source lines, links."""

from __future__ import annotations

import os
from collections.abc import Mapping
from functools import cache
from pathlib import Path

from gate import git


def repo_path_function(root: Path):
    """A function mapping a shown (cwd-relative) path to a repository-relative POSIX path."""
    top = (git.toplevel(root) or root).resolve()

    def repo_path(path: str) -> str:
        try:
            return Path(os.path.abspath(path)).relative_to(top).as_posix()
        except ValueError:
            return Path(path).as_posix()

    return repo_path


@cache
def _lines(path: str) -> tuple[str, ...]:
    try:
        return tuple(Path(path).read_text(encoding="utf-8", errors="replace").splitlines())
    except OSError:
        return ()


def line_text(path: str, line: int) -> str:
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
