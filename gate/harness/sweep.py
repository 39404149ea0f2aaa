"""Fire a fault at every await seam of an async scenario, one fresh run per seam and fault.

A clean run lists the seams: every point where one of the scenario's tasks really suspends (see
`gate.harness.probe`). Then, for seam k and each fault, a fresh run (a new event loop, a new empty
directory, a new state namespace) injects the fault at seam k, ends the way `asyncio.run` ends,
and the check runs on what is left. A trial is judged on the task that reached the seam: did the
interrupt come out of it unchanged, within the timeout, with the artifacts written?

Each run happens in a thread of its own, so a scenario that blocks its event loop (a `time.sleep`
in a coroutine) cannot stop the sweep: the trial's deadline is enforced from outside, and a run
that never gets back to the harness is left behind and reported as hung.

The harness returns what it saw; linking failing seams to `gate check` findings is
`gate.seamlink`'s job, rendering is `gate.report.seams`'.
"""

from __future__ import annotations

import inspect
import math
import tempfile
import threading
import time
import types
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gate.harness import backends
from gate.harness.backends import NotAsyncError, RunResult, grace
from gate.harness.probe import Trace, is_cancel
from gate.seamdata import (
    BACKENDS,
    DEFAULT_FAULTS,
    FAULTS,
    PROBLEMS,
    Acceptance,
    Seam,
    SweepReport,
    Trial,
)

Scenario = Callable[..., Awaitable[Any]]
Check = Callable[..., Any]

# The faults on trio and anyio: they cancel a whole scope, level-triggered, so a second cancel
# (cancel-twice) changes nothing there.
_SCOPE_FAULTS = ("cancel", "error", "keyboard-interrupt")
# How long past its deadline, second cancel and grace a run may take to close its loop before
# the harness leaves its thread behind.
_MARGIN = 0.5


class SweepError(Exception):
    """The sweep could not start: the scenario is not async, or its own clean run raised, hung
    or failed the check. (Bad options are a ValueError.)"""


@dataclass(frozen=True)
class Options:
    """How to run a scenario: validated once, shared by every run of a sweep."""

    faults: tuple[str, ...] = DEFAULT_FAULTS
    timeout: float = 5.0
    backend: str = "asyncio"
    accept: tuple[Acceptance, ...] = ()

    @classmethod
    def build(
        cls,
        faults: Iterable[str] = DEFAULT_FAULTS,
        timeout: float = 5.0,
        backend: str = "asyncio",
        accept: Iterable[str | Acceptance] = (),
    ) -> Options:
        """Validated options; raises ValueError naming the bad value."""
        if backend not in BACKENDS:
            raise ValueError(f"unknown backend {backend!r}; choose from {', '.join(BACKENDS)}")
        accepted = tuple(
            item if isinstance(item, Acceptance) else Acceptance.parse(item) for item in accept
        )
        return cls(_faults(faults, backend), _seconds(timeout), backend, accepted)


def _faults(faults: Iterable[str], backend: str) -> tuple[str, ...]:
    chosen = tuple(dict.fromkeys(faults))
    allowed = FAULTS if backend == "asyncio" else _SCOPE_FAULTS
    unknown = [fault for fault in chosen if fault not in allowed]
    if unknown or not chosen:
        raise ValueError(_fault_message(unknown, backend, allowed))
    return chosen


def _seconds(timeout: object) -> float:
    if isinstance(timeout, bool) or not isinstance(timeout, (int, float)):
        raise ValueError(f"timeout {timeout!r} is not a number of seconds")
    if not math.isfinite(timeout) or timeout <= 0:
        raise ValueError(f"timeout {timeout!r} is not a positive, finite number of seconds")
    return float(timeout)


def _fault_message(unknown: list[str], backend: str, allowed: Sequence[str]) -> str:
    if not unknown:
        return f"no fault chosen; choose from {', '.join(allowed)}"
    if backend != "asyncio" and all(fault in FAULTS for fault in unknown):
        return (
            f"fault(s) {', '.join(unknown)} not available on {backend}: trio and anyio cancel "
            "by scope, so every later checkpoint already sees a second cancel; "
            f"choose from {', '.join(allowed)}"
        )
    return f"unknown fault(s) {', '.join(unknown)}; choose from {', '.join(allowed)}"


def _takes_state(function: Callable[..., Any]) -> bool:
    """Does `function` take a second positional argument (the state namespace)?"""
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return False
    positional = 0
    for parameter in parameters:
        if parameter.kind is parameter.VAR_POSITIONAL:
            return True
        if parameter.kind in (parameter.POSITIONAL_ONLY, parameter.POSITIONAL_OR_KEYWORD):
            positional += 1
    return positional >= 2


@dataclass
class _Run:
    """One run's result, its state namespace and what its check said."""

    result: RunResult
    state: types.SimpleNamespace
    harness_error: str = ""
    check_failure: str | None = None

    @property
    def trace(self) -> Trace:
        return self.result.trace


@dataclass(frozen=True)
class _Subject:
    """The scenario and check as the harness calls them."""

    scenario: Scenario
    check: Check
    options: Options
    scenario_state: bool = field(init=False)
    check_state: bool = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "scenario_state", _takes_state(self.scenario))
        object.__setattr__(self, "check_state", _takes_state(self.check))

    def run(self, workdir: Path, fault: str | None, at: int) -> _Run:
        """Run the scenario once in its own thread, then its check; never raises."""
        state = types.SimpleNamespace()
        args = (workdir, state) if self.scenario_state else (workdir,)
        result = RunResult(Trace(fault, at))
        failure = _run_bounded(self.options, lambda: self.scenario(*args), result)
        run = _Run(result, state, f"{type(failure).__name__}: {failure}" if failure else "")
        if not result.blocked:
            run.check_failure = self._check(workdir, state)
        return run

    def _check(self, workdir: Path, state: types.SimpleNamespace) -> str | None:
        try:
            returned = self.check(workdir, state) if self.check_state else self.check(workdir)
        except BaseException as error:
            # the first line only: pytest's assertion rewriting appends its explanation
            message = str(error).splitlines()[0] if str(error) else ""
            return f"check failed: {type(error).__name__}: {message}".rstrip(": ")
        if inspect.isawaitable(returned):
            getattr(returned, "close", lambda: None)()
            return "the check returned an awaitable: it must be a plain `def`, not `async def`"
        return None


def _run_bounded(
    options: Options, start: backends.Start, result: RunResult
) -> BaseException | None:
    """Run on a thread of its own; leave it behind when it outlives every bound it was given.

    Returns an exception the harness itself raised, if any.
    """
    failures: list[BaseException] = []

    def body() -> None:
        try:
            backends.run(options.backend, start, result, options.timeout)
        except BaseException as error:
            failures.append(error)

    thread = threading.Thread(target=body, name="gate-seams-trial", daemon=True)
    thread.start()
    thread.join(options.timeout + 2 * grace(options.timeout) + _MARGIN)
    if thread.is_alive():
        result.blocked = True
        result.seconds = time.monotonic() - result.started
    return failures[0] if failures else None


# ---------------------------------------------------------------------------------------------
# Judging a trial


@dataclass
class _Verdict:
    problems: list[str] = field(default_factory=list)
    details: list[str] = field(default_factory=list)

    def add(self, problem: str, detail: str) -> None:
        if problem not in self.problems:
            self.problems.append(problem)
        self.details.append(detail)


def _hung(run: _Run, timeout: float) -> str | None:
    result = run.result
    if result.blocked:
        return (
            f"still running after {result.seconds:.1f}s: the {timeout:g}s timeout, a second "
            "cancel and a grace period did not end it (a blocking call in a coroutine, or a "
            "shielded wait?); the timeout was enforced from outside and the run left behind"
        )
    if result.stopped or result.seconds > timeout:
        return f"still running after the {timeout:g}s timeout and a second cancel"
    return None


def _came_out(error: BaseException | None) -> str:
    return type(error).__name__ if error is not None else "nothing"


def _judge_interrupt(verdict: _Verdict, run: _Run, backend: str) -> None:
    """Did the interrupt come out of the task it was injected into, unchanged?"""
    trace = run.trace
    probe = trace.target
    if probe is None:
        return
    task = "" if probe is trace.main else f" (task {probe.label})"
    scoped_cancel = backend != "asyncio" and trace.fault == "cancel"
    if scoped_cancel:
        # Level-triggered: a cancel that ended in a shielded scope may end the scenario normally.
        if not probe.returned and not is_cancel(probe.raised, run.result.cancel_types):
            what = _came_out(probe.raised)
            verdict.add("replaced", f"{what} came out instead of the cancellation{task}")
    elif probe.returned:
        verdict.add("swallowed", f"the scenario returned normally after the interrupt{task}")
    elif not any(probe.raised is injected for injected in trace.injected):
        what = _came_out(probe.raised)
        verdict.add("replaced", f"{what} came out instead of the injected exception{task}")


def _judge_path(verdict: _Verdict, run: _Run, seam: int, clean: Sequence[Seam]) -> None:
    """Did the re-run reach the seam along the same seams as the clean run?"""
    seams = list(run.trace.seams)
    if run.trace.target is None:
        verdict.add("diverged", f"seam {seam} was never reached ({len(seams)} seams)")
        return
    if [s.where for s in seams[:seam]] != [s.where for s in clean[:seam]]:
        verdict.add("diverged", "the seams before this one differ from the clean run's")


def _judge(run: _Run, seam: int, clean: Sequence[Seam], options: Options) -> _Verdict:
    verdict = _Verdict()
    if run.harness_error or run.result.start_error is not None:
        error = run.result.start_error
        verdict.add("error", run.harness_error or f"{_came_out(error)}: {error}")
        return verdict
    hung = _hung(run, options.timeout)
    if hung:
        verdict.add("hung", hung)
    if run.check_failure:
        verdict.add("check-failed", run.check_failure)
    _judge_path(verdict, run, seam, clean)
    if not hung:
        _judge_interrupt(verdict, run, options.backend)
    return verdict


def _trial(seam: int, fault: str, run: _Run, verdict: _Verdict, options: Options) -> Trial:
    problems = tuple(sorted(verdict.problems, key=PROBLEMS.index))
    accepted = bool(problems) and all(
        any(acceptance.covers(fault, problem) for acceptance in options.accept)
        for problem in problems
    )
    warnings = ()
    if run.result.leftover_tasks:
        warnings = (
            f"{run.result.leftover_tasks} task(s) were still running when the scenario ended "
            "and were cancelled, as asyncio.run does",
        )
    return Trial(
        seam=seam,
        fault=fault,
        outcome=problems[0] if problems else "ok",
        problems=problems,
        detail="; ".join(verdict.details),
        warnings=warnings,
        accepted=accepted,
        seconds=run.result.seconds,
    )


# ---------------------------------------------------------------------------------------------
# The public API


def _clean_failure(run: _Run, timeout: float) -> str | None:
    result = run.result
    error = result.start_error
    if isinstance(error, NotAsyncError):
        return f"the scenario is not async: {error}"
    if error is not None:
        return f"calling the scenario failed: {type(error).__name__}: {error}"
    if run.harness_error:
        return f"the clean run could not start: {run.harness_error}"
    hung = _hung(run, timeout)
    if hung:
        return f"the clean run did not finish: {hung}"
    main = run.trace.main
    if main is not None and not main.returned:
        return f"the clean run raised {_came_out(main.raised)}: {main.raised}"
    if main is None and result.raised is not None:
        return f"the clean run raised {_came_out(result.raised)}: {result.raised}"
    if run.check_failure:
        return f"the clean run does not pass the check: {run.check_failure}"
    return None


def _workdir(root: Path, name: str) -> Path:
    workdir = root / name
    workdir.mkdir(parents=True, exist_ok=True)
    return workdir


def list_seams(
    scenario: Scenario,
    check: Check,
    workdir: Path,
    options: Options | None = None,
) -> tuple[Seam, ...]:
    """Run the scenario once without a fault in `workdir`; its seams in the order they happened.

    Raises SweepError when that run fails, hangs, is not async or does not pass `check`.
    """
    subject = _Subject(scenario, check, options or Options())
    run = subject.run(workdir, None, 0)
    failure = _clean_failure(run, subject.options.timeout)
    if failure:
        raise SweepError(failure)
    return tuple(run.trace.seams)


def run_trial(
    scenario: Scenario,
    check: Check,
    seams: Sequence[Seam],
    seam: int,
    fault: str,
    workdir: Path,
    options: Options | None = None,
) -> Trial:
    """One fresh run with `fault` at seam number `seam`, judged against the clean run's seams."""
    options = options or Options()
    subject = _Subject(scenario, check, options)
    run = subject.run(workdir, fault, seam)
    return _trial(seam, fault, run, _judge(run, seam, seams, options), options)


def sweep(
    scenario: Scenario,
    check: Check,
    faults: Iterable[str] = DEFAULT_FAULTS,
    timeout: float = 5.0,
    root: Path | None = None,
    target: str = "",
    accept: Iterable[str | Acceptance] = (),
    backend: str = "asyncio",
) -> SweepReport:
    """Run `scenario` once to list its seams, then once per seam and fault with that fault.

    `scenario(workdir)` or `scenario(workdir, state)` is an async function; `check(workdir)` or
    `check(workdir, state)` raises when an artifact is missing. Each run gets a fresh event loop,
    a fresh empty directory under `root` (a temporary directory by default) and a fresh
    namespace as `state`. Outcomes in `accept` (`replaced`, `error:swallowed`) count as ok.
    Raises ValueError for bad options and SweepError when the clean run fails. The temporary
    directory is removed before it returns; a `root` given is left as the runs left it.
    """
    options = Options.build(faults, timeout, backend, accept)
    if root is not None:
        return _sweep(scenario, check, options, Path(root), target)
    with tempfile.TemporaryDirectory(prefix="gate-seams-", ignore_cleanup_errors=True) as base:
        return _sweep(scenario, check, options, Path(base), target)


def _sweep(
    scenario: Scenario, check: Check, options: Options, base: Path, target: str
) -> SweepReport:
    started = time.perf_counter()
    seams = list_seams(scenario, check, _workdir(base, "clean"), options)
    clean_seconds = time.perf_counter() - started
    trials = [
        run_trial(
            scenario,
            check,
            seams,
            seam.index,
            fault,
            _workdir(base, f"seam-{seam.index:03d}-{fault}"),
            options,
        )
        for seam in seams
        for fault in options.faults
    ]
    return SweepReport(
        seams,
        tuple(trials),
        target=target,
        backend=options.backend,
        accept=options.accept,
        clean_seconds=clean_seconds,
        sweep_seconds=time.perf_counter() - started,
    )


def assert_ok(report: SweepReport, confirms: Mapping[int, Sequence[str]] | None = None) -> None:
    """Raise AssertionError listing every failing seam (accepted outcomes count as ok)."""
    if report.failed:
        from gate.report.seams import failure_text

        raise AssertionError(failure_text(report, confirms or {}))
