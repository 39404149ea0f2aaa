"""pytest plugin (entry point `pytest11`): the `seam_sweep` fixture.

Usable from a plain `def test_...`; no async plugin is needed, since every trial runs its own
event loop:

    def test_teardown_survives_every_seam(seam_sweep):
        seam_sweep(scenario, check)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

import pytest

from gate.harness.sweep import FAULTS, Check, Scenario, SweepError, SweepReport, sweep


@pytest.fixture
def seam_sweep(tmp_path: Path) -> Callable[..., SweepReport]:
    """Run `sweep(scenario, check, ...)` under `tmp_path`; fail the test with the seam table when
    any trial is not ok, or when the clean run fails. Returns the report."""
    runs = 0

    def run(
        scenario: Scenario,
        check: Check,
        faults: Iterable[str] = FAULTS,
        timeout: float = 5.0,
        allow_failures: bool = False,
    ) -> SweepReport:
        nonlocal runs
        runs += 1
        try:
            report = sweep(scenario, check, faults, timeout, root=tmp_path / f"sweep-{runs}")
        except SweepError as error:
            pytest.fail(f"seam sweep could not start: {error}", pytrace=False)
        if report.failed and not allow_failures:
            from gate.report.seams import render_text

            pytest.fail(render_text(report), pytrace=False)
        return report

    return run
