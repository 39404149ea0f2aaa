"""A content-hash cache of per-file results in `.gate_cache/`.

One file holds every entry, keyed by the file's paths and the sha256 of its bytes, under a salt
made of gate's own code, Python's version and the settings that shape per-file results. It is
written through a temporary file and a rename, so concurrent runs and a killed process leave
either the old or the new cache, never half of one; a cache that does not load is ignored and
rewritten. It is stored with `marshal` over plain tuples, not pickle, so that loading it cannot
run code.
"""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
import time
from collections.abc import Iterable
from dataclasses import astuple
from pathlib import Path
from typing import Any

import gate
from gate.analysis.summary import CallSite, FunctionSummary, ModuleSummary
from gate.complexity.measure import FunctionComplexity
from gate.config import GateConfig
from gate.filecheck import FileResult, digest_of
from gate.fsutil import atomic_write
from gate.model import (
    ComplexityDetail,
    Detail,
    Family,
    Finding,
    Location,
    Related,
    Severity,
    TeardownDetail,
)

CACHE_DIR = ".gate_cache"
CACHE_FILE = "results-v4.marshal"


def _code_fingerprint() -> str:
    """gate's version plus the size and mtime of its sources, so edited code misses the cache."""
    package = Path(gate.__file__).parent
    digest = hashlib.sha256(gate.__version__.encode())
    for path in sorted(package.rglob("*.py")):
        stat = path.stat()
        digest.update(f"{path.relative_to(package)}:{stat.st_size}:{stat.st_mtime_ns}".encode())
    return digest.hexdigest()


def salt(settings: GateConfig) -> str:
    parts = (
        _code_fingerprint(),
        sys.version,
        repr(settings.teardown),
        repr(settings.complexity),
    )
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()


def _location(location: Location) -> tuple[Any, ...]:
    return (
        location.path,
        location.line,
        location.column,
        location.end_line,
        location.end_column,
    )


def _dump_detail(detail: Detail | None) -> tuple[Any, ...] | None:
    if isinstance(detail, TeardownDetail):
        interrupts = tuple(map(_location, detail.interrupts))
        return ("teardown", interrupts, detail.region_lines, detail.linked_lines)
    if isinstance(detail, ComplexityDetail):
        return ("complexity", *astuple(detail))
    return None


def _load_detail(row: tuple[Any, ...] | None) -> Detail | None:
    if row is None:
        return None
    if row[0] == "teardown":
        lines = tuple(row[2]) if row[2] is not None else None
        linked = tuple(tuple(span) for span in row[3])
        return TeardownDetail(tuple(Location(*where) for where in row[1]), lines, linked)  # type: ignore[arg-type]
    return ComplexityDetail(*row[1:])


def dump_findings(findings: Iterable[Finding]) -> tuple[Any, ...]:
    return tuple(
        (
            f.code,
            f.name,
            f.family.value,
            f.severity.value,
            _location(f.location),
            f.message,
            f.anchor,
            tuple((_location(r.location), r.message) for r in f.related),
            _dump_detail(f.detail),
        )
        for f in findings
    )


def load_findings(rows: Iterable[tuple[Any, ...]]) -> list[Finding]:
    return [
        Finding(
            code,
            name,
            Family(family),
            Severity(severity),
            Location(*location),
            message,
            anchor,
            tuple(Related(Location(*where), text) for where, text in related),
            _load_detail(detail),
        )
        for code, name, family, severity, location, message, anchor, related, detail in rows
    ]


def _dump_summary(summary: ModuleSummary | None) -> tuple[Any, ...] | None:
    if summary is None:
        return None
    return (
        summary.module,
        tuple((name, astuple(function)) for name, function in summary.functions.items()),
        tuple(summary.classes.items()),
        tuple(sorted(summary.shield_managers)),
        tuple(summary.imports.items()),
        tuple(summary.types.items()),
        tuple((*site[:-1], tuple(site.arguments)) for site in summary.sites),
        tuple(sorted(summary.queues)),
        tuple(sorted(summary.stubs)),
    )


def _function(row: tuple[Any, ...] | None) -> FunctionSummary | None:
    if row is None:
        return None
    (
        suspends,
        shielded,
        cut_safe,
        holds,
        managers,
        steps_cut,
        best_effort,
        awaits,
        unheld,
        steps,
        steps_in_process,
        steps_best_effort,
        routes_signals,
        params,
        requires,
        completes,
        cut_safe_if_held,
        awaits_when,
        cut_loses,
        cut_best_effort,
        raises_kept,
        keeps_cancel,
    ) = row
    return FunctionSummary(
        suspends,
        shielded,
        cut_safe,
        holds,
        tuple(managers),
        steps_cut,
        best_effort,
        None if awaits is None else tuple(awaits),
        None if unheld is None else tuple(unheld),
        tuple((call, by_name) for call, by_name in steps),
        tuple(steps_in_process),
        steps_best_effort,
        routes_signals,
        tuple(params),
        requires,
        completes,
        None if cut_safe_if_held is None else tuple(cut_safe_if_held),
        tuple((name, tuple(map(tuple, when))) for name, when in awaits_when),
        None if cut_loses is None else tuple(map(tuple, cut_loses)),
        cut_best_effort,
        raises_kept,
        keeps_cancel,
    )


def _dump_answer(answer: FunctionSummary | bool | None) -> Any:
    return astuple(answer) if isinstance(answer, FunctionSummary) else answer


def _load_answer(row: Any) -> FunctionSummary | bool | None:
    return _function(row) if isinstance(row, tuple) else row


def _load_summary(row: tuple[Any, ...] | None) -> ModuleSummary | None:
    if row is None:
        return None
    module, functions, classes, managers, imports, types, sites, queues, stubs = row
    return ModuleSummary(
        module,
        {name: _function(function) for name, function in functions},  # type: ignore[misc]
        {name: tuple(bases) for name, bases in classes},
        frozenset(managers),
        dict(imports),
        {tuple(key): made for key, made in types},
        tuple(CallSite(*site[:-1], tuple(map(tuple, site[-1]))) for site in sites),
        frozenset(tuple(queue) for queue in queues),
        frozenset(stubs),
    )


def dump_result(result: FileResult) -> tuple[Any, ...]:
    functions = None if result.functions is None else tuple(map(tuple, result.functions))
    noqa = tuple(
        (line, None if codes is None else tuple(codes)) for line, codes in result.noqa.items()
    )
    teardown = None if result.teardown is None else dump_findings(result.teardown)
    consulted = tuple((key, _dump_answer(answer)) for key, answer in result.consulted)
    return (
        dump_findings(result.findings),
        functions,
        noqa,
        _dump_summary(result.summary),
        result.needs_teardown,
        teardown,
        consulted,
        result.teardown_key,
    )


def load_result(row: tuple[Any, ...]) -> FileResult:
    findings, functions, noqa, summary, needs_teardown, teardown, consulted, teardown_key = row
    return FileResult(
        load_findings(findings),
        None if functions is None else list(map(FunctionComplexity._make, functions)),
        {line: None if codes is None else frozenset(codes) for line, codes in noqa},
        _load_summary(summary),
        needs_teardown,
        None if teardown is None else load_findings(teardown),
        tuple((tuple(key), _load_answer(answer)) for key, answer in consulted),  # type: ignore[misc]
        teardown_key=teardown_key,
    )


def signature(path: Path) -> tuple[int, ...] | None:
    """What `stat` says about a file: size, modification time, inode, change time."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return (stat.st_size, stat.st_mtime_ns, stat.st_ino, stat.st_ctime_ns)


def trusted(signature: tuple[int, ...] | None) -> tuple[int, ...] | None:
    """A signature may stand for the bytes only if the file was last written well before now:
    a write within the timestamp granularity could otherwise go unseen (git's "racy" case)."""
    if signature is None or time.time_ns() - max(signature[1], signature[3]) < 2_000_000_000:
        return None
    return signature


class ResultCache:
    """Per-file results from earlier runs; `get` and `put` by paths and content digest."""

    def __init__(self, root: Path, settings: GateConfig, enabled: bool = True) -> None:
        """`enabled=False` (`--no-cache`): nothing is read, stored or written."""
        self.directory = root / CACHE_DIR
        self.path = self.directory / CACHE_FILE
        self.enabled = enabled
        self.salt = salt(settings) if enabled else ""
        self.entries: dict[str, tuple[Any, ...]] = {}
        self.replaced: dict[str, tuple[Any, ...]] = {}  # entries `put` replaced this run
        self.dirty = False
        if enabled:
            self._load()

    def _load(self) -> None:
        try:
            document = marshal.loads(self.path.read_bytes())
            if isinstance(document, dict) and document.get("salt") == self.salt:
                entries = document.get("entries")
                if isinstance(entries, dict):
                    self.entries = entries
        except (OSError, EOFError, ValueError, TypeError):
            self.entries = {}  # missing or corrupt: start afresh, rewrite on save

    @staticmethod
    def digest(data: bytes) -> str:
        return digest_of(data)

    def known_digest(self, key: str, signature: tuple[int, ...] | None) -> str:
        """The cached digest when the file's stat signature is unchanged ('' otherwise), so an
        unchanged file need not be read and hashed, as git's index does."""
        entry = self.entries.get(key)
        if entry is None or signature is None or len(entry) < 4 or entry[3] != signature:
            return ""
        return str(entry[0])

    def get(self, key: str, digest: str) -> FileResult | None:
        entry = self.entries.get(key)
        if entry is None or not digest or entry[0] != digest:
            return None
        try:
            return load_result(entry[1])
        except (TypeError, ValueError, KeyError):  # a corrupt entry: ignored, rewritten by put
            return None

    def put(
        self,
        key: str,
        digest: str,
        result: FileResult,
        signature: tuple[int, ...] | None = None,
    ) -> None:
        if digest and self.enabled:
            if key in self.entries:
                self.replaced.setdefault(key, self.entries[key])
            self.entries[key] = (digest, dump_result(result), None, trusted(signature))
            self.dirty = True

    def replaced_result(self, key: str) -> FileResult | None:
        """The result the cache held for `key` before `put` replaced it this run (an earlier
        version of a changed file), None when there was none or it does not load."""
        entry = self.replaced.get(key)
        if entry is None:
            return None
        try:
            return load_result(entry[1])
        except (TypeError, ValueError, KeyError):
            return None

    def update(self, key: str, result: FileResult) -> None:
        """Store a later stage's results in an entry `put` made this run, or `get` returned."""
        entry = self.entries.get(key)
        if entry is not None and self.enabled:
            self.entries[key] = (entry[0], dump_result(result), None, entry[3])
            self.dirty = True

    def save(self) -> None:
        """Write the cache if anything changed; a cache that cannot be written is skipped."""
        if not self.dirty:
            return
        try:
            self.directory.mkdir(exist_ok=True)
            ignore = self.directory / ".gitignore"
            if not ignore.exists():
                ignore.write_text("# created by gate\n*\n", encoding="utf-8")
            data = marshal.dumps({"salt": self.salt, "entries": self.entries})
            atomic_write(self.path, data, durable=False)  # a lost cache is only slower
        except OSError:
            return
