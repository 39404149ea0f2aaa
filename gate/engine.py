"""Per-file results for a list of files: from the cache where a file's bytes are unchanged,
computed otherwise, on worker processes when there are enough files."""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import multiprocessing
import os
import signal
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gate.cache import ResultCache, signature
from gate.config import GateConfig
from gate.discovery import SourceFile
from gate.filecheck import FileResult, check_file, read_source


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
    settings: GateConfig
    teardown: bool
    data: bytes | None


def _run_job(job: _Job) -> FileResult:
    return check_file(job.source, job.settings, teardown=job.teardown, data=job.data)


def _die_with_parent(parent: int) -> None:
    """Worker start-up: end this worker when the gate process that started it dies, so a
    killed run leaves no workers behind (Linux; elsewhere workers end when their queue does)."""
    library = ctypes.util.find_library("c")
    if library is not None:
        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(library, use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the parent died before prctl took effect
        os._exit(1)


def _pool_context() -> Any:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else None)


def worker_count(requested: int, files: int) -> int:
    """Workers for `files` files: never more than the files or the cores."""
    cores = os.cpu_count() or 1
    return max(1, min(requested or cores, cores, files))


def _compute(jobs: list[_Job], options: RunOptions, done: Callable[[], None]) -> list[FileResult]:
    """Results in the order of `jobs`, on worker processes when there are enough files."""
    workers = worker_count(options.jobs, len(jobs))
    if workers <= 1 or len(jobs) < 32:
        results = []
        for job in jobs:
            results.append(_run_job(job))
            done()
        return results
    chunk = max(1, min(16, len(jobs) // (workers * 8)))
    with ProcessPoolExecutor(
        max_workers=workers,
        mp_context=_pool_context(),
        initializer=_die_with_parent,
        initargs=(os.getpid(),),
    ) as pool:
        results = []
        for result in pool.map(_run_job, jobs, chunksize=chunk):
            results.append(result)
            done()
        return results


def file_results(
    files: Sequence[SourceFile],
    root: Path,
    settings: GateConfig,
    options: RunOptions,
    teardown: bool = True,
) -> list[FileResult]:
    """The result of every file, in order: from the cache (in `root`) where the bytes are
    unchanged, computed otherwise (and then cached)."""
    cache = ResultCache(root, settings, enabled=options.cache)
    results: dict[int, FileResult] = {}
    jobs: list[_Job] = []
    waiting: list[tuple[int, str, str, tuple[int, ...] | None]] = []  # index, key, digest, stat
    progress = iter(range(1, len(files) + 1))

    def done() -> None:
        if options.progress is not None:
            options.progress(next(progress), len(files))

    for index, source in enumerate(files):
        key = f"{source.relative}\0{int(teardown)}"
        stat = signature(source.path)
        digest, data = cache.known_digest(key, stat), None
        if not digest:
            data, _ = read_source(source.path)  # check_file reads an unreadable file again
            digest = ResultCache.digest(data) if data is not None else ""
        hit = cache.get(key, digest)
        if hit is not None:
            results[index] = hit
            done()
            continue
        jobs.append(_Job(source, settings, teardown, data))
        waiting.append((index, key, digest, stat))
    computed = _compute(jobs, options, done)
    for (index, key, digest, stat), result in zip(waiting, computed, strict=True):
        results[index] = result
        cache.put(key, digest, result, stat)
    cache.save()
    return [results[index] for index in range(len(files))]
