"""Fire a cancel (and an exception) at every await seam of an asyncio scenario.

The scenario's coroutine is wrapped in a `_Probe`, a `collections.abc.Coroutine` that forwards
`send`/`throw` to it and counts what it yields: each yield is a seam, a point where the task
really suspends. A clean run lists the seams. For seam k, a fresh run calls `task.cancel()` from
inside the k-th `send`, right after the coroutine yielded: the task is mid-step, so asyncio cancels
the future just yielded and the `CancelledError` lands exactly at that seam, as a watchdog's
would. An exception is thrown into the coroutine when it resumes from the k-th seam.

Known limits: seams inside child tasks (`gather`, `TaskGroup`, 3.11's `wait_for`) are seen only
as the parent's wait; seam lists can differ between Python versions; threads started with
`to_thread` keep running after a cancel.
"""

from __future__ import annotations

import asyncio
import collections.abc
import gc
import inspect
import linecache
import os
import sys
import sysconfig
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gate.fsutil import display_path

FAULTS = ("cancel", "error")

Scenario = Callable[[Path], Awaitable[Any]]
Check = Callable[[Path], Any]

PROBLEM_ORDER = ("check-failed", "swallowed", "replaced", "hung", "diverged", "error")
_STDLIB = sysconfig.get_paths()["stdlib"]
_HARNESS_DIR = os.path.dirname(os.path.abspath(__file__))
_ASYNC_GEN_AWAITABLES = {"async_generator_asend", "async_generator_athrow"}
_LIBRARY_PARTS = (f"{os.sep}site-packages{os.sep}trio{os.sep}", f"{os.sep}anyio{os.sep}")


class SweepError(Exception):
    """The sweep could not start: the scenario failed its own clean run."""


class InjectedFault(Exception):
    """The exception the harness throws into a scenario at a seam."""


@dataclass(frozen=True)
class Frame:
    path: str
    line: int
    function: str


@dataclass(frozen=True)
class Seam:
    """Where the task suspended: the innermost frame of the scenario's own code, and the chain
    of frames from the scenario down to it."""

    index: int
    path: str
    line: int
    function: str
    source: str
    frames: tuple[Frame, ...] = ()

    @property
    def where(self) -> tuple[str, int, str]:
        return (self.path, self.line, self.function)

    def describe(self) -> str:
        return f"{Path(self.path).name}:{self.line} in {self.function} -> {self.source}"


@dataclass
class Trial:
    seam: int
    fault: str
    outcome: str = "ok"
    problems: list[str] = field(default_factory=list)
    detail: str = ""
    warnings: list[str] = field(default_factory=list)
    confirms: list[str] = field(default_factory=list)

    def add(self, problem: str, detail: str) -> None:
        if problem not in self.problems:
            self.problems.append(problem)
        self.detail = "; ".join(part for part in (self.detail, detail) if part)

    def settle(self) -> None:
        self.problems.sort(key=PROBLEM_ORDER.index)
        self.outcome = self.problems[0] if self.problems else "ok"


@dataclass
class SweepReport:
    seams: list[Seam]
    trials: list[Trial]
    target: str = ""
    python: str = field(default_factory=lambda: ".".join(map(str, sys.version_info[:3])))
    clean_seconds: float = 0.0
    sweep_seconds: float = 0.0

    @property
    def failed(self) -> list[Trial]:
        return [trial for trial in self.trials if trial.outcome != "ok"]

    def assert_ok(self) -> None:
        """Raise AssertionError listing every failing seam."""
        if self.failed:
            raise AssertionError(self.failure_text())

    def failure_text(self) -> str:
        seams = {seam.index: seam for seam in self.seams}
        lines = [f"{len(self.failed)} of {len(self.trials)} seam trials failed:"]
        for trial in self.failed:
            seam = seams.get(trial.seam)
            where = seam.describe() if seam else "?"
            confirms = f" (confirms {', '.join(trial.confirms)})" if trial.confirms else ""
            lines.append(
                f"  seam {trial.seam} [{trial.fault}] {trial.outcome}: {where}: "
                f"{trial.detail}{confirms}"
            )
        return "\n".join(lines)

    def to_dict(self) -> dict[str, Any]:
        """The pinned JSON document (version 1)."""
        return {
            "version": 1,
            "python": self.python,
            "target": self.target,
            "seams": [
                {
                    "index": seam.index,
                    "path": display_path(seam.path),
                    "line": seam.line,
                    "function": seam.function,
                    "source": seam.source,
                    "frames": [
                        {"path": display_path(f.path), "line": f.line, "function": f.function}
                        for f in seam.frames
                    ],
                }
                for seam in self.seams
            ],
            "trials": [
                {
                    "seam": trial.seam,
                    "fault": trial.fault,
                    "outcome": trial.outcome,
                    "problems": trial.problems,
                    "detail": trial.detail,
                    "warnings": trial.warnings,
                    "confirms": trial.confirms,
                }
                for trial in self.trials
            ],
            "summary": {
                "seams": len(self.seams),
                "trials": len(self.trials),
                "failed": len(self.failed),
            },
        }


# ---------------------------------------------------------------------------------------------
# The probe


def _is_user_code(filename: str) -> bool:
    if filename.startswith("<"):
        return False
    absolute = os.path.abspath(filename)
    if absolute.startswith(_HARNESS_DIR):
        return False
    if absolute.startswith(_STDLIB) and "site-packages" not in absolute:
        return False
    return not any(part in absolute for part in _LIBRARY_PARTS)


def _qualname(frame: Any) -> str:
    code = frame.f_code
    qualname = getattr(code, "co_qualname", None)  # 3.11+
    if qualname is not None:
        return qualname
    owner = frame.f_locals.get("self", frame.f_locals.get("cls"))
    if owner is not None and code.co_varnames[:1] in (("self",), ("cls",)):
        cls = owner if isinstance(owner, type) else type(owner)
        return f"{cls.__qualname__}.{code.co_name}"
    return code.co_name


def _awaited(current: Any) -> Any:
    """What a suspended coroutine, generator or async generator is waiting on, if anything."""
    following = (
        getattr(current, "cr_await", None)
        or getattr(current, "gi_yieldfrom", None)
        or getattr(current, "ag_await", None)
    )
    if following is None and type(current).__name__ in _ASYNC_GEN_AWAITABLES:
        # `async for` awaits an asend/athrow object, which does not expose its generator; the
        # garbage collector's view of its references does.
        following = next(
            (ref for ref in gc.get_referents(current) if inspect.isasyncgen(ref)), None
        )
    return following


def _frames(coroutine: Any) -> list[Frame]:
    """The frames of a suspended await chain, outermost first."""
    frames = []
    current = coroutine
    for _ in range(1000):
        frame = (
            getattr(current, "cr_frame", None)
            or getattr(current, "gi_frame", None)
            or getattr(current, "ag_frame", None)
        )
        if frame is not None:
            frames.append(Frame(frame.f_code.co_filename, frame.f_lineno, _qualname(frame)))
        current = _awaited(current)
        if current is None:
            break
    return frames


def _seam(index: int, coroutine: Any) -> Seam:
    frames = _frames(coroutine)
    user = [frame for frame in frames if _is_user_code(frame.path)]
    chosen = user[-1] if user else (frames[-1] if frames else Frame("?", 0, "?"))
    source = linecache.getline(chosen.path, chosen.line).strip() if chosen.line else ""
    return Seam(index, chosen.path, chosen.line, chosen.function, source, tuple(user))


class _Probe(collections.abc.Coroutine):  # type: ignore[type-arg]
    """Forwards to the scenario's coroutine, counting yields and injecting one fault."""

    def __init__(self, coroutine: Any, fault: str | None, at: int) -> None:
        self._coroutine = coroutine
        self.fault = fault
        self.at = at
        self.task: asyncio.Task[Any] | None = None
        self.seams: list[Seam] = []
        self.injected: BaseException | None = None
        self.injected_at: int | None = None
        self.outcome: BaseException | None = None
        self.returned = False
        self._throw_next = False

    def _step(self, call: Callable[[], Any]) -> Any:
        try:
            yielded = call()
        except StopIteration:
            self.returned = True
            raise
        except BaseException as error:
            self.outcome = error
            raise
        self.seams.append(_seam(len(self.seams) + 1, self._coroutine))
        if len(self.seams) == self.at and self.injected_at is None:
            if self.fault == "cancel" and self.task is not None:
                self.injected_at = self.at
                self.task.cancel()
            elif self.fault == "error":
                self._throw_next = True
        return yielded

    def send(self, value: Any) -> Any:
        if self._throw_next:
            self._throw_next = False
            self.injected = InjectedFault(f"injected at seam {self.at}")
            self.injected_at = self.at
            return self._step(lambda: self._coroutine.throw(self.injected))
        return self._step(lambda: self._coroutine.send(value))

    def throw(self, typ: Any, value: Any = None, traceback: Any = None) -> Any:
        error = typ if isinstance(typ, BaseException) else (value if value is not None else typ())
        if (
            self.fault == "cancel"
            and self.injected is None
            and self.injected_at is not None
            and isinstance(error, asyncio.CancelledError)
        ):
            self.injected = error  # the CancelledError asyncio delivers at the seam
        self._throw_next = False
        return self._step(lambda: self._coroutine.throw(error))

    def close(self) -> None:
        self._coroutine.close()

    def __await__(self) -> Any:
        return self


# ---------------------------------------------------------------------------------------------
# Running trials


@dataclass
class _Run:
    probe: _Probe
    hung: bool
    leftover_tasks: int
    harness_error: str = ""


def _settle(loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any], timeout: float) -> bool:
    """Wait for the task; after `timeout`, cancel it once more and wait again. True if hung."""
    for attempt in range(2):
        done, _ = loop.run_until_complete(asyncio.wait({task}, timeout=timeout))
        if done:
            if not task.cancelled():
                task.exception()  # retrieved, so asyncio does not log it as never retrieved
            return False
        if attempt == 0:
            task.cancel()
    task._log_destroy_pending = False  # type: ignore[attr-defined]
    return True


def _cancel_leftovers(
    loop: asyncio.AbstractEventLoop, task: asyncio.Task[Any], timeout: float
) -> int:
    """Cancel the child tasks the scenario left running; returns how many there were."""
    leftovers = [t for t in asyncio.all_tasks(loop) if t is not task and not t.done()]
    for child in leftovers:
        child.cancel()
    if leftovers:
        loop.run_until_complete(asyncio.wait(leftovers, timeout=timeout))
    for child in leftovers:
        child._log_destroy_pending = False  # type: ignore[attr-defined]
    return len(leftovers)


def _run(scenario: Scenario, workdir: Path, fault: str | None, at: int, timeout: float) -> _Run:
    loop = asyncio.new_event_loop()
    probe = _Probe(None, fault, at)
    try:
        probe = _Probe(scenario(workdir), fault, at)
        task = loop.create_task(probe)
        probe.task = task
        hung = _settle(loop, task, timeout)
        return _Run(probe, hung, _cancel_leftovers(loop, task, timeout))
    except Exception as error:  # the harness's own failure, not the scenario's outcome
        return _Run(probe, False, 0, f"{type(error).__name__}: {error}")
    finally:
        try:
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()


def _check(check: Check, workdir: Path) -> str | None:
    try:
        check(workdir)
    except BaseException as error:
        return f"check failed: {type(error).__name__}: {error}".rstrip(": ")
    return None


def _judge_interrupt(trial: Trial, run: _Run) -> None:
    """Did the interrupt come out unchanged: not swallowed, not replaced, not stuck?"""
    probe = run.probe
    if run.hung:
        trial.add("hung", "still running after the timeout and a second cancel")
    elif probe.injected_at is None:
        return
    elif probe.returned:
        trial.add("swallowed", "the scenario returned normally after the interrupt")
    elif probe.injected is not None and probe.outcome is not probe.injected:
        came = type(probe.outcome).__name__ if probe.outcome is not None else "nothing"
        trial.add("replaced", f"{came} came out instead of the injected exception")


def _judge_path(trial: Trial, run: _Run, clean: list[Seam]) -> None:
    """Did the re-run reach the seam along the same seams as the clean run?"""
    probe = run.probe
    if probe.injected_at is None:
        trial.add("diverged", f"seam {trial.seam} was never reached ({len(probe.seams)} seams)")
        return
    before = [seam.where for seam in probe.seams[: trial.seam]]
    if before != [seam.where for seam in clean[: trial.seam]]:
        trial.add("diverged", "the seams before this one differ from the clean run's")


def _judge(trial: Trial, run: _Run, clean: list[Seam], check: Check, workdir: Path) -> None:
    if run.harness_error:
        trial.add("error", run.harness_error)
        return
    failure = _check(check, workdir)
    if failure:
        trial.add("check-failed", failure)
    _judge_path(trial, run, clean)
    _judge_interrupt(trial, run)
    if run.leftover_tasks:
        trial.warnings.append(f"{run.leftover_tasks} child task(s) were still running")


def _clean_run(scenario: Scenario, check: Check, workdir: Path, timeout: float) -> list[Seam]:
    """The seams of an uninterrupted run; raises SweepError when that run itself fails."""
    clean = _run(scenario, workdir, None, 0, timeout)
    if clean.harness_error:
        raise SweepError(f"the clean run could not start: {clean.harness_error}")
    if clean.hung:
        raise SweepError(f"the clean run did not finish within {timeout}s")
    if not clean.probe.returned:
        error = clean.probe.outcome
        raise SweepError(f"the clean run raised {type(error).__name__}: {error}")
    failure = _check(check, workdir)
    if failure:
        raise SweepError(f"the clean run does not pass the check: {failure}")
    return clean.probe.seams


def sweep(
    scenario: Scenario,
    check: Check,
    faults: Iterable[str] = FAULTS,
    timeout: float = 5.0,
    root: Path | None = None,
    target: str = "",
) -> SweepReport:
    """Run `scenario` once to list its seams, then once per seam and fault with that fault.

    Each run gets a fresh event loop and a fresh empty directory under `root` (a temporary
    directory by default). Raises SweepError when the clean run fails or fails `check`, and
    ValueError for an unknown fault.
    """
    chosen = tuple(faults)
    unknown = [fault for fault in chosen if fault not in FAULTS]
    if unknown:
        raise ValueError(f"unknown fault(s) {unknown}; choose from {list(FAULTS)}")
    base = Path(root) if root is not None else Path(tempfile.mkdtemp(prefix="gate-seams-"))
    started = time.perf_counter()
    clean_dir = base / "clean"
    clean_dir.mkdir(parents=True, exist_ok=True)
    seams = _clean_run(scenario, check, clean_dir, timeout)
    report = SweepReport(seams, [], target, clean_seconds=time.perf_counter() - started)
    for seam in seams:
        for fault in chosen:
            workdir = base / f"seam-{seam.index:03d}-{fault}"
            workdir.mkdir(parents=True, exist_ok=True)
            trial = Trial(seam.index, fault)
            _judge(
                trial, _run(scenario, workdir, fault, seam.index, timeout), seams, check, workdir
            )
            trial.settle()
            report.trials.append(trial)
    report.sweep_seconds = time.perf_counter() - started
    _link_static_findings(report)
    return report


def _link_static_findings(report: SweepReport) -> None:
    """Name the `gate check` findings that each failing trial confirms."""
    failed = {trial.seam for trial in report.failed}
    frames = {
        seam.index: [(frame.path, frame.line) for frame in seam.frames]
        for seam in report.seams
        if seam.index in failed
    }
    if not frames:
        return
    try:
        from gate.harness.confirm import confirmations
    except ImportError:  # the static rules need libcst; the sweep itself does not
        return
    found = confirmations(frames)
    for trial in report.failed:
        trial.confirms = found.get(trial.seam, [])
