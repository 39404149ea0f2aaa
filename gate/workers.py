"""Worker processes forked from this one, each fed jobs and answering through a pair of pipes.

This is the part of `concurrent.futures.ProcessPoolExecutor` that gate uses, without what it
costs: importing it and multiprocessing takes about 40 ms, and every job crosses a feeder
thread, a queue and a management thread. The workers are forked with the jobs in memory, so
a job is handed out as its number alone (a few bytes, which never fill a pipe: a worker
writing a large result never waits on this process writing a large job); the result comes
back pickled and length-prefixed. Each worker has two jobs in hand, so that it never waits
for the next. Only where `os.fork` exists; the engine uses ProcessPoolExecutor elsewhere.
"""

from __future__ import annotations

import contextlib
import os
import pickle
import selectors
import signal
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

IN_HAND = 2  # jobs sent to a worker ahead of its results
_HEADER = 8  # bytes of a message's length


class WorkerDied(Exception):
    """A worker process ended before answering every job it was given."""


def available() -> bool:
    return hasattr(os, "fork")


def run(
    work: Callable[[Any], Any],
    jobs: Sequence[Any],
    order: Sequence[int],
    workers: int,
    start: Callable[[], None],
    done: Callable[[], None],
    meanwhile: Callable[[], None] | None = None,
) -> list[Any]:
    """`work(jobs[i])` for every job on `workers` forked processes, handed out in `order`;
    the results in the jobs' order. Each worker runs `start()` first. `done()` is called in
    this process as each result comes in; `meanwhile` runs in a thread of this one while the
    workers work. Re-raises the first exception a job raised; raises WorkerDied when a worker
    ends early."""
    children = [_fork(work, jobs, start) for _ in range(workers)]
    beside = _Beside(meanwhile) if meanwhile is not None else None
    try:
        results = _collect(children, jobs, iter(order), done)
    except BaseException:
        for child in children:
            child.stop()
        raise
    finally:
        for child in children:
            child.close()
        if beside is not None:
            beside.join()
    return results


class _Child:
    """One worker process: its pid, the end of its job pipe and of its result pipe."""

    def __init__(self, pid: int, jobs: int, results: int) -> None:
        self.pid = pid
        self.jobs: int | None = jobs
        self.results = results
        self.answering = 0  # jobs sent and not answered yet

    def give(self, index: int) -> None:
        assert self.jobs is not None
        _send(self.jobs, index.to_bytes(_HEADER, "big"))
        self.answering += 1

    def finish(self) -> None:
        """No more jobs: the worker ends once it has answered those it has."""
        if self.jobs is not None:
            _close(self.jobs)
            self.jobs = None

    def stop(self) -> None:
        with contextlib.suppress(OSError):  # it has ended already
            os.kill(self.pid, signal.SIGTERM)

    def close(self) -> None:
        self.finish()
        _close(self.results)
        os.waitpid(self.pid, 0)


# This process's ends of the pipes of its workers: each worker forked closes them, since a
# pipe a sibling holds open would never end.
_OPEN: set[int] = set()


def _close(fd: int) -> None:
    _OPEN.discard(fd)
    os.close(fd)


def _fork(work: Callable[[Any], Any], jobs: Sequence[Any], start: Callable[[], None]) -> _Child:
    job_out, job_in = os.pipe()
    result_out, result_in = os.pipe()
    pid = os.fork()
    if pid == 0:  # the worker
        for fd in (job_in, result_out, *_OPEN):
            os.close(fd)
        _serve(work, jobs, start, job_out, result_in)
    os.close(job_out)
    os.close(result_in)
    _OPEN.update((job_in, result_out))
    return _Child(pid, job_in, result_out)


def _serve(
    work: Callable[[Any], Any], jobs: Sequence[Any], start: Callable[[], None], given: int, out: int
) -> None:
    """A worker's life: answer each job it is given until the job pipe ends, then leave without
    running the parent's exit handlers or flushing its buffers (it shares them)."""
    code = 0
    try:
        start()
        for message in _messages(given):
            index = int.from_bytes(message, "big")
            try:
                answer: tuple[int, bool, Any] = (index, True, work(jobs[index]))
            except Exception as error:  # the parent raises it
                answer = (index, False, _picklable(error))
            _send(out, pickle.dumps(answer, pickle.HIGHEST_PROTOCOL))
    except BaseException:  # interrupted or the parent is gone: nothing to report to
        code = 1
    finally:
        os._exit(code)


def _picklable(error: Exception) -> Exception:
    try:
        pickle.loads(pickle.dumps(error))
    except Exception:
        import traceback

        return RuntimeError("".join(traceback.format_exception(error)))
    return error


def _collect(
    children: list[_Child], jobs: Sequence[Any], order: Iterator[int], done: Callable[[], None]
) -> list[Any]:
    results: list[Any] = [None] * len(jobs)
    with selectors.DefaultSelector() as selector:
        for child in children:
            for _ in range(IN_HAND):
                _give_next(child, order)
            selector.register(child.results, selectors.EVENT_READ, child)
        waiting = len(jobs)
        while waiting:
            for key, _ in selector.select():
                child = key.data
                message = _receive(child.results)
                if message is None:  # it ended: fine once it has answered all it was given
                    if child.answering:
                        raise WorkerDied(f"a worker process (pid {child.pid}) ended early")
                    selector.unregister(child.results)
                    continue
                child.answering -= 1
                index, ok, answer = pickle.loads(message)
                if not ok:
                    raise answer
                results[index] = answer
                waiting -= 1
                done()
                _give_next(child, order)
    return results


def _give_next(child: _Child, order: Iterator[int]) -> None:
    index = next(order, None)
    if index is None:
        child.finish()
    else:
        child.give(index)


class _Beside:
    """`meanwhile` in a thread of its own; `join` re-raises what it raised."""

    def __init__(self, meanwhile: Callable[[], None]) -> None:
        self.raised: BaseException | None = None

        def run() -> None:
            try:
                meanwhile()
            except BaseException as error:
                self.raised = error

        self.thread = threading.Thread(target=run, name="gate-meanwhile", daemon=True)
        self.thread.start()

    def join(self) -> None:
        self.thread.join()
        if self.raised is not None:
            raise self.raised


def _send(fd: int, data: bytes) -> None:
    view = memoryview(len(data).to_bytes(_HEADER, "big") + data)
    while view:
        view = view[os.write(fd, view) :]


def _receive(fd: int) -> bytes | None:
    """One message, None at the end of the pipe."""
    header = _read(fd, _HEADER)
    if header is None:
        return None
    body = _read(fd, int.from_bytes(header, "big"))
    if body is None:
        raise WorkerDied("a worker process ended in the middle of a message")
    return body


def _messages(fd: int) -> Iterator[bytes]:
    while (message := _receive(fd)) is not None:
        yield message


def _read(fd: int, size: int) -> bytes | None:
    """Exactly `size` bytes, None when the pipe ends first."""
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)
