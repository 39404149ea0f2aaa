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
from pathlib import Path
from typing import Any

import gate
from gate.complexity.measure import FunctionComplexity
from gate.config import GateConfig
from gate.fsutil import atomic_write
from gate.model import Finding, Location, Related, Severity

CACHE_DIR = ".gate_cache"
CACHE_FILE = "results-v1.marshal"


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
        settings.teardown.model_dump_json(),
        settings.complexity.model_dump_json(),
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


def dump_findings(findings: Iterable[Finding]) -> tuple[Any, ...]:
    return tuple(
        (
            f.code,
            f.name,
            f.severity.value,
            _location(f.location),
            f.message,
            f.anchor,
            tuple((_location(r.location), r.message) for r in f.related),
            dict(f.extra),
        )
        for f in findings
    )


def load_findings(rows: Iterable[tuple[Any, ...]]) -> list[Finding]:
    return [
        Finding(
            code,
            name,
            Severity(severity),
            Location(*location),
            message,
            anchor,
            tuple(Related(Location(*where), text) for where, text in related),
            dict(extra),
        )
        for code, name, severity, location, message, anchor, related, extra in rows
    ]


def dump_functions(functions: list[FunctionComplexity] | None) -> tuple[Any, ...] | None:
    return None if functions is None else tuple(tuple(function) for function in functions)


def load_functions(rows: tuple[Any, ...] | None) -> list[FunctionComplexity] | None:
    return None if rows is None else list(map(FunctionComplexity._make, rows))


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
        return hashlib.sha256(data).hexdigest()

    def known_digest(self, key: str, signature: tuple[int, ...] | None) -> str:
        """The cached digest when the file's stat signature is unchanged ('' otherwise), so an
        unchanged file need not be read and hashed, as git's index does."""
        entry = self.entries.get(key)
        if entry is None or signature is None or len(entry) < 4 or entry[3] != signature:
            return ""
        return str(entry[0])

    def get(
        self, key: str, digest: str
    ) -> tuple[list[Finding], list[FunctionComplexity] | None] | None:
        entry = self.entries.get(key)
        if entry is None or not digest or entry[0] != digest:
            return None
        try:
            return load_findings(entry[1]), load_functions(entry[2])
        except (TypeError, ValueError):  # a corrupt entry: ignored, and rewritten by put
            return None

    def put(
        self,
        key: str,
        digest: str,
        findings: list[Finding],
        functions: list[FunctionComplexity] | None,
        signature: tuple[int, ...] | None = None,
    ) -> None:
        if digest and self.enabled:
            rows = (dump_findings(findings), dump_functions(functions))
            self.entries[key] = (digest, *rows, trusted(signature))
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
