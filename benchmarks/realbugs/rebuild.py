"""Rebuild the buggy and fixed file of every real-bug case from fetched mirrors.

    .venv/bin/python benchmarks/realbugs/rebuild.py [--mirrors DIR] [--out DIR] [--only ID,...]

The cases live in cases.toml beside this script as metadata only (repository, commits, path,
function, lines, why). Their code is never committed: this script reads it from the git mirrors
that the search tool's `fetch github:OWNER/NAME` leaves under /work/.mirror/OWNER+NAME/, and writes

    OUT/<case id>/buggy/<path>     the file at the buggy commit
    OUT/<case id>/fixed/<path>     the file at the fixed commit

OUT defaults to a directory in the system's temporary folder, outside any git checkout. Every
case is checked on the way: the commit exists, the path exists at it, the function exists in that
version, and the buggy lines fall inside the buggy function. Problems exit 2 with one line each.
"""

from __future__ import annotations

import argparse
import ast
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - gate supports 3.10, whose tomllib is the tomli package
    import tomli as tomllib

HERE = Path(__file__).resolve().parent
DEFAULT_CASES = HERE / "cases.toml"
DEFAULT_MIRRORS = Path("/work/.mirror")
DEFAULT_OUT = Path(tempfile.gettempdir()) / "gate-realbugs"
VERSIONS = ("buggy", "fixed")

REQUIRED_KEYS = {
    "id",
    "repository",
    "fix_commit",
    "buggy_commit",
    "fixed_commit",
    "path",
    "function",
    "buggy_lines",
    "shape",
    "expected_rule",
    "why",
}
OPTIONAL_KEYS = {"fixed_path", "fixed_function", "link", "note", "fixed_flag_reason", "held_out"}


class BenchmarkError(Exception):
    """A problem with the cases or the mirrors, reported as one line per problem."""


@dataclass(frozen=True)
class Case:
    id: str
    repository: str
    fix_commit: str
    buggy_commit: str
    fixed_commit: str
    path: str
    function: str
    buggy_lines: tuple[int, ...]
    shape: str
    expected_rule: str
    why: str
    fixed_path: str
    fixed_function: str
    link: str = ""
    note: str = ""
    fixed_flag_reason: str = ""  # why gate flags the fixed version: fix incomplete, or gate wrong
    held_out: str = ""  # when the case was pinned and added before gate ran on it, if it was

    def commit(self, version: str) -> str:
        return self.buggy_commit if version == "buggy" else self.fixed_commit

    def file_path(self, version: str) -> str:
        return self.path if version == "buggy" else self.fixed_path

    def qualname(self, version: str) -> str:
        return self.function if version == "buggy" else self.fixed_function


@dataclass(frozen=True)
class Version:
    """One side of a case as rebuilt: where the file is and where its function lies."""

    root: Path
    file: Path
    first_line: int
    last_line: int

    def holds(self, line: int) -> bool:
        return self.first_line <= line <= self.last_line


@dataclass(frozen=True)
class RebuiltCase:
    case: Case
    buggy: Version
    fixed: Version

    def version(self, name: str) -> Version:
        return self.buggy if name == "buggy" else self.fixed


def load_cases(path: Path) -> list[Case]:
    """Read and validate cases.toml; raises BenchmarkError naming the case and key."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as error:
        raise BenchmarkError(f"{path}: {error}") from error
    tables = data.get("case")
    if not isinstance(tables, list) or not tables:
        raise BenchmarkError(f"{path}: no [[case]] tables")
    cases = [_case(path, index, table) for index, table in enumerate(tables, start=1)]
    seen: set[str] = set()
    for case in cases:
        if case.id in seen:
            raise BenchmarkError(f"{path}: case {case.id}: the id is used twice")
        seen.add(case.id)
    return cases


def _case(path: Path, index: int, table: dict[str, object]) -> Case:
    name = f"{path}: case {table.get('id', index)}"
    _check_keys(name, set(table))
    texts = _texts(name, {key: value for key, value in table.items() if key != "buggy_lines"})
    return Case(
        buggy_lines=_line_numbers(name, table["buggy_lines"]),
        fixed_path=texts.pop("fixed_path", texts["path"]),
        fixed_function=texts.pop("fixed_function", texts["function"]),
        **texts,
    )


def _line_numbers(name: str, value: object) -> tuple[int, ...]:
    if isinstance(value, list) and value and all(isinstance(n, int) for n in value):
        return tuple(value)
    raise BenchmarkError(f"{name}: buggy_lines must be a non-empty list of line numbers")


def _texts(name: str, table: dict[str, object]) -> dict[str, str]:
    for key, value in table.items():
        if not isinstance(value, str) or not value.strip():
            raise BenchmarkError(f"{name}: {key} must be a non-empty string")
    return {key: str(value) for key, value in table.items()}


def _check_keys(name: str, keys: set[str]) -> None:
    unknown = keys - REQUIRED_KEYS - OPTIONAL_KEYS
    if unknown:
        raise BenchmarkError(f"{name}: unknown key {sorted(unknown)[0]}")
    missing = REQUIRED_KEYS - keys
    if missing:
        raise BenchmarkError(f"{name}: missing key {sorted(missing)[0]}")


def mirror_dir(mirrors: Path, repository: str) -> Path:
    """The folder `fetch` fills for owner/name."""
    return mirrors / repository.replace("/", "+")


def find_git_dir(mirrors: Path, repository: str) -> Path:
    """The git directory inside a fetched snapshot; raises BenchmarkError naming the fetch."""
    base = mirror_dir(mirrors, repository)
    for candidate in (base / "repo" / ".git", base / "repo", base / ".git", base):
        if (candidate / "HEAD").is_file() and (candidate / "objects").is_dir():
            return candidate
    raise BenchmarkError(
        f"no mirror of {repository} under {mirrors}: fetch it with the search tool's "
        f"`fetch github:{repository}` (or pass --mirrors)"
    )


def git_file(git_dir: Path, commit: str, path: str) -> bytes:
    """The bytes of path at commit; raises BenchmarkError when either is missing."""
    completed = subprocess.run(
        ["git", f"--git-dir={git_dir}", "show", f"{commit}:{path}"],
        capture_output=True,
        check=False,
    )
    if completed.returncode != 0:
        reason = completed.stderr.decode("utf-8", "replace").strip().splitlines()
        raise BenchmarkError(f"{git_dir}: {commit}:{path}: {reason[-1] if reason else 'missing'}")
    return completed.stdout


def function_span(source: bytes, qualname: str) -> tuple[int, int] | None:
    """First and last line of the function whose __qualname__ is qualname, None when absent.

    The span starts at the first decorator. A repeated qualname (a property setter) gives
    the first definition.
    """
    tree = ast.parse(source)
    for node, name in _qualnames(tree, ""):
        if name == qualname:
            first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            return first, node.end_lineno or node.lineno
    return None


def _qualnames(node: ast.AST, prefix: str):
    for child in ast.iter_child_nodes(node):
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
            name = f"{prefix}{child.name}"
            yield child, name
            yield from _qualnames(child, f"{name}.<locals>.")
        elif isinstance(child, ast.ClassDef):
            name = f"{prefix}{child.name}"
            yield from _qualnames(child, f"{name}.")
        else:
            yield from _qualnames(child, prefix)


def rebuild_case(case: Case, mirrors: Path, out: Path) -> RebuiltCase:
    """Write both versions of one case under out/<id>/; raises BenchmarkError."""
    git_dir = find_git_dir(mirrors, case.repository)
    versions = {name: _rebuild_version(case, name, git_dir, out) for name in VERSIONS}
    outside = [n for n in case.buggy_lines if not versions["buggy"].holds(n)]
    if outside:
        raise BenchmarkError(
            f"case {case.id}: buggy line {outside[0]} is outside {case.function} "
            f"(lines {versions['buggy'].first_line}-{versions['buggy'].last_line})"
        )
    return RebuiltCase(case, versions["buggy"], versions["fixed"])


def _rebuild_version(case: Case, version: str, git_dir: Path, out: Path) -> Version:
    source = git_file(git_dir, case.commit(version), case.file_path(version))
    try:
        span = function_span(source, case.qualname(version))
    except SyntaxError as error:
        raise BenchmarkError(
            f"case {case.id}: {version} {case.file_path(version)} does not parse: {error}"
        ) from error
    if span is None:
        raise BenchmarkError(
            f"case {case.id}: no function {case.qualname(version)} in the {version} "
            f"{case.file_path(version)} at {case.commit(version)[:12]}"
        )
    root = out / case.id / version
    _export_package(git_dir, case.commit(version), case.file_path(version), root)
    target = root / case.file_path(version)
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_bytes(source)
    return Version(root=root, file=target, first_line=span[0], last_line=span[1])


def package_dir(path: str) -> str:
    """The top package a file belongs to: `pkg/` for `pkg/a/b.py`, `src/pkg/` under src/."""
    parts = path.split("/")
    keep = 2 if parts[0] in ("src", "lib") and len(parts) > 2 else 1
    return "/".join(parts[:keep]) if len(parts) > keep else ""


def _export_package(git_dir: Path, commit: str, path: str, root: Path) -> None:
    """The Python files of the package the case's file is in, as they were at `commit`, so that
    gate sees the modules the file imports (a project-wide analysis), though it checks only the
    case's file."""
    package = package_dir(path)
    if not package:
        return
    listed = subprocess.run(
        ["git", f"--git-dir={git_dir}", "ls-tree", "-r", "--name-only", commit, "--", package],
        capture_output=True,
        text=True,
        check=False,
    )
    for name in listed.stdout.splitlines():
        if name.endswith(".py"):
            target = root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(git_file(git_dir, commit, name))


def rebuild_all(cases: Sequence[Case], mirrors: Path, out: Path) -> list[RebuiltCase]:
    """Rebuild every case into a fresh out/; raises BenchmarkError listing every problem."""
    if out.exists():
        shutil.rmtree(out)
    rebuilt: list[RebuiltCase] = []
    problems: list[str] = []
    for case in cases:
        try:
            rebuilt.append(rebuild_case(case, mirrors, out))
        except BenchmarkError as error:
            if str(error) not in problems:
                problems.append(str(error))
    if problems:
        raise BenchmarkError("\n".join(problems))
    return rebuilt


def select(cases: list[Case], only: str | None) -> list[Case]:
    """The cases named in a comma-separated --only, all of them when it is None."""
    if not only:
        return cases
    wanted = [part.strip() for part in only.split(",") if part.strip()]
    known = {case.id for case in cases}
    unknown = [name for name in wanted if name not in known]
    if unknown:
        raise BenchmarkError(f"--only: no case {unknown[0]}")
    return [case for case in cases if case.id in wanted]


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", type=Path, default=DEFAULT_CASES, help="the cases file")
    parser.add_argument(
        "--mirrors", type=Path, default=DEFAULT_MIRRORS, help="where fetch puts snapshots"
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help="where to write the rebuilt files"
    )
    parser.add_argument("--only", help="comma-separated case ids")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    try:
        cases = select(load_cases(args.cases), args.only)
        rebuilt = rebuild_all(cases, args.mirrors, args.out)
    except BenchmarkError as error:
        print(error, file=sys.stderr)
        return 2
    for item in rebuilt:
        case = item.case
        print(
            f"{case.id}: {case.function} buggy {item.buggy.first_line}-{item.buggy.last_line}, "
            f"fixed {item.fixed.first_line}-{item.fixed.last_line}"
        )
    print(f"{len(rebuilt)} cases rebuilt under {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
