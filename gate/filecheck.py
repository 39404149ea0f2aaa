"""One file through the file rules: read it, parse it once with `ast`, measure its functions,
and run the teardown rules on the functions that can hold a teardown region.

Selection, `# noqa` and `--diff` are filters the pipeline applies afterwards; this stage reports
everything, so its results can be cached whatever the command line says.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import os
import stat
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gate.analysis.cancellation import (
    Aliases,
    aliases_in_force,
    exception_aliases,
    imports_asyncio,
)
from gate.analysis.candidates import (
    FunctionSpan,
    index_functions,
    is_candidate,
    may_bridge,
    registered_callbacks,
)
from gate.analysis.summary import (
    Lookup,
    LookupKey,
    ModuleSummary,
    ProjectIndex,
    ProjectView,
    module_name,
    summarise_imports,
    summarise_module,
)
from gate.analysis.vocabulary import Vocabulary
from gate.checks import analysis_skipped, syntax_error, unreadable_file
from gate.complexity.measure import FunctionComplexity, measure
from gate.config import GateConfig, TeardownConfig
from gate.discovery import SourceFile, matches
from gate.model import Finding
from gate.project_sources import ProjectSources
from gate.source import decode, source_lines, suppressions

Consulted = tuple[tuple[LookupKey, Lookup], ...]


@dataclass(frozen=True)
class Prepared:
    """The functions of a file and whether it is level-triggered, from its `ast` tree, with the
    digest of the bytes they were read from."""

    digest: str
    spans: list[FunctionSpan]
    level_triggered: bool
    aliases: Aliases = ()  # the module's exception aliases (`exception_aliases`)

    @property
    def async_lines(self) -> int:
        """The lines of the functions libcst may parse: how much work the teardown stage is."""
        return sum(s.last_line - s.first_line + 1 for s in self.spans if s.is_async or s.bridged)


@dataclass
class FileResult:
    """One file's results.

    The first stage: file-rule findings, its functions' complexity (None when it could not be
    parsed), its `# noqa` comments by line, the summary of its functions, and whether it holds
    functions the teardown rules analyse. The second stage: the teardown findings (None until
    analysed) and the callee summaries they were decided with (`consulted`), so that a cached
    analysis is reused only while those summaries are unchanged.
    """

    findings: list[Finding] = field(default_factory=list)
    functions: list[FunctionComplexity] | None = None
    noqa: dict[int, frozenset[str] | None] = field(default_factory=dict)
    summary: ModuleSummary | None = None
    needs_teardown: bool = False
    teardown: list[Finding] | None = None
    consulted: Consulted = ()
    # what the first stage found for the teardown stage, so that it need not parse the file
    # again: not cached, and only kept while the file needs the teardown stage
    prepared: Prepared | None = None
    # all that the teardown rules read of the file (see `teardown_key`): a changed file with
    # the key of its cached analysis keeps that analysis
    teardown_key: str = ""

    @property
    def all_findings(self) -> list[Finding]:
        return self.findings + (self.teardown or [])


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
    index: ProjectIndex | None = None,
) -> FileResult:
    """Both stages for one file: the file rules, its measurements and summary, then (when
    `teardown`) the teardown rules, with callees resolved in `index` (default: this file alone).

    `data` is the file's bytes when the caller has read them. Never raises for problems in the
    file itself: those become findings.
    """
    result = first_stage(source, settings, prefilter, data)
    if teardown and result.needs_teardown:
        if index is None:
            alone = [result.summary] if result.summary is not None else []
            sources = ProjectSources(None, settings, [source])
            index = ProjectIndex(alone, sources=sources, config=settings.teardown)
        result.teardown, result.consulted = teardown_stage(
            source, settings, index, prefilter, result.prepared
        )
    elif teardown:
        result.teardown = []
    return result


def first_stage(
    source: SourceFile, settings: GateConfig, prefilter: bool = True, data: bytes | None = None
) -> FileResult:
    """Read, parse once with `ast`, measure, summarise; the file rules' findings."""
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
    result.noqa = suppressions(text, tree)
    try:
        result.functions = measure(tree, path, None)  # bodies are hashed when a rename is asked
    except RecursionError:
        message = "complexity not measured: the code is nested too deeply for radon"
        result.findings.append(analysis_skipped.finding(path, message))
    aliases = exception_aliases(tree, data)
    with aliases_in_force(aliases):
        result.summary = _summary(tree, data, path, settings.teardown, prefilter)
    if may_hold_teardown(data) or not prefilter:
        _prepare_teardown(result, tree, data, text, settings, prefilter, path, aliases)
    return result


def _prepare_teardown(
    result: FileResult,
    tree: ast.Module,
    data: bytes,
    text: str,
    settings: GateConfig,
    prefilter: bool,
    path: str,
    aliases: Aliases,
) -> None:
    """Does the file need the teardown stage; if so, what that stage needs of this one."""
    spans, level_triggered = _index(tree, data, aliases)
    result.needs_teardown = any(map(_picker(settings, prefilter, path), spans))
    if result.needs_teardown:
        result.prepared = Prepared(digest_of(data), spans, level_triggered, aliases)
        result.teardown_key = teardown_key(spans, level_triggered, text, aliases)


def _index(tree: ast.Module, data: bytes, aliases: Aliases) -> tuple[list[FunctionSpan], bool]:
    with aliases_in_force(aliases):
        return index_functions(
            tree, registered_callbacks(tree, data), may_bridge(data), b".__aenter__(" in data
        )


def teardown_key(
    spans: list[FunctionSpan], level_triggered: bool, text: str, aliases: Aliases = ()
) -> str:
    """A digest of all that the teardown rules read of a file: where every function is, whether
    the module is level-triggered, and the lines of its async and bridged functions (libcst
    parses those alone). Two versions of a file at one path with one key get the same teardown
    findings while their callees' summaries are the same, so an edit outside those functions
    (other sync code, module-level code, a comment at the end) does not analyse the file again."""
    lines = source_lines(text)
    # a span's repr lists every field (all of them plain values): astuple would deep-copy them
    digest = hashlib.sha256(repr((level_triggered, imports_asyncio(text), aliases, spans)).encode())
    for span in spans:
        if span.is_async or span.bridged:
            body = "".join(lines[span.first_line - 1 : span.last_line])
            digest.update(repr(body).encode())
    return digest.hexdigest()


def digest_of(data: bytes) -> str:
    """The content digest that keys the cache and ties a Prepared to its bytes."""
    return hashlib.sha256(data).hexdigest()


def _summary(
    tree: ast.Module, data: bytes, path: str, config: TeardownConfig, prefilter: bool
) -> ModuleSummary | None:
    """The file's summary for the project index; a light one (classes, imports, types) for a
    file without async code, whose classes async code elsewhere may hold instances of."""
    if b"async" in data or b"shield" in data or not prefilter:
        light = False
    elif b"class " in data:
        light = True
    elif b"import" in data:  # what it imports may be re-exported
        return summarise_imports(tree, path, vocabulary_of(config))
    else:
        return None
    try:
        return summarise_module(tree, path, vocabulary_of(config), light, data)
    except RecursionError:
        return None


def _picker(settings: GateConfig, prefilter: bool, path: str) -> Callable[[FunctionSpan], bool]:
    """Which functions the teardown rules analyse: those that can hold a region, or release what
    they acquired outside test code (all async ones without the prefilter)."""
    if not prefilter:
        return _is_async
    releases = not matches(path, settings.teardown.test_paths)
    return lambda span: is_candidate(span, settings.teardown, releases)


def _is_async(span: FunctionSpan) -> bool:
    return span.is_async or span.bridged


@functools.cache
def vocabulary_of(config: TeardownConfig) -> Vocabulary:
    return Vocabulary.of(config)


def teardown_stage(
    source: SourceFile,
    settings: GateConfig,
    index: ProjectIndex,
    prefilter: bool = True,
    prepared: Prepared | None = None,
) -> tuple[list[Finding], Consulted]:
    """The teardown rules on one file, with awaited callees resolved in the project `index`;
    returns the findings and the summaries consulted. `prepared` is the first stage's reading
    of the file, used while the file still has the bytes it was made from."""
    path = source.relative
    data, reason = read_source(source.path)
    if data is None:
        return [unreadable_file.finding(path, reason)], ()
    text = decode(data)
    if prepared is not None and prepared.digest == digest_of(data):
        spans, level_triggered = prepared.spans, prepared.level_triggered
        aliases = prepared.aliases
        candidates = list(filter(_picker(settings, prefilter, path), spans))
    else:
        findings: list[Finding] = []
        tree = _parse(data, path, findings)
        if tree is None:
            return findings, ()
        aliases = exception_aliases(tree, data)
        spans, level_triggered, candidates = teardown_functions(
            tree, data, settings, aliases, prefilter, path
        )
    if not candidates:
        return [], ()
    from gate.analysis.file_pass import teardown_findings  # libcst loads only when needed

    view = ProjectView(index, module_name(path))
    with aliases_in_force(aliases):
        found = teardown_findings(path, text, spans, level_triggered, candidates, settings, view)
    return found, tuple(view.consulted.items())


def teardown_functions(
    tree: ast.Module,
    data: bytes,
    settings: GateConfig,
    aliases: Aliases,
    prefilter: bool = True,
    path: str = "",
) -> tuple[list[FunctionSpan], bool, list[FunctionSpan]]:
    """The file's functions, whether it is trio/anyio code, and the functions the teardown
    rules analyse at `path` (the fixer asks for the same); `aliases`: its exception constants
    (`exception_aliases`)."""
    spans, level_triggered = _index(tree, data, aliases)
    return spans, level_triggered, list(filter(_picker(settings, prefilter, path), spans))


def still_valid(result: FileResult, index: ProjectIndex) -> bool:
    """Was the cached teardown analysis decided with the summaries the index has now?"""
    return result.teardown is not None and all(
        index.lookup(key) == answer for key, answer in result.consulted
    )


def _parse(data: bytes, path: str, findings: list[Finding]) -> ast.Module | None:
    """The `ast` tree, or None with a syntax-error/analysis-skipped finding added."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the user's SyntaxWarnings are not gate's to print
            return compile(data, path, "exec", ast.PyCF_ONLY_AST, dont_inherit=True)
    except SyntaxError as error:
        if analysis_skipped.newer_grammar_parses(data):  # valid in a newer Python
            findings.append(analysis_skipped.newer_python(path, error))
        else:
            findings.append(syntax_error.finding(path, error))
    except ValueError as error:
        findings.append(syntax_error.finding(path, error))
    except RecursionError:
        message = "gate could not analyse this file: nested too deeply"
        findings.append(analysis_skipped.finding(path, message))
    return None
