"""Find the files, parse each once, run the checks, and collect findings."""

from __future__ import annotations

import ast
import fnmatch
import functools
import io
import multiprocessing
import os
import re
import tokenize
import warnings
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gate import git
from gate.cache import ResultCache, signature
from gate.checks import RULES
from gate.checks.base import Reporter
from gate.checks.candidates import index_functions, is_candidate
from gate.complexity.measure import FunctionComplexity, measure
from gate.complexity.ratchet import judge
from gate.complexity.session import ComplexitySession
from gate.config import DEFAULT_EXCLUDE, GateConfig, LoadedConfig
from gate.fsutil import display_path
from gate.model import Finding, Location

NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:[\s,]+[A-Z]+[0-9]+)*))?", re.I)


class UsageError(Exception):
    """A path or option the user gave that gate cannot use."""


@dataclass
class SourceFile:
    """One file to check: `display` is the cwd-relative POSIX path used in reports, `relative`
    the path relative to the project root that complexity keys use."""

    path: Path
    display: str
    relative: str = ""


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


# ---------------------------------------------------------------------------------------------
# Discovery


def _git_files(directory: Path) -> list[Path] | None:
    """Files git would track under `directory` (tracked + untracked, not ignored), or None."""
    listed = git.ls_files(directory)
    if listed is None:
        return None
    names = listed.decode("utf-8", "surrogateescape").split("\0")
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


class _Placer:
    """Where a found file is: its real path (for spotting two links to one file), its path
    relative to the project root, and the path reports show. Symlinks are resolved only where
    there is one, since resolving every path component of every file is slow on big trees."""

    def __init__(self, root: Path) -> None:
        self.root = os.path.realpath(root)

    def place(self, path: Path, base: Path | None = None) -> tuple[str, str, str]:
        if base is None or os.path.islink(path):
            real = os.path.realpath(path)
            shown = display_path(path)
        else:
            sub = os.path.relpath(path, base)
            real = os.path.join(self._real(base), sub)
            shown = _join_shown(self._shown(base), sub)
        relative = os.path.relpath(real, self.root).replace(os.sep, "/")
        if relative.startswith("../"):
            relative = path.as_posix()
        return real, relative, shown

    @functools.cache  # noqa: B019 - one placer per run, a handful of bases
    def _real(self, base: Path) -> str:
        return os.path.realpath(base)

    @functools.cache  # noqa: B019
    def _shown(self, base: Path) -> str:
        return display_path(base)


def _join_shown(base: str, sub: str) -> str:
    sub = sub.replace(os.sep, "/")
    return sub if base in (".", "") else f"{base}/{sub}"


def discover(paths: Sequence[Path], loaded: LoadedConfig) -> list[SourceFile]:
    """The files to check under `paths`, honouring .gitignore and include/exclude."""
    settings = loaded.settings
    placer = _Placer(loaded.root)
    seen: set[str] = set()
    result: list[SourceFile] = []

    def add(path: Path, base: Path | None) -> None:
        explicit = base is None
        if not explicit and not _matches(path.name, settings.include):
            return
        real, relative, shown = placer.place(path, base)
        if settings.exclude and _matches(relative, settings.exclude):
            return
        if real in seen or (not explicit and os.path.isdir(real)):
            return  # a second link to one file; a symlink to a directory is not followed
        seen.add(real)
        result.append(SourceFile(path, shown, relative))

    for path in paths:
        if path.is_dir():
            listed = _git_files(path)
            candidates = listed if listed is not None else _walk_files(path)
            for candidate in sorted(candidates):
                add(candidate, path)
        elif path.exists() or path.is_symlink():
            add(path, None)
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
    source: SourceFile,
    settings: GateConfig,
    key_path: str | None = None,
    teardown: bool = True,
    prefilter: bool = True,
    data: bytes | None = None,
) -> FileResult:
    """Every teardown finding and complexity measurement for one file.

    `key_path` is the repo-relative path complexity keys use (default: the shown path); `data`
    the file's bytes when the caller has read them. Never raises for problems in the file
    itself: those become findings.
    """
    result = FileResult()
    reporter = Reporter(source.display, RULES, lambda node: Location(source.display, 1, 1))
    if data is None:
        data, reason = _read(source.path)
        if data is None:
            message = f"cannot read file: {reason}"
            result.findings.append(reporter.finding("GATE901", None, message, "unreadable"))
            return result
    text = _decode(data)
    tree = _parse(data, source.display, reporter, result.findings)
    if tree is None:
        return result
    try:
        floor = settings.complexity.lowest_threshold
        result.functions = measure(tree, key_path or source.display, text, source.display, floor)
    except RecursionError:
        message = "complexity not measured: the code is nested too deeply for radon"
        result.findings.append(reporter.finding("GATE902", None, message, "analysis-skipped"))
    if teardown and (may_hold_teardown(data) or not prefilter):
        result.findings.extend(_teardown(source, text, tree, settings, reporter, prefilter))
    result.findings = _apply_noqa(result.findings, text)
    return result


def _parse(
    data: bytes, display: str, reporter: Reporter, findings: list[Finding]
) -> ast.Module | None:
    """The `ast` tree, or None with a GATE900/GATE902 finding added to `findings`."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the user's SyntaxWarnings are not gate's to print
            return compile(data, display, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        findings.append(_syntax_finding(display, error, reporter))
    except RecursionError:
        message = "gate could not analyse this file: nested too deeply"
        findings.append(reporter.finding("GATE902", None, message, "analysis-skipped"))
    return None


def _teardown(
    source: SourceFile,
    text: str,
    tree: ast.Module,
    settings: GateConfig,
    reporter: Reporter,
    prefilter: bool,
) -> list[Finding]:
    spans, level_triggered = index_functions(tree)
    if prefilter:
        candidates = [span for span in spans if is_candidate(span, settings.teardown)]
    else:
        candidates = [span for span in spans if span.is_async]
    if not candidates:
        return []
    from gate.checks.file_pass import teardown_findings  # libcst loads only when needed

    return teardown_findings(
        source.display, text, spans, level_triggered, candidates, settings, reporter
    )


def _syntax_finding(display: str, error: Exception, reporter: Reporter) -> Finding:
    if isinstance(error, SyntaxError):
        line = error.lineno or 1
        column = error.offset or 1
        message = f"syntax error: {error.msg}"
    else:
        line, column, message = 1, 1, f"syntax error: {error}"
    reporter.locate = lambda node: Location(display, line, max(column, 1))
    return reporter.finding("GATE900", None, message, "syntax-error")


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


@dataclass(frozen=True)
class RunOptions:
    """How to run, not what to report: workers (0 = one per core), the cache, and a progress
    callback `progress(done, total)` the command line draws a bar with."""

    jobs: int = 0
    cache: bool = True
    progress: Callable[[int, int], None] | None = None


@dataclass(frozen=True)
class _Job:
    source: SourceFile
    key_path: str
    settings: GateConfig
    teardown: bool
    data: bytes | None


def _run_job(job: _Job) -> FileResult:
    return check_file(job.source, job.settings, job.key_path, teardown=job.teardown, data=job.data)


def _pool_context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def _compute(jobs: list[_Job], options: RunOptions, done: Callable[[], None]) -> list[FileResult]:
    """Results in the order of `jobs`, on worker processes when there are enough files."""
    workers = options.jobs or os.cpu_count() or 1
    if workers <= 1 or len(jobs) < 32:
        results = []
        for job in jobs:
            results.append(_run_job(job))
            done()
        return results
    chunk = max(1, min(16, len(jobs) // (workers * 8)))
    with ProcessPoolExecutor(max_workers=workers, mp_context=_pool_context()) as pool:
        results = []
        for result in pool.map(_run_job, jobs, chunksize=chunk):
            results.append(result)
            done()
        return results


def _read(path: Path) -> tuple[bytes | None, str]:
    """The file's bytes, or None and why not."""
    try:
        return path.read_bytes(), ""
    except OSError as error:
        return None, str(error.strerror or error)


def file_results(
    files: Sequence[SourceFile],
    session: ComplexitySession,
    settings: GateConfig,
    options: RunOptions,
    teardown: bool = True,
) -> list[tuple[str, FileResult]]:
    """(key path, result) for every file, in order: from the cache where the bytes are unchanged,
    computed otherwise (and then cached)."""
    cache = ResultCache(session.root, settings, enabled=options.cache)
    results: dict[int, tuple[str, FileResult]] = {}
    jobs: list[_Job] = []
    waiting: list[tuple[int, str, str, tuple[int, ...] | None]] = []  # index, key, digest, stat
    progress = iter(range(1, len(files) + 1))

    def done() -> None:
        if options.progress is not None:
            options.progress(next(progress), len(files))

    for index, source in enumerate(files):
        key_path = source.relative or session.relative(source.path)
        key = f"{source.display}\0{key_path}\0{int(teardown)}"
        stat = signature(source.path)
        digest, data = cache.known_digest(key, stat), None
        if not digest:
            data, _ = _read(source.path)  # check_file reads an unreadable file again, reports it
            digest = ResultCache.digest(data) if data is not None else ""
        hit = cache.get(key, digest)
        if hit is not None:
            results[index] = (key_path, FileResult(*hit))
            done()
            continue
        jobs.append(_Job(source, key_path, settings, teardown, data))
        waiting.append((index, key, digest, stat))
    computed = _compute(jobs, options, done)
    for (index, key, digest, stat), job, result in zip(waiting, jobs, computed, strict=True):
        results[index] = (job.key_path, result)
        cache.put(key, digest, result.findings, result.functions, stat)
    cache.save()
    return [results[index] for index in range(len(files))]


def selection(
    settings: GateConfig, select: Sequence[str] | None, ignore: Sequence[str] | None
) -> Callable[[str], bool]:
    """Is a code reported? Command-line --select replaces the config's; ignores add up.
    GATE900 is always reported: a file that does not parse was not checked at all."""
    chosen_select = tuple(select) if select else settings.select
    chosen_ignore = tuple(ignore or ()) + settings.ignore
    return lambda code: code == "GATE900" or code_selected(code, chosen_select, chosen_ignore)


def run_check(
    paths: Sequence[Path],
    loaded: LoadedConfig,
    select: Sequence[str] | None = None,
    ignore: Sequence[str] | None = None,
    base: str | None = None,
    options: RunOptions | None = None,
) -> CheckResult:
    """Check every file under `paths`; findings sorted by path, line, column, code.

    Raises BaselineError (a ConfigError) when the complexity baseline is broken.
    """
    settings = loaded.settings
    wanted = selection(settings, select, ignore)
    files = discover(paths, loaded)
    session = ComplexitySession(loaded, base)
    ratchet = any(wanted(code) for code in ("GATE200", "GATE201", "GATE202"))
    baseline = session.read() if ratchet else None
    findings: list[Finding] = []
    functions: list[FunctionComplexity] = []
    measured_paths: set[str] = set()
    for key_path, result in file_results(files, session, settings, options or RunOptions()):
        findings.extend(finding for finding in result.findings if wanted(finding.code))
        if result.functions is not None:
            functions.extend(result.functions)
            measured_paths.add(key_path)
    if ratchet:
        recorded = baseline.functions if baseline is not None else {}
        judged = session.judged_paths(measured_paths, paths, recorded)
        ratchet_findings = judge(functions, session.inputs(baseline, judged), settings.complexity)
        findings.extend(finding for finding in ratchet_findings if wanted(finding.code))
    findings.sort(key=Finding.sort_key)
    return CheckResult(findings, len(files), functions)


@dataclass
class Measurements:
    functions: list[FunctionComplexity]
    measured_paths: set[str]
    unparsed: list[Finding]


def measure_paths(
    paths: Sequence[Path], loaded: LoadedConfig, options: RunOptions | None = None
) -> Measurements:
    """Complexity of every function under `paths`, without the teardown rules."""
    session = ComplexitySession(loaded)
    result = Measurements([], set(), [])
    files = discover(paths, loaded)
    for key_path, checked in file_results(
        files, session, loaded.settings, options or RunOptions(), teardown=False
    ):
        if checked.functions is None:
            result.unparsed.extend(checked.findings)
        else:
            result.functions.extend(checked.functions)
            result.measured_paths.add(key_path)
    return result
