"""Per-file results for a list of files: from the cache where a file's bytes are unchanged,
computed otherwise, on worker processes when there are enough files."""

from __future__ import annotations

import contextlib
import functools
import gc
import os
import signal
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gate import workers as workers_module
from gate.analysis.summary import ModuleSummary, ProjectIndex, SourceSearch, module_name
from gate.cache import ResultCache, signature
from gate.config import GateConfig
from gate.discovery import SourceFile, matches
from gate.filecheck import (
    Consulted,
    FileResult,
    Prepared,
    first_stage,
    may_hold_teardown,
    read_source,
    still_valid,
    teardown_stage,
)
from gate.model import Finding


@dataclass(frozen=True)
class RunOptions:
    """How to run, not what to report: workers (0 = one per core), the cache, and a progress
    callback `progress(done, total)` the command line draws a bar with."""

    jobs: int = 0
    cache: bool = True
    progress: Callable[[int, int], None] | None = None


@dataclass(frozen=True)
class _Job:
    """One file for a worker: its settings, its bytes when already read, and the first stage's
    reading of it for the teardown stage."""

    source: SourceFile
    settings: GateConfig
    data: bytes | None
    prepared: Prepared | None = None


def _first_stage(job: _Job) -> FileResult:
    return first_stage(job.source, job.settings, data=job.data)


# The project's summaries, for the teardown stage: set in each worker when it starts (and in
# this process for serial runs), so that it crosses to a worker once, not once per file.
_INDEX: ProjectIndex | None = None


def _teardown_stage(job: _Job) -> tuple[list[Finding], Consulted]:
    assert _INDEX is not None
    return teardown_stage(job.source, job.settings, _INDEX, prepared=job.prepared)


def _start_worker(parent: int, index: ProjectIndex | None) -> None:
    global _INDEX
    _INDEX = index
    _die_with_parent(parent)


def _die_with_parent(parent: int) -> None:
    """Worker start-up: end this worker when the gate process that started it dies, so a
    killed run leaves no workers behind (Linux; elsewhere workers end when their queue does).
    prctl is looked up in the symbols the process already has: `ctypes.util.find_library`
    imports subprocess and runs `ldconfig`, about 25 ms of every worker's start."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _pool_context() -> Any:
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def worker_count(requested: int, files: int) -> int:
    """Workers for `files` files: never more than the files or the cores."""
    cores = os.cpu_count() or 1
    return max(1, min(requested or cores, cores, files))


def _compute(
    work: Callable[[_Job], Any],
    jobs: list[_Job],
    options: RunOptions,
    done: Callable[[], None],
    index: ProjectIndex | None = None,
    meanwhile: Callable[[], None] | None = None,
    size: Callable[[_Job], int] | None = None,
    worth_workers: bool | None = None,
) -> list[Any]:
    """`work` on every job, results in order, on worker processes when there is enough work
    (`worth_workers`; by default, when the files hold enough bytes), the largest (`size`)
    first; then `meanwhile` runs in this process while the workers do the jobs."""
    global _INDEX
    workers = worker_count(options.jobs, len(jobs))
    if worth_workers is None:
        worth_workers = len(jobs) > 1 and sum(map(_size, jobs)) >= BYTES_FOR_WORKERS
    if workers <= 1 or not worth_workers:
        _INDEX = index
        results = []
        for job in jobs:
            results.append(work(job))
            done()
        return results
    # the largest files first, so that no worker is left with a big one at the end while the
    # others wait
    weight = size or _size
    order = sorted(range(len(jobs)), key=lambda i: weight(jobs[i]), reverse=True)
    if workers_module.available():
        start = functools.partial(_start_worker, os.getpid(), index)
        return workers_module.run(work, jobs, order, workers, start, done, meanwhile)
    return _pooled(work, jobs, order, workers, done, index, meanwhile)


def _pooled(
    work: Callable[[_Job], Any],
    jobs: list[_Job],
    order: list[int],
    workers: int,
    done: Callable[[], None],
    index: ProjectIndex | None,
    meanwhile: Callable[[], None] | None,
) -> list[Any]:
    """`_compute` where processes cannot be forked: a ProcessPoolExecutor, in small chunks."""
    from concurrent.futures import ProcessPoolExecutor

    chunk = max(1, min(8, len(jobs) // (workers * 16)))
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=_pool_context(),
        initializer=_start_worker,
        initargs=(os.getpid(), index),
    ) as pool:
        mapped = pool.map(work, [jobs[i] for i in order], chunksize=chunk)  # all queued now
        if meanwhile is not None:
            meanwhile()
        results: list[Any] = [None] * len(jobs)
        for i, result in zip(order, mapped, strict=True):
            results[i] = result
            done()
        return results


def _size(job: _Job) -> int:
    """How much work a job is, roughly: the size of its file."""
    if job.data is not None:
        return len(job.data)
    try:
        return os.stat(job.source.path).st_size
    except OSError:
        return 0


# Bytes of source above which the first stage is worth worker processes: it reads about a
# megabyte a second, and forking and feeding two workers costs a few hundredths of a second.
BYTES_FOR_WORKERS = 100_000

# Lines of async code above which the teardown stage is worth worker processes: libcst parses
# and walks about four thousand lines a second, and starting a pool costs a few hundredths.
TEARDOWN_LINES_FOR_WORKERS = 400


def _teardown_size(job: _Job) -> int:
    """How much teardown work a job is, roughly: the lines of its async functions."""
    if job.prepared is None:
        return _size(job) // 40
    return job.prepared.async_lines


def _may_need_teardown(jobs: list[_Job]) -> bool:
    return any(job.data is not None and may_hold_teardown(job.data) for job in jobs)


def _load_teardown_rules() -> None:
    """Import the teardown rules (libcst) in this process, so that the workers of the teardown
    stage, forked from it, start with them loaded instead of each importing them again."""
    import gate.analysis.file_pass  # noqa: F401


def file_results(
    files: Sequence[SourceFile],
    root: Path,
    settings: GateConfig,
    options: RunOptions,
    teardown: bool = True,
    callers_known: bool = True,
    sources: SourceSearch | None = None,
) -> tuple[list[FileResult], list[ModuleSummary]]:
    """The result of every file, in order. The first stage comes from the cache (in `root`)
    where the bytes are unchanged; then, when `teardown`, the teardown stage runs on the files
    that need it against the summaries of every file, reusing a cached analysis while the
    summaries it consulted are unchanged. `callers_known`: the files are whole directories, so
    the callers of their functions are among them (not so for single files named); `sources`
    searches the project's files for what summaries cannot say. Also returns the summaries of
    the project modules the files import that the run read."""
    with _few_collections():
        cache = ResultCache(root, settings, enabled=options.cache)
        progress = iter(range(1, len(files) + 1))

        def done() -> None:
            if options.progress is not None:
                options.progress(next(progress), len(files))

        results, keys = _first_stages(files, settings, options, cache, done, teardown)
        imported: list[ModuleSummary] = []
        if teardown:
            imported = _imported_summaries(files, results, root, settings, options, cache)
            summaries = [r.summary for r in results if r.summary is not None] + imported
            if not callers_known and sources is not None:
                reader = _Reader(root, settings, options, cache, files, summaries)
                implementers = _implementer_summaries(reader, sources)
                imported += implementers
                summaries += implementers
            tests = settings.teardown.test_paths
            test_modules = frozenset(
                s.module for s in summaries if matches(s.module.replace(".", "/") + ".py", tests)
            )
            index = ProjectIndex(summaries, callers_known, sources, test_modules, settings.teardown)
            _teardown_stages(files, results, keys, settings, options, cache, index)
        cache.save()
    return results, imported


# Allocations between two collections of the youngest generation while files are checked
# (Python's default is 700).
YOUNG_COLLECTION_EVERY = 50_000


@contextlib.contextmanager
def _few_collections() -> Iterator[None]:
    """Collect cyclic garbage rarely while files are checked, here and in the workers forked
    from here. Parsing builds and drops trees of many small objects, few of them in cycles
    (freed by reference counting alone), and every collection of the oldest generation scans
    everything alive: at Python's thresholds collections took a fifth of a run on CPython's
    `Lib/` (8 of 40 seconds) and a tenth on aiohttp, for the same peak memory."""
    before = gc.get_threshold()
    gc.set_threshold(YOUNG_COLLECTION_EVERY, 20, 10)
    try:
        yield
    finally:
        gc.set_threshold(*before)


class ModuleFiles:
    """Where a dotted module may live under the project root (also under src/ and lib/),
    remembered for one run: the imports of a project name the same modules over and over."""

    def __init__(self, root: Path) -> None:
        self.bases = [os.fspath(root), os.path.join(root, "src"), os.path.join(root, "lib")]
        self.known: dict[str, list[str]] = {}
        self.directories: dict[str, bool] = {}
        self.entries: dict[str, frozenset[str]] = {}

    def __call__(self, module: str) -> list[str]:
        found = self.known.get(module)
        if found is None:
            found = self.known[module] = self._look(module.split("."))
        return found

    def _look(self, parts: list[str]) -> list[str]:
        found = []
        for base in self.bases:
            if not self._may_hold(base, parts[0]):
                continue  # most imports name the standard library or an installed package
            folder = os.path.join(base, *parts[:-1])
            if not self._is_directory(folder):
                continue  # neither `parts.py` nor `parts/__init__.py` can be in it
            for candidate in (
                os.path.join(folder, parts[-1] + ".py"),
                os.path.join(folder, parts[-1], "__init__.py"),
            ):
                if os.path.isfile(candidate):
                    found.append(candidate)
        return found

    def _may_hold(self, base: str, first: str) -> bool:
        """Can `base` hold a module whose dotted name starts with `first`? Python's imports
        are case-sensitive, as a directory listing is."""
        entries = self.entries.get(base)
        if entries is None:
            try:
                entries = frozenset(os.listdir(base))
            except OSError:
                entries = frozenset()
            self.entries[base] = entries
        return first in entries or f"{first}.py" in entries

    def _is_directory(self, folder: str) -> bool:
        known = self.directories.get(folder)
        if known is None:
            known = self.directories[folder] = os.path.isdir(folder)
        return known


def _imported_files(
    summaries: list[ModuleSummary], root: Path, known: set[str], modules: ModuleFiles
) -> dict[str, SourceFile]:
    """The project files the modules import that are not `known` yet (any prefix of an
    imported name may be a module)."""
    found: dict[str, Path] = {}
    relatives: dict[str, str] = {}  # by path as found: the same modules are imported over and over
    for summary in summaries:
        for target in summary.imports.values():
            parts = target.split(".")
            for cut in range(len(parts), 0, -1):
                for path in modules(".".join(parts[:cut])):
                    relative = relatives.get(path)
                    if relative is None:
                        relative = relatives[path] = Path(path).relative_to(root).as_posix()
                        found[relative] = Path(path)
    return {
        relative: SourceFile(path, relative)
        for relative, path in found.items()
        if relative not in known
    }


def _imported_summaries(
    files: Sequence[SourceFile],
    results: list[FileResult],
    root: Path,
    settings: GateConfig,
    options: RunOptions,
    cache: ResultCache,
) -> list[ModuleSummary]:
    """The summaries of project modules the analysed files import but the run does not check
    (two imports deep), so that checking one file judges its callees as checking the whole
    project does."""
    known = {source.relative for source in files}
    frontier = [r.summary for r in results if r.needs_teardown and r.summary is not None]
    loaded: list[ModuleSummary] = []
    modules = ModuleFiles(root)
    for _ in range(2):
        wanted = _imported_files(frontier, root, known, modules)
        if not wanted:
            break
        known |= set(wanted)
        extra, _ = _first_stages(list(wanted.values()), settings, options, cache, lambda: None)
        frontier = [r.summary for r in extra if r.summary is not None]
        loaded += frontier
    return loaded


# The most files a run of single files reads for the implementations of its extension points
MAX_IMPLEMENTER_FILES = 64


@dataclass
class _Reader:
    """Reads the first stage of project files a run of single files does not check, once each."""

    root: Path
    settings: GateConfig
    options: RunOptions
    cache: ResultCache
    files: Sequence[SourceFile]
    summaries: list[ModuleSummary]

    extra: int = 0  # files read so far

    def __post_init__(self) -> None:
        self.known = {module_name(source.relative) for source in self.files}
        self.known |= {summary.module for summary in self.summaries}

    def unread(self, relatives: Iterable[str]) -> list[str]:
        return sorted({r for r in relatives if module_name(r) not in self.known})

    def read(self, relatives: list[str]) -> list[ModuleSummary]:
        self.extra += len(relatives)
        wanted = [SourceFile(self.root / r, r) for r in relatives]
        self.known |= {module_name(r) for r in relatives}
        extra, _ = _first_stages(wanted, self.settings, self.options, self.cache, lambda: None)
        return [r.summary for r in extra if r.summary is not None]


def _implementer_summaries(reader: _Reader, sources: SourceSearch) -> list[ModuleSummary]:
    """For a run of single files: the summaries of the project modules that may implement an
    extension point (a class declaring a stub method) of the modules read, so that an awaited
    stub is judged by the implementations the project ships as a whole run judges it. A subclass
    names its base, so these are the sources naming such a class, then those naming a class
    derived from one (two levels); none past a few dozen files."""
    names = {
        stub.rpartition(".")[0].rpartition(".")[2] for s in reader.summaries for stub in s.stubs
    }
    loaded: list[ModuleSummary] = []
    for _ in range(2):
        wanted = _unread_naming(sources, names, reader)
        if not wanted or reader.extra + len(wanted) > MAX_IMPLEMENTER_FILES:
            break
        read = reader.read(wanted)
        loaded += read
        names = _derived(read, names)
    return loaded


def _unread_naming(sources: SourceSearch, names: set[str], reader: _Reader) -> list[str]:
    """The project sources not read yet that name one of the classes (none when the project's
    sources cannot all be searched)."""
    listed = [sources.mentioning(name) for name in sorted(names)]
    if any(found is None for found in listed):
        return []
    return reader.unread(path for found in listed for path, _ in found or ())


def _derived(summaries: list[ModuleSummary], names: set[str]) -> set[str]:
    """The names of the classes these modules define on a base of one of `names`."""
    return {
        cls.rpartition(".")[2]
        for summary in summaries
        for cls, bases in summary.classes.items()
        if {base.rpartition(".")[2] for base in bases} & names
    }


def _teardown_stages(
    files: Sequence[SourceFile],
    results: list[FileResult],
    keys: list[str],
    settings: GateConfig,
    options: RunOptions,
    cache: ResultCache,
    index: ProjectIndex,
) -> None:
    """Fill in every result's teardown findings: analysed again where the file needs it and
    the cached analysis consulted summaries that have changed, or the file changed where the
    teardown rules read it."""
    stale = _stale(results, keys, cache, index)
    jobs = [_Job(files[i], settings, None, results[i].prepared) for i in stale]
    worth = len(jobs) > 1 and sum(map(_teardown_size, jobs)) >= TEARDOWN_LINES_FOR_WORKERS
    computed = _compute(
        _teardown_stage,
        jobs,
        options,
        lambda: None,
        index,
        size=_teardown_size,
        worth_workers=worth,
    )
    for i, (findings, consulted) in zip(stale, computed, strict=True):
        results[i].teardown, results[i].consulted = findings, consulted
        cache.update(keys[i], results[i])
    for result in results:
        if result.teardown is None:
            result.teardown = []


def _stale(
    results: list[FileResult], keys: list[str], cache: ResultCache, index: ProjectIndex
) -> list[int]:
    """The files whose teardown analysis must run: those that need one and have none that
    still holds (from the cache, or from the earlier version of a changed file)."""
    stale = []
    for i, result in enumerate(results):
        if not result.needs_teardown or still_valid(result, index):
            continue
        if _kept_analysis(result, cache.replaced_result(keys[i]), index):
            cache.update(keys[i], result)
        else:
            stale.append(i)
    return stale


def _kept_analysis(result: FileResult, earlier: FileResult | None, index: ProjectIndex) -> bool:
    """Give a changed file the teardown analysis of its earlier version when the teardown rules
    read the same in both (`teardown_key`) and its callees' summaries are unchanged."""
    if earlier is None or not result.teardown_key or earlier.teardown_key != result.teardown_key:
        return False
    if not still_valid(earlier, index):
        return False
    result.teardown, result.consulted = earlier.teardown, earlier.consulted
    return True


def _first_stages(
    files: Sequence[SourceFile],
    settings: GateConfig,
    options: RunOptions,
    cache: ResultCache,
    done: Callable[[], None],
    teardown: bool = False,
) -> tuple[list[FileResult], list[str]]:
    """Every file's first stage, from the cache where its bytes are unchanged; and its key.
    When `teardown` follows and the files may need it, the teardown rules load in this
    process while workers run the first stage."""
    results: dict[int, FileResult] = {}
    jobs: list[_Job] = []
    waiting: list[tuple[int, str, str, tuple[int, ...] | None]] = []  # index, key, digest, stat
    keys = [source.relative for source in files]
    for index, source in enumerate(files):
        key = keys[index]
        stat = signature(source.path)
        digest, data = cache.known_digest(key, stat), None
        if not digest:
            data, _ = read_source(source.path)  # the first stage reads an unreadable file again
            digest = ResultCache.digest(data) if data is not None else ""
        hit = cache.get(key, digest)
        if hit is not None:
            results[index] = hit
            done()
            continue
        jobs.append(_Job(source, settings, data))
        waiting.append((index, key, digest, stat))
    meanwhile = _load_teardown_rules if teardown and _may_need_teardown(jobs) else None
    computed = _compute(_first_stage, jobs, options, done, meanwhile=meanwhile)
    for (index, key, digest, stat), result in zip(waiting, computed, strict=True):
        results[index] = result
        cache.put(key, digest, result, stat)
    return [results[index] for index in range(len(files))], keys
