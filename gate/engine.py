"""Find the files, parse each once, run the checks, and collect findings."""

from __future__ import annotations

import ast
import fnmatch
import io
import os
import re
import subprocess
import tokenize
import warnings
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

import libcst as cst
from libcst.metadata import MetadataWrapper, PositionProvider

from gate.checks import RULES, TEARDOWN_CHECKS
from gate.checks.base import Reporter
from gate.checks.teardown import analyse_module
from gate.complexity.measure import FunctionComplexity, measure
from gate.complexity.ratchet import judge
from gate.complexity.session import ComplexitySession
from gate.config import DEFAULT_EXCLUDE, GateConfig, LoadedConfig
from gate.model import Finding, Location

NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)


class UsageError(Exception):
    """A path or option the user gave that gate cannot use."""


@dataclass
class SourceFile:
    """One file to check: `display` is the cwd-relative POSIX path used in reports."""

    path: Path
    display: str


@dataclass
class FileResult:
    """One file's findings and its functions' complexity (None when it could not be parsed)."""

    findings: list[Finding] = field(default_factory=list)
    functions: list[FunctionComplexity] | None = None


@dataclass
class CheckResult:
    findings: list[Finding]
    files: int
    functions: list[FunctionComplexity] = field(default_factory=list)


def display_path(path: Path) -> str:
    """A path relative to the current directory, POSIX style."""
    try:
        return Path(os.path.relpath(path)).as_posix()
    except ValueError:  # another drive on Windows
        return path.as_posix()


# ---------------------------------------------------------------------------------------------
# Discovery


def _git_files(directory: Path) -> list[Path] | None:
    """Files git would track under `directory` (tracked + untracked, not ignored), or None."""
    try:
        completed = subprocess.run(
            ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard", "--", "."],
            cwd=directory,
            capture_output=True,
            check=False,
        )
    except OSError:
        return None
    if completed.returncode != 0:
        return None
    names = [name for name in completed.stdout.decode("utf-8", "surrogateescape").split("\0")]
    return [directory / name for name in names if name]


def _walk_files(directory: Path) -> list[Path]:
    found = []
    for root, dirs, files in os.walk(directory, followlinks=False):
        dirs[:] = sorted(d for d in dirs if d not in DEFAULT_EXCLUDE)
        found.extend(Path(root) / name for name in sorted(files))
    return found


def _matches(relative: str, patterns: Sequence[str]) -> bool:
    parts = relative.split("/")
    prefixes = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    return any(
        fnmatch.fnmatchcase(prefix, pattern) or fnmatch.fnmatchcase(parts[-1], pattern)
        for pattern in patterns
        for prefix in prefixes
    )


def discover(paths: Sequence[Path], loaded: LoadedConfig) -> list[SourceFile]:
    """The files to check under `paths`, honouring .gitignore and include/exclude."""
    settings = loaded.settings
    seen: set[str] = set()
    result: list[SourceFile] = []

    def relative_to_root(path: Path) -> str:
        try:
            return path.resolve().relative_to(loaded.root.resolve()).as_posix()
        except (ValueError, OSError, RuntimeError):
            return path.as_posix()

    def add(path: Path, explicit: bool) -> None:
        relative = relative_to_root(path)
        if settings.exclude and _matches(relative, settings.exclude):
            return
        if not explicit and not _matches(path.name, settings.include):
            return
        if not explicit and path.is_dir():
            return  # a symlink to a directory, or a submodule: not followed
        try:
            key = str(path.resolve())
        except (OSError, RuntimeError):
            key = str(path.absolute())
        if key in seen:
            return
        seen.add(key)
        result.append(SourceFile(path, display_path(path)))

    for path in paths:
        if path.is_dir():
            listed = _git_files(path)
            candidates = listed if listed is not None else _walk_files(path)
            for candidate in sorted(candidates):
                add(candidate, explicit=False)
        elif path.exists() or path.is_symlink():
            add(path, explicit=True)
        else:
            raise UsageError(f"{path}: no such file or directory")
    return result


# ---------------------------------------------------------------------------------------------
# Checking one file


def _decode(data: bytes) -> str:
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        return data.decode(encoding)
    except (SyntaxError, LookupError, UnicodeDecodeError):
        return data.decode("utf-8", "replace")


def may_hold_teardown(data: bytes) -> bool:
    """A cheap byte scan: could this file contain an async teardown region at all?"""
    return b"async" in data


def check_file(
    source: SourceFile, settings: GateConfig, key_path: str | None = None, teardown: bool = True
) -> FileResult:
    """Every teardown finding and complexity measurement for one file.

    `key_path` is the repo-relative path complexity keys use (default: the shown path). Never
    raises for problems in the file itself: those become findings.
    """
    result = FileResult()
    reporter = Reporter(source.display, RULES, lambda node: Location(source.display, 1, 1))
    try:
        data = source.path.read_bytes()
    except OSError as error:
        reason = error.strerror or str(error)
        result.findings.append(
            reporter.finding("GATE901", None, f"cannot read file: {reason}", "unreadable")
        )
        return result
    text = _decode(data)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the user's SyntaxWarnings are not gate's to print
            tree = compile(data, source.display, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        result.findings.append(_syntax_finding(source.display, error, reporter))
        return result
    except RecursionError:
        result.findings.append(
            reporter.finding(
                "GATE902",
                None,
                "gate could not analyse this file: nested too deeply",
                "analysis-skipped",
            )
        )
        return result
    result.functions = measure(tree, key_path or source.display, text, source.display)
    if teardown and may_hold_teardown(data):
        result.findings.extend(_teardown_findings(source, data, settings, reporter))
    result.findings = _apply_noqa(result.findings, text)
    return result


def _syntax_finding(display: str, error: Exception, reporter: Reporter) -> Finding:
    if isinstance(error, SyntaxError):
        line = error.lineno or 1
        column = error.offset or 1
        message = f"syntax error: {error.msg}"
    else:
        line, column, message = 1, 1, f"syntax error: {error}"
    reporter.locate = lambda node: Location(display, line, max(column, 1))
    return reporter.finding("GATE900", None, message, "syntax-error")


def _teardown_findings(
    source: SourceFile, data: bytes, settings: GateConfig, reporter: Reporter
) -> list[Finding]:
    try:
        module = cst.parse_module(data)
    except (cst.ParserSyntaxError, RecursionError, ValueError) as error:
        line, column = _libcst_error_position(error)
        reporter.locate = lambda node: Location(source.display, line, column)
        return [
            reporter.finding(
                "GATE902",
                None,
                "teardown rules skipped: libcst cannot parse this line, though Python can",
                "analysis-skipped",
            )
        ]
    analysis = analyse_module(module, settings.teardown)
    if not any(region.points or region.steps or region.swallowing for region in analysis.regions):
        return []
    positions: dict[object, object] = {}

    def locate(node: object) -> Location:
        if not positions:
            wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
            positions.update(wrapper.resolve(PositionProvider))
        code_range = positions[node]
        start, end = code_range.start, code_range.end  # type: ignore[attr-defined]
        return Location(source.display, start.line, start.column + 1, end.line, end.column + 1)

    reporter.locate = locate
    findings: list[Finding] = []
    for check in TEARDOWN_CHECKS:
        findings.extend(check.check(analysis, reporter))
    return _unique_anchors(findings)


def _libcst_error_position(error: Exception) -> tuple[int, int]:
    match = re.search(r"error at (\d+):(\d+)", getattr(error, "message", ""))
    if match:
        return int(match.group(1)), int(match.group(2))
    return getattr(error, "raw_line", 1) or 1, (getattr(error, "raw_column", 0) or 0) + 1


def _unique_anchors(findings: list[Finding]) -> list[Finding]:
    """Number repeated anchors in source order so that every fingerprint is distinct."""
    counts: Counter[tuple[str, str]] = Counter()
    unique = []
    for finding in sorted(findings, key=Finding.sort_key):
        key = (finding.code, finding.anchor)
        counts[key] += 1
        if counts[key] > 1:
            finding = replace(finding, anchor=f"{finding.anchor}#{counts[key]}")
        unique.append(finding)
    return unique


def _apply_noqa(findings: list[Finding], text: str) -> list[Finding]:
    if "noqa" not in text:
        return findings
    lines = text.splitlines()
    kept = []
    for finding in findings:
        index = finding.location.line - 1
        match = NOQA.search(lines[index]) if 0 <= index < len(lines) else None
        if match is None:
            kept.append(finding)
            continue
        codes = match.group("codes")
        if codes and finding.code not in re.split(r"[\s,]+", codes.upper()):
            kept.append(finding)
    return kept


# ---------------------------------------------------------------------------------------------
# Selection and the whole run


def code_selected(code: str, select: Iterable[str], ignore: Iterable[str]) -> bool:
    """`--select GATE1` selects GATE1xx; the longest matching prefix wins, as in ruff."""
    best_select = max((len(p) for p in select if code.startswith(p)), default=-1)
    best_ignore = max((len(p) for p in ignore if code.startswith(p)), default=-1)
    return best_select >= 0 and best_select > best_ignore


def run_check(
    paths: Sequence[Path],
    loaded: LoadedConfig,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    base: str | None = None,
) -> CheckResult:
    """Check every file under `paths`; findings sorted by path, line, column, code.

    Raises BaselineError (a ConfigError) when the complexity baseline is broken.
    """
    settings = loaded.settings
    chosen_select = tuple(select) if select else settings.select
    chosen_ignore = tuple(ignore or ()) + settings.ignore

    def wanted(code: str) -> bool:
        return code == "GATE900" or code_selected(code, chosen_select, chosen_ignore)

    files = discover(paths, loaded)
    session = ComplexitySession(loaded, base)
    ratchet = any(wanted(code) for code in ("GATE200", "GATE201", "GATE202"))
    baseline = session.read() if ratchet else None
    findings: list[Finding] = []
    functions: list[FunctionComplexity] = []
    measured_paths: set[str] = set()
    for source in files:
        key_path = session.relative(source.path)
        result = check_file(source, settings, key_path)
        findings.extend(finding for finding in result.findings if wanted(finding.code))
        if result.functions is not None:
            functions.extend(result.functions)
            measured_paths.add(key_path)
    if ratchet:
        recorded = baseline.functions if baseline is not None else {}
        judged = session.judged_paths(measured_paths, paths, recorded)
        inputs = session.inputs(baseline, judged)
        ratchet_findings = judge(functions, inputs, settings.complexity)
        findings.extend(finding for finding in ratchet_findings if wanted(finding.code))
    findings.sort(key=Finding.sort_key)
    return CheckResult(findings, len(files), functions)


@dataclass
class Measurements:
    functions: list[FunctionComplexity]
    measured_paths: set[str]
    unparsed: list[Finding]


def measure_paths(paths: Sequence[Path], loaded: LoadedConfig) -> Measurements:
    """Complexity of every function under `paths`, without the teardown rules."""
    session = ComplexitySession(loaded)
    result = Measurements([], set(), [])
    for source in discover(paths, loaded):
        key_path = session.relative(source.path)
        checked = check_file(source, loaded.settings, key_path, teardown=False)
        if checked.functions is None:
            result.unparsed.extend(checked.findings)
        else:
            result.functions.extend(checked.functions)
            result.measured_paths.add(key_path)
    return result
