"""pytest plugin (entry point `pytest11`): the `seams` marker and the `seam_sweep` fixture.

One test item per seam and fault, so a failure names its seam and each seam re-runs alone:

    @pytest.mark.seams(scenario, check, faults=["cancel", "error"])
    def test_teardown(seam):
        seam.verify()

Item ids name the fault, the seam number and the seam's function and line
(`test_teardown[cancel-3-Orchestrator._cleanup:88]`). Collection runs the scenario once to list
the seams; each item runs one trial. Or the whole sweep in one plain test:

    def test_teardown_survives_every_seam(seam_sweep):
        seam_sweep(scenario, check)

No async plugin is needed: every run has its own event loop, on a thread of its own.

Like the command line, the plugin sits above the harness: it links failing seams to `gate check`
findings (`gate.seamlink`) and renders failures (`gate.report.seams`) only when a test fails.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from gate.harness.sweep import (
    Check,
    Options,
    Scenario,
    SweepError,
    list_seams,
    run_trial,
    sweep,
)
from gate.seamdata import DEFAULT_FAULTS, Acceptance, Seam, SweepReport, Trial, case_id

MARKER_HELP = (
    "seams(scenario, check, faults=['cancel', 'error'], accept=(), timeout=5.0, "
    "backend='asyncio'): one item per await seam and fault of the scenario, given to the "
    "test as the `seam` fixture; `seam.verify()` runs the trial and fails with its report"
)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", MARKER_HELP)


def _confirmations(report: SweepReport) -> dict[int, list[str]]:
    try:
        from gate.seamlink import link

        return link(report)
    except ImportError:  # the static rules need libcst; the sweep does not
        return {}


def _failure(report: SweepReport) -> str:
    from gate.report.seams import SeamContext, render_text

    return render_text(SeamContext(report, _confirmations(report)))


def _trial_failure(report: SweepReport, trial: Trial) -> str:
    from gate.report.seams import trial_line

    return trial_line(report, trial, _confirmations(report))


@dataclass(frozen=True)
class SeamCase:
    """One item of a `seams`-marked test: a seam and a fault, or why the seams are unknown."""

    scenario: Scenario
    check: Check
    options: Options
    seams: tuple[Seam, ...]
    seam: Seam | None
    fault: str
    error: str = ""


class SeamTrial:
    """The `seam` fixture's value: one seam and fault of the marked scenario."""

    def __init__(self, case: SeamCase, workdir: Path) -> None:
        self.case = case
        self.workdir = workdir
        self.trial: Trial | None = None

    @property
    def seam(self) -> Seam | None:
        return self.case.seam

    @property
    def fault(self) -> str:
        return self.case.fault

    def run(self) -> Trial:
        """Run the trial (once) and return it, whatever its outcome."""
        case = self.case
        if case.seam is None:
            pytest.fail(f"seam sweep could not start: {case.error}", pytrace=False)
        if self.trial is None:
            self.trial = run_trial(
                case.scenario,
                case.check,
                case.seams,
                case.seam.index,
                case.fault,
                self.workdir,
                case.options,
            )
        return self.trial

    def verify(self) -> Trial:
        """Run the trial; fail the test with its report unless its outcome is ok or accepted."""
        trial = self.run()
        if not trial.ok:
            report = SweepReport(
                (self.case.seam,),
                (trial,),
                target=getattr(self.case.scenario, "__qualname__", ""),
                backend=self.case.options.backend,
            )
            pytest.fail(_trial_failure(report, trial), pytrace=False)
        return trial


def _cases(marker: pytest.Mark) -> list[Any]:
    """Run the scenario once to list its seams: one param per seam and fault."""
    scenario, check = marker.args
    options = Options.build(
        marker.kwargs.get("faults", DEFAULT_FAULTS),
        marker.kwargs.get("timeout", 5.0),
        marker.kwargs.get("backend", "asyncio"),
        marker.kwargs.get("accept", ()),
    )
    workdir = Path(tempfile.mkdtemp(prefix="gate-seams-collect-"))
    try:
        seams = list_seams(scenario, check, workdir, options)
    except SweepError as error:
        case = SeamCase(scenario, check, options, (), None, "", str(error))
        return [pytest.param(case, id="clean-run")]
    finally:
        shutil.rmtree(workdir, ignore_errors=True)
    return [
        pytest.param(
            SeamCase(scenario, check, options, seams, seam, fault), id=case_id(fault, seam)
        )
        for seam in seams
        for fault in options.faults
    ]


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    marker = metafunc.definition.get_closest_marker("seams")
    if marker is None:
        return
    if len(marker.args) != 2 or "seam" not in metafunc.fixturenames:
        pytest.fail(
            f"{metafunc.definition.nodeid}: @pytest.mark.seams(scenario, check, ...) marks a "
            "test that takes the `seam` fixture",
            pytrace=False,
        )
    try:
        cases = _cases(marker)
    except ValueError as error:
        pytest.fail(f"{metafunc.definition.nodeid}: seams marker: {error}", pytrace=False)
    metafunc.parametrize("seam", cases, indirect=True)


@pytest.fixture
def seam(request: pytest.FixtureRequest, tmp_path: Path) -> SeamTrial:
    """One seam and fault of a `@pytest.mark.seams(...)` test; `seam.verify()` runs it."""
    case = getattr(request, "param", None)
    if not isinstance(case, SeamCase):
        pytest.fail("the `seam` fixture needs @pytest.mark.seams(scenario, check)", pytrace=False)
    return SeamTrial(case, tmp_path)


@pytest.fixture
def seam_sweep(tmp_path: Path) -> Callable[..., SweepReport]:
    """Run `sweep(scenario, check, ...)` under `tmp_path`; fail the test with the seam table when
    any trial is neither ok nor accepted, or when the clean run fails. Returns the report."""
    runs = 0

    def run(
        scenario: Scenario,
        check: Check,
        faults: Iterable[str] = DEFAULT_FAULTS,
        timeout: float = 5.0,
        allow_failures: bool = False,
        accept: Iterable[str | Acceptance] = (),
        backend: str = "asyncio",
    ) -> SweepReport:
        nonlocal runs
        runs += 1
        try:
            report = sweep(
                scenario,
                check,
                faults,
                timeout,
                root=tmp_path / f"sweep-{runs}",
                accept=accept,
                backend=backend,
            )
        except SweepError as error:
            pytest.fail(f"seam sweep could not start: {error}", pytrace=False)
        if report.failed and not allow_failures:
            pytest.fail(_failure(report), pytrace=False)
        return report

    return run
