"""One file through the file rules: read it, parse it once with `ast`, measure its functions,
and run the teardown rules on the functions that can hold a teardown region.

Selection, `# noqa` and `--diff` are filters the pipeline applies afterwards; this stage reports
everything, so its results can be cached whatever the command line says.
"""

from __future__ import annotations

import ast
import os
import stat
import warnings
from dataclasses import dataclass, field
from pathlib import Path

from gate.analysis.candidates import index_functions, is_candidate
from gate.checks import analysis_skipped, syntax_error, unreadable_file
from gate.complexity.measure import FunctionComplexity, measure
from gate.config import GateConfig
from gate.discovery import SourceFile
from gate.model import Finding
from gate.source import decode, suppressions


@dataclass
class FileResult:
    """One file's findings, its functions' complexity (None when it could not be parsed), and
    its `# noqa` comments by line."""

    findings: list[Finding] = field(default_factory=list)
    functions: list[FunctionComplexity] | None = None
    noqa: dict[int, frozenset[str] | None] = field(default_factory=dict)


def read_source(path: Path) -> tuple[bytes | None, str]:
    """The file's bytes, or None and why not. Only regular files are read: a FIFO or a device
    named `*.py` would block or never end."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError as error:
        return None, str(error.strerror or error)
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None, "not a regular file"
        with os.fdopen(fd, "rb", closefd=False) as stream:
            return stream.read(), ""
    except OSError as error:
        return None, str(error.strerror or error)
    finally:
        os.close(fd)


def may_hold_teardown(data: bytes) -> bool:
    """A cheap byte scan: could this file contain an async teardown region at all?"""
    return b"async" in data


def check_file(
    source: SourceFile,
    settings: GateConfig,
    teardown: bool = True,
    prefilter: bool = True,
    data: bytes | None = None,
) -> FileResult:
    """Every file-rule and teardown finding and every complexity measurement for one file.

    `data` is the file's bytes when the caller has read them. Never raises for problems in the
    file itself: those become findings.
    """
    path = source.relative
    result = FileResult()
    if data is None:
        data, reason = read_source(source.path)
        if data is None:
            result.findings.append(unreadable_file.finding(path, reason))
            return result
    text = decode(data)
    tree = _parse(data, path, result.findings)
    if tree is None:
        return result
    result.noqa = suppressions(text)
    try:
        result.functions = measure(tree, path, settings.complexity.lowest_threshold)
    except RecursionError:
        message = "complexity not measured: the code is nested too deeply for radon"
        result.findings.append(analysis_skipped.finding(path, message))
    if teardown and (may_hold_teardown(data) or not prefilter):
        result.findings.extend(_teardown(path, text, tree, settings, prefilter))
    return result


def _parse(data: bytes, path: str, findings: list[Finding]) -> ast.Module | None:
    """The `ast` tree, or None with a syntax-error/analysis-skipped finding added."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the user's SyntaxWarnings are not gate's to print
            return compile(data, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except (SyntaxError, ValueError) as error:
        findings.append(syntax_error.finding(path, error))
    except RecursionError:
        message = "gate could not analyse this file: nested too deeply"
        findings.append(analysis_skipped.finding(path, message))
    return None


def _teardown(
    path: str, text: str, tree: ast.Module, settings: GateConfig, prefilter: bool
) -> list[Finding]:
    spans, level_triggered = index_functions(tree)
    if prefilter:
        candidates = [span for span in spans if is_candidate(span, settings.teardown)]
    else:
        candidates = [span for span in spans if span.is_async]
    if not candidates:
        return []
    from gate.analysis.file_pass import teardown_findings  # libcst loads only when needed

    return teardown_findings(path, text, spans, level_triggered, candidates, settings)
